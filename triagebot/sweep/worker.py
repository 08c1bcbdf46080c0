"""One (model, config) run, in whichever process calls it: the hot path of a sweep.

`run_one` builds the model, runs it eagerly, then compiles it with the counting backend under a
`torch._dynamo.config` patch and runs it once. The pool calls it in a child forked from the warm
parent (`child_main`); the benchmark's lower bound and the fresh-interpreter check call it
in-process (`fresh=True` resets Dynamo first).

With `checks` (what the sweep asks every run to check):
- `accuracy`: eager runs twice (reseeded before each call, as every call is) and the compiled
  outputs are compared with the first (`accuracy.compare`); two eager runs that differ make the
  model nondeterministic, not judged.
- `recompiles`: the compiled model is called again on a second shape of its inputs
  (`shapes.second_shape`, checked by an eager run on it first): recompiles, the guard that failed
  for each, whether the new graphs are dynamic, and that call's outputs against eager's too.
A ladder run (`backend="aot_eager"`, `"inductor"`, or an importable `module:function`) compiles
with that backend behind the graph counter; it checks accuracy but makes no second call.
"""

from __future__ import annotations

import contextlib
import faulthandler
import importlib
import os
import random
import re
import resource
import signal
import sys
import time
import traceback
import types
import typing
from collections.abc import Callable
from typing import Any

import torch
import torch._dynamo
from torch._dynamo.utils import counters

from triagebot import corpus
from triagebot.corpus.inputs import materialize_inputs
from triagebot.results import (
    Accuracy,
    AccuracyCheck,
    ModelSpec,
    Outcome,
    RecompileCheck,
    Status,
    error_signature,
)
from triagebot.sweep import accuracy, shapes

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
    """A Dynamo backend that counts the FX graphs it receives and their call nodes, and notes which
    took symbolic sizes; it runs each graph as it is, or hands it on to `inner` (a ladder backend)."""

    def __init__(self, inner: Callable[..., Any] | None = None) -> None:
        self.inner = inner
        self.graphs = 0
        self.ops = 0
        self.dynamic: list[bool] = []  # per graph, in order

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Any]):
        self.graphs += 1
        self.ops += sum(1 for node in gm.graph.nodes if node.op in CALL_OPS)
        self.dynamic.append(_symbolic(gm))
        return self.inner(gm, example_inputs) if self.inner is not None else gm.forward


def _symbolic(gm: torch.fx.GraphModule) -> bool:
    """Whether a graph takes a symbolic size: a SymInt input, or a tensor with a symbolic dimension."""
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        value = node.meta.get("example_value")
        if isinstance(value, torch.SymInt):
            return True
        if isinstance(value, torch.Tensor) and any(isinstance(size, torch.SymInt) for size in value.shape):
            return True
    return False


def resolve_backend(name: str) -> Callable[..., Any]:
    """A ladder backend by name: one of `torch._dynamo.list_backends()`, or `module:function`."""
    module, _, function = name.partition(":")
    if function:
        return getattr(importlib.import_module(module), function)
    from torch._dynamo.backends.registry import lookup_backend

    return lookup_backend(name)


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


def _reseed(seed: int) -> None:
    """Every call starts from the same random state, so eager and compiled draw the same numbers."""
    torch.manual_seed(seed)
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed)


def _fresh(inputs: dict[str, Any]) -> dict[str, Any]:
    """Copies of the input tensors, so that a call that writes into its inputs changes no other call's."""
    return {
        name: value.clone() if isinstance(value, torch.Tensor) else value for name, value in inputs.items()
    }


def _seeded_call(seed: int) -> Callable[[Any, dict[str, Any]], Any]:
    def call(model: Any, inputs: dict[str, Any]) -> Any:
        _reseed(seed)
        return _call(model, _fresh(inputs))

    return call


_COMPILE_ID = re.compile(r"^\[?\d+/\d+\]?:\s*")


def _guard_failures() -> dict[Any, list[str]] | None:
    """Dynamo's record of the guard failures that caused recompiles (code -> reasons), if it keeps one."""
    from torch._dynamo import guards

    failures = getattr(guards, "guard_failures", None)
    return failures if isinstance(failures, dict) else None


