"""The compiler stack beside the flags: wrong results, recompiles, the backend ladder, the corpus's
health; the classification from records, the checks in a run, and a sweep that climbs the ladder."""

from __future__ import annotations

from datetime import UTC, datetime

import builders
import pytest
from builders import SCALAR as FLAG
from builders import flag_patches

from triagebot.analysis import corpus_health, effect_of, flag_stats, ladder_pairs, lives_in, night
from triagebot.config import parse_config
from triagebot.report import health_body, issue_body, nightly_summary
from triagebot.report.markers import HEALTH_MARKER, notice_marker
from triagebot.results import (
    BASELINE,
    COUNTING_BACKEND,
    Accuracy,
    AccuracyCheck,
    Check,
    Effect,
    InputSpec,
    ModelResult,
    Outcome,
    RecompileCheck,
    Status,
)
from triagebot.sweep.shapes import second_shape
from triagebot.tracker.desired import HEALTH, desired_issues

FLAGS = flag_patches(FLAG)
ITEM = "Unsupported Tensor.item() call with capture_scalar_outputs=False"
ACCURACY = frozenset({Check.accuracy})  # what a sweep checks here


# --- records -----------------------------------------------------------------------------------


def ok(graphs: int, *, reasons=(), accuracy: Accuracy | None = Accuracy.match, where=None, recompile=None):
    check = (
        AccuracyCheck(verdict=accuracy, where=where, detail="largest difference 0.5") if accuracy else None
    )
    return Outcome(
        status=Status.ok,
        graphs=graphs,
        ops=graphs * 10,
        break_reasons=list(reasons),
        accuracy=check,
        recompile=recompile,
        seconds=1.0,
    )


def wrong(graphs: int, where: str = "logits") -> Outcome:
    return ok(graphs, accuracy=Accuracy.mismatch, where=where)


def crash(error_type: str = "BackendCompilerFailed", message: str = "RuntimeError: boom") -> Outcome:
    return builders.crash(error_type, message, seconds=1.0)


def result(
    name: str, baseline: Outcome, flagged: Outcome, stratum: str = "decoder_llm", **extra
) -> ModelResult:
    return ModelResult(model=name, stratum=stratum, outcomes={BASELINE: baseline, FLAG: flagged}, **extra)


def snapshot(results, key="2.13.0", git="b" * 40, ladder=(COUNTING_BACKEND, "aot_eager", "inductor")):
    return builders.snapshot(
        results,
        key=key,
        git=git,
        corpus="smoke",
        created=datetime(2026, 11, 22, tzinfo=UTC),
        checks=["accuracy"],
        ladder=list(ladder),
    )


def tonight(snap, history=()):
    """The night of `snap` against the last of `history`, as `pipeline.night_of` builds it."""
    history = list(history)
    return night(snap, history, history[-1] if history else None)


# --- wrong results -----------------------------------------------------------------------------


def test_a_confirmed_mismatch_is_a_wrong_result_whatever_its_graph_counts():
    fewer = result("Fewer", ok(3), wrong(1), confirmations={FLAG: [wrong(1)]})
    assert effect_of(fewer, FLAG) == Effect.wrong_result
    unconfirmed = result("Once", ok(3), wrong(1), confirmations={FLAG: [ok(1)]})
    assert effect_of(unconfirmed, FLAG) == Effect.flaky
    nondeterministic = result("Noisy", ok(3), ok(1, accuracy=Accuracy.nondeterministic))
    assert effect_of(nondeterministic, FLAG) == Effect.reduces_graphs  # not judged
    stats = flag_stats(snapshot([fewer, unconfirmed, nondeterministic]), FLAG)
    [group] = stats.wrong_result_groups
    assert (group.models, group.signature) == (["Fewer"], "WrongResult: logits")
    assert [g.models for g in stats.flaky_groups] == [["Once"]]
    assert stats.nondeterministic == ["Noisy"]


