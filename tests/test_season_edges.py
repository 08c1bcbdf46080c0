"""The lifecycle's edges, one season a string: each letter a nightly of one model under one flag
(`C` a confirmed crash, `F` a crash that did not repeat, `?` a night that did not run it: an
engine error, `-` a night it was not in the corpus, `.` clean), published night after night to
the local imitation of GitHub. A night that did not run the model is no evidence either way: it
neither counts toward closing nor breaks a run of crashes."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from builders import SCALAR, crash, nightly, ok
from fakegithub import FakeGitHub, serve
from test_tracker import MODELS, run

from triagebot.report.markers import find_notice
from triagebot.results import Accuracy, AccuracyCheck, CorpusSelection, Snapshot, Status

BROKEN = ok(2).model_copy(update={"status": Status.engine_error})
RIGHT = ok(2, accuracy=AccuracyCheck(verdict=Accuracy.match))
WRONG = ok(2, accuracy=AccuracyCheck(verdict=Accuracy.mismatch, where="logits"))


def season_night(day: int, letter: str, steady: bool) -> Snapshot:
    """Night `day` with Bert's letter under `capture_scalar_outputs` (and T5 crashing every
    night when `steady`, so that the issue is open before Bert's crash)."""
    models = [model for model in MODELS if letter != "-" or model != "Bert"]
    outcome = {"C": crash(), "F": crash(), "?": BROKEN}.get(letter)
    crashes = {SCALAR: {"Bert": outcome} if outcome is not None else {}}
    if steady:
        crashes[SCALAR]["T5"] = crash()
    reruns = {SCALAR: {"Bert": ok(2)}} if letter == "F" else None
    return nightly(f"2.13.0.dev{day:03}", crashes, models, reruns=reruns, git=f"git{day}")


PIPE = "diffusers/UNet2DModel"
SUITES = "transformers+diffusers"


def suite_night(day: int, letter: str, steady: bool) -> Snapshot:
    """Night `day` of a night of two suites with the diffusers model PIPE's letter under
    `capture_scalar_outputs`: `-` it left the corpus (its suite swept), `s` its suite was not
    swept that night (diffusers not installed), the other letters as `season_night`'s."""
    models = [*MODELS, *([PIPE] if letter not in "-s" else [])]
    outcome = {"C": crash(), "F": crash(), "?": BROKEN}.get(letter)
    crashes = {SCALAR: {PIPE: outcome} if outcome is not None else {}}
    if steady:
        crashes[SCALAR]["T5"] = crash()
    reruns = {SCALAR: {PIPE: ok(2)}} if letter == "F" else None
    skipped = {"diffusers": "not installed"} if letter == "s" else {}
    corpus = CorpusSelection(name=SUITES, skipped=skipped, models=models)
    return nightly(f"2.13.0.dev{day:03}", crashes, models, reruns=reruns, git=f"git{day}", corpus=corpus)


@dataclass
class Season:
    """What GitHub showed of the flag's issue after each night."""

    states: list[str] = field(default_factory=list)  # "open", "closed", or "none"
    notices: list[tuple[int, str]] = field(default_factory=list)  # (night, kind) of each notice posted

    def said(self, kind: str) -> list[int]:
        return [night for night, said in self.notices if said == kind]


def wrong_night(day: int, letter: str, steady: bool) -> Snapshot:
    """Night `day` with Bert's letter for a wrong result: `W` a confirmed wrong result, `.` its
    outputs judged right, `?` an engine error, `-` not in the corpus, `u` no accuracy check."""
    models = [model for model in MODELS if letter != "-" or model != "Bert"]
    outcomes = {model: RIGHT for model in models} | {"Bert": {"W": WRONG, "?": BROKEN}.get(letter, RIGHT)}
    checks = [] if letter == "u" else ["accuracy"]
    return nightly(f"2.13.0.dev{day:03}", {SCALAR: outcomes}, models, checks=checks, git=f"git{day}")


def replay(fake: FakeGitHub, letters: str, steady: bool = False, night=season_night) -> Season:
    season, history, seen = Season(), [], set()
    for day, letter in enumerate(letters):
        history.append(night(day, letter, steady))
        run(fake, history)
        issues = fake.issues("pytorch/pytorch")
        season.states.append(issues[0]["state"] if issues else "none")
        for issue in issues:
            for comment in fake.comments("pytorch/pytorch", issue["number"]):
                if comment["id"] in seen:
                    continue
                seen.add(comment["id"])
                for line in comment["body"].splitlines():
                    notice = find_notice(line)
                    if notice is not None:
                        season.notices.append((day, notice.kind))
    return season


def changes(states: list[str]) -> list[tuple[int, str]]:
    """(night, new state) of each change of the issue's state."""
    return [(n, states[n]) for n in range(1, len(states)) if "none" != states[n - 1] != states[n]]


@pytest.fixture
def fake():
    yield from serve()


