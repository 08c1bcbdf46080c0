"""Driving a sweep: a `SweepPlan`'s runs in the pool, streamed, resumed, crashes confirmed, then
the ladder; and the other entry point that runs in the same children: checking models eagerly."""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from triagebot.config import Jobs
from triagebot.errors import SweepError
from triagebot.results import BASELINE, Check, Environment, ModelSpec, RunRecord, SweepHeader
from triagebot.sweep.climb import run_ladder
from triagebot.sweep.keeper import Keeper
from triagebot.sweep.ladder import Rungs
from triagebot.sweep.parent import preload_modules
from triagebot.sweep.plan import SweepPlan
from triagebot.sweep.pool import Pool
from triagebot.sweep.progress import NullProgress, Progress
from triagebot.sweep.schedule import CHECK_CONFIG, Schedule, longest_first, run_record
from triagebot.sweep.stream import StreamWriter, read_stream, run_key
from triagebot.sweep.tasks import RunKey, Task, run_task


@dataclass
class SweepResult:
    path: Path
    header: SweepHeader
    records: list[RunRecord] = field(default_factory=list)  # every record in the stream
    ran: int = 0  # records made by this call (the rest were already recorded)
    jobs: int = 1  # workers used (`jobs="auto"` resolved)
    seconds: float = 0.0  # wall time of this call

    @property
    def new_records(self) -> list[RunRecord]:
        return self.records[len(self.records) - self.ran :]


def probe(
    pool: Pool,
    device: str,
    flags: dict[str, dict[str, Any]],
    backends: list[str] | None = None,
    suites: Collection[str] = (),
) -> tuple[Environment, bool]:
    """Detect the environment in a child (CUDA is initialised there, never in the warm parent),
    resolve `device="auto"` (and the pool's `jobs="auto"`: on CUDA, the GPU's memory counts),
    and check every flag's names and value types against torch._dynamo.config and every ladder
    backend against Dynamo's registry, before any model runs (`validation`). Also returns
    whether a C++ compiler was found (Inductor's, on the CPU). The environment records the
    libraries of `suites` (the night's suites that were swept)."""
    payload = {"device": device, "flags": flags, "backends": backends or [], "suites": sorted(suites)}
    result = pool.call(Task(probe=payload), timeout=300)
    message = result.message
    if not message or "environment" not in message:
        cause = result.outcome.error if result.outcome else (message or {}).get("error", "no reply")
        raise SweepError(f"the sweep's worker could not start: {cause}")
    if message["problems"]:
        raise SweepError(message["problems"][0])
    if message.get("unknown_backends"):
        raise SweepError(f"[sweep] backends: {message['unknown_backends'][0]}")
    environment = Environment.model_validate(message["environment"])
    pool.use_device(environment.device, gpu_memory=message.get("gpu_memory"))
    return environment, bool(message.get("cpp_compiler"))


def open_pool(
    specs: Iterable[ModelSpec],
    jobs: Jobs,
    timeout: float,
    memory_limit_gb: float | None,
    *,
    warm_compile: bool,
) -> Pool:
    """The pool every entry point runs in: its warm parent preloads the modules `specs` need."""
    return Pool(
        jobs=jobs,
        timeout=timeout,
        memory_limit_gb=memory_limit_gb,
        preload=preload_modules(specs),
        warm_compile=warm_compile,
    )


def _header(plan: SweepPlan, environment: Environment, rungs: Rungs | None) -> SweepHeader:
    return SweepHeader(
        environment=environment,
        flags=plan.patches,
        when={name: flag.when for name, flag in plan.settings.items()},
        corpus=plan.selection,
        shard=plan.shard,
        checks=sorted(plan.checks),
        ladder=rungs.order if rungs else [],
    )


def _open(plan: SweepPlan, header: SweepHeader) -> tuple[StreamWriter, list[RunRecord], SweepHeader]:
    """The stream's writer and its records so far: a new stream, or with `resume` the old one
    (whose header, and start time, are kept)."""
    if plan.resume and plan.path.exists():
        writer, records = StreamWriter.resume(plan.path, header)
        return writer, records, read_stream(plan.path)[0]
    return StreamWriter.create(plan.path, header), [], header


