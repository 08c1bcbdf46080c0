"""The child's side of the pool: one task in a process forked from the warm parent, one message
back, then `os._exit`.

A child sends its stdout and stderr to its own log (a timeout's stack dump and the stage marks
land there: `lost`), caps its memory on the CPU (`resources`), runs one task (a run: `run.run_one`;
the probe: `validation.probe`) and reports the state the parent forked it in, which the
isolation tests check (one thread, no CUDA context, the warm-up compile done).
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import signal
import sys
import time
from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from triagebot.sweep import validation
from triagebot.sweep.calls import first_line
from triagebot.sweep.lost import stage_line
from triagebot.sweep.resources import limit_address_space
from triagebot.sweep.run import run_one
from triagebot.sweep.tasks import RunRequest


def _fork_state() -> dict[str, Any]:
    """What the warm parent looked like when it forked us (checked by the isolation tests)."""
    try:
        parent_threads = len(os.listdir(f"/proc/{os.getppid()}/task"))
    except OSError:
        parent_threads = None
    return {
        "parent_threads": parent_threads,
        "cuda_initialized": torch.cuda.is_initialized(),
        "warm_compiled": bool(FakeTensorMode.cache),  # the parent's warm-up compile filled it
    }


def _set_up(settings: dict[str, Any], limit_memory: bool) -> None:
    log = os.open(settings["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    faulthandler.enable(file=sys.stderr, all_threads=True)
    faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    limit = settings.get("memory_bytes")
    if limit and limit_memory and settings["device"] == "cpu":
        limit_address_space(limit)
    torch.set_num_threads(settings["threads"])


def _mark(stage: str) -> None:
    os.write(2, stage_line(stage))


def _start_cuda(settings: dict[str, Any], start: dict[str, Any]) -> None:
    """Initialise CUDA and cap this child's share of the GPU; `start` gets the seconds it took."""
    if not torch.cuda.is_initialized():
        began = time.perf_counter()
        torch.cuda.init()
        start["cuda_init_seconds"] = round(time.perf_counter() - began, 4)
    if settings.get("gpu_fraction"):
        torch.cuda.set_per_process_memory_fraction(settings["gpu_fraction"])


def standby_main(tasks: Any, conn: Any, settings: dict[str, Any]) -> None:
    """Entry point of a child forked ahead of need: it starts (on CUDA, initialises CUDA) while
    other children run, then waits for its one task on `tasks` and runs it as `child_main` does.
    It exits without a word when the pipe closes first (the pool needed no more children)."""
    state = _fork_state()  # the warm parent as it forked us, before anything here ran
    start: dict[str, Any] = {"ahead": True}
    if settings["device"] == "cuda":
        with contextlib.suppress(Exception):  # a failure shows again, and is reported, in the run
            _start_cuda(settings, start)
    ready = time.perf_counter()
    try:
        kind, payload = tasks.recv()
    except (EOFError, OSError):
        os._exit(0)
    tasks.close()
    start["waited_seconds"] = round(time.perf_counter() - ready, 4)  # ready before it was needed
    child_main(conn, kind, payload, settings, state=state, start=start)


def child_main(
    conn: Any,
    kind: str,
    payload: dict[str, Any],
    settings: dict[str, Any],
    state: dict[str, Any] | None = None,
    start: dict[str, Any] | None = None,
) -> None:
    """Entry point of a forked child: one task, one message back, then `os._exit`. `state` and
    `start` come from `standby_main` when the child was forked ahead of need."""
    code = 0
    try:
        state = state or _fork_state()
        _set_up(settings, limit_memory=kind == "run")  # the probe may initialise CUDA
        if kind == "run":
            message = _run(payload, settings, {"ahead": False} if start is None else start)
        elif kind == "probe":
            message = validation.probe(payload)
        else:
            raise ValueError(f"unknown task kind {kind!r}")
        conn.send({**message, "fork": state})
    except BaseException as error:  # report anything rather than vanish
        code = 1
        with contextlib.suppress(Exception):
            conn.send({"error": f"{type(error).__name__}: {first_line(str(error))}"})
    finally:
        try:
            conn.close()
        finally:
            os._exit(code)


def _run(payload: dict[str, Any], settings: dict[str, Any], start: dict[str, Any]) -> dict[str, Any]:
    """A run (`payload`: a `RunRequest`'s message) and its reply: its outcome, the spec its build
    completed, how the child started."""
    if settings["device"] == "cuda":
        _start_cuda(settings, start)
    request = RunRequest.from_message(payload)
    outcome, spec = run_one(
        request.spec,
        request.patch,
        settings["device"],
        eager_only=request.eager_only,
        mark=_mark,
        backend=request.backend,
        checks=request.checks,
    )
    return {"outcome": outcome.model_dump(mode="json"), "spec": spec.model_dump(mode="json"), "start": start}
