"""Driving a sweep: plan the runs, stream their records, resume, confirm crashes, check models."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from triagebot.errors import SweepError
from triagebot.results import (
    BASELINE,
    CorpusSelection,
    Environment,
    FlagSettings,
    ModelSpec,
    Outcome,
    RunRecord,
    Status,
    SweepHeader,
)
from triagebot.sweep.ladder import Ladder, run_ladder
from triagebot.sweep.pool import Jobs, Pool, Task, preload_modules
from triagebot.sweep.stream import StreamWriter, read_stream, run_key

CHECK_CONFIG = "eager"
"""`RunRecord.config` of a check-mode record (build and eager run only)."""

Flags = Mapping[str, FlagSettings | dict[str, Any]]
"""Flag name -> its settings, or a bare `torch._dynamo.config` patch (`when` by `default_when`)."""


def flag_settings(flags: Flags) -> dict[str, FlagSettings]:
    return {
        name: value if isinstance(value, FlagSettings) else FlagSettings(patch=dict(value))
        for name, value in flags.items()
    }


def can_matter(flag: FlagSettings, baseline: Outcome) -> bool:
    """Whether a flag's run could differ from the model's baseline run: always under
    `when="always"`; under `"graph_breaks"`, unless the baseline compiled to exactly one graph
    with no graph-break reason (nothing for the flag to act on). A baseline that crashed, hung
    or died is always followed by the flag's run: the flag may fix it."""
    if flag.when == "always":
        return True
    single = baseline.status == Status.ok and baseline.graphs == 1 and not baseline.break_reasons
    return not single


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
    ran: int = 0  # records made by this call (the rest were already recorded)
    jobs: int = 1  # workers used (`jobs="auto"` resolved)
    seconds: float = 0.0  # wall time of this call

    @property
    def new_records(self) -> list[RunRecord]:
        return self.records[len(self.records) - self.ran :]


def _task(
    spec: ModelSpec, config: str, patch: dict[str, Any], attempt: int = 0, compile: bool = True
) -> Task:
    return Task(
        key=(spec.model, config, attempt),
        payload={"spec": spec.model_dump(mode="json"), "patch": patch, "compile": compile},
        spec=spec,
    )


def _record(result: Any) -> RunRecord:
    """A finished run's record. A flag run or a confirmation rerun is made only when its baseline
    built and ran eagerly, with the spec that baseline completed: if it cannot do the same, the
    sweep failed to rebuild the model, an `engine_error` (its error and traceback kept), never
    an untestable model."""
    model, config, attempt = result.task.key
    outcome = result.outcome
    if config != CHECK_CONFIG and (config != BASELINE or attempt > 0) and outcome.untestable:
        outcome = outcome.model_copy(update={"status": Status.engine_error})
    return RunRecord(model=model, config=config, attempt=attempt, outcome=outcome, spec=result.spec)


def probe(
    pool: Pool, device: str, flags: dict[str, dict[str, Any]], backends: list[str] | None = None
) -> Environment:
    """Detect the environment in a child (CUDA is initialised there, never in the warm parent),
    resolve `device="auto"` (and the pool's `jobs="auto"`: on CUDA, the GPU's memory counts),
    and check every flag's names and value types against torch._dynamo.config and every ladder
    backend against Dynamo's registry, before any model runs."""
    payload = {"device": device, "flags": flags, "backends": backends or []}
    result = pool.call(Task(key="probe", kind="probe", payload=payload), timeout=300)
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
    return environment


def validate_flags(flags: Flags) -> None:
    """In-process check of flag patches against the installed torch._dynamo.config: names and
    value types."""
    from triagebot.sweep.worker import config_problems

    problems = config_problems({name: f.patch for name, f in flag_settings(flags).items()})
    if problems:
        raise SweepError(problems[0])