def run_sweep(plan: SweepPlan, progress: Progress | None = None) -> SweepResult:
    """Sweep `plan.specs` under the baseline and every flag, streaming records to `plan.out`
    (see `SweepPlan`), then confirm crashes and climb the ladder. Each (model, config) runs in
    its own child of the warm parent."""
    started = time.monotonic()
    progress = progress or NullProgress()
    with open_pool(plan.specs, plan.jobs, plan.timeout, plan.memory_limit_gb, warm_compile=True) as pool:
        ladder = plan.ladder
        # the night's suites, not this shard's: every shard of a night records one environment
        suites = plan.selection.swept_suites()
        environment, compiler = probe(
            pool, plan.device, plan.patches, ladder.backends if ladder else None, suites
        )
        rungs = ladder.rungs(environment.device, compiler) if ladder else None
        writer, records, header = _open(plan, _header(plan, environment, rungs))
        keep = Keeper(writer, records, progress)
        before = len(records)
        try:
            _sweep(plan, pool, keep)
            if plan.confirm:
                _confirm(pool, keep, plan.patches, plan.confirm, plan.checks)
            if ladder is not None and rungs is not None:
                run_ladder(pool, keep, ladder, rungs, plan.patches, plan.confirm, plan.checks)
        finally:
            writer.close()
            progress.close()
    ran = len(records) - before
    return SweepResult(plan.path, header, records, ran, jobs=pool.jobs, seconds=time.monotonic() - started)


def _sweep(plan: SweepPlan, pool: Pool, keep: Keeper) -> None:
    """The counting runs: every baseline, then each model's flags as its baseline finishes."""
    first = [r for r in keep.records if r.attempt == 0 and r.backend is None]
    schedule = Schedule(plan.specs, plan.settings, first, plan.checks, plan.noise)
    keep.progress.phase("sweep", schedule.planned, recorded=first)
    schedule.start(longest_first(plan.specs, plan.costs), {r.model: r for r in first if r.config == BASELINE})
    keep.progress.resize(-schedule.take_not_again())
    for record in schedule.take_copies():
        keep(record)
    for result in pool.run(schedule.tasks):  # consumed in place: the runs queued meanwhile join
        record = keep(run_record(result))
        if record.config == BASELINE:
            schedule.after_baseline(record)
            keep.progress.resize(-schedule.take_not_again())
            for copy in schedule.take_copies():
                keep(copy)


def _confirm(
    pool: Pool, keep: Keeper, flags: dict[str, dict[str, Any]], count: int, checks: Collection[Check]
) -> None:
    """Rerun every crash and every wrong result `count` times, each making `checks` (what every
    run of the sweep checks). Only those: a skipped run, an engine error, a timeout or a signal
    is never rerun."""
    done = {run_key(r) for r in keep.records if r.backend is None}
    configs = {BASELINE: {}, **flags}
    tasks = [
        run_task(RunKey(r.model, r.config, attempt), r.spec, configs[r.config], checks)
        for r in keep.records
        if r.attempt == 0 and r.backend is None and r.outcome.suspect and r.spec and r.config in configs
        for attempt in range(1, count + 1)
        if (r.model, r.config, attempt) not in done
    ]
    if not tasks:
        return
    keep.progress.phase("confirmations", len(tasks), note="each crash and wrong result run again")
    for result in pool.run(tasks):
        keep(run_record(result))


def check_models(
    specs: Iterable[ModelSpec],
    *,
    device: str = "cpu",
    jobs: Jobs = 1,
    timeout: float = 120.0,
    memory_limit_gb: float | None = 8.0,
    progress: Progress | None = None,
) -> Iterator[RunRecord]:
    """Build and run each model eagerly (no compile), isolated like a sweep run.

    Yields one RunRecord per spec as each finishes (completion order), with `config="eager"`,
    the completed spec, and status ok, create_error, eager_error, timeout or signal.
    """
    specs = list(specs)
    progress = progress or NullProgress()
    with open_pool(specs, jobs, timeout, memory_limit_gb, warm_compile=False) as pool:
        if device == "auto" or (device == "cuda" and jobs == "auto"):
            probe(pool, device, {})  # resolves the device, and on CUDA the workers
        else:
            pool.use_device(device)
        progress.phase("check", len(specs))
        try:
            tasks = (run_task(RunKey(spec.model, CHECK_CONFIG), spec, {}, eager_only=True) for spec in specs)
            for result in pool.run(tasks):
                record = run_record(result)
                progress.update(record)
                yield record
        finally:
            progress.close()
