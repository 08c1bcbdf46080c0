"""Per-flag statistics of one snapshot (`FlagStats`, computed once) and trend points."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

from triagebot.analysis.breaks import top_break_reasons
from triagebot.analysis.effects import classify, crash_groups, no_evidence_of_help, real_rows
from triagebot.analysis.figures import share, suite_counts
from triagebot.analysis.frames import crash_patterns
from triagebot.analysis.ladder import (
    clean_rungs,
    failing_backends,
    first_rungs,
    groups_met_on_ladder,
    ladder_figures,
    reach,
    recompile_gaps,
    recompile_rows,
    recompiles_more,
    why_not_run,
)
from triagebot.results import (
    COUNTING_BACKEND,
    Accuracy,
    Effect,
    FailureGroup,
    FlagStats,
    LadderRow,
    ModelEffect,
    ModelResult,
    Reproduction,
    Snapshot,
    StratumStats,
    TrendPoint,
)

NO_RUN = (Effect.untestable, Effect.skipped)  # a pair the flag did not run on (a figure's population)


def _counts(rows: Iterable[ModelEffect]) -> dict[Effect, int]:
    counted = Counter(row.effect for row in rows)
    return {effect: counted[effect] for effect in Effect if counted[effect]}


def _testable(counts: dict[Effect, int]) -> int:
    return sum(counts.values()) - counts.get(Effect.untestable, 0)


def flag_stats(
    snapshot: Snapshot,
    flag: str,
    rows: Sequence[ModelEffect] | None = None,
    *,
    first_seen: Mapping[str, str] | None = None,
) -> FlagStats:
    """The numbers of one flag's tracking issue; `rows` are `classify(snapshot)` when already
    computed. `first_seen`: signature -> the first stored nightly it crashed in, for the crash
    groups (a signature not in it is first seen in `snapshot`); without it they say nothing."""
    if flag not in snapshot.flags:
        raise KeyError(f"snapshot {snapshot.key} has no flag {flag!r} (flags: {', '.join(snapshot.flags)})")
    every_row = list(rows) if rows is not None else classify(snapshot)
    all_rows = real_rows(snapshot, every_row)
    mine = [row for row in all_rows if row.flag == flag]
    sentinel_rows = [row for row in every_row if row.flag == flag and row.model in snapshot.sentinels]
    counts = _counts(mine)
    testable = _testable(counts)
    skipped = counts.get(Effect.skipped, 0)
    affectable = testable - skipped  # the models the flag could affect: percentages are over them
    no_help = no_evidence_of_help(snapshot, flag)
    fewer = [row for row in mine if row.effect == Effect.reduces_graphs]
    helped = [row for row in fewer if row.model not in no_help]
    reduction, reduction_percent = _mean_reductions(helped)
    ladder = ladder_figures(snapshot, flag, mine)
    confirmed, flaky = _crash_groups(snapshot, flag, mine, ladder.ladder_rows, first_seen)
    affected = [row.model for row in mine if row.effect not in NO_RUN]
    crashing = [row.model for row in mine if row.effect == Effect.crashes]
    confirmed = [
        group.model_copy(update={"suites": suite_counts(group.models, affected)}) for group in confirmed
    ]
    recompiles = recompile_rows(snapshot.results, mine, flag)
    return FlagStats(
        flag=flag,
        patch=snapshot.flags[flag],
        when=snapshot.when.get(flag, "always"),
        models=len(mine),
        testable=testable,
        skipped=skipped,
        affectable=affectable,
        sentinels_affected=sum(row.effect not in NO_RUN for row in sentinel_rows),
        counts=counts,
        percentages=_percentages({**counts, Effect.reduces_graphs: len(helped)}, affectable),
        strata=_strata(mine),
        crash_to_benefit=round(counts.get(Effect.crashes, 0) / len(helped), 2) if helped else None,
        mean_graph_reduction=reduction,
        mean_graph_reduction_percent=reduction_percent,
        crash_groups=confirmed,
        crash_suites=suite_counts(crashing, affected),
        flaky_groups=flaky,
        **_overlap(snapshot, flag, all_rows),
        sentinels_helped=sorted(row.model for row in sentinel_rows if row.effect == Effect.reduces_graphs),
        unjudged_helped=sorted(row.model for row in fewer if row.model in no_help),
        sentinel_groups=_sentinel_groups(snapshot, flag, sentinel_rows),
        top_break_reasons=top_break_reasons(snapshot),
        wrong_result_groups=_wrong_groups(snapshot, flag, mine, ladder.ladder_rows),
        nondeterministic=_not_judged(snapshot, flag, Accuracy.nondeterministic),
        eager_inconsistent=_not_judged(snapshot, flag, Accuracy.eager_inconsistent),
        **ladder._asdict(),
        recompiles=recompiles,
        recompiles_more=recompiles_more(recompiles),
        recompile_gaps=recompile_gaps(snapshot.results, mine, flag),
    )


def _sentinel_groups(snapshot: Snapshot, flag: str, rows: Sequence[ModelEffect]) -> list[FailureGroup]:
    """The sentinels' confirmed crash, wrong-result and ladder groups under `flag` (`rows`: their
    rows): reproduced as any group, so that the bot's own machinery is exercised, and in no
    figure or issue."""
    climbed = ladder_figures(snapshot, flag, rows).ladder_rows
    crashed, _ = _crash_groups(snapshot, flag, rows, climbed, None)
    return [*crashed, *_wrong_groups(snapshot, flag, rows, climbed), *groups_met_on_ladder(climbed, flag)]


def crash_group_of(snapshot: Snapshot | None, flag: str, model: str) -> FailureGroup | None:
    """The confirmed crash group `model` is in under `flag` in `snapshot`, or None: a wrong
    result or a failure met only on the backend ladder is none (nothing a bisection runs)."""
    if snapshot is None or flag not in snapshot.flags:
        return None
    return next((group for group in flag_stats(snapshot, flag).crash_groups if model in group.models), None)


def bisectable_reproduction(snapshot: Snapshot, flag: str, group: FailureGroup) -> Reproduction | None:
    """The verified reproduction of crash `group` under `flag` on the counting backend (what a
    bisection runs), if `snapshot` has one."""
    return next(
        (
            repro
            for repro in snapshot.reproductions
            if repro.flag == flag
            and repro.signature == group.signature
            and repro.verified
            and not repro.backend
        ),
        None,
    )


def _with_suites(group: FailureGroup, affected: Sequence[str]) -> FailureGroup:
    """`group` with its members counted per suite of the `affected` models (several suites)."""
    suites = suite_counts(group.models, affected)
    return group.model_copy(update={"suites": suites}) if suites else group


def _percentages(counts: dict[Effect, int], affectable: int) -> dict[Effect, float]:
    return {
        effect: percent
        for effect, count in counts.items()
        if effect not in (Effect.untestable, Effect.skipped)
        and (percent := share(count, affectable)) is not None
    }


def _strata(rows: Iterable[ModelEffect]) -> list[StratumStats]:
    by_stratum: dict[str, list[ModelEffect]] = defaultdict(list)
    for row in rows:
        by_stratum[row.stratum].append(row)
    strata = []
    for stratum in sorted(by_stratum):
        counts = _counts(by_stratum[stratum])
        strata.append(
            StratumStats(
                stratum=stratum, models=len(by_stratum[stratum]), testable=_testable(counts), counts=counts
            )
        )
    return strata


def _mean_reductions(helped: Sequence[ModelEffect]) -> tuple[float | None, float | None]:
    """Graphs removed per helped model, and the same as a percentage of its baseline's graphs."""
    reductions = [row.baseline_graphs - row.flag_graphs for row in helped]  # type: ignore[operator]
    percents = [
        100.0 * (row.baseline_graphs - row.flag_graphs) / row.baseline_graphs  # type: ignore[operator]
        for row in helped
        if row.baseline_graphs
    ]
    return (
        round(sum(reductions) / len(reductions), 2) if reductions else None,
        round(sum(percents) / len(percents), 1) if percents else None,
    )