def _verdict(difference: accuracy.Difference | None, prefix: str = "") -> AccuracyCheck:
    if difference is None:
        return AccuracyCheck(verdict=Accuracy.match)
    return AccuracyCheck(verdict=Accuracy.mismatch, where=prefix + difference.where, detail=difference.detail)


def _second_call(
    spec: ModelSpec,
    model: Any,
    compiled: Any,
    backend: CountingBackend,
    patch: dict[str, Any] | None,
    device: str,
    judge: bool,
) -> tuple[RecompileCheck, AccuracyCheck | None]:
    """Call the compiled model on a second shape of the inputs: what recompiled and why, and (when
    `judge`) how its outputs compare with an eager run on the same shape."""
    inputs, change = shapes.second_shape(spec.inputs)
    if inputs is None:
        return RecompileCheck(change=change, status="skipped"), None
    second = materialize_inputs(inputs, spec.seed, device)
    call = _seeded_call(spec.seed)
    try:
        expected = call(model, second)
    except Exception as error:
        failed = f"{change}: eager fails on it ({type(error).__name__})"
        return RecompileCheck(change=failed, status="skipped"), None
    failures = _guard_failures()
    if failures is not None:
        failures.clear()
    before = backend.graphs
    try:
        with torch._dynamo.config.patch(**(patch or {})):
            got = call(compiled, second)
    except Exception as error:
        message = str(error)
        return RecompileCheck(
            change=change,
            status="crash",
            error_type=type(error).__name__,
            error=_first_line(message),
            signature=error_signature(type(error).__name__, message),
        ), None
    by_frame = list((failures or {}).values())  # read before the third call clears them
    reasons = [
        _COMPILE_ID.sub("", reason.strip().splitlines()[0]) if reason.strip() else "unknown"
        for frame in by_frame
        for reason in frame
    ]
    new = backend.dynamic[before:]
    check = RecompileCheck(
        change=change,
        status="ok",
        # frames compiled again; a torch that keeps no record of its guard failures: graphs compiled
        recompiles=sum(bool(frame) for frame in by_frame) if failures is not None else len(new),
        graphs=backend.graphs - before,
        dynamic=any(new) if new else None,
        guard_failures=reasons[:20],
    )
    check.again = _third_call(spec, inputs, compiled, patch, device, call)
    if not judge:
        return check, None
    fp64 = lambda: accuracy.float64_outputs(model, second, call)  # noqa: E731
    return check, _verdict(accuracy.compare(expected, got, fp64=fp64), "second call: ")


def _third_call(
    spec: ModelSpec,
    second: list[Any],
    compiled: Any,
    patch: dict[str, Any] | None,
    device: str,
    call: Callable[[Any, dict[str, Any]], Any],
) -> int | None:
    """Recompiles of one more call, on the second shape grown by the same rule: none when the
    second call's graphs generalised, some when they specialised to it. None: no such call."""
    inputs, _ = shapes.second_shape(second)
    failures = _guard_failures()
    if inputs is None or failures is None:
        return None
    failures.clear()
    try:
        with torch._dynamo.config.patch(**(patch or {})):
            call(compiled, materialize_inputs(inputs, spec.seed, device))
    except Exception:
        return None
    return sum(bool(reasons) for reasons in failures.values())


