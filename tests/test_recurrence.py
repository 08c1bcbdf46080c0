"""How crashes recur from nightly to nightly: each rule of `analysis.recurrence` alone, and what
the tracker makes of them (closing, notices, one comment a night, the crash table's rate)."""

from __future__ import annotations

from builders import DYNAMIC, GUARD_ERROR, SCALAR, crash, nightly, ok
from test_tracker import MODELS, snapshot

from triagebot import analysis, report
from triagebot.analysis.recurrence import (
    LOOKBACK,
    WINDOW,
    continued,
    group_rate,
    intermittent,
    is_new,
    longest_gap,
    rate,
    settled,
    settled_tonight,
    steady,
)
from triagebot.results import FailureGroup, Recurrence, TrackerNotice
from triagebot.tracker import closing
from triagebot.tracker.plan import fold


def night_of(history):
    """The newest of `history` analysed against the others, as the pipeline does."""
    summaries = [analysis.summarise(old) for old in history[:-1]]
    return analysis.night(history[-1], summaries, history[-2] if len(history) > 1 else None)


def test_a_crash_that_ran_clean_between_two_crashes_or_flaked_is_intermittent():
    assert intermittent("CC.C") and intermittent("C.FC") and intermittent("CCF")
    assert not intermittent("..CCC") and not intermittent("CCC..") and not intermittent("C??C")


def test_a_rate_counts_the_nights_it_ran_since_it_first_crashed():
    assert rate("C.C.C", window=5) == (3, 5)
    assert rate("..C?C", window=5) == (2, 2)  # new this week; the night it did not run is no night
    assert rate("CCCCCCC.", window=5) == (4, 5)
    assert rate("....", window=5) == (0, 0)


def test_the_longest_gap_is_between_two_crashes():
    assert longest_gap("..C.F?.C.C...") == 3 and longest_gap("..C..") == 0 and longest_gap("") == 0


STEADY = "C" * WINDOW  # a crash on every nightly of a week


def test_a_steady_crash_crashed_on_every_nightly_of_a_week_at_least():
    assert steady(".." + STEADY, close_after=2) and not steady("..CC", close_after=2)
    assert not steady("C." + STEADY, close_after=2)
    assert steady("CCC", close_after=3, window=2)


def test_a_crash_is_over_after_close_after_clean_nights_or_a_clean_week_when_intermittent():
    assert settled(STEADY + "..", close_after=2) and not settled(STEADY + ".", close_after=2)
    assert not settled("C.C..", close_after=2, window=5)  # intermittent: the window first
    assert settled("C.C.....", close_after=2, window=5)
    assert not settled("C....C...........", close_after=2, window=5)  # three times its longest gap: 12
    assert settled("C....C............", close_after=2, window=5)
    assert not settled("CC......", close_after=2, window=7)  # two nightlies: too young to tell
    assert settled("CC.......", close_after=2, window=7)


def test_a_night_that_did_not_run_the_model_neither_closes_nor_counts_as_clean():
    assert not settled(STEADY + ".?", close_after=2) and not settled(STEADY + "??????", close_after=2)
    assert settled(STEADY + ".??.", close_after=2)
    assert not settled(STEADY + ".F", close_after=2)  # a crash that did not repeat is no clean night


def test_settled_tonight_is_said_once():
    assert settled_tonight(STEADY + "..", close_after=2)
    assert not settled_tonight(STEADY + "...", close_after=2) and not settled_tonight(
        STEADY + ".", close_after=2
    )


def test_a_crash_is_new_only_when_it_did_not_crash_in_its_window_before():
    assert is_new("......C") and is_new("C" + "." * LOOKBACK + "C", window=7)
    assert not is_new("..C...C") and not is_new("....F.C") and not is_new("C.....")
    assert not is_new("C.......C"), "a crash back within its lookback returns: it is not new"


def test_a_groups_rate_counts_a_night_when_one_of_its_members_crashed():
    group = FailureGroup(flag=SCALAR, signature="E: x", models=["A", "B"])
    assert group_rate(group, {"A": "C.??.", "B": "..C?."}, window=5) == (2, 4)
    assert group_rate(group, {}, window=5) == (0, 0)


def test_a_reworded_group_continues_the_signature_all_its_members_had():
    group = FailureGroup(flag=SCALAR, signature="E: new words", models=["A", "B"])
    assert continued(group, {"A": "E: old words", "B": "E: old words"}) == "E: old words"
    assert continued(group, {"A": "E: old words"}) == "E: old words"  # B did not crash then
    assert continued(group, {"A": "E: old words", "B": "E: other words"}) is None  # two groups
    assert continued(group, {}) is None
    assert continued(group, {"A": "Other: old", "B": "Other: old"}) is None  # another error