def test_a_wrong_result_the_baseline_gives_too_is_not_the_flags():
    """PaliGemma on torch 2.13 CPU: its outputs differ from eager's at baseline and under the
    flag alike, both confirmed; the flag removes three graphs and changes nothing else."""
    both = result("BothWrong", wrong(4), wrong(1), confirmations={BASELINE: [wrong(4)], FLAG: [wrong(1)]})
    assert effect_of(both, FLAG) == Effect.reduces_graphs
    # A baseline mismatch that did not repeat proves nothing: the flag's confirmed one counts.
    once = result("OnceAtBaseline", wrong(4), wrong(1), confirmations={BASELINE: [ok(4)], FLAG: [wrong(1)]})
    assert effect_of(once, FLAG) == Effect.wrong_result
    assert flag_stats(snapshot([both, once]), FLAG).wrong_result_groups[0].models == ["OnceAtBaseline"]


def test_wrong_results_come_before_crashes_in_the_summary_and_the_issue():
    snap = snapshot(
        [
            result("Fewer", ok(3), wrong(1), confirmations={FLAG: [wrong(1)]}),
            result("Crashy", ok(2), crash(), confirmations={FLAG: [crash()]}),
        ]
    )
    summary = nightly_summary(tonight(snap))
    header = next(line for line in summary.splitlines() if line.startswith("| Flag"))
    assert header.index("Wrong results") < header.index("Crashes")
    assert (
        f"| `{FLAG}` | **Not ready** | 1 of 2 testable models (50%) | 1 of 2 testable models (50%) |"
        in summary
    )
    body = issue_body(tonight(snap), FLAG)
    assert body.index("## Wrong results") < body.index("## Crashing models")
    assert "**1 of 2 testable models (50%)** gives a wrong result" in body


def test_a_new_wrong_result_is_a_change_between_nightlies():
    from triagebot.analysis import diff

    before = snapshot([result("Fewer", ok(3), ok(1))], key="2.13.0.dev1", git="a" * 40)
    after = snapshot([result("Fewer", ok(3), wrong(1), confirmations={FLAG: [wrong(1)]})], key="2.13.0.dev2")
    change = diff(before, after).flags[FLAG]
    [wrong_now] = change.newly_wrong
    assert (wrong_now.model, wrong_now.old_effect, wrong_now.new_effect) == (
        "Fewer",
        Effect.reduces_graphs,
        Effect.wrong_result,
    )
    assert wrong_now.error.startswith("logits: ") and change.has_changes and not change.newly_crashing


# --- the backend ladder ------------------------------------------------------------------------


def climbed(**rungs: Outcome) -> dict[str, Outcome]:
    return dict(rungs)


