"""Per-flag statistics of one snapshot, crash groups, and trends over stored snapshots."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from triagebot.analysis.effects import classify
from triagebot.results import (
    BASELINE,
    BreakReasonCount,
    CrashGroup,
    Effect,
    FlagStats,
    ModelEffect,
    ModelResult,
    Snapshot,
    StratumStats,
    TrendPoint,
)

TOP_BREAK_REASONS = 10


def _counts(rows: Iterable[ModelEffect]) -> dict[Effect, int]:
    counted = Counter(row.effect for row in rows)
    return {effect: counted[effect] for effect in Effect if counted[effect]}


def _testable(counts: dict[Effect, int]) -> int:
    return sum(counts.values()) - counts.get(Effect.create_error, 0)


def crash_groups(rows: Iterable[ModelEffect], flag: str, effect: Effect) -> list[CrashGroup]:
    """Rows of `flag` with `effect` grouped by signature, largest group first."""
    grouped: dict[str, list[ModelEffect]] = defaultdict(list)
    for row in rows:
        if row.flag == flag and row.effect == effect:
            grouped[row.signature or f"{row.error_type or 'unknown'}: (no message)"].append(row)
    groups = [
        CrashGroup(
            flag=flag,
            signature=signature,
            error_type=members[0].error_type,
            error=members[0].error,
            models=sorted(member.model for member in members),
            confirmed=effect != Effect.flaky,
        )
        for signature, members in grouped.items()
    ]
    return sorted(groups, key=lambda group: (-len(group.models), group.signature))


def break_reason_counts(results: Iterable[ModelResult]) -> Counter[str]:
    """Baseline graph-break reasons by how many models hit each (first line, once per model)."""
    counted: Counter[str] = Counter()
    for result in results:
        baseline = result.outcomes.get(BASELINE)
        if baseline is None:
            continue
        reasons = {reason.strip().splitlines()[0] for reason in baseline.break_reasons if reason.strip()}
        counted.update(reasons)
    return counted


def top_break_reasons(snapshot: Snapshot, limit: int = TOP_BREAK_REASONS) -> list[BreakReasonCount]:
    """The most common baseline graph-break reasons (`break_reason_counts`)."""
    counted = break_reason_counts(snapshot.results)
    ranked = sorted(counted.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return [BreakReasonCount(reason=reason, models=models) for reason, models in ranked]


def flag_stats(snapshot: Snapshot, flag: str, rows: Sequence[ModelEffect] | None = None) -> FlagStats:
    """The numbers of one flag's tracking issue; `rows` are `classify(snapshot)` when already computed."""
    if flag not in snapshot.flags:
        raise KeyError(f"snapshot {snapshot.key} has no flag {flag!r} (flags: {', '.join(snapshot.flags)})")
    all_rows = list(rows) if rows is not None else classify(snapshot)
    mine = [row for row in all_rows if row.flag == flag]
    counts = _counts(mine)
    testable = _testable(counts)
    skipped = counts.get(Effect.skipped, 0)
    affectable = testable - skipped  # the models the flag could affect: percentages are over them
    percentages = {
        effect: round(100.0 * count / affectable, 1)
        for effect, count in counts.items()
        if effect not in (Effect.create_error, Effect.skipped) and affectable
    }
    by_stratum: dict[str, list[ModelEffect]] = defaultdict(list)
    for row in mine:
        by_stratum[row.stratum].append(row)
    strata = []
    for stratum in sorted(by_stratum):
        stratum_counts = _counts(by_stratum[stratum])
        strata.append(
            StratumStats(
                stratum=stratum,
                models=len(by_stratum[stratum]),
                testable=_testable(stratum_counts),
                counts=stratum_counts,
            )
        )
    helped = [row for row in mine if row.effect == Effect.reduces_graphs]
    reductions = [row.baseline_graphs - row.flag_graphs for row in helped]  # type: ignore[operator]
    reduction_percents = [
        100.0 * (row.baseline_graphs - row.flag_graphs) / row.baseline_graphs  # type: ignore[operator]
        for row in helped
        if row.baseline_graphs
    ]
    crashes = counts.get(Effect.crashes, 0)
    crashing = {row.model for row in mine if row.effect == Effect.crashes}
    crashing_under: dict[str, set[str]] = defaultdict(set)
    for row in all_rows:
        if row.effect == Effect.crashes:
            crashing_under[row.flag].add(row.model)
    overlap = {other: sorted(crashing & crashing_under[other]) for other in snapshot.flags if other != flag}
    groups = crash_groups(mine, flag, Effect.crashes)
    flaky = crash_groups(mine, flag, Effect.flaky)
    by_name = {result.model: result for result in snapshot.results}
    for group in groups + flaky:  # a flaky group's traceback is its first (crashing) run's
        first = by_name.get(group.models[0])
        outcome = first.outcomes.get(flag) if first is not None else None
        group.traceback = outcome.traceback if outcome is not None else None
    stats = FlagStats(
        flag=flag,
        patch=snapshot.flags[flag],
        when=snapshot.when.get(flag, "always"),
        models=len(mine),
        testable=testable,
        skipped=skipped,
        affectable=affectable,
        counts=counts,
        percentages=percentages,
        strata=strata,
        crash_to_benefit=round(crashes / len(helped), 2) if helped else None,
        mean_graph_reduction=round(sum(reductions) / len(reductions), 2) if reductions else None,
        mean_graph_reduction_percent=(
            round(sum(reduction_percents) / len(reduction_percents), 1) if reduction_percents else None
        ),
        crash_groups=groups,
        flaky_groups=flaky,
        overlap=overlap,
        top_break_reasons=top_break_reasons(snapshot),
        wrong_result_groups=crash_groups(mine, flag, Effect.wrong_result),
    )
    from triagebot.analysis.stack import add_stack  # it builds on this module's crash groups

    return add_stack(stats, snapshot, mine)


def trend_point(key: str, rows: Iterable[ModelEffect]) -> TrendPoint:
    """One nightly's point in a flag's trend, from that flag's rows of the nightly `key`."""
    counts = _counts(rows)
    return TrendPoint(
        key=key,
        crashes=counts.get(Effect.crashes, 0),
        helps=counts.get(Effect.reduces_graphs, 0),
        flaky=counts.get(Effect.flaky, 0),
        testable=_testable(counts),
        wrong=counts.get(Effect.wrong_result, 0),
    )
