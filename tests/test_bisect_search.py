"""The bisection's search alone: ends checked first, the middle probed, untestable builds
skipped and named, the budget stopping it. Probes are scripted; nothing is installed."""

from __future__ import annotations

import pytest

from triagebot.bisect import OutOfTime, Search, run_search
from triagebot.bisect.search import next_probe
from triagebot.results import Probe, Verdict

BUILDS = [f"2.12.0.dev202604{day:02d}" for day in range(1, 13)]


def scripted(verdicts: dict[str, Verdict], first_bad: str | None = None):
    """A probe answering from `verdicts`, else bad from `first_bad` on; and the builds it saw."""
    seen: list[str] = []

    def probe(version: str) -> Probe:
        seen.append(version)
        verdict = verdicts.get(version)
        if verdict is None:
            verdict = Verdict.bad if first_bad and version >= first_bad else Verdict.good
        return Probe(version=version, verdict=verdict, reason="scripted")

    return probe, seen


def test_the_first_bad_build_is_found_with_the_ends_checked_first():
    probe, seen = scripted({}, first_bad=BUILDS[7])
    search = run_search(Search(BUILDS), probe)
    assert search.conclusive
    assert (search.builds[search.low], search.builds[search.high]) == (BUILDS[6], BUILDS[7])
    assert seen[:2] == [BUILDS[-1], BUILDS[0]]  # the bad end, then the good one
    assert len(seen) <= 2 + 4  # ten builds between the ends: at most four more probes


def test_the_next_probe_is_the_untested_build_nearest_the_middle():
    search = Search(BUILDS)
    assert next_probe(search) == 5  # between 0 and 11: 5 and 6 are as near; the older is taken
    search.skipped = {5, 6}
    assert next_probe(search) == 4
    search.low, search.high = 4, 7
    assert next_probe(search) is None  # 5 and 6 are all that is left, and both are skipped


def test_skipped_builds_between_the_answer_are_named_and_outside_it_are_not():
    skips = {BUILDS[3]: Verdict.skip, BUILDS[6]: Verdict.skip}
    probe, _ = scripted(skips, first_bad=BUILDS[7])
    search = run_search(Search(BUILDS), probe)
    assert search.conclusive
    assert (search.builds[search.low], search.builds[search.high]) == (BUILDS[5], BUILDS[7])
    assert search.skipped_between() == [BUILDS[6]]  # the first bad may be it


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ({BUILDS[-1]: Verdict.good}, "does not fail on 2.12.0.dev20260412, the build believed bad"),
        ({BUILDS[0]: Verdict.bad}, "already fails on 2.12.0.dev20260401, the build believed good"),
        ({BUILDS[-1]: Verdict.skip}, "2.12.0.dev20260412 cannot be tested (scripted)"),
    ],
)
def test_ends_that_do_not_disagree_stop_it_with_no_answer(verdicts, expected):
    probe, seen = scripted(verdicts, first_bad=BUILDS[-1])
    search = run_search(Search(BUILDS), probe)
    assert expected in search.stopped
    assert not search.confirmed and not search.conclusive
    assert len(seen) <= 2


def test_an_exhausted_budget_stops_it_with_the_range_narrowed_so_far():
    probe, _ = scripted({}, first_bad=BUILDS[9])
    calls = []

    def limited(version: str) -> Probe:
        calls.append(version)
        if len(calls) > 3:
            raise OutOfTime("the time budget of 60 s ran out")
        return probe(version)

    search = run_search(Search(BUILDS), limited)
    assert search.stopped == "the time budget of 60 s ran out"
    assert search.confirmed and not search.conclusive
    assert search.low == 5 and search.high == 11 and len(search.left()) == 5


def test_a_range_of_one_build_has_no_answer():
    probe, seen = scripted({})
    search = run_search(Search(BUILDS[:1]), probe)
    assert search.stopped == "the range holds fewer than two builds"
    assert seen == []
