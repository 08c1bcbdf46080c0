"""The backend ladder's decisions, without children: which rungs a pair climbs, which pairs fit
the bounds (and which are said not to have been reached), the time budget as rungs finish, and
the unreached pairs through the stream into the snapshot."""

from __future__ import annotations

import dataclasses
import json

from triagebot.results import (
    BACKWARD_RUNG,
    BASELINE,
    COUNTING_BACKEND,
    Accuracy,
    AccuracyCheck,
    Check,
    CorpusSelection,
    Environment,
    ModelResult,
    ModelSpec,
    Outcome,
    RunRecord,
    Status,
    SweepHeader,
    UnreachedPair,
)
from triagebot.results.rungs import RUNGS, Rung
from triagebot.sweep import merge
from triagebot.sweep.climb import _Climber
from triagebot.sweep.ladder import Climbs, Ladder, Rungs, plan_climbs, to_climb
from triagebot.sweep.pool import Result
from triagebot.sweep.progress import NullProgress
from triagebot.sweep.stream import still_unreached
from triagebot.sweep.tasks import RunKey, RunRequest

FLAG = "capture_scalar_outputs"
CPU = Rungs([COUNTING_BACKEND, "aot_eager", "inductor"], frozenset({"inductor"}))


def ok(seconds: float = 1.0) -> Outcome:
    return Outcome(status=Status.ok, graphs=1, seconds=seconds)


def crash(seconds: float = 1.0) -> Outcome:
    return Outcome(status=Status.crash, error_type="E", signature="E: e", seconds=seconds)


def wrong(seconds: float = 1.0) -> Outcome:
    return ok(seconds).model_copy(update={"accuracy": AccuracyCheck(verdict=Accuracy.mismatch, where="x")})


def ladder(**bounds) -> Ladder:
    return Ladder(choose=lambda results, flags: [], recompiles=True, **bounds)


def test_the_cpu_ladder_gives_inductor_to_the_failures_representatives_and_the_rotation_only():
    backward = BACKWARD_RUNG  # last by default: it runs train mode on the pairs that climbed
    rotating = frozenset({"inductor"})  # the models a flag changes climb it, in rotation
    assert ladder().rungs("cpu", compiler=True) == Rungs([*CPU.order, backward], CPU.failures_only, rotating)
    assert ladder().rungs("cpu", compiler=False).order == [COUNTING_BACKEND, "aot_eager", backward]
    assert ladder().rungs("cuda") == Rungs([COUNTING_BACKEND, "aot_eager", "inductor", backward])
    assert ladder(backends=["aot_eager"]).rungs("cpu") == Rungs([COUNTING_BACKEND, "aot_eager"])
    assert CPU.of(ok()) == [COUNTING_BACKEND, "aot_eager"]  # a helped model
    assert CPU.of(crash()) == ["aot_eager", "inductor"]  # no second call to make
    assert CPU.of(wrong()) == [COUNTING_BACKEND, "aot_eager", "inductor"]
    assert CPU.of(Outcome(status=Status.skipped)) == ["aot_eager"]
    rotation = Rungs(CPU.order, CPU.failures_only, rotating)
    assert rotation.of(ok(), rotating=True) == [COUNTING_BACKEND, "aot_eager", "inductor"]
    assert rotation.of(ok()) == [COUNTING_BACKEND, "aot_eager"]  # a sampled model at baseline


def test_the_rotation_s_pairs_climb_inductor_within_a_budget_that_scales_with_the_workers():
    chosen = [("Helped", BASELINE), ("Helped", FLAG)]
    counted = {pair: ok() for pair in chosen}
    rungs = Rungs(CPU.order, CPU.failures_only, frozenset({"inductor"}))
    # Each pair: counting 2.5 + aot_eager 2 + inductor 30 (its floor) = 34.5 s; 69 s for both.
    bounded = ladder(max_seconds=40.0)
    alone = plan_climbs(chosen, bounded, counted, rungs, {"Helped": 1.0}, {}, rotation=set(chosen))
    assert not alone.todo  # one worker's 40 s: the model's pairs do not fit together
    two = plan_climbs(chosen, bounded, counted, rungs, {"Helped": 1.0}, {}, rotation=set(chosen), workers=2)
    assert two.todo == {pair: [COUNTING_BACKEND, "aot_eager", "inductor"] for pair in chosen}
    plain = plan_climbs(chosen, bounded, counted, rungs, {"Helped": 1.0}, {}, workers=2)
    assert plain.todo == {pair: [COUNTING_BACKEND, "aot_eager"] for pair in chosen}


