"""How healthy Dynamo is on the corpus each night, from the baseline runs alone.

`corpus_health(snapshot, history)` computes the numbers the TorchDynamo 7k-model evaluation
reported (how many models build, run eagerly, compile, and compile to exactly one graph; mean
and 90th-percentile graphs per model; mean and largest operator counts; the models with the
most graphs; the most common graph-break reasons with their change since the previous nightly),
for the whole corpus and per stratum, the trend over `history` (stored nightlies, oldest first),
the full stack at baseline (nondeterministic models, wrong results, recompiles, the ladder), and
the models whose baseline graph count rose since the previous nightly, with the commit range.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from triagebot.analysis.breaks import SHOWN_BREAK_REASONS, break_reason_counts, most_common
from triagebot.analysis.compiler_wrong import confirmed_wrong
from triagebot.analysis.diff import diff
from triagebot.analysis.figures import suite_counts
from triagebot.analysis.ladder import FAILED_WORDS, recompile_run, rung_word
from triagebot.analysis.library import library_findings
from triagebot.results import (
    BASELINE,
    PRE_COMPILE_STAGES,
    Accuracy,
    BreakReasonChange,
    CorpusHealth,
    HealthNumbers,
    HealthPoint,
    ModelGraphs,
    ModelResult,
    Outcome,
    RecompileCheck,
    Snapshot,
    SnapshotDiff,
    Status,
)

TOP_MODELS = 10
ALL = "all"


def _built(outcome: Outcome) -> bool:
    if outcome.status == Status.create_error:
        return False
    return not (outcome.status in (Status.timeout, Status.signal) and outcome.stage == "build")


def _ran_eagerly(outcome: Outcome) -> bool:
    return _built(outcome) and not outcome.untestable and outcome.stage not in PRE_COMPILE_STAGES


def percentile(values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile (`share` in (0, 1]) of `values`, None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    return float(ordered[max(0, math.ceil(share * len(ordered)) - 1)])


def _compiled_models(results: Iterable[ModelResult]) -> list[str]:
    """The models whose baseline compiled: `HealthNumbers.compiled`'s count, per suite."""
    return [
        result.model
        for result in results
        if (outcome := result.outcomes.get(BASELINE)) is not None
        and outcome.ran
        and outcome.graphs is not None
    ]


def numbers(
    stratum: str, results: Sequence[ModelResult], previous: Sequence[ModelResult] | None = None
) -> HealthNumbers:
    """The health of `results` (one stratum, or all); `previous`: the same models' stratum in the
    previous nightly, for the break reasons' change (None: no previous nightly)."""
    runs = [(result, result.outcomes[BASELINE]) for result in results if BASELINE in result.outcomes]
    compiled = [(result, outcome) for result, outcome in runs if outcome.ran and outcome.graphs is not None]
    graphs = [float(outcome.graphs or 0) for _, outcome in compiled]
    ops = sorted(
        ((outcome.ops, result.model) for result, outcome in compiled if outcome.ops is not None),
        key=lambda item: (-item[0], item[1]),
    )
    largest = ops[0] if ops else None
    checks = _second_calls(result for result, _ in runs)
    top = sorted(compiled, key=lambda pair: (-(pair[1].graphs or 0), pair[0].model))[:TOP_MODELS]
    return HealthNumbers(
        stratum=stratum,
        models=len(results),
        built=sum(_built(outcome) for _, outcome in runs),
        ran_eagerly=sum(_ran_eagerly(outcome) for _, outcome in runs),
        compiled=len(compiled),
        one_graph=sum(outcome.graphs == 1 for _, outcome in compiled),
        mean_graphs=round(sum(graphs) / len(graphs), 2) if graphs else None,
        p90_graphs=percentile(graphs, 0.9),
        mean_ops=round(sum(count for count, _ in ops) / len(ops), 1) if ops else None,
        max_ops=largest[0] if largest else None,
        max_ops_model=largest[1] if largest else None,
        nondeterministic=sum(
            outcome.accuracy is not None and outcome.accuracy.verdict == Accuracy.nondeterministic
            for _, outcome in runs
        ),
        wrong_results=sum(confirmed_wrong(result) for result, _ in runs),
        second_calls=len(checks),
        recompiled=sum(check.recompiles > 0 for check in checks),
        dynamic=sum(bool(check.dynamic) and check.again == 0 for check in checks),
        overspecialized=sum((check.again or 0) > 0 for check in checks),
        top_models=[
            ModelGraphs(
                model=result.model, stratum=result.stratum, graphs=outcome.graphs or 0, ops=outcome.ops
            )
            for result, outcome in top
        ],
        top_break_reasons=_break_reasons(results, previous),
    )


def _second_calls(results: Iterable[ModelResult]) -> list[RecompileCheck]:
    """The baseline's second-shape checks that ran (`recompile_run`)."""
    return [
        run.recompile
        for result in results
        if (run := recompile_run(result, BASELINE)) is not None
        and run.recompile is not None
        and run.recompile.status == "ok"
    ]


