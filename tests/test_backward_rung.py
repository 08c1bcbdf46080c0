"""The backward rung and time per call on the ladder's compiled rungs: the child's runs (train
mode, gradients judged; warm calls timed), the ladder's plan, the figures, the words every
surface says them in, and the verified repro of a flag that breaks only the backward pass."""

from __future__ import annotations

import pytest
from test_stack import FLAG, FLAGS, ok, result, snapshot, tonight, wrong

from triagebot.analysis import call_time, flag_stats
from triagebot.config import parse_config
from triagebot.errors import TriagebotError
from triagebot.report import issue_body, nightly_summary, words
from triagebot.results import (
    BACKWARD_RUNG,
    BASELINE,
    COUNTING_BACKEND,
    Check,
    Outcome,
    Snapshot,
    Status,
    rung_backend,
)
from triagebot.sweep.ladder import Ladder, estimate, plan_climbs

LADDER = (COUNTING_BACKEND, "aot_eager", "inductor", BACKWARD_RUNG)


def timed(graphs: int, seconds: float) -> Outcome:
    """A compiled forward rung that ran, its outputs matching, `seconds` per call."""
    outcome = ok(graphs)
    outcome.call_seconds = seconds
    return outcome


def helped(name: str, base_call: float, flag_call: float, backward: Outcome | None = None, **extra):
    """A model the flag takes from 3 graphs to 1, climbed both ways with its calls timed; its
    backward rung ran clean at baseline and gave `backward` under the flag."""
    flagged = {COUNTING_BACKEND: ok(1), "aot_eager": timed(1, flag_call)}
    if backward is not None:
        flagged[BACKWARD_RUNG] = backward
    return result(
        name,
        ok(3),
        ok(1),
        stratum="sentinel",
        ladder={
            BASELINE: {COUNTING_BACKEND: ok(3), "aot_eager": timed(3, base_call), BACKWARD_RUNG: ok(3)},
            FLAG: flagged,
        },
        **extra,
    )


def night_of_the_rungs() -> Snapshot:
    gradients = wrong(1, where="gradients.linear.weight")
    return snapshot(
        [
            helped("Faster", 0.002, 0.001, ok(1)),
            helped("Slower", 0.001, 0.002, ok(1)),
            helped(
                "WrongGrad",
                0.001,
                0.00102,
                gradients,
                ladder_confirmations={FLAG: {BACKWARD_RUNG: [gradients]}},
            ),
        ],
        ladder=LADDER,
    )


def test_a_rung_name_says_its_backend_and_whether_it_trains():
    assert rung_backend(BACKWARD_RUNG) == ("aot_eager", True)
    assert rung_backend("inductor") == ("inductor", False)
    assert rung_backend("mine:backend+backward") == ("mine:backend", True)
    assert parse_config('[sweep]\nbackends = ["aot_eager", "aot_eager+backward"]\n').sweep.backends
    with pytest.raises(TriagebotError, match="aot_eager\\+forward"):
        parse_config('[sweep]\nbackends = ["aot_eager+forward"]\n')


def test_the_backward_rung_is_estimated_within_the_ladders_budget():
    """It costs more than aot_eager's forward; a budget that fits the forward rungs alone climbs
    them and cuts the backward rung (an unreached pair naming it alone) rather than running past
    the bound, or dropping the forward rungs with it."""
    assert estimate(10.0, BACKWARD_RUNG) > estimate(10.0, "aot_eager")
    order = ["aot_eager", BACKWARD_RUNG]
    from triagebot.sweep.ladder import Rungs

    chosen = [("M", BASELINE), ("M", FLAG)]
    forward_only = 2 * estimate(1.0, "aot_eager")
    ladder = Ladder(choose=lambda *_: chosen, max_seconds=forward_only + 1)
    climbs = plan_climbs(chosen, ladder, {pair: ok(1) for pair in chosen}, Rungs(order), {"M": 1.0}, {})
    assert climbs.todo == {pair: ["aot_eager"] for pair in chosen}  # the two pairs together
    assert [(u.config, u.rungs, u.bound) for u in climbs.unreached] == [
        (BASELINE, [BACKWARD_RUNG], "seconds"),
        (FLAG, [BACKWARD_RUNG], "seconds"),
    ]
    roomy = Ladder(choose=lambda *_: chosen, max_seconds=100)
    planned = plan_climbs(chosen, roomy, {pair: ok(1) for pair in chosen}, Rungs(order), {"M": 1.0}, {})
    assert planned.todo == {pair: order for pair in chosen}
    assert planned.unreached == []


