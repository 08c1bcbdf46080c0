"""One (model, config) run, in whichever process calls it: the hot path of a sweep.

`run_one` builds the model, runs it eagerly, then compiles it with the counting backend under a
`torch._dynamo.config` patch and runs it once. The pool calls it in a child forked from the warm
parent (`child_main`); the benchmark's lower bound and the fresh-interpreter check call it
in-process (`fresh=True` resets Dynamo first).
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import resource
import signal
import sys
import time
import traceback
import types
import typing
from typing import Any

import torch
import torch._dynamo
from torch._dynamo.utils import counters

from triagebot import corpus
from triagebot.results import ModelSpec, Outcome, Status, error_signature

CALL_OPS = frozenset({"call_function", "call_method", "call_module"})
STAGE_MARK = "[triagebot:stage] "
TRACEBACK_LINES = 30
TRACEBACK_CHARS = 4000


def _skip_guard_latency_profile() -> None:
    """Dynamo times every new guard set after flushing the CPU cache with a large fresh
    buffer, only to log the latency: in a freshly forked child that is ~50 ms of page faults
    per graph. The sweep reports no guard latency, so the measurement is skipped (what is
    compiled, and every record, stays the same: the isolation tests compare them)."""
    try:
        from torch._dynamo import guards
    except ImportError:
        return
    if hasattr(guards, "profile_guard_manager"):
        guards.profile_guard_manager = lambda *args, **kwargs: 0.0


_skip_guard_latency_profile()


class CountingBackend:
    """A Dynamo backend that counts the FX graphs it receives and their call nodes."""

    def __init__(self) -> None:
        self.graphs = 0
        self.ops = 0

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Any]):
        self.graphs += 1
        self.ops += sum(1 for node in gm.graph.nodes if node.op in CALL_OPS)
        return gm.forward


def _first_line(message: str) -> str:
    return next((line.strip() for line in message.splitlines() if line.strip()), "")[:500]


def tail(text: str, lines: int = TRACEBACK_LINES, chars: int = TRACEBACK_CHARS) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])[-chars:]


def _failure(status: Status, error: BaseException, stages: dict[str, float], start: float) -> Outcome:
    error_type = type(error).__name__
    message = str(error)
    return Outcome(
        status=status,
        error_type=error_type,
        error=_first_line(message),
        signature=error_signature(error_type, message),
        traceback=tail("".join(traceback.format_exception(error))),
        seconds=round(time.perf_counter() - start, 4),
        stage_seconds=stages,
    )


def _call(model: Any, inputs: dict[str, Any]) -> Any:
    return model(**inputs)


def run_one(
    spec: ModelSpec,
    patch: dict[str, Any] | None,
    device: str,
    *,
    compile: bool = True,
    fresh: bool = False,
    mark: Any = None,
) -> tuple[Outcome, ModelSpec]:
    """Build, run eagerly, then (unless `compile` is False) compile and run under `patch`.

    Returns the outcome and the spec as completed by the build. `mark(stage)` is called as each
    stage starts (the pool's children log it, so that a timeout or a signal names its stage).
    `fresh=True` clears Dynamo's caches and counters first, for runs that share a process.
    """
    start = time.perf_counter()
    stages: dict[str, float] = {}
    if fresh:
        torch._dynamo.reset()
    counters.clear()

    if mark:
        mark("build")
    t = time.perf_counter()
    try:
        built = corpus.build(spec, device)
    except Exception as error:
        stages["build"] = round(time.perf_counter() - t, 4)
        return _failure(Status.create_error, error, stages, start), spec
    stages["build"] = round(time.perf_counter() - t, 4)
    model, inputs, spec = built.model, built.inputs, built.spec

    with torch.no_grad():
        if mark:
            mark("eager")
        t = time.perf_counter()
        try:
            _call(model, inputs)
        except Exception as error:
            stages["eager"] = round(time.perf_counter() - t, 4)
            return _failure(Status.eager_error, error, stages, start), spec
        stages["eager"] = round(time.perf_counter() - t, 4)
        if not compile:
            return Outcome(
                status=Status.ok, seconds=round(time.perf_counter() - start, 4), stage_seconds=stages
            ), spec

        if mark:
            mark("compile")
        backend = CountingBackend()
        t = time.perf_counter()
        try:
            compiled = torch.compile(model, backend=backend, fullgraph=False)
            with torch._dynamo.config.patch(**(patch or {})):
                _call(compiled, inputs)
        except Exception as error:
            stages["compile"] = round(time.perf_counter() - t, 4)
            return _failure(Status.crash, error, stages, start), spec
        stages["compile"] = round(time.perf_counter() - t, 4)

    return (
        Outcome(
            status=Status.ok,
            graphs=backend.graphs,
            ops=backend.ops,
            break_reasons=list(counters["graph_break"]),
            seconds=round(time.perf_counter() - start, 4),
            stage_seconds=stages,
        ),
        spec,
    )


def unknown_config_names(flags: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """(flag, key) for every patched name the installed `torch._dynamo.config` lacks."""
    known = torch._dynamo.config._config
    return [(flag, key) for flag, patch in flags.items() for key in patch if key not in known]


_SIMPLE_TYPES: dict[Any, tuple[str, Any]] = {  # type -> (its name, whether a value is one)
    bool: ("a bool", lambda value: isinstance(value, bool)),
    int: ("an int", lambda value: isinstance(value, int) and not isinstance(value, bool)),
    float: ("a float", lambda value: isinstance(value, int | float) and not isinstance(value, bool)),
    str: ("a string", lambda value: isinstance(value, str)),
    type(None): ("none", lambda value: value is None),
}


def _takes(value_type: Any, value: Any) -> str | None:
    """What a setting of `value_type` takes ("a bool"), when `value` is not one; None when it
    fits or the type is not one of the simple ones TOML can write (those are left to Dynamo)."""
    union = typing.get_origin(value_type) in (typing.Union, types.UnionType)
    options = typing.get_args(value_type) if union else (value_type,)
    if value_type is type(None) or not all(option in _SIMPLE_TYPES for option in options):
        return None
    if any(_SIMPLE_TYPES[option][1](value) for option in options):
        return None
    return " or ".join(_SIMPLE_TYPES[option][0] for option in options)


def config_problems(flags: dict[str, dict[str, Any]]) -> list[str]:
    """One line per patched setting the installed `torch._dynamo.config` lacks, or whose value
    is not of the setting's type (a bool setting given "yes"), naming the flag and the setting."""
    from triagebot.errors import unknown

    entries = torch._dynamo.config._config
    problems = []
    for flag, patch in flags.items():
        for key, value in patch.items():
            entry = entries.get(key)
            if entry is None:
                problems.append(f"flag {flag!r}: {unknown('torch._dynamo.config setting', key, entries)}")
                continue
            takes = _takes(getattr(entry, "value_type", None), value)
            if takes is not None:
                problems.append(f"flag {flag!r}: torch._dynamo.config.{key} takes {takes}, not {value!r}")
    return problems


# --- the child's side of the pool ------------------------------------------------------------


def _fork_state() -> dict[str, Any]:
    """What the warm parent looked like when it forked us (checked by the isolation tests)."""
    try:
        parent_threads = len(os.listdir(f"/proc/{os.getppid()}/task"))
    except OSError:
        parent_threads = None
    from torch._subclasses.fake_tensor import FakeTensorMode

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
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    torch.set_num_threads(settings["threads"])


def _mark(stage: str) -> None:
    os.write(2, f"\n{STAGE_MARK}{stage}\n".encode())


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
    start = {"ahead": False} if start is None else start
    try:
        state = state or _fork_state()
        _set_up(settings, limit_memory=kind == "run")  # the probe may initialise CUDA
        if kind == "run":
            if settings["device"] == "cuda":
                _start_cuda(settings, start)
            spec = ModelSpec.model_validate(payload["spec"])
            outcome, spec = run_one(
                spec, payload["patch"], settings["device"], compile=payload["compile"], mark=_mark
            )
            message = {
                "outcome": outcome.model_dump(mode="json"),
                "spec": spec.model_dump(mode="json"),
                "fork": state,
                "start": start,
            }
        elif kind == "probe":
            from triagebot.sweep.environment import detect_environment

            device = payload["device"]
            if device == "auto":
                device = "cuda" if torch.cuda.is_available() else "cpu"
            message = {
                "environment": detect_environment(device).model_dump(mode="json"),
                "problems": config_problems(payload["flags"]),
                "fork": state,
                "gpu_memory": torch.cuda.get_device_properties(0).total_memory if device == "cuda" else None,
            }
        else:
            raise ValueError(f"unknown task kind {kind!r}")
        conn.send(message)
    except BaseException as error:  # report anything rather than vanish
        code = 1
        with contextlib.suppress(Exception):
            conn.send({"error": f"{type(error).__name__}: {_first_line(str(error))}"})
    finally:
        try:
            conn.close()
        finally:
            os._exit(code)
