"""The backend ladder beside each flag's effects, and recompiles. Effects stay defined on the
counting backend; what is here adds columns to them.

- `ladder_pairs(results, flags, sample)`: which (model, config) pairs climb the ladder after a
  sweep: the representative of every confirmed crash group and wrong-result group, every model a
  flag changes (fewer or more graphs, a crash fixed) under the flag and at baseline, and the
  sampled models at baseline.
- `lives_in(rung)`: where a failure first seen on a rung lives (Dynamo, AOTAutograd, Inductor).
- `ladder_figures(snapshot, flag, rows)`: what the ladder adds to a flag's figures (its columns,
  `ladder_rows`; the failures its pairs met only on the ladder, `ladder_groups`; the helped models
  whose benefit survives the full stack); `recompile_rows` and `recompiles_more`: its effect on
  recompiles. `analysis.stats.flag_stats` puts them in `FlagStats` with the rest, once.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from triagebot.analysis.effects import crash_groups, model_effect, no_evidence_of_help
from triagebot.results import (
    BASELINE,
    COUNTING_BACKEND,
    RUNGS,
    Accuracy,
    CleanRung,
    Effect,
    FailureGroup,
    LadderRow,
    ModelEffect,
    ModelResult,
    Outcome,
    RecompileRow,
    Snapshot,
    Status,
    UnreachedPair,
    failures_only,
    users_backends,
    wrong_result_signature,
)

# Effects that make a model worth climbing: the flag changed what Dynamo did with it.
CHANGED = frozenset({Effect.reduces_graphs, Effect.increases_graphs, Effect.fixes_crash})
# Effects whose flag run already failed in the sweep, with the counting backend: Dynamo's.
FAILED_IN_SWEEP = frozenset({Effect.crashes, Effect.both_crash, Effect.wrong_result})


def lives_in(rung: str | None) -> str:
    """Where a failure first seen on `rung` lives (`Rung.lives_in`: Dynamo, AOTAutograd,
    AOTAutograd's backward pass or Inductor); what fails with a backend that runs Dynamo's
    graphs as they are (the counting backend, eager) is Dynamo's; another backend's own name."""
    name = COUNTING_BACKEND if not rung or rung == "eager" else rung
    return RUNGS[name].lives_in if name in RUNGS else name


def change_order(row: ModelEffect) -> tuple[int, str]:
    """Sort key of a changed model: a fixed crash first, then the largest change in graphs."""
    if row.baseline_graphs is None or row.flag_graphs is None:
        return (-(10**9), row.model)
    return (-abs(row.baseline_graphs - row.flag_graphs), row.model)


def ladder_pairs(
    results: Sequence[ModelResult],
    flags: Mapping[str, Any],
    sample: Collection[str] = (),
    order: Callable[[ModelEffect], Any] | None = None,
) -> list[tuple[str, str]]:
    """The (model, config) pairs that climb the ladder, in a stable order (see the module docstring).

    A crash group is represented by its first model (by name); every member crashed the same way
    in Dynamo. A sampled model climbs at baseline, when its baseline ran. The order is the
    priority: every failure group's representative, then the models a flag changes (the flags
    in turn, a fixed crash or the largest change in graphs first, or by `order`: the rotation's
    oldest evidence first, `analysis.rotation.by_staleness`), then the sample: the ladder climbs
    the first `[sweep] ladder_max_pairs` of them (`sweep.ladder.bounded`).
    """
    by_model = {result.model: result for result in results}
    rows = {
        flag: [row for result in results if (row := model_effect(result, flag)) is not None] for flag in flags
    }
    units: list[tuple[tuple[str, str], ...]] = []
    for flag, mine in rows.items():
        for effect in (Effect.crashes, Effect.wrong_result):
            for group in crash_groups(mine, flag, effect):
                units.append(((group.models[0], BASELINE), (group.models[0], flag)))
    changed = [
        sorted((row for row in mine if row.effect in CHANGED), key=order or change_order)
        for mine in rows.values()
    ]
    for turn in itertools.zip_longest(*changed):
        units.extend(((row.model, BASELINE), (row.model, row.flag)) for row in turn if row is not None)
    for model in sorted(sample):
        baseline = by_model[model].outcomes.get(BASELINE) if model in by_model else None
        if baseline is not None and baseline.ran:
            units.append(((model, BASELINE),))
    return list(dict.fromkeys(pair for unit in units for pair in unit))


def rung_word(outcome: Outcome | None, reruns: Sequence[Outcome] = ()) -> str | None:
    """One word for a rung: ok, wrong, crash, timeout, signal, or flaky (a failure that did not repeat)."""
    if outcome is None:
        return None
    if outcome.mismatched:
        return "wrong" if all(rerun.mismatched for rerun in reruns) else "flaky"
    if outcome.status == Status.crash:
        return "crash" if all(rerun.status == Status.crash for rerun in reruns) else "flaky"
    return "ok" if outcome.ran else outcome.status.value


FAILED_WORDS = frozenset({"wrong", "crash", "timeout", "signal"})


# A sweep's run that never reached the compiler: no counting rung to show.
NOT_COMPILED = frozenset({Status.skipped, Status.create_error, Status.eager_error})


def rung_cells(result: ModelResult, config: str, order: Sequence[str]) -> dict[str, str]:
    """The word of every rung `config` ran on for `result` (`rung_word`): the ladder's own, and
    the counting rung from the sweep's run when the ladder did not climb it (a run that failed
    in the sweep starts above it: that run is its counting rung)."""
    climbed = result.ladder.get(config, {})
    reruns = result.ladder_confirmations.get(config, {})
    words = {rung: rung_word(climbed.get(rung), reruns.get(rung, [])) for rung in order}
    swept = result.outcomes.get(config)
    compiled = swept is not None and swept.status not in NOT_COMPILED
    if COUNTING_BACKEND in order and words.get(COUNTING_BACKEND) is None and compiled:
        words[COUNTING_BACKEND] = rung_word(swept, result.confirmations.get(config, []))
    return {rung: word for rung in order if (word := words.get(rung)) is not None}


def why_not_run(
    result: ModelResult, config: str, order: Sequence[str], device: str, unreached: Iterable[UnreachedPair]
) -> dict[str, str]:
    """Why each rung of `order` that `config` did not run on was not run (see `LadderRow.not_run`)."""
    cells = rung_cells(result, config, order)
    swept = result.outcomes.get(config)
    representative = swept is not None and swept.suspect
    bounds = {
        rung: pair.bound
        for pair in unreached
        if pair.model == result.model and pair.config == config
        for rung in pair.rungs
    }
    reasons: dict[str, str] = {}
    failed_below = False
    for rung in order:
        if rung not in cells:
            if rung in bounds:
                reasons[rung] = "budget" if bounds[rung] == "seconds" else "pairs"
            elif failed_below and not representative:
                reasons[rung] = "after_failure"
            elif rung in failures_only(device) and not representative:
                reasons[rung] = "failures_only"
            else:
                reasons[rung] = "not_chosen"
        failed_below = failed_below or cells.get(rung) in FAILED_WORDS
    return reasons


def rung_outcome(result: ModelResult, config: str, rung: str) -> Outcome | None:
    """The run behind a rung's cell (`rung_cells`): the ladder's, or the sweep's for counting."""
    climbed = result.ladder.get(config, {}).get(rung)
    if climbed is None and rung == COUNTING_BACKEND:
        return result.outcomes.get(config)
    return climbed