def test_each_failure_says_where_it_lives_and_whether_a_benefit_survives():
    """The rungs are injected as records: a failure under aot_eager lives in AOTAutograd, one
    first under inductor in Inductor, a crash of the sweep in Dynamo."""
    aot = crash("BackendCompilerFailed", "RuntimeError: aliased output")
    inductor = crash("InductorError", "LoweringException: unbacked")
    results = [
        result(
            "Survives",
            ok(3),
            ok(1),
            ladder={
                BASELINE: climbed(counting=ok(3), aot_eager=ok(3), inductor=ok(3)),
                FLAG: climbed(counting=ok(1), aot_eager=ok(1), inductor=ok(1)),
            },
        ),
        result(
            "InductorOnly",
            ok(3),
            ok(1),
            ladder={
                BASELINE: climbed(counting=ok(3), aot_eager=ok(3), inductor=ok(3)),
                FLAG: climbed(counting=ok(1), aot_eager=ok(1), inductor=inductor),
            },
            ladder_confirmations={FLAG: {"inductor": [inductor]}},
        ),
        result(
            "AotEverywhere",
            ok(3),
            ok(1),
            ladder={
                BASELINE: climbed(counting=ok(3), aot_eager=aot),
                FLAG: climbed(counting=ok(1), aot_eager=aot),
            },
            ladder_confirmations={BASELINE: {"aot_eager": [aot]}, FLAG: {"aot_eager": [aot]}},
        ),
        result(
            "Crashes",
            ok(2),
            crash("GuardOnDataDependentSymNode", "Could not guard"),
            confirmations={FLAG: [crash("GuardOnDataDependentSymNode", "Could not guard")]},
            ladder={FLAG: climbed(aot_eager=crash("GuardOnDataDependentSymNode", "Could not guard"))},
        ),
        result(
            "OnceOnly",
            ok(3),
            ok(1),
            ladder={FLAG: climbed(counting=ok(1), aot_eager=aot)},
            ladder_confirmations={FLAG: {"aot_eager": [ok(1)]}},  # did not repeat
        ),
    ]
    stats = flag_stats(snapshot(results), FLAG)
    rows = {row.model: row for row in stats.ladder_rows}
    assert (rows["Survives"].survives, rows["Survives"].lives_in) == (True, None)
    assert (rows["InductorOnly"].survives, rows["InductorOnly"].lives_in) == (False, "Inductor")
    assert (rows["AotEverywhere"].failed_at, rows["AotEverywhere"].lives_in) == ("aot_eager", "AOTAutograd")
    assert rows["Crashes"].lives_in == "Dynamo"
    # A failure that did not repeat stops the climb without a verdict.
    assert rows["OnceOnly"].rungs == {"counting": "ok", "aot_eager": "flaky"}
    assert (rows["OnceOnly"].survives, rows["OnceOnly"].lives_in) == (None, None)
    # Like with like: AotEverywhere fails under aot_eager at baseline too, which judges nothing of
    # its benefit: of Survives and InductorOnly, one survives.
    assert rows["AotEverywhere"].survives is None
    assert (stats.helped_survive, stats.helped_laddered) == (1, 2)
    [dynamo] = stats.crash_groups
    assert (dynamo.lives_in, dynamo.ladder) == ("Dynamo", {"counting": "crash", "aot_eager": "crash"})
    groups = {group.backend: group for group in stats.ladder_groups}
    assert sorted(groups) == ["aot_eager", "inductor"]
    assert groups["aot_eager"].models == ["AotEverywhere"] and groups["aot_eager"].baseline_too == [
        "AotEverywhere"
    ]
    assert groups["inductor"].lives_in == "Inductor" and groups["inductor"].baseline_too == []
    assert [lives_in(rung) for rung in ("counting", "aot_eager", "inductor", "mine:backend")] == [
        "Dynamo",
        "AOTAutograd",
        "Inductor",
        "mine:backend",
    ]


def test_the_ladder_climbs_crash_representatives_changed_models_and_the_sample():
    guard = crash("GuardOnDataDependentSymNode", "Could not guard")
    results = [
        result("A1", ok(2), guard, confirmations={FLAG: [guard]}),
        result("A2", ok(2), guard, confirmations={FLAG: [guard]}),  # same group: not climbed
        result("Helped", ok(3), ok(1)),
        result("More", ok(1), ok(2)),
        result("Same", ok(2), ok(2)),
        result("Sampled", ok(1), ok(1)),
        result("Untestable", Outcome(status=Status.eager_error), Outcome(status=Status.eager_error)),
        result("Wrong", ok(1), wrong(1), confirmations={FLAG: [wrong(1)]}),
    ]
    pairs = ladder_pairs(results, FLAGS, sample=["Sampled", "Untestable", "Absent"])
    assert pairs == [
        ("A1", BASELINE),
        ("A1", FLAG),
        ("Wrong", BASELINE),
        ("Wrong", FLAG),
        ("Helped", BASELINE),
        ("Helped", FLAG),
        ("More", BASELINE),
        ("More", FLAG),
        ("Sampled", BASELINE),
    ]


