"""What a flag costs in compile time: paired ratios per model, the night's noise floor from
baselines run twice, the figures every surface prints, and the sweep runs that measure it."""

from __future__ import annotations

import pytest
from builders import SCALAR, crash, night_of, ok, result, snapshot

from triagebot.analysis import compile_time
from triagebot.analysis.compile_time import noise_floor
from triagebot.config import Config, TrackerSettings
from triagebot.report import issue_body, words
from triagebot.results import (
    BASELINE,
    BASELINE_AGAIN,
    FlagSettings,
    ModelSpec,
    Outcome,
    RunRecord,
    VerdictRow,
)
from triagebot.sweep.schedule import NOISE_RUN_SECONDS, Schedule, noise_models
from triagebot.sweep.stream import model_results


def timed(graphs: int, compile_seconds: float, reasons=("capture_scalar_outputs",)) -> Outcome:
    return ok(
        graphs, reasons, stage_seconds={"build": 0.1, "compile": compile_seconds}, seconds=compile_seconds
    )


def corpus(ratios: dict[str, float], again: dict[str, float] | None = None, base: float = 2.0):
    """A night of models compiling in `base` seconds at baseline and `base * ratio` under the
    flag; `again`: models whose baseline ran twice, the second run's ratio to the first."""
    again = again or {}
    return snapshot(
        [
            result(
                model,
                timed(2, base),
                {SCALAR: timed(1, base * ratio)},
                baseline_again=timed(2, base * again[model]) if model in again else None,
            )
            for model, ratio in ratios.items()
        ]
    )


def rows_of(tonight):
    return night_of(tonight).flags[SCALAR]


def test_hundreds_of_models_give_the_median_the_spread_and_the_largest_risers():
    ratios = {f"Model{i:03d}": 1.0 + i / 100 for i in range(300)}  # 1.00 .. 3.99
    state = rows_of(corpus(ratios, again={"Model000": 1.05, "Model001": 0.9}))
    cost = state.figures.compile_time
    assert cost.models == 300
    assert cost.median == pytest.approx(2.495)
    assert cost.low == pytest.approx(1.299) and cost.high == pytest.approx(3.691)
    assert cost.noise_floor == pytest.approx(round(1 / 0.9, 3)) and cost.noise_models == 2
    assert [riser.model for riser in cost.risers] == [
        "Model299",
        "Model298",
        "Model297",
        "Model296",
        "Model295",
    ]
    assert cost.risers[0].baseline_seconds == 2.0 and cost.risers[0].flag_seconds == pytest.approx(7.98)
    assert cost.rose == sum(ratio > cost.noise_floor for ratio in ratios.values())
    assert sum(cost.bins) == 300
    said = words.compile_time(state.figures)
    assert "2.50x the baseline's" in said and "compilation is slower" in said and "no measurable" not in said


def test_a_change_inside_the_noise_floor_is_no_measurable_change_never_a_finding():
    ratios = {"A": 1.04, "B": 1.08, "C": 0.97}
    state = rows_of(corpus(ratios, again={"A": 1.1, "B": 0.95}))
    cost = state.figures.compile_time
    assert cost.noise_floor == 1.1 and not cost.measurable and cost.rose == 0
    assert "no measurable change. No model has a compile-time history" in words.compile_time(state.figures)
    row = next(line for line in state.verdict.lines if line.what == VerdictRow.compile_slower)
    assert row.models == 0 and not row.blocks


def test_without_a_floor_measured_tonight_nothing_is_measurable():
    state = rows_of(corpus({"A": 3.0, "B": 3.0}))
    cost = state.figures.compile_time
    assert cost.noise_floor is None and not cost.measurable and cost.rose == 0
    assert [riser.model for riser in cost.risers] == ["A", "B"]  # named, with their seconds
    said = words.compile_time(state.figures)
    assert "not measured tonight" in said and "no measurable change." in said


def test_only_models_the_flag_could_affect_and_that_compiled_both_ways_are_paired():
    tonight = snapshot(
        [
            result("Ran", timed(2, 1.0), {SCALAR: timed(1, 2.0)}),
            result("Skipped", timed(1, 1.0, reasons=()), {SCALAR: Outcome(status="skipped")}),
            result("Crashed", timed(2, 1.0), {SCALAR: crash()}),
            result("Untimed", ok(2, ["capture_scalar_outputs"]), {SCALAR: timed(1, 2.0)}),
        ]
    )
    cost = compile_time(tonight, SCALAR, [row for row in night_of(tonight).flags[SCALAR].effects])
    assert cost.models == 1 and cost.median == 2.0