def run_one(
    spec: ModelSpec,
    patch: dict[str, Any] | None,
    device: str,
    *,
    compile: bool = True,
    fresh: bool = False,
    mark: Any = None,
    backend: str | Callable[..., Any] | None = None,
    checks: dict[str, bool] | None = None,
) -> tuple[Outcome, ModelSpec]:
    """Build, run eagerly, then (unless `compile` is False) compile and run under `patch`.

    Returns the outcome and the spec as completed by the build. `mark(stage)` is called as each
    stage starts (the pool's children log it, so that a timeout or a signal names its stage).
    `fresh=True` clears Dynamo's caches and counters first, for runs that share a process.
    `backend`: a ladder backend (a name or a callable) behind the graph counter; None counts only.
    `checks`: `{"accuracy": bool, "recompiles": bool}` (see the module docstring); none by default.
    """
    start = time.perf_counter()
    stages: dict[str, float] = {}
    checks = checks or {}
    judge = bool(checks.get("accuracy")) and compile
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
    call = _seeded_call(spec.seed)

    with torch.no_grad():
        if mark:
            mark("eager")
        t = time.perf_counter()
        try:
            expected = call(model, inputs)
        except Exception as error:
            stages["eager"] = round(time.perf_counter() - t, 4)
            return _failure(Status.eager_error, error, stages, start), spec
        stages["eager"] = round(time.perf_counter() - t, 4)
        if not compile:
            return Outcome(
                status=Status.ok, seconds=round(time.perf_counter() - start, 4), stage_seconds=stages
            ), spec
        unsteady = None
        if judge:
            t = time.perf_counter()
            try:
                unsteady = accuracy.compare(expected, call(model, inputs), exact=True)
            except Exception as error:  # the first run succeeded: a second that fails is unsteady too
                raised = f"the second eager run raised {type(error).__name__}"
                unsteady = accuracy.Difference("output", raised)
            stages["eager_again"] = round(time.perf_counter() - t, 4)

        if mark:
            mark("compile")
        counting = CountingBackend(
            None if backend is None else resolve_backend(backend) if isinstance(backend, str) else backend
        )
        # The benchmark harness's rule: Inductor draws random numbers as eager does when judged.
        inductor = {"fallback_random": True} if judge and backend == "inductor" else {}
        t = time.perf_counter()
        try:
            compiled = torch.compile(model, backend=counting, fullgraph=False)
            with torch._dynamo.config.patch(**(patch or {})), _inductor_patch(inductor):
                got = call(compiled, inputs)
        except Exception as error:
            stages["compile"] = round(time.perf_counter() - t, 4)
            return _failure(Status.crash, error, stages, start), spec
        stages["compile"] = round(time.perf_counter() - t, 4)
        outcome = Outcome(
            status=Status.ok,
            graphs=counting.graphs,
            ops=counting.ops,
            break_reasons=list(counters["graph_break"]),
            stage_seconds=stages,
        )

        if judge:
            t = time.perf_counter()
            if unsteady is not None:
                outcome.accuracy = AccuracyCheck(
                    verdict=Accuracy.nondeterministic, where=unsteady.where, detail=unsteady.detail
                )
            else:
                fp64 = lambda: accuracy.float64_outputs(model, inputs, call)  # noqa: E731
                outcome.accuracy = _verdict(accuracy.compare(expected, got, fp64=fp64))
            stages["accuracy"] = round(time.perf_counter() - t, 4)
        if checks.get("recompiles") and backend is None:
            if mark:
                mark("recompile")
            t = time.perf_counter()
            steady = judge and unsteady is None
            outcome.recompile, second = _second_call(spec, model, compiled, counting, patch, device, steady)
            if second is not None and outcome.accuracy is not None and not outcome.mismatched:
                outcome.accuracy = second
            stages["recompile"] = round(time.perf_counter() - t, 4)

    outcome.stage_seconds = stages
    outcome.seconds = round(time.perf_counter() - start, 4)
    return outcome, spec


def _inductor_patch(settings: dict[str, Any]) -> contextlib.AbstractContextManager:
    if not settings:
        return contextlib.nullcontext()
    from torch._inductor import config as inductor_config

    return inductor_config.patch(**settings)


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


def unknown_backends(names: list[str]) -> list[str]:
    """Why each ladder backend that cannot be found cannot be (a name Dynamo does not know, a
    `module:function` that does not import)."""
    problems = []
    for name in names:
        try:
            resolve_backend(name)
        except Exception as error:
            problems.append(f"{name!r}: {type(error).__name__}: {_first_line(str(error))[:200]}")
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
                spec,
                payload["patch"],
                settings["device"],
                compile=payload["compile"],
                mark=_mark,
                backend=payload.get("backend"),
                checks={**settings.get("checks", {}), **payload.get("checks", {})},
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
                "unknown_backends": unknown_backends(payload.get("backends", [])),
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
