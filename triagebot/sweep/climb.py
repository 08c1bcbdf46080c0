"""Running the backend ladder (`ladder` decides what climbs) in the sweep's own pool of children.

Pairs start in priority order as workers free up, and a pair's next rung goes to the front of the
queue, so that the pairs started finish first. Before each rung is queued, the seconds the
ladder has recorded plus the estimates of the rungs running must leave room for its estimate;
when they do not, that pair's remaining rungs wait. When the rungs admitted have run, what the
estimates kept out is planned again against the seconds really spent (the estimates are cautious),
round after round until nothing more fits; what is left is an `UnreachedPair` (bound `seconds`).
Every failure on the ladder is run again `confirm` times, as every crash of the sweep is, except
a crash the pair's own sweep run raised and its reruns repeated (`confirmed_by_the_sweep`).
Records go to the sweep's own stream with `RunRecord.backend` set to the rung, so a resumed
sweep finishes its ladder too: a pair resumes at its first missing rung.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection
from typing import Any

from triagebot.results import (
    BASELINE,
    COUNTING_BACKEND,
    Check,
    ModelResult,
    ModelSpec,
    RunRecord,
    Status,
)
from triagebot.sweep.keeper import Keeper
from triagebot.sweep.ladder import Climbs, Ladder, Pair, Rungs, calibration, estimate, failed, plan_climbs
from triagebot.sweep.pool import Pool, Result
from triagebot.sweep.stream import model_results
from triagebot.sweep.tasks import RunKey, Task, run_task


def rung_task(
    spec: ModelSpec,
    config: str,
    patch: dict[str, Any],
    rung: str,
    checks: Collection[Check],
    attempt: int = 0,
) -> Task:
    """A rung's run: the counting rung makes the second-shape call beside the sweep's `checks`;
    a backend's rung compiles with that backend."""
    key = RunKey(spec.model, config, attempt, rung)
    if rung == COUNTING_BACKEND:
        return run_task(key, spec, patch, {*checks, Check.recompiles})
    return run_task(key, spec, patch, checks, backend=rung)


def rung_record(result: Result) -> RunRecord:
    assert result.task.key is not None and result.outcome is not None
    return result.task.key.record(result.outcome, result.spec)


def confirmed_by_the_sweep(result: ModelResult | None, record: RunRecord) -> bool:
    """Whether a rung's crash is the one the pair's sweep run raised, with the same signature,
    repeated by each of its reruns: a Dynamo error the backend never got to, confirmed already;
    running it again on this rung would only repeat it."""
    if result is None or record.outcome.status != Status.crash:
        return False
    swept = result.outcomes.get(record.config)
    reruns = result.confirmations.get(record.config, [])
    signature = record.outcome.signature
    return (
        swept is not None
        and swept.status == Status.crash
        and swept.signature == signature
        and bool(reruns)
        and all(rerun.status == Status.crash and rerun.signature == signature for rerun in reruns)
    )


def needs_confirming(result: ModelResult | None, record: RunRecord) -> bool:
    """Whether a rung's record is run again after the climb: a failure (a crash or a wrong
    result) that the sweep has not confirmed already."""
    return record.outcome.suspect and not confirmed_by_the_sweep(result, record)


class _Climber:
    """The admitted pairs' rungs, queued one at a time per pair within the time budget. A rung
    that fails reserves the seconds of its confirmation reruns, which come after the climb."""

    def __init__(
        self,
        climbs: Climbs,
        results: dict[str, ModelResult],
        configs: dict[str, dict[str, Any]],
        seconds: dict[str, float],
        spent: float,
        confirm: int,
        checks: Collection[Check],
        scale: dict[str, float] | None = None,
    ) -> None:
        self.scale = scale  # each rung's estimates over what its runs took so far tonight
        self.pending = deque(climbs.todo.items())  # pairs not started, with their rungs
        self.rest: dict[Pair, list[str]] = {}  # a started pair's rungs after the one queued
        self.running: dict[Pair, float] = {}  # the estimate of each pair's queued or running rung
        self.results = results
        self.configs = configs
        self.seconds = seconds  # each model's longest run in the sweep
        self.spent = spent
        self.confirm = confirm
        self.checks = checks  # what every run of the sweep checks
        self.through = climbs.through
        self.tasks: deque[Task] = deque()

    def fill(self, jobs: int, budget: float | None, keep: Keeper) -> None:
        """Start pairs until `jobs` rungs wait to run."""
        while len(self.tasks) < jobs and self.pending:
            pair, rungs = self.pending.popleft()
            self._queue(pair, rungs, budget, keep, front=False)

    def done(self, record: RunRecord, budget: float | None, keep: Keeper) -> None:
        """A rung finished: climb on unless it failed."""
        pair = (record.model, record.config)
        self.spent += record.outcome.seconds
        self.running.pop(pair, None)
        rest = self.rest.pop(pair, [])
        if needs_confirming(self.results.get(record.model), record):  # its reruns come after the climb
            self.spent += self.confirm * record.outcome.seconds
        if failed(record.outcome) and pair not in self.through:
            keep.progress.resize(-len(rest))
            return
        self._queue(pair, rest, budget, keep, front=True)

    def _queue(self, pair: Pair, rungs: list[str], budget: float | None, keep: Keeper, front: bool) -> None:
        if not rungs:
            return
        model, config = pair
        cost = estimate(self.seconds[model], rungs[0], self.scale)
        if budget is not None and self.spent + sum(self.running.values()) + cost > budget:
            keep.progress.resize(-len(rungs))
            return
        spec = self.results[model].spec
        assert spec is not None
        task = rung_task(spec, config, self.configs[config], rungs[0], self.checks)
        self.tasks.appendleft(task) if front else self.tasks.append(task)
        self.rest[pair], self.running[pair] = rungs[1:], cost


