"""The parent's loop: tasks run in children of the warm parent (`parent`), `jobs` at a time.

The driver (this process) waits on every child's result pipe and process sentinel: a result is
a record; a child that outlives its deadline gets SIGUSR1 (faulthandler dumps its stack into
its log) and SIGKILL, and becomes a `timeout`; a child that dies without a result (SIGSEGV, the
OOM killer, an `os._exit`) becomes a `signal` outcome with the tail of its log (`lost`). On
CUDA, where a child's address space cannot be capped, the driver polls each child's resident
set and kills it above the limit (`resources`).

On CUDA a child is forked ahead of need (`prestart`, `PRESTART`): while the running tasks work,
the next child starts, initialises CUDA and waits on a pipe; the next task is handed to it, so
CUDA's start is off the per-run path. It still runs exactly one task, from the state it was
forked in. The mechanism is the same on the CPU, where it is off by default.
"""

from __future__ import annotations

import contextlib
import multiprocessing.connection
import os
import shutil
import signal
import tempfile
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from triagebot.config import Jobs
from triagebot.results import ModelSpec, Outcome, Status
from triagebot.sweep.lost import death, lost_outcome, remove
from triagebot.sweep.parent import CONTEXT, ensure_parent, restart_parent
from triagebot.sweep.resources import gpu_fraction, resident_bytes, threads_per_worker
from triagebot.sweep.tasks import Task
from triagebot.workers import available_cpus, workers

DUMP_GRACE = 0.3  # seconds between SIGUSR1 (stack dump) and SIGKILL on a timeout
# Children forked ahead of need, per device. On CUDA a child's start includes initialising CUDA,
# which a child forked ahead does while the others run. On the CPU a child's start is CPU work
# (the fork, the bootstrap) that no core is free to overlap when every core runs a worker: on 2
# cores forking ahead saved nothing per task and took from the running task (`bench/child_start.py`
# measures both ways), so it is off there.
PRESTART = {"cpu": 0, "cuda": 1}


def _child_entry(conn: Any, kind: str, payload: dict[str, Any], settings: dict[str, Any]) -> None:
    # imported here, in the child: the driver never imports torch, and the warm parent has
    # already imported this module, so it costs the child nothing
    from triagebot.sweep import worker

    worker.child_main(conn, kind, payload, settings)


def _standby_entry(tasks: Any, conn: Any, settings: dict[str, Any]) -> None:
    from triagebot.sweep import worker  # as in `_child_entry`

    worker.standby_main(tasks, conn, settings)


@dataclass
class Result:
    task: Task
    outcome: Outcome | None = None
    spec: ModelSpec | None = None
    message: dict[str, Any] | None = None  # the child's raw reply (probe results, fork state)


@dataclass
class _Running:
    task: Task
    process: Any
    conn: Any
    log: str
    start: float
    deadline: float


@dataclass
class _Standby:
    """A child forked ahead of need, waiting for its one task on `tasks`."""

    process: Any
    tasks: Any  # the driver's end of the task pipe
    conn: Any  # the driver's end of the result pipe
    log: str