def test_a_big_models_backward_rung_never_crowds_out_a_later_failures_forward_rungs():
    """The smoke night's shape: a slow model first, then a wrong result's representative. The
    budget fits the slow model's forward rungs and the representative's climb, not also the slow
    model's backward rung: the representative climbs every rung, where its failure lives."""
    from triagebot.sweep.ladder import Rungs

    order = [COUNTING_BACKEND, "aot_eager", "inductor", BACKWARD_RUNG]
    rungs = Rungs(order, failures_only=frozenset({"inductor"}))
    chosen = [("Slow", BASELINE), ("Slow", FLAG), ("Wrong", BASELINE), ("Wrong", FLAG)]
    counted = {("Slow", BASELINE): ok(3), ("Slow", FLAG): ok(1), ("Wrong", BASELINE): ok(1)}
    counted[("Wrong", FLAG)] = wrong(1)
    seconds = {"Slow": 10.0, "Wrong": 0.1}
    slow_forward = 2 * (estimate(10.0, COUNTING_BACKEND) + estimate(10.0, "aot_eager"))
    wrong_climb = sum(estimate(0.1, rung) for rung in order) + sum(
        estimate(0.1, rung) for rung in (COUNTING_BACKEND, "aot_eager", BACKWARD_RUNG)
    )
    ladder = Ladder(choose=lambda *_: chosen, max_seconds=slow_forward + wrong_climb + 1)
    climbs = plan_climbs(chosen, ladder, counted, rungs, seconds, {})
    assert climbs.todo[("Wrong", FLAG)] == order
    assert climbs.todo[("Slow", FLAG)] == [COUNTING_BACKEND, "aot_eager"]
    assert {(u.model, tuple(u.rungs)) for u in climbs.unreached} == {("Slow", (BACKWARD_RUNG,))}


def test_a_flag_that_breaks_only_the_backward_pass_is_a_ladder_failure_of_its_own_rung():
    snap = night_of_the_rungs()
    stats = flag_stats(snap, FLAG)
    rows = {row.model: row for row in stats.ladder_rows}
    assert rows["WrongGrad"].rungs == {
        COUNTING_BACKEND: "ok",
        "aot_eager": "ok",
        BACKWARD_RUNG: "wrong",
    }
    assert (rows["WrongGrad"].failed_at, rows["WrongGrad"].lives_in) == (
        BACKWARD_RUNG,
        "AOTAutograd's backward pass",
    )
    [group] = stats.ladder_groups
    assert (group.backend, group.signature, group.baseline_too) == (
        BACKWARD_RUNG,
        "WrongResult: gradients.linear.weight",
        [],
    )
    figures = tonight(snap).flags[FLAG].figures
    assert (figures.backward_ran, figures.backward_failures) == (3, {"WrongGrad": "wrong"})
    assert figures.ladder_failures == 1
    said = words.backward(figures)
    assert said is not None and "1 of 3 models" in said and "WrongGrad (wrong gradients)" in said


def test_time_per_call_pairs_each_climbed_model_flag_against_baseline():
    snap = night_of_the_rungs()
    calls = call_time(snap, FLAG, tonight(snap).flags[FLAG].effects)
    assert calls.models == 3 and calls.helped == 3
    assert [pair.model for pair in calls.pairs] == ["Slower", "WrongGrad", "Faster"]  # largest ratio first
    assert (calls.faster, calls.slower, calls.helped_faster, calls.helped_slower) == (1, 1, 1, 1)
    assert calls.median == pytest.approx(1.02)
    assert {pair.rung for pair in calls.pairs} == {"aot_eager"}
    said = words.call_time(tonight(snap).flags[FLAG].figures)
    assert said is not None and "of the 3 models with fewer graphs, 1 faster and 1 slower" in said
    assert words.OVERHEAD in said