def test_the_noise_floor_is_the_largest_spread_either_way():
    tonight = corpus({"A": 1.0, "B": 1.0, "C": 1.0}, again={"A": 1.2, "B": 0.5})
    assert noise_floor(tonight) == (2.0, 2)


def test_compile_time_blocks_only_past_a_configured_median_beyond_the_floor():
    tonight = corpus({"A": 2.0, "B": 2.2, "C": 1.9}, again={"A": 1.1})
    # By default it stands beside the verdict (which waits, blocked by nothing, for Inductor's coverage).
    assert not night_of(tonight).flags[SCALAR].verdict.blockers
    config = Config(tracker=TrackerSettings(compile_time_blocks=1.5))
    state = night_of(tonight, config=config).flags[SCALAR]
    assert not state.verdict.ready
    assert [line.what for line in state.verdict.blockers] == [VerdictRow.compile_slower]
    loose = night_of(tonight, config=Config(tracker=TrackerSettings(compile_time_blocks=3.0))).flags[SCALAR]
    assert not loose.verdict.blockers


def test_a_threshold_at_or_below_one_is_refused():
    with pytest.raises(ValueError, match="compile_time_blocks"):
        TrackerSettings(compile_time_blocks=1.0)


def test_the_issue_says_the_compile_time_sentence_and_the_risers_table():
    tonight = corpus({"A": 2.0, "B|`@x": 2.5, "C": 1.9}, again={"A": 1.1})
    night = night_of(tonight)
    body = issue_body(night, SCALAR)
    assert words.compile_time(night.flags[SCALAR].figures) in body
    assert "| Compile time rose most | Baseline | With the flag | Ratio |" in body
    assert "| `A` | 2.00 s | 4.00 s | 2.00x |" in body
    assert "| `B\\|'@x` | 2.00 s | 5.00 s | 2.50x |" in body  # a name keeps the table whole, pings no one


# --- the sweep's side: the noise sample's baselines run twice ---


def spec(model: str) -> ModelSpec:
    return ModelSpec(model=model, source="sentinel")


def test_the_noise_sample_is_fixed_bounded_and_the_same_for_any_order_or_shard():
    names = [f"Model{i}" for i in range(500)]
    drawn = noise_models([spec(name) for name in names], 5)
    assert len(drawn) == 5
    assert drawn == noise_models([spec(name) for name in reversed(names)], 5)
    assert noise_models([spec(name) for name in names], 0) == frozenset()


def test_a_sampled_baseline_runs_again_after_its_flags_only_when_it_ran_and_was_short():
    flags = {SCALAR: FlagSettings(patch={SCALAR: True})}
    schedule = Schedule([spec("A"), spec("B"), spec("C")], flags, [], (), noise={"A", "B"})
    schedule.after_baseline(RunRecord(model="A", config=BASELINE, outcome=timed(2, 1.0)))
    schedule.after_baseline(
        RunRecord(model="B", config=BASELINE, outcome=timed(2, NOISE_RUN_SECONDS + 1))  # too long
    )
    schedule.after_baseline(RunRecord(model="C", config=BASELINE, outcome=timed(2, 1.0)))  # not sampled
    queued = [(task.key.model, task.key.config) for task in schedule.tasks]
    assert ("A", BASELINE_AGAIN) in queued
    assert queued.index(("A", SCALAR)) < queued.index(("A", BASELINE_AGAIN))
    assert ("B", BASELINE_AGAIN) not in queued and ("C", BASELINE_AGAIN) not in queued
    # the progress counts both sampled second runs, then drops the one not made: never "4/3"
    assert schedule.planned == 3 * 2 + 2
    assert schedule.take_not_again() == 1 and schedule.take_not_again() == 0