def test_a_flaky_night_after_a_settled_crash_neither_reopens_nor_says_fixed_twice(fake):
    season = replay(fake, "CCCCCCC..F.......")
    assert changes(season.states) == [(8, "closed")]
    assert season.said("fixed") == [8] and season.said("reopen") == []


def test_a_crash_leaving_the_lookback_after_unrun_nights_does_not_reopen(fake):
    season = replay(fake, "C" * 10 + ".." + "?" * 16 + "......")
    assert changes(season.states) == [(11, "closed")]
    assert season.said("fixed") == [11] and season.said("reopen") == []


@pytest.mark.parametrize("unrun", ["?", "s"])
def test_a_crash_never_closes_on_nights_that_did_not_run_the_model(fake, unrun):
    season = replay(fake, "CCC" + unrun * 30, night=suite_night)
    assert set(season.states) == {"open"} and season.said("fixed") == []


def test_a_suite_not_swept_is_no_corpus_change_and_is_said_on_the_issue(fake):
    season = replay(fake, "CCC" + "s" * 10, night=suite_night)
    assert set(season.states) == {"open"}
    assert season.said("removed") == season.said("fixed") == season.said("regression") == []
    (issue,) = fake.issues("pytorch/pytorch")
    assert issue["body"].count("diffusers not swept tonight: not installed") == 1


@pytest.mark.parametrize("model", [PIPE, "Bert"])
def test_a_crash_whose_model_left_the_corpus_closes_its_issue_said_removed_never_fixed(fake, model):
    night = suite_night if model == PIPE else season_night
    season = replay(fake, "CCC" + "-" * 10, night=night)
    assert changes(season.states) == [(9, "closed")]  # gone for a week of nightlies
    assert season.said("removed") == [3] and season.said("fixed") == []


def test_a_model_away_for_a_few_nights_keeps_its_issue_open(fake):
    season = replay(fake, "CCC" + "-" * 5 + "CC", night=suite_night)
    assert set(season.states) == {"open"} and season.said("fixed") == [] and season.said("reopen") == []


def test_a_crash_that_persisted_through_unrun_nights_is_not_new(fake):
    season = replay(fake, ".CC" + "?" * 8 + "C", steady=True)
    assert season.said("regression") == [1]  # its first night only: back after unrun nights is not new


def test_a_crash_returning_every_twenty_nights_keeps_its_issue_open_and_is_not_new(fake):
    season = replay(fake, "." + ("C" + "." * 19) * 3)
    assert changes(season.states) == [(8, "closed"), (21, "open")], "closed once, with its fixed notice"
    assert season.said("fixed") == [8] and season.said("regression") == []  # a return is never new


@pytest.mark.parametrize("unjudged", ["?", "u"])
def test_a_wrong_result_never_closes_on_nights_that_did_not_judge_its_outputs(fake, unjudged):
    season = replay(fake, "WWWW" + unjudged * 8, night=wrong_night)
    assert set(season.states) == {"open"}


def test_a_wrong_result_closes_after_a_clean_week_of_nights_that_judged_its_outputs(fake):
    season = replay(fake, "WWWW" + "?u-" + "." * 7, night=wrong_night)
    assert changes(season.states) == [(13, "closed")]


@pytest.mark.parametrize(("unrun", "why"), [("s", "its suite not swept tonight"), ("?", "engine error")])
def test_an_issue_open_for_a_crash_not_verified_names_it_and_why(fake, unrun, why):
    season = replay(fake, "CCC" + unrun * 30, night=suite_night)
    assert set(season.states) == {"open"}
    (issue,) = fake.issues("pytorch/pytorch")
    assert "no model crashes" not in issue["title"]
    assert "1 crash not verified tonight (UNet2DModel: " in issue["title"] and why in issue["title"]
    verdict = issue["body"].split("## Verdict", 1)[1].strip().splitlines()[0]
    assert verdict.startswith("**Not ready**: no crash confirmed tonight, but 1 crash not verified tonight")
    assert verdict.count(why) == 1 and "so the issue stays open" in verdict


@pytest.mark.parametrize("letters", [".CCCCCC?C", ".CCCCCCFC", ".CC" + "?" * 8 + "C"])
def test_a_crash_after_a_night_that_did_not_run_it_or_did_not_repeat_is_not_new_tonight(fake, letters):
    season = replay(fake, letters, steady=True)
    assert season.said("regression") == [1]  # its first night only
    (issue,) = fake.issues("pytorch/pytorch")
    assert "1 new" not in issue["title"] and "new tonight" not in issue["body"], issue["title"]


def test_an_issue_open_for_a_model_away_names_it_until_it_has_left(fake):
    season = replay(fake, "CCC--", night=suite_night)
    assert set(season.states) == {"open"}
    (issue,) = fake.issues("pytorch/pytorch")
    assert issue["title"].endswith("1 crash not verified tonight (UNet2DModel: not in the corpus tonight)")
