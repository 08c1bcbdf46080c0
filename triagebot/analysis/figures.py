"""One flag's figures on one night, and its verdict: the numbers every surface prints and the
one rule that says whether the flag is ready to be on by default.

- `flag_figures(stats, change)`: `FlagFigures` from the flag's statistics (its crash groups
  already carrying where they fail and which members are new) and its diff.
- `share(count, total)`: the one percentage of a count over its denominator;
  `plural(count, word)`: "1 graph", "2 graphs", for every surface down to the sweep's live log.
- `suite_counts(counted, population)`: per suite, how many of its models a figure counts (a
  night of several suites), the one count of them every surface prints.
- `verdict(figures)`: the rule (the README's "Is the flag ready?"): a flag is ready when it ran
  on at least one model it could affect and no model crashes under it (confirmed), none gives a
  wrong result (confirmed), and none fails under it on a backend-ladder rung that its baseline
  passes; and, when outputs are compared, at least one of those models had its outputs judged (a
  model whose outputs could not be judged is evidence that graphs can be fewer, never that the
  flag is safe, and is never counted as help). More graphs, more recompiles and engine errors do
  not block; they stand beside the verdict for a person to weigh, with the models it helps, and
  so does slower compilation unless `[tracker] compile_time_blocks` names a median ratio past
  which it blocks. And every model it changes must have been checked under it on every rung users
  run (Inductor included) within the ladder's window of nightlies (`FlagFigures.coverage`):
  with less, and nothing else blocking, the flag is not judged yet, never ready.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from triagebot.analysis.ladder import FAILED_WORDS
from triagebot.results import (
    BACKWARD_RUNG,
    COUNTING_BACKEND,
    CallTime,
    CompileTime,
    Effect,
    FailureGroup,
    FlagDiff,
    FlagFigures,
    FlagStats,
    FlagVerdict,
    SuiteCount,
    VerdictLine,
    VerdictRow,
    suite_of,
    suite_order,
)


def share(count: int, total: int) -> float | None:
    """`count` as a percentage of `total`, to one decimal; None over nothing."""
    return round(100.0 * count / total, 1) if total else None


def plural(count: int, word: str, words: str | None = None) -> str:
    """`count word`, the word in the plural unless the count is one ("1 crash", "2 crashes")."""
    if count == 1:
        return f"{count} {word}"
    if words is None:
        words = word + ("es" if word.endswith(("s", "sh", "ch", "x")) else "s")
    return f"{count} {words}"


def suite_counts(counted: Iterable[str], population: Iterable[str]) -> list[SuiteCount]:
    """Per suite of the model keys `population`, how many of its models are among `counted`,
    in suite order (transformers first): "12 of 180 transformers models, 3 of 40 diffusers
    models". None for a population of one suite, so that a one-suite night reads as before."""
    totals = Counter(suite_of(model) for model in set(population))
    if len(totals) < 2:
        return []
    counts = Counter(suite_of(model) for model in set(counted))
    order = sorted(totals, key=suite_order)
    return [SuiteCount(suite=suite, count=counts[suite], total=totals[suite]) for suite in order]


def _members(groups: Iterable[FailureGroup]) -> int:
    return sum(len(group.models) for group in groups)


def _names(groups: Iterable[FailureGroup]) -> list[str]:
    return list(dict.fromkeys(group.name or group.error_type or "unknown" for group in groups))


def _fewer_recompiles(stats: FlagStats) -> int:
    return sum(
        row.flag_recompiles + (row.flag_again or 0) < row.baseline_recompiles + (row.baseline_again or 0)
        for row in stats.recompiles
        if row.flag_recompiles is not None and row.baseline_recompiles is not None
    )


def _ladder_failures(stats: FlagStats) -> int:
    """Models failing under the flag on a rung of the ladder that their baseline passes."""
    return len(
        {model for group in stats.ladder_groups for model in group.models if model not in group.baseline_too}
    )


def _backward_ran(stats: FlagStats, sentinels: frozenset[str]) -> int | None:
    """The real models (not `sentinels`) that ran the backward rung under the flag; None: not on
    the night's ladder."""
    if BACKWARD_RUNG not in stats.ladder:
        return None
    return sum(BACKWARD_RUNG in row.rungs for row in stats.ladder_rows if row.model not in sentinels)


def _backward_failures(stats: FlagStats, sentinels: frozenset[str]) -> dict[str, str]:
    """The real models failing on the backward rung under the flag where their baseline passes."""
    return {
        row.model: word
        for row in stats.ladder_rows
        if (word := row.rungs.get(BACKWARD_RUNG)) in FAILED_WORDS
        and row.baseline_rungs.get(BACKWARD_RUNG) not in FAILED_WORDS
        and row.model not in sentinels
    }