def test_a_stream_keeps_the_second_baseline_apart_from_the_configs():
    records = [
        RunRecord(model="A", config=BASELINE, outcome=timed(2, 1.0)),
        RunRecord(model="A", config=SCALAR, outcome=timed(1, 2.0)),
        RunRecord(model="A", config=BASELINE_AGAIN, outcome=timed(2, 1.1)),
    ]
    (model,) = model_results(records, [BASELINE, SCALAR])
    assert set(model.outcomes) == {BASELINE, SCALAR}
    assert model.baseline_again.stage_seconds["compile"] == 1.1


# --- end to end: a sentinel made slow to compile under the flag, on purpose ---


@pytest.mark.torch
def test_a_sentinel_slow_to_compile_under_the_flag_is_reported_as_a_compile_time_rise(tmp_path):
    from triagebot.config import DEFAULT_FLAGS
    from triagebot.corpus import load_corpus
    from triagebot.sweep import SweepPlan, merge, run_sweep

    names = {"ItemBreak", "NonzeroBreak", "WrongUnderScalarCapture", "SlowUnderScalarCapture"}
    specs = [spec for spec in load_corpus("sentinels") if spec.model in names]
    # 200 iterations rather than 40 (a longer input): a rise well beyond a busy machine's noise floor
    slow = next(spec for spec in specs if spec.model == "SlowUnderScalarCapture")
    longer = [
        tensor.model_copy(update={"shape": [40], "values": tensor.values * 5}) for tensor in slow.inputs
    ]
    specs = [spec for spec in specs if spec is not slow] + [slow.model_copy(update={"inputs": longer})]
    noise = frozenset({"ItemBreak", "NonzeroBreak", "WrongUnderScalarCapture"})
    plan = SweepPlan(specs, dict(DEFAULT_FLAGS), tmp_path / "night.jsonl", device="cpu", jobs=2, noise=noise)
    run_sweep(plan)
    tonight = merge([tmp_path / "night.jsonl"])
    assert {result.model for result in tonight.results if result.baseline_again} == noise
    state = night_of(tonight).flags[SCALAR]
    cost = state.figures.compile_time
    slow = cost.risers[0]
    assert slow.model == "SlowUnderScalarCapture", cost
    assert cost.noise_models == 3 and slow.ratio > cost.noise_floor and cost.rose >= 1
    body = issue_body(night_of(tonight), SCALAR)
    assert f"| `SlowUnderScalarCapture` | {slow.baseline_seconds:.2f} s | {slow.flag_seconds:.2f} s |" in body


def test_a_flag_s_compile_time_is_judged_against_each_model_s_own_spread_over_the_stored_nightlies():
    """Steady's baseline compiled in 1.0 to 1.1 s over six nightlies: 2.0 s under the flag is
    beyond its own spread; Jumpy's spread (0.5 to 3 s) holds the same 2.0 s; New has two
    nightlies, no spread of its own yet, and the figure says so."""

    def nightly(key: str, steady: float, jumpy: float, flagged: float = 1.0):
        return snapshot(
            [
                result("Steady", timed(3, steady), {SCALAR: timed(1, flagged)}),
                result("Jumpy", timed(3, jumpy), {SCALAR: timed(1, flagged)}),
                *(
                    [result("New", timed(3, 1.0), {SCALAR: timed(1, flagged)})]
                    if key >= "2.13.0.dev05"
                    else []
                ),
            ],
            key=key,
        )

    stored = [
        nightly(f"2.13.0.dev0{index}", steady, jumpy)
        for index, (steady, jumpy) in enumerate(
            ((1.0, 0.5), (1.1, 3.0), (1.0, 1.0), (1.05, 2.5), (1.1, 0.6), (1.0, 2.8))
        )
    ]
    tonight = nightly("2.13.0.dev07", 1.0, 1.0, flagged=2.0)
    cost = night_of(tonight, stored).flags[SCALAR].figures.compile_time
    assert (cost.history_models, cost.history_rose, cost.history_fell, cost.no_history) == (2, 1, 0, 1)
    said = words.compile_time(night_of(tonight, stored).flags[SCALAR].figures)
    assert said.endswith(
        "1 of 2 slower beyond it, 0 faster; 1 model has no history yet (fewer than 5 stored nightlies)."
    )
    alone = night_of(tonight).flags[SCALAR].figures
    assert words.compile_time(alone).endswith(
        "No model has a compile-time history of its own yet (fewer than 5 stored nightlies)."
    )