class Pool:
    """Runs tasks in children of the warm parent, `jobs` at a time."""

    def __init__(
        self,
        *,
        device: str = "cpu",
        jobs: Jobs = 1,
        timeout: float = 300.0,
        memory_limit_gb: float | None = None,
        preload: Iterable[str] = (),
        warm_compile: bool = False,
        threads: int | None = None,
        prestart: int | None = None,
    ) -> None:
        self.asked = jobs  # resolved by `use_device`, again once the probe knows the device
        self.cpus = available_cpus()
        self.timeout = timeout
        self.memory_limit_gb = memory_limit_gb
        self.memory_bytes = int(memory_limit_gb * 2**30) if memory_limit_gb else None
        self._threads = threads
        self._prestart = prestart
        self.use_device(device)
        self.preload = list(preload)
        self.warm_compile = warm_compile
        self._logs = tempfile.mkdtemp(prefix="triagebot-sweep-")
        self._serial = 0
        self._standby: deque[_Standby] = deque()

    def _resize(self, jobs: int) -> None:
        self.jobs = max(1, jobs)
        self.threads = self._threads or threads_per_worker(self.cpus, self.jobs)

    def use_device(self, device: str, gpu_memory: int | None = None) -> None:
        """Run on `device` from now on; with `jobs="auto"`, as many workers as it allows."""
        self.device = device
        self.prestart = PRESTART.get(device, 0) if self._prestart is None else self._prestart
        share = self.memory_limit_gb
        self._resize(workers(self.asked, device, cpus=self.cpus, gpu_memory=gpu_memory, share_gb=share))

    def __enter__(self) -> Pool:
        ensure_parent(self.preload, self.warm_compile)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._drop_standby()
        shutil.rmtree(self._logs, ignore_errors=True)

    def settings(self, log: str) -> dict[str, Any]:
        return {
            "device": self.device,
            "threads": self.threads,
            "memory_bytes": self.memory_bytes,
            "gpu_fraction": gpu_fraction(self.jobs) if self.device == "cuda" else None,
            "log": log,
        }

    def call(self, task: Task, timeout: float | None = None) -> Result:
        """Run one task and wait for it."""
        saved, self.timeout = self.timeout, timeout or self.timeout
        try:
            return next(iter(self.run([task])))
        finally:
            self.timeout = saved

    def run(self, tasks: Iterable[Task]) -> Iterator[Result]:
        """Yield a Result per task as each finishes (completion order). A deque is consumed in
        place: tasks the caller adds to it while iterating run too."""
        ensure_parent(self.preload, self.warm_compile)
        pending = tasks if isinstance(tasks, deque) else deque(tasks)
        running: dict[int, _Running] = {}
        runs = False  # whether any task is a run (the only kind a child forked ahead serves)
        try:
            while pending or running:
                while pending and len(running) < self.jobs:
                    task = pending.popleft()
                    runs = runs or task.kind == "run"
                    job = self._start(task)
                    running[id(job)] = job
                if runs:
                    self._fill_standby()
                yield from self._wait(running)
        finally:
            for job in running.values():
                _kill(job.process)
                job.conn.close()
            self._drop_standby()

    def _start(self, task: Task) -> _Running:
        job = self._hand_over(task) if task.kind == "run" else None
        if job is not None:
            return job
        reader, writer = CONTEXT.Pipe(duplex=False)
        log = self._new_log()
        start = time.monotonic()
        process = self._fork(_child_entry, (writer, task.kind, task.message(), self.settings(log)))
        writer.close()
        return _Running(task, process, reader, log, start, start + self.timeout)

    def _new_log(self) -> str:
        self._serial += 1
        return os.path.join(self._logs, f"{self._serial}.log")

    def _fork(self, target: Any, args: tuple) -> Any:
        process = CONTEXT.Process(target=target, args=args, daemon=True)
        try:
            process.start()
        except (OSError, EOFError):  # the warm parent itself died (e.g. the OOM killer): restart it
            restart_parent(self.preload, self.warm_compile)
            process = CONTEXT.Process(target=target, args=args, daemon=True)
            process.start()
        return process

    def _fill_standby(self) -> None:
        """Fork children ahead of need until `prestart` of them wait for a task."""
        while len(self._standby) < self.prestart:
            task_reader, task_writer = CONTEXT.Pipe(duplex=False)
            result_reader, result_writer = CONTEXT.Pipe(duplex=False)
            log = self._new_log()
            process = self._fork(_standby_entry, (task_reader, result_writer, self.settings(log)))
            task_reader.close()
            result_writer.close()
            self._standby.append(_Standby(process, task_writer, result_reader, log))

    def _hand_over(self, task: Task) -> _Running | None:
        """Give `task` to a child forked ahead of need; None when none is alive to take it."""
        while self._standby:
            child = self._standby.popleft()
            if child.process.exitcode is None:
                try:
                    child.tasks.send((task.kind, task.message()))
                except OSError:
                    pass
                else:
                    child.tasks.close()
                    start = time.monotonic()
                    return _Running(task, child.process, child.conn, child.log, start, start + self.timeout)
            self._drop(child)
        return None

    def _drop(self, child: _Standby) -> None:
        """End a child that got no task: its task pipe closes, and it exits on reading that."""
        child.tasks.close()
        child.conn.close()
        with contextlib.suppress(ValueError, AttributeError):
            child.process.join(timeout=1)
        _kill(child.process)
        _close(child.process)
        remove(child.log)

    def _drop_standby(self) -> None:
        while self._standby:
            self._drop(self._standby.popleft())

    def _wait(self, running: dict[int, _Running]) -> Iterator[Result]:
        polled = self.device == "cuda" and self.memory_bytes
        wait_for = min(job.deadline for job in running.values()) - time.monotonic()
        if polled:
            wait_for = min(wait_for, 0.5)
        handles: dict[Any, _Running] = {}
        for job in running.values():
            handles[job.conn] = job
            handles[job.process.sentinel] = job
        ready = multiprocessing.connection.wait(list(handles), timeout=max(0.0, wait_for))
        finished: dict[int, _Running] = {id(handles[h]): handles[h] for h in ready}
        for key, job in finished.items():
            del running[key]
            yield self._finish(job)
        now = time.monotonic()
        for key, job in list(running.items()):
            if now >= job.deadline:
                del running[key]
                yield self._time_out(job)
            elif polled and resident_bytes(job.process.pid) > self.memory_bytes:
                del running[key]
                _kill(job.process)
                limit = self.memory_bytes / 2**30
                yield _lost(job, Status.signal, "SIGKILL", f"killed: resident memory above {limit:g} GiB")

    def _finish(self, job: _Running) -> Result:
        message = None
        try:
            if job.conn.poll():
                message = job.conn.recv()
        except (EOFError, OSError):
            message = None
        job.conn.close()
        job.process.join(timeout=5)
        if job.process.exitcode is None:
            _kill(job.process)
        code = job.process.exitcode
        if message is None or "error" in message:
            if code is not None and code < 0:
                return _lost(job, Status.signal, *death(code))
            detail = message["error"] if message else "no result"
            return _lost(job, Status.signal, "WorkerExit", f"worker exited with status {code}: {detail}")
        _close(job.process)
        remove(job.log)
        if job.task.kind != "run":
            return Result(job.task, message=message)
        return Result(
            job.task,
            outcome=Outcome.model_validate(message["outcome"]),
            spec=ModelSpec.model_validate(message["spec"]),
            message=message,
        )

    def _time_out(self, job: _Running) -> Result:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(job.process.pid, signal.SIGUSR1)  # faulthandler: dump the stack to the log
            time.sleep(DUMP_GRACE)
        _kill(job.process)
        job.conn.close()
        return _lost(job, Status.timeout, "Timeout", f"no result after {self.timeout:g} s")


def _lost(job: _Running, status: Status, error_type: str, cause: str) -> Result:
    """The result of a child that gave none: its outcome from its log (`lost`), the task's spec."""
    _close(job.process)
    outcome = lost_outcome(status, error_type, cause, job.log, time.monotonic() - job.start)
    return Result(job.task, outcome=outcome, spec=job.task.spec)


def _kill(process: Any) -> None:
    with contextlib.suppress(ValueError, ProcessLookupError, AttributeError):
        if process.exitcode is None:
            process.kill()
        process.join(timeout=5)


def _close(process: Any) -> None:
    with contextlib.suppress(ValueError, AttributeError):
        process.close()
