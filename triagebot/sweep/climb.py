"""Running the backend ladder (`ladder`) in the sweep's own pool of isolated children.

Every failure on the ladder is run again `confirm` times, as every crash of the sweep is.
Records go to the sweep's own stream with `RunRecord.backend` set to the rung, so a resumed
sweep finishes its ladder too: a pair resumes at its first missing rung.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from triagebot.results import BASELINE, COUNTING_BACKEND, ModelResult, ModelSpec, RunRecord
from triagebot.sweep.ladder import Ladder, Pairs, bounded, failed
from triagebot.sweep.pool import Pool, Result, Task
from triagebot.sweep.stream import model_results

Keep = Callable[[RunRecord], RunRecord]


def rung_task(spec: ModelSpec, config: str, patch: dict[str, Any], rung: str, attempt: int = 0) -> Task:
    payload: dict[str, Any] = {"spec": spec.model_dump(mode="json"), "patch": patch, "compile": True}
    if rung == COUNTING_BACKEND:
        payload["checks"] = {"recompiles": True}
    else:
        payload["backend"] = rung
    return Task(key=(spec.model, config, attempt, rung), payload=payload, spec=spec)


def rung_record(result: Result) -> RunRecord:
    model, config, attempt, rung = result.task.key
    assert result.outcome is not None
    return RunRecord(
        model=model, config=config, attempt=attempt, outcome=result.outcome, spec=result.spec, backend=rung
    )


class _Climb:
    """The ladder's runs still to do: each pair's next rung, queued when the one below it passed."""

    def __init__(
        self, results: dict[str, ModelResult], configs: dict[str, dict[str, Any]], rungs: list[str]
    ) -> None:
        self.results = results
        self.configs = configs
        self.rungs = rungs
        self.climbed: dict[tuple[str, str, str | None], RunRecord] = {}
        self.tasks: deque[Task] = deque()

    def first(self, model: str, config: str) -> None:
        """Queue the pair's first rung to run. A pair that crashed in the sweep has no second call
        to make: it starts on the backends."""
        counted = self.results[model].outcomes.get(config)
        crashed = counted is not None and not counted.ran
        self.next(model, config, 1 if self.rungs[0] == COUNTING_BACKEND and crashed else 0)

    def next(self, model: str, config: str, start: int) -> None:
        """Queue the pair's first rung from `start` on that has no record yet, unless one failed."""
        spec = self.results[model].spec
        assert spec is not None
        for rung in self.rungs[start:]:
            done = self.climbed.get((model, config, rung))
            if done is None:
                self.tasks.append(rung_task(spec, config, self.configs[config], rung))
                return
            if failed(done.outcome):
                return

    def done(self, record: RunRecord) -> None:
        """A rung finished: climb on unless it failed."""
        self.climbed[(record.model, record.config, record.backend)] = record
        if not failed(record.outcome):
            self.next(record.model, record.config, self.rungs.index(record.backend or "") + 1)


def run_ladder(
    pool: Pool,
    keep: Keep,
    records: Sequence[RunRecord],
    flags: dict[str, dict[str, Any]],
    ladder: Ladder,
    rungs: list[str],
    confirm: int,
    progress: Any,
) -> int:
    """Climb the chosen pairs, appending each record through `keep`; returns the runs made.

    `records`: the stream so far (counting runs, and ladder runs of an interrupted sweep, which
    are kept: a pair resumes at its first missing rung).
    """
    if not rungs:
        return 0
    configs = {BASELINE: {}, **flags}
    counting = [r for r in records if r.backend is None]
    results = {result.model: result for result in model_results(counting, list(configs))}
    candidates = [
        (model, config)
        for model, config in ladder.choose(list(results.values()), flags)
        if model in results and results[model].spec is not None and config in configs
    ]
    pairs = bounded(candidates, ladder.max_pairs)
    climb = _Climb(results, configs, rungs)
    climb.climbed = {(r.model, r.config, r.backend): r for r in records if r.backend and r.attempt == 0}
    for model, config in pairs:
        climb.first(model, config)
    if climb.tasks:
        progress.add(
            len(climb.tasks),
            f"climbing the backend ladder ({' -> '.join(rungs)}): {_chosen(pairs, candidates)}",
        )
    ran = 0
    for result in pool.run(climb.tasks):  # a deque: the next rungs join as each one finishes
        before = len(climb.tasks)
        climb.done(keep(rung_record(result)))
        ran += 1
        if len(climb.tasks) > before:
            progress.add(len(climb.tasks) - before, None)
    return ran + _confirm(pool, keep, records, results, configs, confirm, progress)


def _chosen(pairs: Pairs, candidates: Pairs) -> str:
    if len(pairs) < len(candidates):
        return f"{len(pairs)} of {len(candidates)} pairs, the first by priority ([sweep] ladder_max_pairs)"
    return f"{len(pairs)} pairs"


def _confirm(
    pool: Pool,
    keep: Keep,
    records: Sequence[RunRecord],
    results: dict[str, ModelResult],
    configs: dict[str, dict[str, Any]],
    count: int,
    progress: Any,
) -> int:
    """Run every ladder failure (a crash or a wrong result) again, `count` times."""
    done = {(r.model, r.config, r.backend, r.attempt) for r in records if r.backend}
    tasks = [
        rung_task(spec, r.config, configs[r.config], r.backend, attempt)
        for r in list(records)
        if r.backend and r.attempt == 0 and r.outcome.suspect and r.config in configs
        for spec in [results[r.model].spec if r.model in results else r.spec]
        if spec is not None
        for attempt in range(1, count + 1)
        if (r.model, r.config, r.backend, attempt) not in done
    ]
    if not tasks:
        return 0
    progress.add(len(tasks), "confirming the ladder's failures")
    for result in pool.run(tasks):
        keep(rung_record(result))
    return len(tasks)