def _first_failure(result: ModelResult, config: str, order: Sequence[str]) -> tuple[str, Outcome] | None:
    """The first rung where the pair failed, confirmed, and its outcome."""
    words = rung_cells(result, config, order)
    for rung in order:
        outcome = rung_outcome(result, config, rung)
        if words.get(rung) in FAILED_WORDS and outcome is not None:
            return rung, outcome
    return None


def _signature(outcome: Outcome) -> str | None:
    if outcome.mismatched and outcome.accuracy is not None:
        return wrong_result_signature(outcome.accuracy.where)
    return outcome.signature


def survives(
    effect: Effect, cells: Mapping[str, str], baseline: Mapping[str, str] | None = None
) -> bool | None:
    """Whether a helped model's benefit survives the rungs it ran: False when one failed
    (confirmed), True when it ran on at least one and passed every one it ran; None for a model
    not helped, or one whose rungs prove nothing either way (a failure that did not repeat).
    Like with like: with `baseline` (the same model's rungs at baseline), a failure the
    baseline meets on the same rung is not the flag's, and says nothing of its benefit."""
    if effect != Effect.reduces_graphs or not cells:
        return None
    if baseline is not None and any(
        word in FAILED_WORDS and baseline.get(rung) in FAILED_WORDS for rung, word in cells.items()
    ):
        return None
    if any(word in FAILED_WORDS for word in cells.values()):
        return False
    return True if all(word == "ok" for word in cells.values()) else None