def _overlap(snapshot: Snapshot, flag: str, rows: Iterable[ModelEffect]) -> dict[str, dict[str, list[str]]]:
    """Every other flag -> the models that crash under both it and `flag` (`overlap`), that
    `flag` crashes and it helps (`overlap_helped`), and that it crashes and `flag` helps
    (`overlap_rescued`)."""
    under: dict[tuple[str, Effect], set[str]] = defaultdict(set)
    no_help = {name: no_evidence_of_help(snapshot, name) for name in snapshot.flags}
    for row in rows:
        if not (row.effect == Effect.reduces_graphs and row.model in no_help.get(row.flag, ())):
            under[(row.flag, row.effect)].add(row.model)
    crashing, helping = under[(flag, Effect.crashes)], under[(flag, Effect.reduces_graphs)]
    others = [other for other in snapshot.flags if other != flag]
    return {
        "overlap": {other: sorted(crashing & under[(other, Effect.crashes)]) for other in others},
        "overlap_helped": {
            other: sorted(crashing & under[(other, Effect.reduces_graphs)]) for other in others
        },
        "overlap_rescued": {other: sorted(helping & under[(other, Effect.crashes)]) for other in others},
    }


def _where(
    group: FailureGroup,
    snapshot: Snapshot,
    results: Mapping[str, ModelResult],
    climbed: Mapping[str, LadderRow],
) -> dict:
    """What the ladder and the tracebacks add to a group of the sweep: its first model's rungs,
    where else it fails (`reach`, `unchecked`), and the model code it starts from (`results`:
    model -> its result; `climbed`: model -> its ladder row)."""
    rungs = first_rungs(group, climbed)
    where, unchecked = reach(rungs, snapshot.ladder)
    return {
        "ladder": rungs,
        "reach": where,
        "unchecked": unchecked,
        "fails_under": failing_backends(rungs, snapshot.ladder),
        "not_run": _not_run(results.get(group.models[0]), group.flag, snapshot),
        "clean_under": clean_rungs(results.get(group.models[0]), group.flag, snapshot.ladder),
        "patterns": crash_patterns(results, group.models, group.flag),
    }


