"""The warm parent: the process every run's child is forked from.

It is Python's forkserver, started with `triagebot.sweep.warm` (and the modeling modules of the
models about to run) as its preload: it imports torch, transformers and what a first compile
would import lazily, and never runs a torch op on a device, so it holds no CUDA context and no
intra-op thread pool when it forks. Each run is a child of it: isolation costs a fork, not an
interpreter start. The sweep's driver (this process) imports no torch at all.

`start_parent()` starts it before the models are known (its imports then overlap with loading
the corpus); `ensure_parent(classes, warm_compile)` sends it the classes to warm up, or (re)starts it
with them.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import multiprocessing
import multiprocessing.forkserver
import os
import select
import signal
import tempfile
import threading
from collections.abc import Iterable

from triagebot.results import SUITES, ModelSpec

CONTEXT = multiprocessing.get_context("forkserver")
_FORKSERVER = multiprocessing.forkserver._forkserver
# The warm parent's environment: keep numpy's BLAS from starting a thread pool at import, and
# make any CUDA availability check use NVML rather than initialise the driver.
PARENT_ENV = {"OPENBLAS_NUM_THREADS": "1", "PYTORCH_NVML_BASED_CUDA_CHECK": "1"}
WARM_REQUEST = "TRIAGEBOT_WARM"
WARM_FIFO = "TRIAGEBOT_WARM_FIFO"
_preloaded: frozenset[str] | None = None
_warm_compile_crashed = False  # a parent died while it warmed up: the next one compiles nothing
_fifo: tuple[str, int] | None = None  # a parent started early waits for its classes on this FIFO


def preload_modules(specs: Iterable[ModelSpec]) -> list[str]:
    """The model classes (`module:Class`) the warm parent resolves, so that the modules that
    define them (transformers' modeling modules) are imported before it forks."""
    return sorted({spec.class_path for spec in specs if spec.class_path and not spec.sentinel})


def start_parent() -> None:
    """Start the warm parent now, before the models are known, so that its imports overlap
    with the caller's own work (loading a corpus). It waits for its model classes on a FIFO
    once its generic warm-up is done; `ensure_parent(classes, warm_compile)` sends them."""
    global _fifo, _preloaded
    pid = parent_pid()
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
    with contextlib.suppress(OSError):
        os.remove(path)
    with contextlib.suppress(OSError):
        os.rmdir(folder)


def ensure_parent(classes: Iterable[str] = (), warm_compile: bool = False) -> int:
    """Start the warm parent (or restart it when it lacks some of `classes`); returns its pid.

    `warm_compile`: whether the parent compiles a tiny model before it forks (a sweep's children
    compile; an eager-only check's do not).
    The request reaches `triagebot.sweep.warm` through the parent's environment (WARM_REQUEST),
    or through its FIFO when it was started early by `start_parent`. A parent that died is
    replaced by one that compiles nothing, in case its warm-up compile is what killed it.
    """
    global _preloaded, _fifo, _warm_compile_crashed
    wanted = frozenset(classes)
    pid = parent_pid()
    alive = pid is not None and _alive(pid)
    if pid is not None and not alive and warm_compile:
        _warm_compile_crashed = True
    warm_compile = warm_compile and not _warm_compile_crashed
    if alive and _fifo is not None:
        _send(_fifo[1], _warm_request(wanted, warm_compile) + "\n")
        _fifo, _preloaded = None, wanted
        return pid
    if alive and _preloaded is not None and wanted <= _preloaded:
        return pid
    if pid is not None:
        stop_parent()
    wanted = wanted | (_preloaded or frozenset())
    _spawn({WARM_REQUEST: _warm_request(wanted, warm_compile)})
    _fifo, _preloaded = None, wanted
    return _FORKSERVER._forkserver_pid


def restart_parent(classes: Iterable[str] = (), warm_compile: bool = False) -> int:
    """Start a warm parent in place of one that stopped answering (killed by the OOM killer, or
    still dying): it is ended and reaped first, so that it is never taken for alive."""
    pid = parent_pid()
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    return ensure_parent(classes, warm_compile)


def _warm_request(classes: Iterable[str], warm_compile: bool) -> str:
    """What the parent warms, and the suites it builds (`results.SUITES`: one registered here
    only, a test's, is known to the children too)."""
    suites = [dataclasses.asdict(suite) for suite in SUITES.values()]
    return json.dumps({"classes": sorted(classes), "compile": warm_compile, "suites": suites})


def stop_parent() -> None:
    """Stop the warm parent, or forget it when it is already gone (and reaped)."""
    try:
        _FORKSERVER._stop()
    except ChildProcessError:
        _FORKSERVER._forkserver_pid = None
        address = _FORKSERVER._forkserver_address
        if address and os.path.exists(address):
            with contextlib.suppress(OSError):
                os.remove(address)
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