def test_closing_waits_for_an_intermittent_crash_to_be_clean_for_its_window():
    def recurred(letters: str) -> Recurrence:
        return Recurrence(keys=[f"k{i}" for i in range(len(letters))], states={"Bert": letters})

    assert closing.should_be_open([1, 0, 1, 0, 0], 2, recurred("C.C.."))
    assert not closing.should_be_open([1, 1, 0, 0], 2, recurred(STEADY + ".."))
    assert closing.should_be_open([1, 1, 0, 0], 2, recurred(STEADY + "?.")), (
        "a night that ran nothing is not clean"
    )
    assert closing.should_be_open([1, 1, 0, 0], 2, recurred("CC..")), "two nightlies of crashing: too young"
    assert not closing.should_be_open([1, 0, 0], 2)  # without a recurrence: the trend alone


def test_the_notices_of_one_night_on_one_issue_are_one_comment():
    notices = [
        TrackerNotice(kind=kind, marker=f"<!-- {kind} -->", body=f"<!-- {kind} -->\nbody") for kind in "ab"
    ]
    [folded] = fold(notices)
    assert folded.kind == "a+b" and folded.body == "<!-- a -->\nbody\n\n<!-- b -->\nbody"
    assert len(fold(notices, limit=20)) == 2  # not within GitHub's limit: two comments


def test_a_night_with_engine_errors_says_nothing_fixed_and_keeps_the_issue_open():
    broken = ok(2).model_copy(update={"status": "engine_error"})
    history = [
        nightly(f"2.12.0.dev202604{day:02}", {SCALAR: {"Bert": crash()}}, MODELS) for day in range(1, 8)
    ]
    history += [nightly(f"2.12.0.dev202604{day:02}", {SCALAR: {"Bert": broken}}, MODELS) for day in (8, 9)]
    tonight = night_of(history)
    state = tonight.flags[SCALAR]
    assert state.recurrence.states == {"Bert": STEADY + "??"}
    assert state.news.fixed == [] and report.fixed_notice(tonight, SCALAR) is None
    assert closing.should_be_open(closing.failures_per_nightly(state), 2, state.recurrence)


def test_an_intermittent_group_shows_its_rate_and_a_returning_crash_is_no_news():
    crashing, clean = {SCALAR: ["Bert"]}, {}
    history = [
        snapshot(f"2.12.0.dev2026040{day}", crashing if day in (1, 3, 5) else clean) for day in range(1, 6)
    ]
    tonight = night_of(history)
    [group] = tonight.flags[SCALAR].stats.crash_groups
    assert (group.nights_crashed, group.nights_ran, group.intermittent) == (3, 5, True)
    assert "intermittent: crashed on 3 of the last 5 nights it ran" in report.issue_body(tonight, SCALAR)
    assert tonight.flags[SCALAR].diff.newly_crashing  # the diff says it is back ...
    assert report.regression_notice(tonight, SCALAR) is None  # ... which is not new


def test_a_new_crash_names_its_range_and_a_bisected_one_its_first_bad_nightly():
    history = [nightly(f"2.12.0.dev2026040{day}", {}, MODELS) for day in (1, 2)]
    history.append(nightly("2.12.0.dev20260403", {DYNAMIC: {"T5": crash(GUARD_ERROR)}}, MODELS))
    tonight = night_of(history)
    [build] = tonight.flags[DYNAMIC].news.new_builds
    assert (build.models, build.before, build.after) == (["T5"], "2.12.0.dev20260402", "2.12.0.dev20260403")
    notice = report.regression_notice(tonight, DYNAMIC)
    assert "the last stored nightly without it is `2.12.0.dev20260402`. Not yet bisected." in notice


def test_the_site_shows_an_intermittent_groups_rate(tmp_path):
    from triagebot import pipeline
    from triagebot.config import Config
    from triagebot.report import links
    from triagebot.store import LocalStore

    store = LocalStore(tmp_path / "store")
    for day in range(1, 6):
        store.put(snapshot(f"2.12.0.dev2026040{day}", {SCALAR: ["Bert"]} if day in (1, 3, 5) else {}))
    pipeline.build_site(store, tmp_path / "site", Config(), say=lambda _: None)
    page = (tmp_path / "site" / links.flag_page(SCALAR)).read_text(encoding="utf-8")
    assert '<span class="intermittent">intermittent: crashed on 3 of the last 5 nights it ran</span>' in page


def test_a_crash_reworded_after_a_clean_nightly_continues_its_group_and_is_no_news():
    old, new = crash(GUARD_ERROR, "Could not guard on u0"), crash(GUARD_ERROR, "Cannot guard on u0")
    history = [nightly(f"2.12.0.dev202604{day:02}", {SCALAR: {"Bert": old}}, MODELS) for day in range(1, 8)]
    history.append(nightly("2.12.0.dev20260408", {}, MODELS))
    history.append(nightly("2.12.0.dev20260409", {SCALAR: {"Bert": new}}, MODELS))
    tonight = night_of(history)
    [group] = tonight.flags[SCALAR].stats.crash_groups
    assert group.continues == old.signature and group.signature == new.signature
    body = report.issue_body(tonight, SCALAR)
    assert "(new in this nightly)" not in body and "the same crash reworded" in body
    assert report.regression_notice(tonight, SCALAR) is None