def run_sweep(
    specs: Sequence[ModelSpec],
    flags: Flags,
    out: str | Path,
    *,
    corpus: str | CorpusSelection = "custom",
    device: str = "auto",
    jobs: Jobs = 2,
    timeout: float = 300.0,
    memory_limit_gb: float | None = 8.0,
    resume: bool = False,
    shard: str | None = None,
    confirm: int = 0,
    progress: Progress | None = None,
    costs: Mapping[str, float] | None = None,
    checks: dict[str, bool] | None = None,
    ladder: Ladder | None = None,
) -> SweepResult:
    """Sweep `specs` under the baseline and every flag, streaming records to `out`.

    Each (model, config) runs in its own child of the warm parent. A flag whose `when` is
    `"graph_breaks"` is not run on a model whose baseline compiled to one graph with no break:
    its record says `skipped`. With `resume`, runs already in `out` are kept and only the missing
    ones run. `shard="i/n"` names the slice of the sweep that `specs` are (chosen by
    `triagebot.corpus.selection`), recorded in the stream's header. `confirm` reruns each crash
    and each wrong result that many times (records with `attempt` 1..confirm). `jobs="auto"`
    uses the cores this process may use (and on CUDA, the GPU memory a worker's share allows).
    `costs` (model -> seconds recorded by the previous sweep) queues the longest models first,
    after those it has no cost for. `checks`: what every run checks (`worker.run_one`).
    `ladder`: the backend ladder's stage after the sweep (`triagebot.sweep.ladder`).
    """
    started = time.monotonic()
    progress = progress or NullProgress()
    settings = flag_settings(flags)
    patches = {name: flag.patch for name, flag in settings.items()}
    selection = corpus if isinstance(corpus, CorpusSelection) else CorpusSelection(name=corpus)
    if not selection.models:
        selection = selection.model_copy(update={"models": [s.model for s in specs]})
    chosen = list(specs)
    out = Path(out)
    with Pool(
        jobs=jobs,
        timeout=timeout,
        memory_limit_gb=memory_limit_gb,
        preload=preload_modules(chosen),
        warm_compile=True,
        checks=checks,
    ) as pool:
        environment = probe(pool, device, patches, ladder.backends if ladder is not None else None)
        rungs = ladder.rungs(environment.device) if ladder is not None else []
        header = SweepHeader(
            environment=environment,
            flags=patches,
            when={name: flag.when for name, flag in settings.items()},
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
                total=len(chosen) * (1 + len(settings)),
                done=len(first),
                crashes=sum(r.outcome.status == Status.crash for r in first),
            )
            plan = _Plan(chosen, settings, {(r.model, r.config) for r in first})
            baselines = {r.model: r for r in first if r.config == BASELINE}
            for spec in longest_first(chosen, costs):
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
                ran += _confirm(pool, writer, records, patches, confirm, progress)
            if ladder is not None:
                ran += run_ladder(pool, keep, records, patches, ladder, rungs, confirm, progress)
        finally:
            writer.close()
            progress.close()
    return SweepResult(out, header, records, ran, jobs=pool.jobs, seconds=time.monotonic() - started)


def longest_first(specs: Sequence[ModelSpec], costs: Mapping[str, float] | None) -> list[ModelSpec]:
    """The order baselines are queued in: models without a recorded cost first (new or changed
    models, whose cost nobody knows: one of them must not be what the sweep ends on), in the
    order given, then the others by recorded seconds, longest first (ties in the order given).
    Without `costs`, the order given."""
    if not costs:
        return list(specs)
    unknown = [spec for spec in specs if spec.model not in costs]
    known = sorted((spec for spec in specs if spec.model in costs), key=lambda spec: -costs[spec.model])
    return unknown + known


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
    call): its outcome is recorded for each flag rather than run again. A flag that cannot matter
    on the model (`can_matter`) gets a `skipped` record, made here: no child is forked for it."""

    def __init__(
        self, specs: list[ModelSpec], flags: dict[str, FlagSettings], recorded: set[tuple[str, str]]
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
            return
        run = [flag for flag in todo if can_matter(self.flags[flag], baseline.outcome)]
        self.copies += [
            RunRecord(model=baseline.model, config=flag, outcome=Outcome(status=Status.skipped), spec=spec)
            for flag in todo
            if flag not in run
        ]
        # to the front: a model's runs stay together, and its flags start while it is fresh
        self.tasks.extendleft(_task(spec, flag, self.flags[flag].patch) for flag in reversed(run))

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
    """Rerun every crash and every wrong result `count` times. Only those: a skipped run, an
    engine error, a timeout or a signal is never rerun."""
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
    jobs: Jobs = 2,
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
    with Pool(
        jobs=jobs, timeout=timeout, memory_limit_gb=memory_limit_gb, preload=preload_modules(specs)
    ) as pool:
        if device == "auto" or (device == "cuda" and jobs == "auto"):
            probe(pool, device, {})  # resolves the device, and on CUDA the workers
        else:
            pool.use_device(device)
        progress.start(total=len(specs), done=0, crashes=0)
        try:
            for result in pool.run(_task(spec, CHECK_CONFIG, {}, compile=False) for spec in specs):
                record = _record(result)
                progress.update(record)
                yield record
        finally:
            progress.close()
