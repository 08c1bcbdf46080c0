"""Sentinels, triagebot's own test models, are in no real figure, group or lifecycle (one rule:
`analysis.effects.real_rows`), and each night says on a line of its own how many behaved as built
(`ModelSpec.built_to`, `analysis.sentinels`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import SCALAR, crash, night_of, ok, result, snapshot

from triagebot.config import Config, TrackerSettings
from triagebot.pipeline import build_site
from triagebot.report import issue_body, links, nightly_summary, regression_notice, run_summary
from triagebot.results import BASELINE, Accuracy, AccuracyCheck, Effect, ModelResult, ModelSpec, Status
from triagebot.store import MemoryStore, read_snapshot
from triagebot.tracker.desired import flag_issue

SMOKE = Path(__file__).parent / "data" / "smoke-2.13.0+cpu.json"
GUARD = "NonzeroGuardCrash"


def sentinel(model: ModelResult, **built_to: str) -> ModelResult:
    spec = ModelSpec(model=model.model, source="sentinel", built_to=built_to)
    return model.model_copy(update={"spec": spec})


def crashing_sentinel(built_for: str = "crashes") -> ModelResult:
    """A sentinel whose crash under SCALAR repeated when run again (confirmed)."""
    guard = crash()
    return sentinel(
        result(GUARD, ok(2, ["item"]), {SCALAR: guard}, reruns={SCALAR: guard}), **{SCALAR: built_for}
    )


def with_a_real_model(*sentinels: ModelResult):
    return night_of(snapshot([*sentinels, result("Real", ok(2, ["item"]), {SCALAR: ok(1)})]))


def test_a_sentinels_crash_opens_no_issue_and_is_said_on_its_own_line() -> None:
    night = with_a_real_model(crashing_sentinel())
    state = night.flags[SCALAR]
    assert (state.figures.crashes, state.stats.crash_groups, state.trend[-1].crashes) == (0, [], 0)
    assert [group.models for group in state.stats.sentinel_groups] == [[GUARD]]  # still reproduced
    issue = flag_issue(night, SCALAR, TrackerSettings())
    assert not issue.open
    assert issue.title == "[triagebot] torch._dynamo.config.capture_scalar_outputs: no model crashes"
    body = issue_body(night, SCALAR)
    assert (
        # No ladder evidence yet, so not ready; but not for the sentinel's crash either.
        "**Not judged yet on aot_eager and inductor**: 0 of 1 checked; no model crashes, "
        "outputs not compared; helps 1 of the 1 testable models (100%)."
    ) in body
    assert "| Crashes (confirmed) | 0 of 1 testable models (0%) | no |" in body
    assert (
        "the flag ran on 1: `NonzeroGuardCrash` (crashes).\n\nSentinels: 1 of 1 behaved as built.\n" in body
    )
    assert "\n\nSentinels: 1 of 1 behaved as built.\n" in nightly_summary(night)


def test_a_sentinel_that_stops_behaving_as_built_is_named_with_what_it_gave() -> None:
    clean = sentinel(result(GUARD, ok(2, ["item"]), {SCALAR: ok(2, ["item"])}), **{SCALAR: "crashes"})
    night = with_a_real_model(clean)
    [miss] = night.sentinels_built.misses
    assert (miss.model, miss.config, miss.built, miss.got) == (GUARD, SCALAR, "crashes", "no_effect")
    said = (
        "\n\nSentinels: 0 of 1 behaved as built; `NonzeroGuardCrash` under `capture_scalar_outputs` is "
        "built for `crashes`, it gave `no_effect`.\n"
    )
    assert said in issue_body(night, SCALAR) and said in nightly_summary(night)


def test_what_a_night_cannot_tell_is_not_judged() -> None:
    """A wrong result is built only where outputs were compared; a flag not swept says nothing."""
    unchecked = sentinel(result("Wrong", ok(2, ["item"]), {SCALAR: ok(1)}), **{SCALAR: "wrong_result"})
    elsewhere = sentinel(result("Other", ok(1), {SCALAR: ok(1)}), capture_dynamic_output_shape_ops="crashes")
    night = with_a_real_model(unchecked, elsewhere)
    assert night.sentinels_built.judged == [] and "behaved as built" not in issue_body(night, SCALAR)


def test_baseline_outcomes_are_judged_by_status_and_by_outputs() -> None:
    mismatch = AccuracyCheck(verdict=Accuracy.mismatch, where="output")
    differs = AccuracyCheck(verdict=Accuracy.nondeterministic, where="output")
    models = [
        sentinel(
            result("WrongAtBaseline", ok(1, accuracy=mismatch), {SCALAR: ok(1)}), **{BASELINE: "wrong_result"}
        ),
        sentinel(
            result("OwnGenerator", ok(1, accuracy=differs), {SCALAR: ok(1)}), **{BASELINE: "nondeterministic"}
        ),
        sentinel(
            result("Segfault", ok(1).model_copy(update={"status": Status.signal}), {SCALAR: ok(1)}),
            **{BASELINE: "signal"},
        ),
        sentinel(result("Plain", ok(1, accuracy=mismatch), {SCALAR: ok(1)}), **{BASELINE: "ok"}),
    ]
    built = night_of(snapshot(models, checks=["accuracy"])).sentinels_built
    assert built.judged == ["WrongAtBaseline", "OwnGenerator", "Segfault", "Plain"] and built.behaved == 3
    assert [(miss.model, miss.got) for miss in built.misses] == [("Plain", "wrong_result")]


def test_the_smoke_nights_cells_count_its_real_models_alone(tmp_path: Path) -> None:
    smoke = read_snapshot(SMOKE)
    night = night_of(smoke)
    summary = nightly_summary(night)
    assert (
        "| `capture_scalar_outputs` | **Not ready** | 0 of 7 models it could affect (0%) | 1 of 7 models "
        "it could affect (14.3%) | 6 of 7 models it could affect (85.7%) | 0 of 7 models it could affect "
        "(0%) | 0 |"
    ) in summary
    assert "\n\nSentinels: 7 of 7 behaved as built.\n" in summary
    assert "\n\nSentinels: 7 of 7 behaved as built.\n" in run_summary(smoke.environment, night)  # the step's
    # The smoke night's only wrong result, and its ladder failures, are sentinels': no group of a flag's.
    for state in night.flags.values():
        assert (
            not {m for g in state.stats.wrong_result_groups + state.stats.ladder_groups for m in g.models}
            & smoke.sentinels
        )
        assert state.figures.wrong_results == 0
    build_site(MemoryStore([smoke]), tmp_path, Config(), readers=1, say=lambda line: None)
    page = (tmp_path / links.flag_page(SCALAR)).read_text(encoding="utf-8")
    assert '<p class="note" id="sentinels-built">Sentinels: 7 of 7 behaved as built.</p>' in page


@pytest.mark.torch
def test_every_sentinel_declares_what_it_is_built_to_do() -> None:
    from triagebot.config import DEFAULT_FLAGS
    from triagebot.corpus import sentinels

    names = {cls.__name__ for cls in sentinels.SENTINELS} | {"WrongAtBaseline"}
    assert set(sentinels.BUILT_TO) == names
    words = {*Status, *Accuracy, *Effect}
    for name, built in sentinels.BUILT_TO.items():
        assert built and set(built) <= {BASELINE, *DEFAULT_FLAGS}, name
        assert set(built.values()) <= words, name
    assert sentinels.spec_of("Segfault").built_to == {BASELINE: "signal"}


def test_a_sentinel_newly_crashing_is_no_regression_notice() -> None:
    """A sentinel that ran clean last night and crashes tonight moves no flag: no newly crashing
    model, no regression notice, no issue opened."""
    real = result("Real", ok(2, ["item"]), {SCALAR: ok(1)})
    clean = sentinel(result(GUARD, ok(2, ["item"]), {SCALAR: ok(2, ["item"])}), **{SCALAR: "crashes"})
    before = snapshot([clean, real], key="2.13.0.dev20261120", git="a" * 40)
    tonight = snapshot([crashing_sentinel(), real], key="2.13.0.dev20261121", git="b" * 40)
    night = night_of(tonight, [before])
    state = night.flags[SCALAR]
    assert state.diff is not None and state.diff.newly_crashing == [] and state.news.new == []
    assert regression_notice(night, SCALAR) is None
    assert not flag_issue(night, SCALAR, TrackerSettings()).open


def test_a_flags_coverage_by_the_ladder_counts_its_real_models_alone() -> None:
    helped_sentinel = sentinel(
        result("ItemBreak", ok(2, ["item"]), {SCALAR: ok(1)}), **{SCALAR: "reduces_graphs"}
    )
    figures = with_a_real_model(helped_sentinel).flags[SCALAR].figures
    assert figures.coverage and {rung.changed for rung in figures.coverage} == {1}  # "Real" alone