def test_the_ladder_is_bounded_by_priority_and_keeps_a_models_pairs_together():
    """On the whole corpus a flag changes hundreds of models (522 pairs on torch 2.13 CPU):
    `ladder_max_pairs` keeps the failures' representatives and the largest changes."""
    from triagebot.sweep.ladder import bounded

    guard = crash("GuardOnDataDependentSymNode", "Could not guard")
    results = [result(f"Helped{n}", ok(2 + n), ok(1)) for n in range(1, 40)]
    results.append(result("Crash", ok(2), guard, confirmations={FLAG: [guard]}))
    pairs = ladder_pairs(results, FLAGS, sample=["Helped1"])
    # the crash's representative first, then the largest reductions in graphs
    assert pairs[:6] == [
        ("Crash", BASELINE),
        ("Crash", FLAG),
        ("Helped39", BASELINE),
        ("Helped39", FLAG),
        ("Helped38", BASELINE),
        ("Helped38", FLAG),
    ]
    assert bounded(pairs, 6) == pairs[:6]
    assert bounded(pairs, 5) == pairs[:4]  # never a baseline pair without its flag pair
    assert bounded(pairs, 1000) == pairs and bounded(pairs, None) == pairs
    config = parse_config("[sweep]\nladder_max_pairs = 10\n")
    assert config.sweep.ladder_max_pairs == 10 and parse_config("").sweep.ladder_max_pairs == 60


# --- recompiles --------------------------------------------------------------------------------


def recompiled(count: int, again: int = 0, change: str = "sequence 16 -> 24") -> RecompileCheck:
    return RecompileCheck(
        change=change, status="ok", recompiles=count, graphs=count, dynamic=True, again=again
    )


def test_a_flags_effect_on_recompiles_sits_beside_its_effect_on_graphs():
    results = [
        result("MoreRecompiles", ok(3, recompile=recompiled(1)), ok(1, recompile=recompiled(3))),
        result("Specialises", ok(3, recompile=recompiled(1)), ok(3, recompile=recompiled(1, again=1))),
        result(
            "OnTheLadder",
            ok(3),
            ok(1),
            ladder={
                BASELINE: {COUNTING_BACKEND: ok(3, recompile=recompiled(2))},
                FLAG: {COUNTING_BACKEND: ok(1, recompile=recompiled(1))},
            },
        ),
    ]
    stats = flag_stats(snapshot(results), FLAG)
    rows = {row.model: row for row in stats.recompiles}
    assert (rows["OnTheLadder"].baseline_recompiles, rows["OnTheLadder"].flag_recompiles) == (2, 1)
    assert stats.recompiles_more == ["MoreRecompiles", "Specialises"]
    body = issue_body(tonight(snapshot(results)), FLAG)
    assert "## Recompiles" in body
    more = "Recompiling more under the flag: 2 of 3 models called on a second shape (66.7%)**"
    assert f"{more}: `MoreRecompiles`, `Specialises`" in body


def spec(name: str, shape: list[int], kind: str = "randint", values=None, dtype="int64") -> InputSpec:
    return InputSpec(name=name, shape=shape, dtype=dtype, kind=kind, values=values, high=100)


def test_a_second_shape_grows_the_sequence_of_text_inputs():
    inputs = [
        spec("input_ids", [2, 16]),
        spec("attention_mask", [2, 16], "ones"),
        spec("decoder_input_ids", [2, 8]),
    ]
    grown, change = second_shape(inputs)
    assert [item.shape for item in grown] == [[2, 24], [2, 24], [2, 12]]
    assert change == "sequence 8 -> 12, 16 -> 24"