def rows_that_climbed(
    snapshot: Snapshot, rows: Iterable[ModelEffect], flag: str, order: Sequence[str]
) -> list[LadderRow]:
    """The ladder's columns for every model that climbed under `flag` (its effect's order kept)."""
    by_model = {result.model: result for result in snapshot.results}
    device = snapshot.environment.device
    table = []
    for row in rows:
        result = by_model.get(row.model)
        if row.flag != flag or result is None or flag not in result.ladder:
            continue
        failure = _first_failure(result, flag, order)
        crashed_in_sweep = row.effect in FAILED_IN_SWEEP
        words = rung_cells(result, flag, order)
        baseline = rung_cells(result, BASELINE, order)
        table.append(
            LadderRow(
                model=row.model,
                stratum=row.stratum,
                effect=row.effect,
                rungs=words,
                baseline_rungs=baseline,
                failed_at=failure[0] if failure else None,
                lives_in="Dynamo" if crashed_in_sweep else lives_in(failure[0]) if failure else None,
                signature=_signature(failure[1]) if failure else row.signature if crashed_in_sweep else None,
                survives=survives(row.effect, words, baseline),
                not_run=why_not_run(result, flag, order, device, snapshot.ladder_unreached),
            )
        )
    return table


def groups_met_on_ladder(climbed: Sequence[LadderRow], flag: str) -> list[FailureGroup]:
    """Failures a flag's pairs met only on the ladder (they ran on the counting backend), grouped
    by rung and signature, largest first; `baseline_too` names the models that fail there at
    baseline as well (not the flag's doing)."""
    grouped: dict[tuple[str, str], list[LadderRow]] = defaultdict(list)
    for row in climbed:
        if row.failed_at is not None and row.effect not in FAILED_IN_SWEEP:
            grouped[(row.failed_at, row.signature or "unknown")].append(row)
    groups = [
        FailureGroup(
            flag=flag,
            signature=signature,
            error_type=signature.partition(":")[0],
            models=sorted(row.model for row in members),
            backend=rung,
            lives_in=lives_in(rung),
            baseline_too=sorted(row.model for row in members if row.baseline_rungs.get(rung) in FAILED_WORDS),
        )
        for (rung, signature), members in grouped.items()
    ]
    return sorted(groups, key=lambda group: (-len(group.models), group.backend or "", group.signature))


def at_baseline_too(group: FailureGroup) -> bool:
    """A failure met on the ladder that every member meets at baseline too: not the flag's doing,
    said in one line and never a group of its own."""
    return bool(group.models) and set(group.models) <= set(group.baseline_too)


def recompile_run(result: ModelResult, config: str) -> Outcome | None:
    """The run of `config` that made the second call: the sweep's own, or the ladder's counting rung."""
    for outcome in (result.outcomes.get(config), result.ladder.get(config, {}).get(COUNTING_BACKEND)):
        if outcome is not None and outcome.recompile is not None and outcome.recompile.status != "skipped":
            return outcome
    return None