def test_a_pair_resumes_at_its_first_missing_rung_and_stops_at_a_failure_unless_it_climbs_through():
    climbed = {
        COUNTING_BACKEND: RunRecord(model="m", config=BASELINE, outcome=ok(), backend=COUNTING_BACKEND)
    }
    assert to_climb([COUNTING_BACKEND, "aot_eager"], climbed) == ["aot_eager"]
    failed = {"aot_eager": RunRecord(model="m", config=FLAG, outcome=crash(), backend="aot_eager")}
    assert to_climb(["aot_eager", "inductor"], failed) == []
    assert to_climb(["aot_eager", "inductor"], failed, through=True) == ["inductor"]


def test_pairs_are_admitted_in_priority_order_while_their_estimate_fits_the_budget():
    """Each model's pairs together; a pair that does not fit is not reached, a cheaper one after
    it still climbs; the seconds already recorded are spent."""
    chosen = [("Rep", BASELINE), ("Rep", FLAG), ("Big", BASELINE), ("Big", FLAG), ("Small", BASELINE)]
    counted = {
        ("Rep", BASELINE): ok(),
        ("Rep", FLAG): crash(),
        ("Big", BASELINE): ok(),
        ("Big", FLAG): ok(),
        ("Small", BASELINE): ok(),
    }
    seconds = {"Rep": 1.0, "Big": 20.0, "Small": 1.0}
    # Rep: baseline counting 2.5 + aot_eager 2, flag aot_eager 2 + inductor 30 (its floor) = 36.5;
    # Big: 20 s * 4.5 per pair = 180; Small: 4.5
    climbs = plan_climbs(chosen, ladder(max_seconds=45.0), counted, CPU, seconds, {})
    assert climbs.todo == {
        ("Rep", BASELINE): [COUNTING_BACKEND, "aot_eager"],
        ("Rep", FLAG): ["aot_eager", "inductor"],
        ("Small", BASELINE): [COUNTING_BACKEND, "aot_eager"],
    }
    assert climbs.through == {("Rep", FLAG)} and climbs.runs == 6
    assert [(u.model, u.config, u.rungs, u.bound) for u in climbs.unreached] == [
        ("Big", BASELINE, [COUNTING_BACKEND, "aot_eager"], "seconds"),
        ("Big", FLAG, [COUNTING_BACKEND, "aot_eager"], "seconds"),
    ]
    spent = {
        ("Small", BASELINE, COUNTING_BACKEND): RunRecord(model="Small", config=BASELINE, outcome=ok(20.0))
    }
    again = plan_climbs(chosen, ladder(max_seconds=45.0), counted, CPU, seconds, spent)
    assert list(again.todo) == [("Small", BASELINE)] and again.todo[("Small", BASELINE)] == ["aot_eager"]
    cut = plan_climbs(chosen, ladder(max_pairs=3), counted, CPU, seconds, {})
    assert list(cut.todo) == [("Rep", BASELINE), ("Rep", FLAG)]  # Big's baseline pair waits for its flag's
    assert [(u.model, u.config, u.bound) for u in cut.unreached] == [
        ("Big", BASELINE, "pairs"),
        ("Big", FLAG, "pairs"),
        ("Small", BASELINE, "pairs"),
    ]


class Drops(NullProgress):
    def __init__(self) -> None:
        self.dropped = 0

    def resize(self, runs: int) -> None:
        self.dropped -= runs


class Keep:
    def __init__(self) -> None:
        self.progress = Drops()


def climber(todo, through=(), confirm=0, checks=()) -> _Climber:
    spec = ModelSpec(model="m")
    results = {"m": ModelResult(model="m", outcomes={BASELINE: ok(), FLAG: ok()}, spec=spec)}
    configs = {BASELINE: {}, FLAG: {FLAG: True}}
    climbs = Climbs(todo=todo, through=set(through))
    return _Climber(climbs, results, configs, {"m": 1.0}, 0.0, confirm, checks)