def _not_run(result: ModelResult | None, flag: str, snapshot: Snapshot) -> dict[str, str]:
    """Why each rung of the night's ladder was not run for a group's first model under `flag`."""
    if result is None:
        return {}
    return why_not_run(result, flag, snapshot.ladder, snapshot.environment.device, snapshot.ladder_unreached)


def reachable_first(group: FailureGroup) -> tuple[int, int, str]:
    """The order of a flag's crash groups: those that fail under a backend users run too first,
    then those no backend was run for, then those of the counting backend only; largest first
    within each."""
    rank = 2 if group.reach == COUNTING_BACKEND else 1 if group.reach is None else 0
    return (rank, -len(group.models), group.signature)


def _crash_groups(
    snapshot: Snapshot,
    flag: str,
    mine: Sequence[ModelEffect],
    climbed: Sequence[LadderRow],
    first_seen: Mapping[str, str] | None,
) -> tuple[list[FailureGroup], list[FailureGroup]]:
    """The confirmed and the flaky crash groups, each with the traceback of its first model's
    (crashing) run; a confirmed one also with where it lives (a crash of the sweep is Dynamo's),
    its first model's rungs on the ladder and where else it fails, the model code it starts
    from, and the nightly it was first seen in."""
    by_name = {result.model: result for result in snapshot.results}
    by_model = {row.model: row for row in climbed}
    seen = first_seen if first_seen is not None else {}

    def traceback(group: FailureGroup) -> str | None:
        first = by_name.get(group.models[0])
        outcome = first.outcomes.get(flag) if first is not None else None
        return outcome.traceback if outcome is not None else None

    confirmed = [
        group.model_copy(
            update={
                "traceback": traceback(group),
                "lives_in": "Dynamo",
                **_where(group, snapshot, by_name, by_model),
                "first_seen": seen.get(group.signature, snapshot.key) if first_seen is not None else None,
            }
        )
        for group in crash_groups(mine, flag, Effect.crashes)
    ]
    flaky = [
        group.model_copy(update={"traceback": traceback(group)})
        for group in crash_groups(mine, flag, Effect.flaky)
    ]
    return sorted(confirmed, key=reachable_first), flaky


def _wrong_groups(
    snapshot: Snapshot, flag: str, mine: Sequence[ModelEffect], climbed: Sequence[LadderRow]
) -> list[FailureGroup]:
    """The confirmed wrong-result groups, each with where else its first model is wrong."""
    by_name = {result.model: result for result in snapshot.results}
    by_model = {row.model: row for row in climbed}
    groups = crash_groups(mine, flag, Effect.wrong_result)
    return [group.model_copy(update=_where(group, snapshot, by_name, by_model)) for group in groups]


def _not_judged(snapshot: Snapshot, flag: str, verdict: Accuracy) -> list[str]:
    """Models whose outputs under `flag` were not judged the compiler's, for `verdict`: two
    eager runs differ (`nondeterministic`), or eager disagrees with itself across attention
    implementations (`eager_inconsistent`, the library's finding)."""
    return [
        result.model
        for result in snapshot.results
        if (run := result.outcomes.get(flag)) is not None
        and run.accuracy is not None
        and run.accuracy.verdict == verdict
        and result.model not in snapshot.sentinels
    ]


def trend_point(key: str, rows: Iterable[ModelEffect], sentinels: frozenset[str] = frozenset()) -> TrendPoint:
    """One nightly's point in a flag's trend, from that flag's rows of the nightly `key`;
    `sentinels` (`effects.no_evidence_of_help`: the sentinels, and the models not judged) are
    no evidence of help."""
    rows = list(rows)
    counts = _counts(rows)
    return TrendPoint(
        key=key,
        crashes=counts.get(Effect.crashes, 0),
        helps=sum(row.effect == Effect.reduces_graphs and row.model not in sentinels for row in rows),
        flaky=counts.get(Effect.flaky, 0),
        testable=_testable(counts),
        wrong_results=counts.get(Effect.wrong_result, 0),
    )