def recompile_rows(
    results: Iterable[ModelResult], rows: Iterable[ModelEffect], flag: str
) -> list[RecompileRow]:
    """A flag's effect on recompiles beside its effect on graphs: every model with a second call
    under the flag and at baseline."""
    by_model = {result.model: result for result in results}
    table = []
    for row in rows:
        result = by_model.get(row.model)
        if row.flag != flag or result is None:
            continue
        base, flagged = recompile_run(result, BASELINE), recompile_run(result, flag)
        if base is None or flagged is None:
            continue
        assert base.recompile is not None and flagged.recompile is not None
        table.append(
            RecompileRow(
                model=row.model,
                stratum=row.stratum,
                effect=row.effect,
                change=flagged.recompile.change,
                baseline_recompiles=base.recompile.recompiles if base.recompile.status == "ok" else None,
                flag_recompiles=flagged.recompile.recompiles if flagged.recompile.status == "ok" else None,
                baseline_dynamic=base.recompile.dynamic,
                flag_dynamic=flagged.recompile.dynamic,
                baseline_again=base.recompile.again,
                flag_again=flagged.recompile.again,
                guard_failures=flagged.recompile.guard_failures[:3],
                error=flagged.recompile.signature,
            )
        )
    return table


def recompile_gaps(results: Iterable[ModelResult], rows: Iterable[ModelEffect], flag: str) -> dict[str, str]:
    """The models that climbed under `flag` yet have no row in `recompile_rows` (no second call
    at baseline or under the flag), and why: the check's own words when it found no second shape
    to make, else which run is missing. A crash of the sweep is left out: it is a crash."""
    by_model = {result.model: result for result in results}
    gaps = {}
    for row in rows:
        result = by_model.get(row.model)
        if row.flag != flag or result is None or flag not in result.ladder or row.effect == Effect.crashes:
            continue
        runs = {config: recompile_run(result, config) for config in (BASELINE, flag)}
        if all(run is not None for run in runs.values()):
            continue
        skipped = [
            outcome.recompile.change
            for config in (flag, BASELINE)
            for outcome in (result.outcomes.get(config), result.ladder.get(config, {}).get(COUNTING_BACKEND))
            if outcome is not None and outcome.recompile is not None and outcome.recompile.status == "skipped"
        ]
        missing = " and ".join(
            "the baseline" if config == BASELINE else "the flag"
            for config, run in runs.items()
            if run is None
        )
        gaps[row.model] = skipped[0] if skipped else f"no second call recorded for {missing}"
    return gaps


class LadderFigures(NamedTuple):
    """What the ladder adds to one flag's figures (the fields of `FlagStats` of the same names)."""

    ladder: list[str]  # the rungs, in order
    ladder_rows: list[LadderRow]  # the pairs that climbed (`rows_that_climbed`)
    ladder_groups: list[FailureGroup]  # the failures met only on the ladder (`groups_met_on_ladder`)
    helped_laddered: int  # helped models with a verdict
    helped_survive: int | None  # of those, the ones whose benefit survives every rung each ran
    helped_rungs: dict[str, int]  # rung -> the helped models that ran it


def ladder_figures(snapshot: Snapshot, flag: str, rows: Sequence[ModelEffect]) -> LadderFigures:
    """`flag`'s ladder columns and groups, and how many helped models survive the full stack;
    `rows`: the flag's rows of `snapshot`."""
    climbed = rows_that_climbed(snapshot, rows, flag, snapshot.ladder)
    no_help = no_evidence_of_help(snapshot, flag)  # sentinels and models not judged prove no help
    evidence = [row for row in climbed if row.model not in no_help]
    helped = [row for row in evidence if row.survives is not None]
    ran = [row for row in evidence if row.effect == Effect.reduces_graphs]
    return LadderFigures(
        ladder=list(snapshot.ladder),
        ladder_rows=climbed,
        ladder_groups=groups_met_on_ladder(climbed, flag),
        helped_laddered=len(helped),
        helped_survive=sum(row.survives is True for row in helped) if helped else None,
        helped_rungs={rung: sum(rung in row.rungs for row in ran) for rung in snapshot.ladder} if ran else {},
    )