def finish(
    climbing: _Climber, config: str, rung: str, outcome: Outcome, budget: float | None, keep: Keep
) -> None:
    task = climbing.tasks.popleft()
    assert task.key == RunKey("m", config, 0, rung)
    record = RunRecord(model="m", config=config, outcome=outcome, backend=rung)
    climbing.done(record, budget, keep)


def test_a_rung_that_no_longer_fits_what_is_left_of_the_budget_is_not_run():
    keep = Keep()
    climbing = climber({("m", BASELINE): [COUNTING_BACKEND, "aot_eager"]})
    climbing.fill(2, 10.0, keep)
    assert len(climbing.tasks) == 1  # a pair's rungs one at a time
    finish(climbing, BASELINE, COUNTING_BACKEND, ok(8.5), 10.0, keep)  # estimated 2.5, took 8.5
    assert not climbing.tasks and keep.progress.dropped == 1
    # it waits for the next plan, which says it was not reached if it still does not fit (below)
    assert not climbing.pending and ("m", BASELINE) not in climbing.rest


def test_each_rung_asks_its_child_for_the_sweeps_checks_the_counting_rung_for_a_second_shape_too():
    keep = Keep()
    spec, accuracy = ModelSpec(model="m"), frozenset({Check.accuracy})
    climbing = climber({("m", FLAG): [COUNTING_BACKEND, "aot_eager"]}, checks=accuracy)
    climbing.fill(1, None, keep)
    assert climbing.tasks[0].request == RunRequest(spec, {FLAG: True}, accuracy | {Check.recompiles})
    finish(climbing, FLAG, COUNTING_BACKEND, ok(), None, keep)
    assert climbing.tasks[0].request == RunRequest(spec, {FLAG: True}, accuracy, backend="aot_eager")
    record = RunKey("m", FLAG, 0, "aot_eager").record(ok(), ModelSpec(model="m"))
    assert (record.config, record.attempt, record.backend) == (FLAG, 0, "aot_eager")


def test_a_failure_stops_a_pair_but_not_a_representative_and_reserves_its_confirmations():
    keep = Keep()
    climbing = climber({("m", BASELINE): ["aot_eager", "inductor"]})
    climbing.fill(1, None, keep)
    finish(climbing, BASELINE, "aot_eager", crash(), None, keep)
    assert not climbing.tasks and keep.progress.dropped == 1
    keep = Keep()
    climbing = climber({("m", FLAG): ["aot_eager", "inductor"]}, through=[("m", FLAG)], confirm=1)
    climbing.fill(1, 100.0, keep)
    finish(climbing, FLAG, "aot_eager", crash(4.0), 100.0, keep)
    assert climbing.spent == 8.0  # the run and its confirmation to come
    finish(climbing, FLAG, "inductor", ok(), 100.0, keep)
    assert keep.progress.dropped == 0 and not climbing.tasks and not climbing.pending


def test_the_unreached_pairs_go_through_the_stream_into_the_snapshot(tmp_path):
    header = SweepHeader(
        environment=Environment(torch_version="2.13.0"),
        flags={FLAG: {FLAG: True}},
        corpus=CorpusSelection(name="test", models=["m"]),
        ladder=[COUNTING_BACKEND, "aot_eager"],
    )
    runs = [RunRecord(model="m", config=config, outcome=ok()) for config in (BASELINE, FLAG)]
    first = UnreachedPair(model="m", config=FLAG, rungs=[COUNTING_BACKEND, "aot_eager"], bound="seconds")
    lines = [header, *runs, first]
    path = tmp_path / "sweep.jsonl"
    path.write_text("".join(line.model_dump_json() + "\n" for line in lines), encoding="utf-8")
    assert json.loads(path.read_text().splitlines()[-1])["kind"] == "unreached"
    assert merge([path]).ladder_unreached == [first]
    # resumed: the counting rung ran after all, and the last word on the pair is the one kept
    climbed = RunRecord(model="m", config=FLAG, outcome=ok(), backend=COUNTING_BACKEND)
    later = first.model_copy(update={"bound": "pairs"})
    assert still_unreached([first, later], [*runs, climbed]) == [
        later.model_copy(update={"rungs": ["aot_eager"]})
    ]