def test_a_second_shape_adds_a_batch_row_that_keeps_its_placeholders():
    planted = [[5, 99, 99, 6]]  # two image tokens (99) that the pixels below must match
    inputs = [
        spec("input_ids", [1, 4], "values", planted),
        spec("attention_mask", [1, 4], "ones"),
        spec("pixel_values", [1, 3, 8, 8], "randn", dtype="float32"),
        spec("image_sizes", [1, 2], "values", [[8, 8]]),
    ]
    grown, change = second_shape(inputs)
    assert change == "batch 1 -> 2"
    assert grown[0].values == [[5, 99, 99, 6], [5, 99, 99, 6]] and grown[0].shape == [2, 4]
    assert [item.shape[0] for item in grown] == [2, 2, 2, 2] and grown[3].values == [[8, 8], [8, 8]]


def test_no_second_shape_when_the_leading_axes_differ():
    flattened = [spec("input_ids", [1, 14], "values", [[1] * 14]), spec("pixel_values", [16, 1176], "randn")]
    grown, why = second_shape(flattened)
    assert grown is None and why.startswith("no second shape")


# --- corpus health -----------------------------------------------------------------------------


def test_the_corpus_health_per_stratum_with_its_trend_and_baseline_regressions():
    def nightly(key, git, graphs_b):
        return snapshot(
            [
                result("A", ok(1), ok(1), stratum="decoder_llm"),
                result("B", ok(graphs_b, reasons=[ITEM]), ok(1), stratum="decoder_llm"),
                result("C", ok(4, reasons=[ITEM, "Dynamic shape operator"]), ok(4), stratum="vl_multimodal"),
                result(
                    "D", Outcome(status=Status.eager_error), Outcome(status=Status.eager_error), stratum="vl"
                ),
                result(
                    "E",
                    Outcome(status=Status.create_error),
                    Outcome(status=Status.create_error),
                    stratum="vl",
                ),
                result(
                    "F",
                    ok(1, accuracy=Accuracy.nondeterministic, recompile=recompiled(1, again=2)),
                    ok(1),
                    stratum="vl",
                ),
            ],
            key=key,
            git=git,
        )

    old, new = nightly("2.13.0.dev1", "a" * 40, 2), nightly("2.13.0.dev2", "b" * 40, 5)
    health = corpus_health(new, [old])
    overall = health.overall
    assert (overall.models, overall.built, overall.ran_eagerly, overall.compiled, overall.one_graph) == (
        6,
        5,
        4,
        4,
        2,
    )
    assert (overall.mean_graphs, overall.p90_graphs, overall.max_ops, overall.max_ops_model) == (
        2.75,
        5.0,
        50,
        "B",
    )
    assert [m.model for m in overall.top_models] == ["B", "C", "A", "F"]
    assert [(r.reason, r.models, r.change) for r in overall.top_break_reasons] == [
        (ITEM, 2, 0),
        ("Dynamic shape operator", 1, 0),
    ]
    assert (overall.nondeterministic, overall.second_calls, overall.overspecialized) == (1, 1, 1)
    assert [n.stratum for n in health.strata] == ["decoder_llm", "vl", "vl_multimodal"]
    assert [point.key for point in health.trend] == ["2.13.0.dev1", "2.13.0.dev2"]
    assert [point.mean_graphs for point in health.strata_trend["decoder_llm"]] == [1.5, 3.0]
    assert [(c.model, c.old_graphs, c.new_graphs) for c in health.baseline_regressions] == [("B", 2, 5)]
    assert health.compare_url and health.compare_url.endswith("a" * 40 + "..." + "b" * 40)
    # Rendered in the summary, and as an issue of its own with a notice for the regression.
    analysed = tonight(new, [old])
    assert analysed.health == health
    assert "### Corpus health at baseline" in nightly_summary(analysed)
    settings = parse_config('[tracker]\nhealth_issue = true\nrepo = "o/r"').tracker
    issues = {issue.flag: issue for issue in desired_issues(analysed, settings)}
    health_issue = issues[HEALTH]
    assert health_issue.marker == HEALTH_MARKER and health_issue.body.startswith(HEALTH_MARKER)
    assert health_issue.body == health_body(analysed)
    [notice] = health_issue.notices
    assert notice.marker == notice_marker("regression", BASELINE, new.key)
    assert "`B`" in notice.body and health.compare_url in notice.body
    assert HEALTH not in {issue.flag for issue in desired_issues(analysed, parse_config("").tracker)}