def first_rungs(group: FailureGroup, climbed: Mapping[str, LadderRow]) -> dict[str, str]:
    """The rungs of a crash group's first model, when it climbed (`climbed`: model -> its row)."""
    first = climbed.get(group.models[0])
    return dict(first.rungs) if first is not None else {}


def _beyond_counting(order: Sequence[str]) -> list[str]:
    """The backends beyond counting: the ladder's, then those users run."""
    return list(dict.fromkeys([*(rung for rung in order if rung != COUNTING_BACKEND), *users_backends()]))


def reach(rungs: Mapping[str, str], order: Sequence[str]) -> tuple[str | None, list[str]]:
    """Where a group of the sweep (failed with the counting backend) fails beyond it, from its
    first model's rungs (`rungs`) on the ladder `order`: the first backend that failed too,
    `counting` when every backend it was run under ran clean, None when none was run; and the
    backends (the ladder's and those users run) it was not run under. A failure that did not
    repeat (flaky) proves nothing either way: that backend counts as run, neither failed nor clean.
    """
    backends = _beyond_counting(order)
    failed = next((backend for backend in backends if rungs.get(backend) in FAILED_WORDS), None)
    unchecked = [backend for backend in backends if backend not in rungs]
    if failed is not None:
        # The ladder stops at the first failure: the backends above it were not run, and say so.
        return failed, unchecked
    clean = any(rungs.get(backend) == "ok" for backend in backends)
    return (COUNTING_BACKEND if clean else None), unchecked


def failing_backends(rungs: Mapping[str, str], order: Sequence[str]) -> list[str]:
    """Every backend beyond counting (the ladder's, then those users run) whose rung failed,
    confirmed: a group that fails under both aot_eager and inductor says both."""
    return [backend for backend in _beyond_counting(order) if rungs.get(backend) in FAILED_WORDS]


def clean_rungs(result: ModelResult | None, flag: str, order: Sequence[str]) -> list[CleanRung]:
    """The backends beyond counting under which `result`'s model ran clean under `flag`, with its
    graphs there and at baseline (on the same backend when the baseline climbed it, else the
    sweep's counting run): what a crash of the counting backend alone leaves users of them."""
    if result is None:
        return []
    cells = rung_cells(result, flag, order)
    clean = []
    for rung in order:
        outcome = result.ladder.get(flag, {}).get(rung)
        if rung == COUNTING_BACKEND or cells.get(rung) != "ok" or outcome is None:
            continue
        same = result.ladder.get(BASELINE, {}).get(rung)
        baseline = same if same is not None and same.ran else result.outcomes.get(BASELINE)
        clean.append(
            CleanRung(
                backend=rung,
                graphs=outcome.graphs,
                baseline_graphs=baseline.graphs if baseline is not None and baseline.ran else None,
                baseline_backend=rung if baseline is same else COUNTING_BACKEND,
                outputs_match=outcome.accuracy is not None and outcome.accuracy.verdict == Accuracy.match,
            )
        )
    return clean


def recompiles_more(rows: Iterable[RecompileRow]) -> list[str]:
    """The models a flag makes recompile more (`recompile_rows`)."""
    return [row.model for row in rows if _more(row)]


def _more(row: RecompileRow) -> bool:
    """The flag makes the model recompile more: on the second shape, or again on a third."""
    if row.flag_recompiles is None or row.baseline_recompiles is None:
        return False
    return row.flag_recompiles + (row.flag_again or 0) > row.baseline_recompiles + (row.baseline_again or 0)
