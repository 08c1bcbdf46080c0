"""Driving a sweep: plan the runs, stream their records, resume, confirm crashes, check models."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from triagebot.errors import SweepError
from triagebot.results import (
    BASELINE,
    CorpusSelection,
    Environment,
    ModelSpec,
    RunRecord,
    Status,
    SweepHeader,
)
from triagebot.sweep.ladder import Ladder, run_ladder
from triagebot.sweep.pool import Pool, Task, preload_modules
from triagebot.sweep.stream import StreamWriter, parse_shard, read_stream, run_key, select_shard

CHECK_CONFIG = "eager"
"""`RunRecord.config` of a check-mode record (build and eager run only)."""


class Progress(Protocol):
    def start(self, total: int, done: int, crashes: int) -> None: ...
    def add(self, runs: int, what: str | None = ...) -> None: ...
    def update(self, record: RunRecord) -> None: ...
    def close(self) -> None: ...


class NullProgress:
    def start(self, total: int, done: int, crashes: int) -> None:
        pass

    def add(self, runs: int, what: str | None = None) -> None:
        pass

    def update(self, record: RunRecord) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass
class SweepResult:
    path: Path
    header: SweepHeader
    records: list[RunRecord] = field(default_factory=list)  # every record in the stream
    ran: int = 0  # runs done by this call (the rest were already recorded)


def _task(
    spec: ModelSpec, config: str, patch: dict[str, Any], attempt: int = 0, compile: bool = True
) -> Task:
    return Task(
        key=(spec.model, config, attempt),
        payload={"spec": spec.model_dump(mode="json"), "patch": patch, "compile": compile},
        spec=spec,
    )


def _record(result: Any) -> RunRecord:
    model, config, attempt = result.task.key
    return RunRecord(model=model, config=config, attempt=attempt, outcome=result.outcome, spec=result.spec)


def probe(
    pool: Pool, device: str, flags: dict[str, dict[str, Any]], backends: list[str] | None = None
) -> Environment:
    """Detect the environment in a child (CUDA is initialised there, never in the warm parent),
    resolve `device="auto"`, and check every flag's names against torch._dynamo.config and every
    ladder backend against Dynamo's registry."""
    payload = {"device": device, "flags": flags, "backends": backends or []}
    result = pool.call(Task(key="probe", kind="probe", payload=payload), timeout=300)
    message = result.message
    if not message or "environment" not in message:
        cause = result.outcome.error if result.outcome else (message or {}).get("error", "no reply")
        raise SweepError(f"the sweep's worker could not start: {cause}")
    if message["unknown"]:
        flag, key = message["unknown"][0]
        raise SweepError(f"flag {flag!r}: torch._dynamo.config has no setting {key!r}")
    if message.get("unknown_backends"):
        raise SweepError(f"[sweep] backends: {message['unknown_backends'][0]}")
    environment = Environment.model_validate(message["environment"])
    pool.device = environment.device
    return environment


def validate_flags(flags: dict[str, dict[str, Any]]) -> None:
    """In-process check of flag patches against the installed torch._dynamo.config."""
    from triagebot.sweep.worker import unknown_config_names

    unknown = unknown_config_names(flags)
    if unknown:
        flag, key = unknown[0]
        raise SweepError(f"flag {flag!r}: torch._dynamo.config has no setting {key!r}")


def run_sweep(
    specs: Sequence[ModelSpec],
    flags: dict[str, dict[str, Any]],
    out: str | Path,
    *,
    corpus: str | CorpusSelection = "custom",
    device: str = "auto",
    jobs: int = 2,
    timeout: float = 300.0,
    memory_limit_gb: float | None = 8.0,
    resume: bool = False,
    shard: str | None = None,
    confirm: int = 0,
    progress: Progress | None = None,
    checks: dict[str, bool] | None = None,
    ladder: Ladder | None = None,
) -> SweepResult:
    """Sweep `specs` under the baseline and every flag, streaming records to `out`.

    Each (model, config) runs in its own child of the warm parent. With `resume`, runs already
    in `out` are kept and only the missing ones run. `shard="i/n"` sweeps a slice of the models.
    `confirm` reruns each crash and each wrong result that many times (records with `attempt`
    1..confirm). `checks`: what every run checks (`worker.run_one`). `ladder`: the backend
    ladder's stage after the sweep (`triagebot.sweep.ladder`).
    """
    progress = progress or NullProgress()
    selection = corpus if isinstance(corpus, CorpusSelection) else CorpusSelection(name=corpus)
    if not selection.models:
        selection = selection.model_copy(update={"models": [s.model for s in specs]})
    chosen = select_shard(list(specs), parse_shard(shard))
    out = Path(out)
    with Pool(
        jobs=jobs,
        timeout=timeout,
        memory_limit_gb=memory_limit_gb,
        preload=preload_modules(chosen),
        warm_compile=True,
        checks=checks,
    ) as pool:
        environment = probe(pool, device, flags, ladder.backends if ladder is not None else None)
        rungs = ladder.rungs(environment.device) if ladder is not None else []
        header = SweepHeader(
            environment=environment,
            flags=flags,
            corpus=selection,
            shard=shard,
            checks=sorted(name for name, on in (checks or {}).items() if on),
            ladder=rungs,
        )
        if resume and out.exists():
            writer, records = StreamWriter.resume(out, header)
            header = read_stream(out)[0]
        else:
            writer, records = StreamWriter.create(out, header), []
        try:
            first = [r for r in records if r.attempt == 0 and r.backend is None]
            progress.start(
                total=len(chosen) * (1 + len(flags)),
                done=len(first),
                crashes=sum(r.outcome.status == Status.crash for r in first),
            )
            plan = _Plan(chosen, flags, {(r.model, r.config) for r in first})
            baselines = {r.model: r for r in first if r.config == BASELINE}
            for spec in chosen:
                if spec.model in baselines:
                    plan.after_baseline(baselines[spec.model])
                else:
                    plan.tasks.append(_task(spec, BASELINE, {}))
            before = len(records)
            keep = _Keeper(writer, records, progress)
            for record in plan.take_copies():
                keep(record)
            for result in pool.run(plan.tasks):  # consumed in place: the runs queued meanwhile join
                record = keep(_record(result))
                if record.config == BASELINE:
                    plan.after_baseline(record)
                    for copy in plan.take_copies():
                        keep(copy)
            ran = len(records) - before
            if confirm:
                ran += _confirm(pool, writer, records, flags, confirm, progress)
            if ladder is not None:
                ran += run_ladder(pool, keep, records, flags, ladder, rungs, confirm, progress)
        finally:
            writer.close()
            progress.close()
    return SweepResult(out, header, records, ran)