def flag_figures(
    stats: FlagStats,
    change: FlagDiff | None = None,
    *,
    outputs_checked: bool = True,
    compile_time: CompileTime | None = None,
    call_time: CallTime | None = None,
    sentinels: frozenset[str] = frozenset(),
) -> FlagFigures:
    """The figures of one flag (see `FlagFigures`); `change`: its diff against the previous
    nightly, when there is one; `outputs_checked`: whether the sweep compared outputs at all;
    `compile_time`: its compile-time figures (`analysis.compile_time`); `call_time`: its time
    per call on the ladder's compiled rungs (`analysis.call_time`); `sentinels`: the night's
    (`Snapshot.sentinels`), kept out of the backward rung's figures as out of the timings."""
    counts = stats.counts
    groups = stats.crash_groups
    return FlagFigures(
        flag=stats.flag,
        when=stats.when,
        swept=stats.models,
        untestable=counts.get(Effect.untestable, 0),
        testable=stats.testable,
        skipped=stats.skipped,
        affectable=stats.affectable,
        sentinels=stats.sentinels_affected,
        engine_errors=counts.get(Effect.engine_error, 0),
        crashes=counts.get(Effect.crashes, 0),
        crash_suites=stats.crash_suites,
        crash_errors=len(groups),
        crashes_reachable=_members(group for group in groups if group.reach not in (None, COUNTING_BACKEND)),
        crashes_counting_only=_members(group for group in groups if group.reach == COUNTING_BACKEND),
        crashes_unchecked=_members(group for group in groups if group.reach is None),
        new_crashes=sum(len(group.new) for group in groups),
        new_errors=_names(group for group in groups if group.new),
        errors=_names(groups),
        flaky=counts.get(Effect.flaky, 0),
        outputs_checked=outputs_checked,
        wrong_results=counts.get(Effect.wrong_result, 0),
        not_judged=len(stats.not_judged) if outputs_checked else 0,
        helped=stats.helps,
        increases_graphs=counts.get(Effect.increases_graphs, 0),
        fixes=counts.get(Effect.fixes_crash, 0),
        laddered=len(stats.ladder_rows),
        ladder_failures=_ladder_failures(stats),
        recompile_checked=len(stats.recompiles),
        recompile_more=len(stats.recompiles_more),
        recompile_fewer=_fewer_recompiles(stats),
        newly_fixed=len(change.fixed) if change is not None else 0,
        compile_slower=compile_time.rose if compile_time is not None else 0,
        compile_time=compile_time,
        call_time=call_time,
        backward_ran=_backward_ran(stats, sentinels),
        backward_failures=_backward_failures(stats, sentinels),
    )


def verdict(figures: FlagFigures) -> FlagVerdict:
    """Whether the flag is ready to be on by default (the rule is the module docstring's), with a
    row for each thing it weighed: what was not checked tonight (outputs, the ladder, second
    shapes) and engine errors when there are none have no row."""
    unweighed = {  # rows with nothing to weigh tonight: a check not made, or no engine error
        VerdictRow.wrong_results: not figures.outputs_checked,
        VerdictRow.not_judged: not figures.not_judged,
        VerdictRow.ladder_failures: not figures.laddered,
        VerdictRow.recompile_more: not figures.recompile_checked,
        VerdictRow.engine_errors: not figures.engine_errors,
        VerdictRow.unverified: not figures.unverified,
        VerdictRow.compile_slower: figures.compile_time is None or not figures.compile_time.models,
    }
    lines = []
    for row in VerdictRow:  # in the table's order, each row counting the figure of its name
        if not unweighed.get(row, False):
            models = getattr(figures, row)
            blocks = row.blocks and models > 0
            if row == VerdictRow.compile_slower and figures.compile_time is not None:
                blocks = figures.compile_time.blocks  # only past a configured median ratio
            if row == VerdictRow.not_judged:  # "safe" needs one real model whose outputs were judged
                blocks = figures.not_judged >= figures.affectable
            lines.append(VerdictLine(what=row, models=models, blocks=blocks))
    # Below the rule (a changed model not checked within the window, or a failure seen on an
    # earlier nightly still to recheck): not judged yet.
    awaiting = [rung for rung in figures.coverage if rung.not_yet or rung.failing_earlier]
    ready = figures.affectable > 0 and not any(line.blocks for line in lines) and not awaiting
    return FlagVerdict(ready=ready, lines=lines, awaiting=awaiting)