def _break_reasons(
    results: Sequence[ModelResult], previous: Sequence[ModelResult] | None
) -> list[BreakReasonChange]:
    """The most common baseline graph-break reasons, each with its count in `previous` (None:
    no previous nightly)."""
    before = break_reason_counts(previous) if previous is not None else None
    return [
        BreakReasonChange(reason=reason, models=count, previous=None if before is None else before[reason])
        for reason, count in most_common(break_reason_counts(results), SHOWN_BREAK_REASONS)
    ]


def health_points(snapshot: Snapshot) -> dict[str, HealthPoint]:
    """One nightly's point in the health trend, of the whole corpus (`ALL`) and of each stratum:
    what a later night's history keeps of it (`NightSummary.health`)."""
    by_stratum: dict[str, list[ModelResult]] = defaultdict(list)
    for result in snapshot.results:
        by_stratum[result.stratum].append(result)
    points = {ALL: _point(snapshot.key, numbers(ALL, snapshot.results))}
    for stratum, members in sorted(by_stratum.items()):
        points[stratum] = _point(snapshot.key, numbers(stratum, members))
    return points


def _point(key: str, counted: HealthNumbers) -> HealthPoint:
    return HealthPoint(
        key=key,
        models=counted.models,
        compiled=counted.compiled,
        one_graph=counted.one_graph,
        mean_graphs=counted.mean_graphs,
        p90_graphs=counted.p90_graphs,
        ran_eagerly=counted.ran_eagerly,
    )


def _ladder_failures(snapshot: Snapshot) -> tuple[int, dict[str, int]]:
    """Models that climbed at baseline, and per rung those whose first confirmed failure it was."""
    climbed, failures = 0, defaultdict(int)
    for result in snapshot.results:
        rungs = result.ladder.get(BASELINE)
        if not rungs:
            continue
        climbed += 1
        reruns = result.ladder_confirmations.get(BASELINE, {})
        for rung in snapshot.ladder:
            if rung_word(rungs.get(rung), reruns.get(rung, [])) in FAILED_WORDS:
                failures[rung] += 1
                break
    return climbed, dict(failures)


def corpus_health(snapshot: Snapshot, history: Sequence[Snapshot] = ()) -> CorpusHealth:
    """Tonight's health; `history`: stored snapshots older than `snapshot`, oldest first (its last
    is the previous nightly). `analysis.night` computes it once per night (`Night.health`)."""
    older = [old for old in history if old.key != snapshot.key]
    previous = older[-1] if older else None
    change = diff(previous, snapshot) if previous is not None else None
    return health_of(snapshot, [health_points(old) for old in older], previous, change)


def health_of(
    snapshot: Snapshot,
    history: Sequence[Mapping[str, HealthPoint]],
    previous: Snapshot | None,
    change: SnapshotDiff | None,
) -> CorpusHealth:
    """Tonight's health against `previous` (None: a first nightly), whose diff to `snapshot` is
    `change`; `history`: the health points (`health_points`) of the nightlies before `snapshot`,
    oldest first (the trend)."""
    by_stratum: dict[str, list[ModelResult]] = defaultdict(list)
    for result in snapshot.results:
        by_stratum[result.stratum].append(result)
    before: dict[str, list[ModelResult]] = defaultdict(list)
    for result in previous.results if previous is not None else []:
        before[result.stratum].append(result)
    laddered, failures = _ladder_failures(snapshot)
    overall = numbers(ALL, snapshot.results, previous.results if previous is not None else None)
    strata = [
        numbers(stratum, members, before.get(stratum, []) if previous is not None else None)
        for stratum, members in sorted(by_stratum.items())
    ]
    older = [points for points in history if ALL in points and points[ALL].key != snapshot.key]
    return CorpusHealth(
        key=snapshot.key,
        previous_key=previous.key if previous is not None else None,
        compare_url=change.compare_url if change is not None else None,
        moved=change.moved if change is not None else [],
        model_code_only=change is not None and change.model_code_only,
        same_build=change.same_build if change is not None else False,
        overall=overall,
        strata=strata,
        suites=suite_counts(
            _compiled_models(snapshot.results), (result.model for result in snapshot.results)
        ),
        skipped_suites=dict(snapshot.corpus.skipped),
        trend=[points[ALL] for points in older] + [_point(snapshot.key, overall)],
        library_findings=library_findings(snapshot),
        strata_trend={
            tonight.stratum: [points[tonight.stratum] for points in older if tonight.stratum in points]
            + [_point(snapshot.key, tonight)]
            for tonight in strata
        },
        ladder=list(snapshot.ladder),
        laddered=laddered,
        ladder_failures=failures,
        baseline_regressions=[
            model
            for model in (change.baseline_graph_changes if change is not None else [])
            if (model.new_graphs or 0) > (model.old_graphs or 0)
        ],
    )