def test_a_sweep_gives_the_failures_only_rung_to_representatives_and_names_the_pairs_it_cut(
    tmp_path, monkeypatch
):
    """Real children, the CPU's default ladder with the test backend in Inductor's place (it
    fails where Inductor's lowering did, at a fraction of its compile time): the crash's
    representative climbs past its failure to it, a helped model does not climb it, and the pair
    beyond `max_pairs` (2 per worker, 4 on 2 workers) is in the snapshot as not reached."""
    import functools

    import pytest

    from triagebot.analysis import ladder_pairs
    from triagebot.corpus import load_corpus
    from triagebot.sweep import SweepPlan, read_stream, run_sweep

    injected = "ladder_backends:refuses_unbacked"  # a rung of its own, in the table as any other
    for shipped in ("inductor", BACKWARD_RUNG):
        monkeypatch.setitem(RUNGS, shipped, dataclasses.replace(RUNGS[shipped], default=False))
    only_failures = Rung(name=injected, lives_in=injected, failures_only=frozenset({"cpu"}), default=True)
    monkeypatch.setitem(RUNGS, injected, only_failures)
    names = ["NonzeroGuardCrash", "ItemBreak", "ItemMatmul"]
    specs = [spec for spec in load_corpus("sentinels") if spec.model in names]
    flags = {FLAG: {FLAG: True}, "dynamic": {"capture_dynamic_output_shape_ops": True}}
    climbing = Ladder(choose=functools.partial(ladder_pairs, sample=()), recompiles=True, max_pairs=2)
    out = tmp_path / "sweep.jsonl"
    options = dict(corpus="sentinels", device="cpu", jobs=2, timeout=120, confirm=1, ladder=climbing)
    run_sweep(SweepPlan(specs, flags, out, **options))
    if injected not in read_stream(out)[0].ladder:
        pytest.skip("no C++ compiler here: the CPU ladder has no Inductor rung")
    snapshot = merge([out])
    by_model = {result.model: result for result in snapshot.results}
    assert list(by_model["NonzeroGuardCrash"].ladder["dynamic"]) == ["aot_eager", injected]
    assert list(by_model["NonzeroGuardCrash"].ladder[BASELINE]) == [COUNTING_BACKEND, "aot_eager"]
    # both helped models change by one graph: the first by name climbs, the other is cut
    assert list(by_model["ItemBreak"].ladder[FLAG]) == [COUNTING_BACKEND, "aot_eager"]
    assert [(u.model, u.config, u.rungs, u.bound) for u in snapshot.ladder_unreached] == [
        ("ItemMatmul", BASELINE, [COUNTING_BACKEND, "aot_eager"], "pairs"),
        ("ItemMatmul", FLAG, [COUNTING_BACKEND, "aot_eager"], "pairs"),
    ]


def test_a_failures_representative_climbs_alone_when_its_comparison_does_not_fit():
    chosen = [("Rep", BASELINE), ("Rep", FLAG)]
    counted = {("Rep", BASELINE): ok(), ("Rep", FLAG): crash()}
    # the pair with its baseline: 2.5 + 2 + 2 + 30 = 36.5; the representative alone: 32
    climbs = plan_climbs(chosen, ladder(max_seconds=33.0), counted, CPU, {"Rep": 1.0}, {})
    assert climbs.todo == {("Rep", FLAG): ["aot_eager", "inductor"]}
    assert [(u.config, u.rungs) for u in climbs.unreached] == [(BASELINE, [COUNTING_BACKEND, "aot_eager"])]


class Counted(NullProgress):
    """The ladder phase's total, as a display shows it, and the runs it made."""

    def __init__(self) -> None:
        self.total = self.made = 0

    def phase(self, name, total, recorded=(), note=""):
        self.total = total

    def update(self, record):
        self.made += 1

    def resize(self, runs):
        self.total += runs