def test_the_highest_rung_timed_both_ways_is_the_one_compared():
    both = result(
        "Both",
        ok(2),
        ok(1),
        ladder={
            BASELINE: {"aot_eager": timed(2, 0.004), "inductor": timed(2, 0.002)},
            FLAG: {"aot_eager": timed(1, 0.003), "inductor": timed(1, 0.001)},
        },
    )
    one_side = result(
        "OneSide",
        ok(2),
        ok(1),
        ladder={BASELINE: {"aot_eager": timed(2, 0.004)}, FLAG: {"aot_eager": ok(1)}},
    )
    snap = snapshot([both, one_side], ladder=LADDER)
    calls = call_time(snap, FLAG, tonight(snap).flags[FLAG].effects)
    [pair] = calls.pairs
    assert (pair.model, pair.rung, pair.ratio) == ("Both", "inductor", pytest.approx(0.5))


def test_a_night_older_than_the_rungs_loads_and_says_what_it_did_not_measure():
    """A stored snapshot without `call_seconds` or the backward rung: no time-per-call pair, no
    backward sentence, and the not-measured line names training and time per call."""
    old = snapshot([result("Old", ok(3), ok(1), ladder={FLAG: {"aot_eager": ok(1)}})])
    again = Snapshot.model_validate_json(old.model_dump_json())
    figures = tonight(again).flags[FLAG].figures
    assert figures.call_time is None and words.call_time(figures) is None
    assert figures.backward_ran is None and words.backward(figures) is None
    line = words.not_measured(again)
    assert "training" in line and "time per call of the compiled model" in line
    measured = words.not_measured(night_of_the_rungs())
    assert "training" not in measured and "overhead, not kernels" in measured


def test_the_issue_and_the_summary_say_the_backward_rung_and_the_time_per_call():
    night = tonight(night_of_the_rungs())
    body = issue_body(night, FLAG)
    failing = "1 of 3 models that climbed to it under the flag fails there"
    assert failing in body and "WrongGrad (wrong gradients)" in body
    assert "Time per call on the ladder's compiled rungs" in body
    assert "| `Slower` | `aot_eager` | 3 -> 1 | 1.00 ms | 2.00 ms | 2.00x |" in body
    assert "### Under `aot_eager+backward` (lives in AOTAutograd's backward pass): 1 model" in body
    summary = nightly_summary(night)
    assert failing in summary and words.OVERHEAD in summary


# --- the child's runs, with torch ------------------------------------------------------------


@pytest.mark.torch
def test_the_environment_check_knows_the_backward_rung():
    """`[sweep] backends` is checked against the installed torch before a sweep: a backward
    rung names a backend Dynamo knows, and one that names none is still refused."""
    from triagebot.sweep.validation import unknown_backends

    assert unknown_backends(["aot_eager", BACKWARD_RUNG]) == []
    [refused] = unknown_backends(["no_such_backend+backward"])
    assert refused.startswith("'no_such_backend+backward': InvalidBackend")


