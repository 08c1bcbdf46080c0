"""The isolated worker pool: one forked child per task, from a warm parent.

The parent is Python's forkserver, started with `triagebot.sweep.warm` (and the modeling
modules of the models about to run) as its preload: it imports torch, transformers and what a
first compile would import lazily, and never runs a torch op, so it holds no CUDA context and
no intra-op thread pool when it forks. Each task is a child of it: isolation costs a fork, not
an interpreter start. This process (the sweep's driver) imports no torch at all.

On CUDA a child is forked ahead of need (`prestart`, `PRESTART`): while the running tasks
work, the next child starts, initialises CUDA and waits on a pipe; the next task is handed to
it, so CUDA's start is off the per-run path. It still runs exactly one task, from the state it
was forked in. The mechanism is the same on the CPU, where it is off by default.

The driver waits on every child's result pipe and process sentinel: a result is a record; a
child that outlives its deadline gets SIGUSR1 (faulthandler dumps its stack into its log) and
SIGKILL, and becomes a `timeout`; a child that dies without a result (SIGSEGV, the OOM killer,
an `os._exit`) becomes a `signal` outcome with the tail of its log. Memory per child is bounded
by RLIMIT_AS on CPU; on CUDA, where the driver cannot cap the address space (CUDA maps far
more than it uses), the driver polls each child's resident set and kills it above the limit,
and each child may use 1/jobs of the GPU's memory.

`jobs="auto"` is as many workers as this process has cores (its CPU affinity, bounded by a
cgroup v2 `cpu.max` or v1 `cpu.cfs_quota_us` quota) and, on CUDA, no more than the GPU's memory
holds at `memory_limit_gb` each.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import multiprocessing
import multiprocessing.connection
import multiprocessing.forkserver
import os
import re
import select
import shutil
import signal
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from triagebot.config import Jobs
from triagebot.results import ModelSpec, Outcome, Status

_CTX = multiprocessing.get_context("forkserver")
_FORKSERVER = multiprocessing.forkserver._forkserver
# The warm parent's environment: keep numpy's BLAS from starting a thread pool at import, and
# make any CUDA availability check use NVML rather than initialise the driver.
PARENT_ENV = {"OPENBLAS_NUM_THREADS": "1", "PYTORCH_NVML_BASED_CUDA_CHECK": "1"}
WARM_REQUEST = "TRIAGEBOT_WARM"
WARM_FIFO = "TRIAGEBOT_WARM_FIFO"
_preloaded: frozenset[str] | None = None
_warm_compile_crashed = False  # a parent died while it warmed up: the next one compiles nothing
_fifo: tuple[str, int] | None = None  # a parent started early waits for its classes on this FIFO
_STAGE = re.compile(r"^\[triagebot:stage\] (\w+)$", re.M)
DUMP_GRACE = 0.3  # seconds between SIGUSR1 (stack dump) and SIGKILL on a timeout
# Children forked ahead of need, per device. On CUDA a child's start includes initialising CUDA,
# which a child forked ahead does while the others run. On the CPU a child's start is CPU work
# (the fork, the bootstrap) that no core is free to overlap when every core runs a worker: on 2
# cores forking ahead saved nothing per task and took from the running task (`bench/child_start.py`
# measures both ways), so it is off there.
PRESTART = {"cpu": 0, "cuda": 1}
GPU_SHARE = 0.95  # of the GPU's memory, split between the workers


def cgroup_cpu_limit(
    root: str | Path = "/sys/fs/cgroup", cgroups: str | Path = "/proc/self/cgroup"
) -> float | None:
    """The CPUs this process's cgroups allow (quota / period; the tightest of the cgroup and its
    ancestors, v2 `cpu.max` or v1 `cpu.cfs_quota_us`), or None when nothing limits them."""
    try:
        lines = Path(cgroups).read_text().splitlines()
    except OSError:
        return None
    root = Path(root)
    limits = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            mounts, read = [root], _cpu_max
        elif "cpu" in controllers.split(","):
            mounts, read = [root / controllers, root / "cpu", root / "cpu,cpuacct"], _cfs_quota
        else:
            continue
        for mount in mounts:
            for folder in _ancestors(mount, path):
                limit = read(folder)
                if limit is not None:
                    limits.append(limit)
    return min(limits) if limits else None


def _ancestors(mount: Path, path: str) -> list[Path]:
    """`mount`/path and each folder above it up to `mount` (those that exist)."""
    parts = [part for part in path.split("/") if part]
    folders = [mount.joinpath(*parts[:n]) for n in range(len(parts), -1, -1)]
    return [folder for folder in folders if folder.is_dir()]


def _cpu_max(folder: Path) -> float | None:
    try:
        quota, period = (folder / "cpu.max").read_text().split()[:2]
        return int(quota) / int(period) if quota != "max" and int(period) > 0 else None
    except (OSError, ValueError):
        return None


def _cfs_quota(folder: Path) -> float | None:
    try:
        quota = int((folder / "cpu.cfs_quota_us").read_text())
        period = int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None


def available_cpus() -> int:
    """The cores this process may use: its affinity, bounded by its cgroup's CPU quota (a
    fractional quota rounds up: the last worker uses what is left)."""
    cpus = len(os.sched_getaffinity(0))
    limit = cgroup_cpu_limit()
    return max(1, min(cpus, math.ceil(limit))) if limit else cpus


def auto_jobs(device: str, cpus: int, gpu_memory: int | None = None, share_gb: float | None = None) -> int:
    """Workers for `jobs="auto"`: one per core; on CUDA, no more than `GPU_SHARE` of the GPU's
    memory (`gpu_memory` bytes) holds at `share_gb` each."""
    if device == "cuda" and gpu_memory and share_gb:
        return max(1, min(cpus, int(GPU_SHARE * gpu_memory // (share_gb * 2**30))))
    return max(1, cpus)


def preload_modules(specs: Iterable[ModelSpec]) -> list[str]:
    """The model classes (`module:Class`) the warm parent resolves, so that the modules that
    define them (transformers' modeling modules) are imported before it forks."""
    return sorted({spec.class_path for spec in specs if spec.class_path and spec.source != "sentinel"})


def start_parent() -> None:
    """Start the warm parent now, before the models are known, so that its imports overlap
    with the caller's own work (loading a corpus). It waits for its model classes on a FIFO
    once its generic warm-up is done; `ensure_parent(classes, compile)` sends them."""
    global _fifo, _preloaded
    pid = _FORKSERVER._forkserver_pid
    if pid is not None and _alive(pid):
        return
    folder = tempfile.mkdtemp(prefix="triagebot-warm-")
    path = os.path.join(folder, "classes")
    os.mkfifo(path, 0o600)
    # Held open (read-write, so it never blocks) until this process exits: a FIFO's data lives
    # only while some process has it open.
    fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
    atexit.register(_drop_fifo, folder, path, fd)
    _spawn({WARM_FIFO: path})
    _fifo, _preloaded = (path, fd), None


def _drop_fifo(folder: str, path: str, fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)
    _remove(path)
    with contextlib.suppress(OSError):
        os.rmdir(folder)


def ensure_parent(classes: Iterable[str] = (), compile: bool = False) -> int:
    """Start the warm parent (or restart it when it lacks some of `classes`); returns its pid.

    `compile`: whether the parent compiles a tiny model before it forks (a sweep's children
    compile; an eager-only check's do not).
    The request reaches `triagebot.sweep.warm` through the parent's environment (WARM_REQUEST),
    or through its FIFO when it was started early by `start_parent`. A parent that died is
    replaced by one that compiles nothing, in case its warm-up compile is what killed it.
    """
    global _preloaded, _fifo, _warm_compile_crashed
    wanted = frozenset(classes)
    pid = _FORKSERVER._forkserver_pid
    alive = pid is not None and _alive(pid)
    if pid is not None and not alive and compile:
        _warm_compile_crashed = True
    compile = compile and not _warm_compile_crashed
    if alive and _fifo is not None:
        _send(_fifo[1], _warm_request(wanted, compile) + "\n")
        _fifo, _preloaded = None, wanted
        return pid
    if alive and _preloaded is not None and wanted <= _preloaded:
        return pid
    if pid is not None:
        _stop_parent()
    wanted = wanted | (_preloaded or frozenset())
    _spawn({WARM_REQUEST: _warm_request(wanted, compile)})
    _fifo, _preloaded = None, wanted
    return _FORKSERVER._forkserver_pid


def _warm_request(classes: Iterable[str], compile: bool) -> str:
    return json.dumps({"classes": sorted(classes), "compile": compile})


def _stop_parent() -> None:
    """Stop the warm parent, or forget it when it is already gone (and reaped)."""
    try:
        _FORKSERVER._stop()
    except ChildProcessError:
        _FORKSERVER._forkserver_pid = None
        if _FORKSERVER._forkserver_address and os.path.exists(_FORKSERVER._forkserver_address):
            _remove(_FORKSERVER._forkserver_address)
        _FORKSERVER._forkserver_address = None


def _spawn(extra_env: dict[str, str]) -> None:
    # "__main__" too: multiprocessing makes every child import the driver's main script (the
    # console script, hence the CLI) unless the parent already did.
    _FORKSERVER.set_forkserver_preload(["__main__", "triagebot.sweep.warm"])
    env = {**PARENT_ENV, **extra_env}
    saved = {k: os.environ.get(k) for k in (*env, WARM_REQUEST, WARM_FIFO)}
    for key in (WARM_REQUEST, WARM_FIFO):
        os.environ.pop(key, None)
    os.environ.update(env)
    # Started ignoring Ctrl-C, which the driver handles: the parent's imports are not cut off
    # with a traceback (`warm` gives its children the default handler back).
    main = threading.current_thread() is threading.main_thread()
    interrupt = signal.getsignal(signal.SIGINT) if main else None
    if interrupt is not None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _FORKSERVER.ensure_running()  # returns at once: the parent warms up in the background
    finally:
        if interrupt is not None:
            signal.signal(signal.SIGINT, interrupt)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _send(fd: int, text: str) -> None:
    data = text.encode()
    while data:
        try:
            data = data[os.write(fd, data) :]
        except BlockingIOError:
            select.select([], [fd], [], 1.0)


def parent_pid() -> int | None:
    return _FORKSERVER._forkserver_pid


def _alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _child_entry(conn: Any, kind: str, payload: dict[str, Any], settings: dict[str, Any]) -> None:
    from triagebot.sweep import worker  # preloaded in the warm parent: no import cost here

    worker.child_main(conn, kind, payload, settings)


def _standby_entry(tasks: Any, conn: Any, settings: dict[str, Any]) -> None:
    from triagebot.sweep import worker

    worker.standby_main(tasks, conn, settings)


@dataclass
class Task:
    """One unit of work for a child: a (model, config) run, or the environment probe."""

    key: Any
    kind: str = "run"
    payload: dict[str, Any] = field(default_factory=dict)
    spec: ModelSpec | None = None


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
        checks: dict[str, bool] | None = None,
    ) -> None:
        self.device = device
        self.checks = dict(checks or {})  # what every run checks (`worker.run_one`'s checks)
        self.auto = jobs == "auto"
        self.cpus = available_cpus()
        self.timeout = timeout
        self.memory_limit_gb = memory_limit_gb
        self.memory_bytes = int(memory_limit_gb * 2**30) if memory_limit_gb else None
        self._threads = threads
        self._resize(auto_jobs(device, self.cpus) if jobs == "auto" else jobs)
        self._prestart = prestart
        self.prestart = PRESTART.get(device, 0) if prestart is None else prestart
        self.preload = list(preload)
        self.warm_compile = warm_compile
        self._logs = tempfile.mkdtemp(prefix="triagebot-sweep-")
        self._serial = 0
        self._standby: deque[_Standby] = deque()

    def _resize(self, jobs: int) -> None:
        self.jobs = max(1, jobs)
        self.threads = self._threads or max(1, self.cpus // self.jobs)

    def use_device(self, device: str, gpu_memory: int | None = None) -> None:
        """Run on `device` from now on; with `jobs="auto"`, as many workers as it allows."""
        self.device = device
        if self._prestart is None:
            self.prestart = PRESTART.get(device, 0)
        if self.auto:
            self._resize(auto_jobs(device, self.cpus, gpu_memory, self.memory_limit_gb))

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
            "gpu_fraction": min(1.0, 0.95 / self.jobs) if self.device == "cuda" else None,
            "log": log,
            "checks": self.checks,
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
                self._kill(job.process)
                job.conn.close()
            self._drop_standby()

    def _start(self, task: Task) -> _Running:
        job = self._hand_over(task) if task.kind == "run" else None
        if job is not None:
            return job
        reader, writer = _CTX.Pipe(duplex=False)
        log = self._new_log()
        start = time.monotonic()
        process = self._fork(_child_entry, (writer, task.kind, task.payload, self.settings(log)))
        writer.close()
        return _Running(task, process, reader, log, start, start + self.timeout)

    def _new_log(self) -> str:
        self._serial += 1
        return os.path.join(self._logs, f"{self._serial}.log")

    def _fork(self, target: Any, args: tuple) -> Any:
        process = _CTX.Process(target=target, args=args, daemon=True)
        try:
            process.start()
        except (OSError, EOFError):  # the warm parent itself died (e.g. the OOM killer): restart it
            ensure_parent(self.preload, self.warm_compile)
            process = _CTX.Process(target=target, args=args, daemon=True)
            process.start()
        return process

    def _fill_standby(self) -> None:
        """Fork children ahead of need until `prestart` of them wait for a task."""
        while len(self._standby) < self.prestart:
            task_reader, task_writer = _CTX.Pipe(duplex=False)
            result_reader, result_writer = _CTX.Pipe(duplex=False)
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
                    child.tasks.send((task.kind, task.payload))
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
        self._kill(child.process)
        _close(child.process)
        _remove(child.log)

    def _drop_standby(self) -> None:
        while self._standby:
            self._drop(self._standby.popleft())

    def _wait(self, running: dict[int, _Running]) -> Iterator[Result]:
        now = time.monotonic()
        wait_for = min(job.deadline for job in running.values()) - now
        if self.device == "cuda" and self.memory_bytes:
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
            elif self.device == "cuda" and self.memory_bytes and _rss(job.process.pid) > self.memory_bytes:
                del running[key]
                self._kill(job.process)
                limit = self.memory_bytes / 2**30
                yield self._lost(job, "SIGKILL", f"killed: resident memory above {limit:g} GiB")

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
            self._kill(job.process)
        code = job.process.exitcode
        if message is None or "error" in message:
            if code is not None and code < 0:
                name = _signal_name(-code)
                cause = {
                    "SIGKILL": "killed by SIGKILL (out of memory, or killed from outside)",
                    "SIGSEGV": "segmentation fault",
                }.get(name, f"killed by {name}")
                return self._lost(job, name, cause)
            detail = message["error"] if message else "no result"
            return self._lost(job, "WorkerExit", f"worker exited with status {code}: {detail}")
        _close(job.process)
        _remove(job.log)
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
        self._kill(job.process)
        job.conn.close()
        return self._without_result(job, Status.timeout, "Timeout", f"no result after {self.timeout:g} s")

    def _lost(self, job: _Running, error_type: str, cause: str) -> Result:
        return self._without_result(job, Status.signal, error_type, cause)

    @staticmethod
    def _without_result(job: _Running, status: Status, error_type: str, cause: str) -> Result:
        """The record of a child that gave no result: its cause, the stage it was in, its log tail."""
        _close(job.process)
        log = _read(job.log)
        stage = _stage(log)
        where = f" in {stage}" if stage else ""
        error = f"{cause}{where}" + (": killed" if status == Status.timeout else "")
        outcome = Outcome(
            status=status,
            error_type=error_type,
            error=error,
            signature=f"{error_type}{where}",
            traceback=_tail(log) or None,
            seconds=round(time.monotonic() - job.start, 4),
            stage=stage,
        )
        _remove(job.log)
        return Result(job.task, outcome=outcome, spec=job.task.spec)

    @staticmethod
    def _kill(process: Any) -> None:
        with contextlib.suppress(ValueError, ProcessLookupError, AttributeError):
            if process.exitcode is None:
                process.kill()
            process.join(timeout=5)


def _close(process: Any) -> None:
    with contextlib.suppress(ValueError, AttributeError):
        process.close()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def _read(path: str) -> str:
    try:
        with open(path, errors="replace") as log:
            log.seek(0, os.SEEK_END)
            size = log.tell()
            log.seek(max(0, size - 64_000))
            return log.read()
    except OSError:
        return ""


def _stage(log: str) -> str | None:
    marks = _STAGE.findall(log)
    return marks[-1] if marks else None


def _tail(log: str, lines: int = 30) -> str:
    kept = [
        line
        for line in log.splitlines()
        if line.strip() and not line.startswith(("[triagebot:stage]", "Extension modules:"))
    ]
    return "\n".join(kept[-lines:])[-4000:]


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)