@dataclass
class _Keeper:
    """Where each finished record goes: the stream, the list of records, the progress display."""

    writer: StreamWriter
    records: list[RunRecord]
    progress: Progress

    def __call__(self, record: RunRecord) -> RunRecord:
        self.writer.write(record)
        self.records.append(record)
        self.progress.update(record)
        return record


class _Plan:
    """The runs still to do. A model's flag runs are queued when its baseline finishes, with the
    spec the baseline completed (its config, recipe and inputs), so that no flag run repeats the
    recipe ladder and every config runs on the very same inputs. A baseline that could not build
    or run eagerly makes every flag untestable too (the Dynamo patch applies only to the compiled
    call): its outcome is recorded for each flag rather than run again."""

    def __init__(
        self, specs: list[ModelSpec], flags: dict[str, dict[str, Any]], recorded: set[tuple[str, str]]
    ) -> None:
        self.specs = {spec.model: spec for spec in specs}
        self.flags = flags
        self.recorded = recorded
        self.tasks: deque[Task] = deque()
        self.copies: list[RunRecord] = []

    def after_baseline(self, baseline: RunRecord) -> None:
        spec = baseline.spec or self.specs[baseline.model]
        todo = [flag for flag in self.flags if (baseline.model, flag) not in self.recorded]
        if baseline.outcome.untestable:
            self.copies += [baseline.model_copy(update={"config": flag}, deep=True) for flag in todo]
        else:
            # to the front: a model's runs stay together, and its flags start while it is fresh
            self.tasks.extendleft(_task(spec, flag, self.flags[flag]) for flag in reversed(todo))

    def take_copies(self) -> list[RunRecord]:
        copies, self.copies = self.copies, []
        return copies


def _confirm(
    pool: Pool,
    writer: StreamWriter,
    records: list[RunRecord],
    flags: dict[str, dict[str, Any]],
    count: int,
    progress: Progress,
) -> int:
    done = {run_key(r) for r in records if r.backend is None}
    configs = {BASELINE: {}, **flags}
    tasks = [
        _task(r.spec, r.config, configs[r.config], attempt)
        for r in records
        if r.attempt == 0 and r.backend is None and r.outcome.suspect and r.spec and r.config in configs
        for attempt in range(1, count + 1)
        if (r.model, r.config, attempt) not in done
    ]
    if not tasks:
        return 0
    progress.add(len(tasks))
    keep = _Keeper(writer, records, progress)
    for result in pool.run(tasks):
        keep(_record(result))
    return len(tasks)


def confirm_crashes(
    path: str | Path,
    count: int,
    *,
    jobs: int = 2,
    timeout: float = 300.0,
    memory_limit_gb: float | None = 8.0,
    progress: Progress | None = None,
) -> list[RunRecord]:
    """Rerun every crashed or wrong (model, config) of the stream at `path` until it has `count`
    confirmation runs (attempts 1..count), in isolated children like the sweep, and append
    them to the stream. Returns the new records. The analysis decides flaky vs confirmed."""
    progress = progress or NullProgress()
    header, records = read_stream(path)
    specs = [r.spec for r in records if r.spec]
    with Pool(
        jobs=jobs,
        timeout=timeout,
        memory_limit_gb=memory_limit_gb,
        preload=preload_modules(specs),
        checks=dict.fromkeys(header.checks, True),
    ) as pool:
        environment = probe(pool, header.environment.device, header.flags)
        if not environment.same_build(header.environment):
            raise SweepError(
                f"cannot confirm {path}: it was swept with torch {header.environment.torch_version}, "
                f"this is {environment.torch_version}"
            )
        writer, records = StreamWriter.resume(path, header)
        before = len(records)
        try:
            progress.start(total=0, done=0, crashes=0)
            _confirm(pool, writer, records, header.flags, count, progress)
        finally:
            writer.close()
            progress.close()
    return records[before:]


def check_models(
    specs: Iterable[ModelSpec],
    *,
    device: str = "cpu",
    jobs: int = 1,
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
    with Pool(
        jobs=jobs, timeout=timeout, memory_limit_gb=memory_limit_gb, preload=preload_modules(specs)
    ) as pool:
        if device == "auto":
            device = probe(pool, device, {}).device
        pool.device = device
        progress.start(total=len(specs), done=0, crashes=0)
        try:
            for result in pool.run(_task(spec, CHECK_CONFIG, {}, compile=False) for spec in specs):
                record = _record(result)
                progress.update(record)
                yield record
        finally:
            progress.close()