class QuickPool:
    """Every rung ok in `seconds`: far less than the ladder's estimates."""

    jobs = 2

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def run(self, tasks):
        while tasks:
            task = tasks.popleft()
            yield Result(task, ok(self.seconds), task.request.spec)


class Written:
    def __init__(self) -> None:
        self.lines = []

    def write(self, line) -> None:
        self.lines.append(line)


def test_what_the_estimates_kept_out_climbs_once_the_seconds_spent_show_room():
    """Five models whose sweep runs took 4 s: the plan fits two (each pair's climb estimated at
    (2.5 + 2) x 4 = 18 s, a model's two pairs 36 s, of 80: 40 per worker, two workers); their
    rungs take 1 s each, so the ladder plans again against the 8 s spent (and estimates scaled to
    what the rungs took) and climbs the rest. Under 40 s, with rungs of 3 s, three models climb,
    and the final word on what was not reached is the last plan's. The display's total grows with
    what each round admits."""
    from triagebot.sweep.climb import run_ladder
    from triagebot.sweep.keeper import Keeper

    models = [f"M{index}" for index in range(5)]
    records = [
        RunRecord(model=model, config=config, outcome=ok(4.0), spec=ModelSpec(model=model))
        for model in models
        for config in (BASELINE, FLAG)
    ]
    chosen = [(model, config) for model in models for config in (BASELINE, FLAG)]
    progress, written = Counted(), Written()
    keep = Keeper(written, list(records), progress)
    bounded = Ladder(choose=lambda results, flags: chosen, recompiles=True, max_seconds=40.0)
    rungs = Rungs([COUNTING_BACKEND, "aot_eager"])
    run_ladder(QuickPool(1.0), keep, bounded, rungs, {FLAG: {FLAG: True}}, 0, ())
    climbed = {(r.model, r.config, r.backend) for r in keep.records if r.backend}
    assert climbed == {(m, c, rung) for m, c in chosen for rung in rungs.order}
    assert [line for line in written.lines if isinstance(line, UnreachedPair)] == []
    assert progress.made == progress.total == 20

    keep = Keeper(Written(), list(records), Counted())
    tight = Ladder(choose=lambda results, flags: chosen, recompiles=True, max_seconds=20.0)
    run_ladder(QuickPool(3.0), keep, tight, rungs, {FLAG: {FLAG: True}}, 0, ())
    unreached = [line for line in keep.writer.lines if isinstance(line, UnreachedPair)]
    made = {(r.model, r.config) for r in keep.records if r.backend}
    assert {model for model, _ in made} == {"M0", "M1", "M2"}  # 36 s of the 40, at 3 s a rung
    assert {(u.model, u.config) for u in unreached} == set(chosen) - made
    assert keep.progress.made == keep.progress.total == len(made) * 2


def test_each_rungs_estimates_follow_what_its_runs_took_tonight():
    """The smoke night's shape: a slow crash's representative climbs first and its Inductor rung
    takes a quarter of its estimate (a warm C++ cache); the next representative's climb, which
    the table's estimate says does not fit what is left, fits at tonight's scale, and climbs."""
    from triagebot.sweep.ladder import calibration, estimate

    took = RunRecord(
        model="Slow", config=FLAG, outcome=ok(estimate(14.0, "inductor") / 4), backend="inductor"
    )
    cut = RunRecord(model="Slow", config=BASELINE, outcome=crash(1.0), backend="aot_eager")  # ended early
    scale = calibration(
        {("Slow", FLAG, "inductor"): took, ("Slow", BASELINE, "aot_eager"): cut}, {"Slow": 14.0}
    )
    assert scale == {"inductor": 0.25}  # a crash says nothing of what a whole run costs
    chosen = [("Next", FLAG)]
    counted = {("Next", FLAG): crash()}
    climb = estimate(10.0, "aot_eager") + estimate(10.0, "inductor")  # 20 + 80
    tight = ladder(max_seconds=climb / 2)
    assert plan_climbs(chosen, tight, counted, CPU, {"Next": 10.0}, {}).todo == {}
    calibrated = plan_climbs(chosen, tight, counted, CPU, {"Next": 10.0}, {}, scale=scale)
    assert calibrated.todo == {("Next", FLAG): ["aot_eager", "inductor"]}
