"""The tracking issue of torch.compile's wrong results at the default config over a season, one
string a season: each letter a nightly of `Cosmos` at baseline (`W` a confirmed wrong result,
`F` one that did not repeat, `.` its outputs judged right, `?` a night that did not run it to a
verdict, `u` a night that compared no outputs, `L` eager disagreeing with itself: the library's),
published night after night to the local imitation of GitHub. It lives as a flag's issue does:
opened when confirmed, its body kept true, closed after `close_after` clean nights, reopened
(never duplicated) when the wrong result returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from builders import SCALAR, ok, result, snapshot
from fakegithub import FakeGitHub, point_tracker_at, serve
from test_tracker import REPO, run

from triagebot.config import Config, TrackerSettings
from triagebot.errors import ConfigError
from triagebot.report.markers import COMPILER_WRONG_MARKER, find_notice
from triagebot.results import BASELINE, COMPILER_WRONG_ISSUE, Accuracy, AccuracyCheck, CrossCheck, Status

DETAIL = "largest difference 6.48 above tolerance 0.001; RMSE to float64 1.79, eager's 6.4e-07"
RIGHT = ok(2, accuracy=AccuracyCheck(verdict=Accuracy.match))
WRONG = ok(2, accuracy=AccuracyCheck(verdict=Accuracy.mismatch, where="sample", detail=DETAIL))
BROKEN = ok(2).model_copy(update={"status": Status.engine_error})
LIBRARY = ok(
    2,
    accuracy=AccuracyCheck(
        verdict=Accuracy.eager_inconsistent,
        where="sample",
        cross_checks=[CrossCheck(name="eager_other_attention", implementation="eager", agrees=False)],
    ),
)


def season_night(day: int, letter: str):
    baseline = {"W": WRONG, "F": WRONG, "?": BROKEN, "L": LIBRARY}.get(letter, RIGHT)
    reruns = {BASELINE: RIGHT if letter == "F" else WRONG} if letter in "WF" else None
    cosmos = result("Cosmos", baseline, {SCALAR: RIGHT}, reruns=reruns)
    others = [result(model, RIGHT, {SCALAR: RIGHT}) for model in ("Bert", "T5")]
    checks = [] if letter == "u" else ["accuracy"]
    return snapshot([cosmos, *others], key=f"2.13.0.dev{day:03}", git=f"git{day}", checks=checks)


@dataclass
class Season:
    """What GitHub showed of the wrong-results issue after each night."""

    states: list[str] = field(default_factory=list)  # "open", "closed", or "none"
    notices: list[tuple[int, str]] = field(default_factory=list)  # (night, kind) of each comment's notice
    bodies: list[str] = field(default_factory=list)
    issues: int = 0  # how many wrong-results issues GitHub holds at the end

    def said(self, kind: str) -> list[int]:
        return [night for night, said in self.notices if said == kind]


def replay(fake: FakeGitHub, letters: str, settings: TrackerSettings | None = None) -> Season:
    season, history, seen = Season(), [], set()
    for day, letter in enumerate(letters):
        history.append(season_night(day, letter))
        run(fake, history, settings)
        mine = [i for i in fake.issues(REPO) if i["body"].splitlines()[0] == COMPILER_WRONG_MARKER]
        season.issues = len(mine)
        season.states.append(mine[0]["state"] if mine else "none")
        season.bodies.append(mine[0]["body"] if mine else "")
        for issue in mine:
            for comment in fake.comments(REPO, issue["number"]):
                if comment["id"] not in seen:
                    seen.add(comment["id"])
                    found = (find_notice(line) for line in comment["body"].splitlines())
                    season.notices += [(day, notice.kind) for notice in found if notice is not None]
    return season


def changes(states: list[str]) -> list[tuple[int, str]]:
    return [(n, states[n]) for n in range(1, len(states)) if states[n - 1] != states[n]]


@pytest.fixture
def fake():
    yield from serve()


@pytest.fixture
def reached(monkeypatch):
    """The fake GitHub the whole publisher reaches (by its address, as in Actions)."""
    for served in serve():
        point_tracker_at(served, monkeypatch)
        yield served


def test_a_steady_one_opens_when_confirmed_and_closes_after_close_after_clean_nights(fake):
    season = replay(fake, ".." + "W" * 7 + "...")
    assert changes(season.states) == [(2, "open"), (10, "closed")]
    assert season.said("close") == [10] and season.said("reopen") == []
    assert "`Cosmos`" in season.bodies[2]
    assert "compiled 1.79 RMSE from the float64 run, eager 6.4e-07" in season.bodies[2]
    assert "No wrong result of `torch.compile` at the default config" in season.bodies[10]


def test_a_young_one_closes_after_a_clean_week_as_a_flags_does(fake):
    season = replay(fake, "WW" + "." * 7)
    assert changes(season.states) == [(8, "closed")] and season.said("close") == [8]


def test_it_reopens_when_the_wrong_result_returns_and_is_never_duplicated(fake):
    season = replay(fake, "W" * 7 + "..W")
    assert changes(season.states) == [(8, "closed"), (9, "open")]
    assert season.said("close") == [8] and season.said("reopen") == [9]
    assert season.issues == 1


@pytest.mark.parametrize("unjudged", ["?", "u", "L"])
def test_nights_that_did_not_judge_its_outputs_never_close_it(fake, unjudged):
    season = replay(fake, "WW" + unjudged * 6)
    assert set(season.states) == {"open"} and season.said("close") == []


def test_a_wrong_result_that_did_not_repeat_or_a_library_finding_never_opens_it(fake):
    assert set(replay(fake, ".F.L.").states) == {"none"}


def test_its_people_are_ccd_and_it_can_be_turned_off(fake):
    settings = TrackerSettings(repo=REPO, cc={COMPILER_WRONG_ISSUE: ["someone"]})
    season = replay(fake, "W", settings)
    assert season.bodies[0].rstrip().endswith("cc @someone")


def test_it_is_on_by_default_and_off_when_configured(fake):
    assert TrackerSettings().wrong_results_issue
    assert replay(fake, "WW", TrackerSettings(repo=REPO, wrong_results_issue=False)).states == [
        "none",
        "none",
    ]


def test_no_flag_may_take_its_name():
    with pytest.raises((ConfigError, ValueError), match="reserved for the issue of wrong results"):
        Config.model_validate({"flags": {COMPILER_WRONG_ISSUE: {"patch": {"x": True}}}})


def test_published_with_the_stores_memory_it_is_remembered_never_retired_and_its_people_reached(
    reached, tmp_path
):
    from test_tracker_people import publish

    from triagebot.results import IssueRecord
    from triagebot.store import MemoryStore

    store = MemoryStore()
    first = [season_night(0, "W")]
    publish(first, store, tmp_path=tmp_path / "1")
    (issue,) = reached.issues(REPO)
    assert store.records(f"issues/{REPO}", IssueRecord)[COMPILER_WRONG_ISSUE].number == issue["number"]
    settings = TrackerSettings(repo=REPO, cc={COMPILER_WRONG_ISSUE: ["someone"]})
    publish([*first, season_night(1, "W")], store, settings, tmp_path=tmp_path / "2")
    (issue,) = reached.issues(REPO)
    assert issue["state"] == "open" and "no longer swept" not in issue["title"]
    comments = [comment["body"] for comment in reached.comments(REPO, issue["number"])]
    assert any("@someone" in body for body in comments)  # a person added later is reached once