@pytest.mark.torch
@pytest.mark.slow
def test_the_backward_rung_judges_gradients_and_the_forward_rungs_time_their_calls():
    from triagebot.corpus import load_corpus
    from triagebot.sweep.run import CALLS, run_one

    specs = {spec.model: spec for spec in load_corpus("sentinels")}
    model = specs["WrongGradUnderScalarCapture"]
    judged = {Check.accuracy}
    forward, _ = run_one(model, FLAGS[FLAG], "cpu", fresh=True, backend="aot_eager", checks=judged)
    assert forward.ran and not forward.mismatched and forward.call_seconds and forward.call_seconds > 0
    assert "calls" in forward.stage_seconds and CALLS > 1
    base, _ = run_one(model, {}, "cpu", fresh=True, backend=BACKWARD_RUNG, checks=judged)
    assert base.ran and not base.mismatched and base.call_seconds is None
    assert "eager_backward" in base.stage_seconds
    flagged, _ = run_one(model, FLAGS[FLAG], "cpu", fresh=True, backend=BACKWARD_RUNG, checks=judged)
    assert flagged.mismatched and flagged.accuracy is not None
    assert flagged.accuracy.where == "gradients.linear.weight"
    # A model with no parameter has no backward pass: skipped, never a failure.
    bare, _ = run_one(specs["NonzeroBreak"], {}, "cpu", fresh=True, backend=BACKWARD_RUNG, checks=judged)
    assert bare.status == Status.skipped and "no backward pass" in (bare.error or "")


@pytest.mark.torch
@pytest.mark.slow
def test_the_backward_rungs_repro_trains_compares_gradients_and_is_verified():
    from triagebot.corpus import load_corpus
    from triagebot.reproduce import reproduce

    spec = next(spec for spec in load_corpus("sentinels") if spec.model == "WrongGradUnderScalarCapture")
    gradients = wrong(1, where="gradients.linear.weight")
    model = helped(
        "WrongGradUnderScalarCapture",
        0.001,
        0.001,
        gradients,
        spec=spec,
        ladder_confirmations={FLAG: {BACKWARD_RUNG: [gradients]}},
    )
    [repro] = [repro for repro in reproduce(snapshot([model], ladder=LADDER), timeout=240)]
    assert repro.backend == BACKWARD_RUNG and repro.verified, repro.observed
    assert repro.signature == "WrongResult: gradients.linear.weight"
    assert "loss.backward()" in repro.script and "backend='aot_eager'" in repro.script
    assert "aot_eager+backward" not in repro.script.split('"""', 2)[2]  # no such backend to compile with


def test_the_baseline_s_rungs_are_said_short_and_in_an_issue_only_where_they_differ():
    """With the backward rung the ladder table has a column more; naming every rung at baseline
    ("counting: ok, aot_eager: ok, aot_eager+backward: ok") in a column of its own made the smoke
    night's table wider than an issue's column. The site's cell names only the rungs that did not
    pass; an issue's rung cell says the baseline beside the flag's where the two differ."""
    rows = {row.model: row for row in flag_stats(night_of_the_rungs(), FLAG).ladder_rows}
    order = list(LADDER)
    assert words.baseline_rungs(rows["Faster"], order) == "ok"
    crashed = rows["Faster"].model_copy(
        update={"baseline_rungs": {COUNTING_BACKEND: "ok", "aot_eager": "crash"}}
    )
    assert words.baseline_rungs(crashed, order) == "aot_eager: crash, others ok"
    alone = rows["Faster"].model_copy(update={"baseline_rungs": {"aot_eager": "crash"}})
    assert words.baseline_rungs(alone, order) == "aot_eager: crash"
    assert words.baseline_rungs(rows["Faster"].model_copy(update={"baseline_rungs": {}}), order) == ""
    assert words.rung_against_baseline(rows["WrongGrad"], BACKWARD_RUNG) == "wrong (ok at baseline)"
    assert words.rung_against_baseline(rows["WrongGrad"], "aot_eager") == "ok"
    body = issue_body(tonight(night_of_the_rungs()), FLAG)
    header = next(line for line in body.splitlines() if line.startswith("| Model | Effect | `counting`"))
    assert "At baseline" not in header and header.count("|") == len(LADDER) + 4
    # the backward rung's heading can wrap at its `+`: a code span cannot, and beside a long
    # diffusers model name its whole name made the table 51 px wider than GitHub's column
    assert header.endswith("| `aot_eager` + `backward` | Lives in |")
    [row] = [
        line for line in body.splitlines() if line.startswith("| `WrongGrad`") and "backward pass |" in line
    ]
    assert "| wrong (ok at baseline) |" in row