# --- a sweep that climbs the ladder ------------------------------------------------------------


def as_real_models(snap):
    """`snap` with its sentinels read as real models (`ModelSpec.sentinel` is their source): the
    figures a night computes for real models alone, computed over the sentinels' runs."""
    results = [
        result.model_copy(update={"spec": result.spec.model_copy(update={"source": "transformers"})})
        for result in snap.results
    ]
    return snap.model_copy(update={"results": results})


@pytest.mark.torch
@pytest.mark.slow
def test_a_sweep_judges_outputs_confirms_wrong_results_and_climbs_the_ladder(tmp_path):
    """Real children: the counting rung makes the second call, `aot_eager` refuses the aliasing
    custom op (a sampled model), the injected backend refuses the flag's unbacked matmul; a crash
    representative starts on the backends; a resumed sweep redoes nothing."""
    import functools

    from triagebot.corpus import load_corpus
    from triagebot.sweep import SweepPlan, merge, read_stream, run_sweep
    from triagebot.sweep.ladder import Ladder

    injected = "ladder_backends:refuses_unbacked"
    names = ["ItemMatmul", "AliasingCustomOp", "WrongUnderScalarCapture", "NonzeroGuardCrash", "Plain"]
    specs = [spec for spec in load_corpus("sentinels") if spec.model in names]
    flags = {FLAG: {FLAG: True}, "dynamic": {"capture_dynamic_output_shape_ops": True}}
    ladder = Ladder(
        choose=functools.partial(ladder_pairs, sample=("AliasingCustomOp",)),
        backends=["aot_eager", injected],
        recompiles=True,
    )
    options = dict(corpus="sentinels", device="cpu", jobs=2, timeout=120, confirm=1)
    out = tmp_path / "sweep.jsonl"
    run_sweep(SweepPlan(specs, flags, out, checks=ACCURACY, ladder=ladder, **options))
    header, records = read_stream(out)
    assert (header.checks, header.ladder) == (["accuracy"], [COUNTING_BACKEND, "aot_eager", injected])
    snap = merge([out])
    by_model = {r.model: r for r in snap.results}
    # The wrong result was run again and differed again: confirmed.
    assert effect_of(by_model["WrongUnderScalarCapture"], FLAG) == Effect.wrong_result
    assert by_model["WrongUnderScalarCapture"].confirmations[FLAG][0].mismatched
    # Only the chosen pairs climbed; a pair stops at its first failing rung.
    assert by_model["Plain"].ladder == {}
    assert list(by_model["AliasingCustomOp"].ladder[BASELINE]) == [COUNTING_BACKEND, "aot_eager"]
    assert by_model["AliasingCustomOp"].ladder_confirmations[BASELINE]["aot_eager"][0].status == Status.crash
    # a crash's representative has no second call to make, and climbs past its failures
    assert list(by_model["NonzeroGuardCrash"].ladder["dynamic"]) == ["aot_eager", injected]
    # a rung's crash that the sweep run raised and its rerun repeated is not run a third time
    guard = by_model["NonzeroGuardCrash"]
    repeated = [
        rung
        for rung, outcome in guard.ladder["dynamic"].items()
        if outcome.signature == guard.outcomes["dynamic"].signature
    ]
    assert repeated and not set(repeated) & set(guard.ladder_confirmations.get("dynamic", {}))
    # A night keeps sentinels out of its figures: read them here as real models would be read.
    real = as_real_models(snap)
    stats = flag_stats(real, FLAG)
    rows = {row.model: row for row in stats.ladder_rows}
    assert rows["ItemMatmul"].rungs == {COUNTING_BACKEND: "ok", "aot_eager": "ok", injected: "crash"}
    assert (rows["ItemMatmul"].survives, rows["ItemMatmul"].lives_in) == (False, injected)
    assert rows["ItemMatmul"].baseline_rungs == {COUNTING_BACKEND: "ok", "aot_eager": "ok", injected: "ok"}
    [recompiles] = [row for row in stats.recompiles if row.model == "ItemMatmul"]
    assert (recompiles.baseline_recompiles, recompiles.flag_recompiles) == (2, 1)
    assert corpus_health(real).ladder_failures == {"aot_eager": 1}
    # The flag helps the aliasing op's model, but AOTAutograd refuses it at baseline as well.
    [aot] = [group for group in stats.ladder_groups if group.backend == "aot_eager"]
    assert (aot.models, aot.baseline_too, aot.lives_in) == (
        ["AliasingCustomOp"],
        ["AliasingCustomOp"],
        "AOTAutograd",
    )
    assert flag_stats(real, "dynamic").crash_groups[0].ladder == {
        COUNTING_BACKEND: "crash",
        "aot_eager": "crash",
        injected: "crash",
    }
    # Resumed, the whole sweep (ladder and its confirmations included) is already done.
    again = run_sweep(SweepPlan(specs, flags, out, checks=ACCURACY, ladder=ladder, resume=True, **options))
    assert again.ran == 0 and len(read_stream(out)[1]) == len(records)