def longest_run(result: ModelResult) -> float:
    """A model's longest run in the sweep: what each rung's cost is estimated from."""
    return max((outcome.seconds for outcome in result.outcomes.values()), default=0.0)


def run_ladder(
    pool: Pool,
    keep: Keeper,
    ladder: Ladder,
    rungs: Rungs,
    flags: dict[str, dict[str, Any]],
    confirm: int,
    checks: Collection[Check],
) -> None:
    """Climb the chosen pairs within the ladder's bounds, appending each record through `keep`,
    then confirm its failures. `keep.records`: the stream so far (counting runs, and ladder runs
    of an interrupted sweep, which are kept: a pair resumes at its first missing rung). `checks`:
    what every run of the sweep checks."""
    if not rungs.order:
        return
    configs = {BASELINE: {}, **flags}
    results = {
        r.model: r for r in model_results([r for r in keep.records if r.backend is None], list(configs))
    }
    chosen = [
        (model, config)
        for model, config in ladder.choose(list(results.values()), flags)
        if model in results and results[model].spec is not None and config in configs
    ]
    counted = {(m, c): results[m].outcomes.get(c) for m, c in chosen}
    rotation = set(ladder.rotation(list(results.values()), flags)) if ladder.rotation else set()
    budget = ladder.budget(pool.jobs)
    seconds = {m: longest_run(results[m]) for m, _ in chosen}

    def plan() -> tuple[Climbs, float, dict[str, float]]:
        """What climbs next, from the ladder's records so far: their seconds and the
        confirmations its failures owe are spent, and each rung's estimates take their scale."""
        done = {(r.model, r.config, r.backend): r for r in keep.records if r.backend and r.attempt == 0}
        owed = confirm * sum(
            r.outcome.seconds for r in done.values() if needs_confirming(results.get(r.model), r)
        )
        scale = calibration(done, seconds)
        climbs = plan_climbs(chosen, ladder, counted, rungs, seconds, done, owed, scale, rotation, pool.jobs)
        return climbs, owed + sum(r.outcome.seconds for r in done.values()), scale

    climbs, spent, scale = plan()
    keep.progress.phase("ladder", climbs.runs, note=_note(rungs, climbs, len(chosen)))
    while climbs.todo:
        climber = _Climber(climbs, results, configs, seconds, spent, confirm, checks, scale)
        climber.fill(pool.jobs, budget, keep)
        for result in pool.run(climber.tasks):  # a deque: rungs join as workers free up
            climber.done(keep(rung_record(result)), budget, keep)
            climber.fill(pool.jobs, budget, keep)
        # The estimates are cautious (a slow model's rungs ran in half their estimate on the smoke
        # night): what they kept out is planned again against the seconds really spent, with each
        # rung's estimates scaled by what its runs took, until nothing more fits. Each round runs
        # a rung at least (it fits alone what the plan fit, on the same scale).
        climbs, spent, scale = plan()
        keep.progress.resize(climbs.runs)
    keep.unreached(climbs.unreached)
    _confirm(pool, keep, results, configs, confirm, checks)


def _note(rungs: Rungs, climbs: Climbs, chosen: int) -> str:
    only = [rung for rung in rungs.order if rung in rungs.failures_only]
    lifted = [rung for rung in only if rung in rungs.rotated]
    which = (
        f"; {', '.join(only)} for the failures' representatives"
        + (" and the models a flag changes" if lifted else " only")
        if only
        else ""
    )
    cut = (
        f", {len(climbs.unreached)} not yet ([sweep] ladder_max_pairs, ladder_seconds; the seconds"
        " it spends may leave room for more)"
        if climbs.unreached
        else ""
    )
    return f"{' -> '.join(rungs.order)}{which}: {len(climbs.todo)} of {chosen} pairs first{cut}"


def _confirm(
    pool: Pool,
    keep: Keeper,
    results: dict[str, ModelResult],
    configs: dict[str, dict[str, Any]],
    count: int,
    checks: Collection[Check],
) -> None:
    """Run every ladder failure that needs it (`needs_confirming`) again, `count` times."""
    done = {(r.model, r.config, r.backend, r.attempt) for r in keep.records if r.backend}
    tasks = [
        rung_task(spec, r.config, configs[r.config], r.backend, checks, attempt)
        for r in list(keep.records)
        if r.backend and r.attempt == 0 and r.config in configs and needs_confirming(results.get(r.model), r)
        for spec in [results[r.model].spec if r.model in results else r.spec]
        if spec is not None
        for attempt in range(1, count + 1)
        if (r.model, r.config, r.backend, attempt) not in done
    ]
    if not tasks:
        return
    keep.progress.phase("ladder confirmations", len(tasks), note="each failure on the ladder run again")
    for result in pool.run(tasks):
        keep(rung_record(result))
