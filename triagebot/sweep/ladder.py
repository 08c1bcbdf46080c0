"""The backend ladder: after the counting sweep, a bounded set of (model, config) pairs climbs the
real compiler stack, one rung at a time, in the same pool of isolated children as every run.

PyTorch's troubleshooting guide localises a `torch.compile` failure by walking the backends: a
failure with the counting backend (which runs Dynamo's graphs as they are) is Dynamo's; one that
appears first under `aot_eager` is AOTAutograd's; first under `inductor`, Inductor's. The rungs,
in order:

1. `counting` (when the recompile check runs on the ladder's selection rather than on every run):
   the sweep's own backend again, with the compiled model called on a second input shape.
2. the backends (`[sweep] backends`; default `aot_eager` and `inductor` on CUDA, `aot_eager` on
   the CPU), each behind the graph counter, with outputs compared with eager's.

A pair climbs until a rung fails (a crash, a hang, a death, or outputs beyond tolerance) and no
further. Which pairs climb is the caller's choice (`Ladder.choose`, computed from the sweep's
results: see `triagebot.analysis.ladder_pairs`); the engine only runs them. Every failure on the
ladder is run again `confirm` times, as every crash of the sweep is. Records go to the sweep's
own stream with `RunRecord.backend` set to the rung, so a resumed sweep finishes its ladder too.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from triagebot.results import BASELINE, COUNTING_BACKEND, ModelResult, ModelSpec, Outcome, RunRecord, Status
from triagebot.sweep.pool import Pool, Task
from triagebot.sweep.stream import model_results

DEFAULT_BACKENDS: dict[str, list[str]] = {"cuda": ["aot_eager", "inductor"], "cpu": ["aot_eager"]}

Pairs = list[tuple[str, str]]


def default_backends(device: str) -> list[str]:
    """The backends the ladder climbs when `[sweep] backends` is not set."""
    return list(DEFAULT_BACKENDS.get(device, DEFAULT_BACKENDS["cpu"]))


def bounded(pairs: Pairs, limit: int | None) -> Pairs:
    """The first `limit` of `pairs` (in priority order), never keeping a model's baseline pair
    at the end without the flag pair that follows it: the one is climbed to compare the other."""
    if limit is None or len(pairs) <= limit:
        return list(pairs)
    kept = list(pairs[:limit])
    (last_model, last_config), (next_model, next_config) = kept[-1], pairs[limit]
    if last_config == BASELINE and next_model == last_model and next_config != BASELINE:
        kept.pop()
    return kept


@dataclass
class Ladder:
    """What the ladder stage of a sweep does.

    `backends`: the backends to climb, in order (None: `default_backends` of the sweep's device;
    empty: none). `recompiles`: climb the `counting` rung first, where the recompile check runs.
    `choose(results, flags)`: the (model, config) pairs to climb, from the counting sweep's
    results (the models of this shard only), at most `max_pairs` of them (said in the progress).
    """

    choose: Callable[[list[ModelResult], dict[str, dict[str, Any]]], Pairs]
    backends: list[str] | None = None
    recompiles: bool = False
    max_pairs: int | None = None

    def rungs(self, device: str) -> list[str]:
        backends = default_backends(device) if self.backends is None else list(self.backends)
        return [COUNTING_BACKEND] * self.recompiles + backends


def failed(outcome: Outcome) -> bool:
    """A rung the pair does not climb past: no result, or outputs beyond tolerance."""
    return outcome.status != Status.ok or outcome.mismatched


def _task(spec: ModelSpec, config: str, patch: dict[str, Any], rung: str, attempt: int = 0) -> Task:
    payload: dict[str, Any] = {"spec": spec.model_dump(mode="json"), "patch": patch, "compile": True}
    if rung == COUNTING_BACKEND:
        payload["checks"] = {"recompiles": True}
    else:
        payload["backend"] = rung
    return Task(key=(spec.model, config, attempt, rung), payload=payload, spec=spec)


def _record(result: Any) -> RunRecord:
    model, config, attempt, rung = result.task.key
    return RunRecord(
        model=model, config=config, attempt=attempt, outcome=result.outcome, spec=result.spec, backend=rung
    )


def run_ladder(
    pool: Pool,
    keep: Callable[[RunRecord], RunRecord],
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
    counting = [r for r in records if r.backend is None]
    configs = {BASELINE: {}, **flags}
    results = {result.model: result for result in model_results(counting, list(configs))}
    candidates = [
        (model, config)
        for model, config in ladder.choose(list(results.values()), flags)
        if model in results and results[model].spec is not None and config in configs
    ]
    pairs = bounded(candidates, ladder.max_pairs)
    climbed = {(r.model, r.config, r.backend): r for r in records if r.backend and r.attempt == 0}
    tasks: deque[Task] = deque()

    def climb(model: str, config: str, start: int) -> None:
        """Queue the pair's first rung from `start` on that has no record yet, unless one failed."""
        spec = results[model].spec
        assert spec is not None
        for rung in rungs[start:]:
            done = climbed.get((model, config, rung))
            if done is None:
                tasks.append(_task(spec, config, configs[config], rung))
                return
            if failed(done.outcome):
                return

    for model, config in pairs:
        counted = results[model].outcomes.get(config)
        # A pair that crashed in the sweep has no second call to make: it starts on the backends.
        start = 1 if rungs[0] == COUNTING_BACKEND and counted is not None and not counted.ran else 0
        climb(model, config, start)
    ran = 0
    if tasks:
        chosen = f"{len(pairs)} pairs"
        if len(pairs) < len(candidates):
            chosen = (
                f"{len(pairs)} of {len(candidates)} pairs, the first by priority ([sweep] ladder_max_pairs)"
            )
        progress.add(len(tasks), f"climbing the backend ladder ({' -> '.join(rungs)}): {chosen}")
    for result in pool.run(tasks):  # a deque: the next rungs join as each one finishes
        record = keep(_record(result))
        ran += 1
        climbed[(record.model, record.config, record.backend)] = record
        if not failed(record.outcome):
            before = len(tasks)
            climb(record.model, record.config, rungs.index(record.backend or "") + 1)
            if len(tasks) > before:
                progress.add(len(tasks) - before, None)
    return ran + _confirm(pool, keep, records, results, configs, confirm, progress)


def _confirm(
    pool: Pool,
    keep: Callable[[RunRecord], RunRecord],
    records: Sequence[RunRecord],
    results: dict[str, ModelResult],
    configs: dict[str, dict[str, Any]],
    count: int,
    progress: Any,
) -> int:
    """Run every ladder failure (a crash or a wrong result) again, `count` times."""
    done = {(r.model, r.config, r.backend, r.attempt) for r in records if r.backend}
    tasks = [
        _task(spec, r.config, configs[r.config], r.backend, attempt)
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
        keep(_record(result))
    return len(tasks)