@pytest.mark.torch
@pytest.mark.slow
def test_the_repros_assert_the_mismatch_and_name_the_failing_backend():
    from triagebot.corpus import load_corpus
    from triagebot.reproduce import reproduce
    from triagebot.sweep.run import run_one

    specs = {spec.model: spec for spec in load_corpus("sentinels")}
    aot, _ = run_one(specs["AliasingCustomOp"], FLAGS[FLAG], "cpu", fresh=True, backend="aot_eager")
    assert aot.status == Status.crash  # the record the ladder keeps, made here in-process
    results = [
        result(
            "WrongUnderScalarCapture",
            ok(1),
            wrong(1, where="output"),
            confirmations={FLAG: [wrong(1, where="output")]},
            spec=specs["WrongUnderScalarCapture"],
            stratum="sentinel",
        ),
        result(
            "AliasingCustomOp",
            ok(2),
            ok(1),
            spec=specs["AliasingCustomOp"],
            stratum="sentinel",
            ladder={FLAG: climbed(counting=ok(1), aot_eager=aot)},
            ladder_confirmations={FLAG: {"aot_eager": [aot]}},
        ),
    ]
    found = {(repro.model, repro.backend): repro for repro in reproduce(snapshot(results), timeout=240)}
    wrong_repro = found[("WrongUnderScalarCapture", None)]
    assert wrong_repro.verified, wrong_repro.observed
    assert wrong_repro.signature == "WrongResult: output" and "raise WrongResult" in wrong_repro.script
    aot_repro = found[("AliasingCustomOp", "aot_eager")]
    assert aot_repro.verified, aot_repro.observed
    assert "backend='aot_eager'" in aot_repro.script and "class AliasingCustomOp" in aot_repro.script


def test_the_configured_ladder_chooses_its_pairs_and_carries_its_bound():
    """What `triagebot sweep` and `run` build from `[sweep]`: its choice runs on a sweep's results."""
    from triagebot.sweep.plan import ladder_for

    settings = parse_config("[sweep]\nladder_max_pairs = 4\nladder_sample = 0\n").sweep
    ladder = ladder_for(settings, [])
    results = [result("Helped", ok(3), ok(1)), result("Same", ok(1), ok(1))]
    assert ladder.choose(results, FLAGS) == [("Helped", BASELINE), ("Helped", FLAG)]
    assert ladder.max_pairs == 4
