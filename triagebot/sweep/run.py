"""One (model, config) run, in whichever process calls it: the child's work, the hot path of a sweep.

`run_one` builds the model, runs it eagerly, then compiles it with the counting backend under a
`torch._dynamo.config` patch and runs it once. The pool calls it in a child forked from the warm
parent (`worker.child_main`); the benchmark's lower bound and the fresh-interpreter check call
it in-process (`fresh=True` resets Dynamo first).

With `checks` (`Check`s: what the sweep asks every run to check):
- `accuracy`: the compiled outputs are compared with the eager run's (reseeded before each call,
  as every call is); a comparison that fails or is borderline runs eager again and judges in
  full (`judge`); two eager runs that differ make the model nondeterministic, not judged.
- `recompiles`: the compiled model is called again on a second shape of its inputs
  (`recompiles.second_call`): recompiles, the guard that failed for each, whether the new graphs
  are dynamic, and that call's outputs against eager's too.
A ladder run (`backend="aot_eager"`, `"inductor"`, or an importable `module:function`) compiles
with that backend behind the graph counter; it checks accuracy but makes no second call, and
times the compiled model's calls once warm (`call_seconds`: the median of `CALLS` calls, fewer
when they outlast `CALLS_SECONDS`). A backward rung (`"aot_eager+backward"`, `rung_backend`)
runs the model in train mode, forward and backward, eagerly and compiled with that backend, and
its accuracy check compares the loss and the gradients with eager's (`sweep.backward`).
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch._dynamo
from torch._dynamo.utils import counters

from triagebot import corpus
from triagebot.results import Accuracy, Check, ModelSpec, Outcome, Status, error_signature, rung_backend
from triagebot.sweep.backend import CountingBackend, backend_settings, counting_backend
from triagebot.sweep.backward import NoGradient, gradient_call, training
from triagebot.sweep.calls import Call, first_line, seeded_call
from triagebot.sweep.judge import judge
from triagebot.sweep.recompiles import second_call
from triagebot.sweep.tracebacks import stored_traceback

CALLS = 5
"""How many warm calls a compiled forward rung times (their median is its `call_seconds`)."""

CALLS_SECONDS = 1.0
"""The seconds after which a rung stops timing calls (a slow model times fewer, at least one)."""


class _Stages:
    """The seconds each stage of one run took, and the mark that names the stage a child is in."""

    def __init__(self, mark: Callable[[str], Any] | None) -> None:
        self.start = time.perf_counter()
        self.seconds: dict[str, float] = {}
        self.mark = mark

    @contextlib.contextmanager
    def timed(self, stage: str, *, marked: bool = False) -> Iterator[None]:
        """Time `stage` (kept when it raises too); `marked`: say first that it starts."""
        if marked and self.mark:
            self.mark(stage)
        began = time.perf_counter()
        try:
            yield
        finally:  # a stage timed twice (the accuracy check's comparisons) adds up
            self.seconds[stage] = round(self.seconds.get(stage, 0.0) + time.perf_counter() - began, 4)

    def finish(self, outcome: Outcome) -> Outcome:
        outcome.stage_seconds = self.seconds
        outcome.seconds = round(time.perf_counter() - self.start, 4)
        return outcome


def _failure(status: Status, error: BaseException) -> Outcome:
    error_type, message = type(error).__name__, str(error)
    return Outcome(
        status=status,
        error_type=error_type,
        error=first_line(message),
        signature=error_signature(error_type, message),
        traceback=stored_traceback(error),
    )


def run_one(
    spec: ModelSpec,
    patch: dict[str, Any] | None,
    device: str,
    *,
    eager_only: bool = False,
    fresh: bool = False,
    mark: Callable[[str], Any] | None = None,
    backend: str | Callable[..., Any] | None = None,
    checks: Collection[Check] = (),
) -> tuple[Outcome, ModelSpec]:
    """Build, run eagerly, then (unless `eager_only`) compile and run under `patch`.

    Returns the outcome and the spec as completed by the build. `mark(stage)` is called as each
    stage starts (the pool's children log it, so that a timeout or a signal names its stage).
    `fresh=True` clears Dynamo's caches and counters first, for runs that share a process.
    `backend`: a ladder backend (a name or a callable) behind the graph counter; None counts only.
    `checks`: the checks to make (see the module docstring); none by default.
    """
    stages = _Stages(mark)
    if fresh:
        torch._dynamo.reset()
    counters.clear()
    try:
        with stages.timed("build", marked=True):
            built = corpus.build(spec, device)
    except Exception as error:
        return stages.finish(_failure(Status.create_error, error)), spec
    run = _Built(built.model, built.inputs, built.spec, seeded_call(built.spec.seed), device)
    with torch.no_grad():
        try:
            with stages.timed("eager", marked=True):
                expected = run.call(run.model, run.inputs)
        except Exception as error:
            return stages.finish(_failure(Status.eager_error, error)), run.spec
    if eager_only:
        return stages.finish(Outcome(status=Status.ok)), run.spec
    compiler, backward = rung_backend(backend) if isinstance(backend, str) else (backend, False)
    if backward:
        return stages.finish(_backward(run, patch, compiler, checks, stages)), run.spec
    with torch.no_grad():
        outcome = _compiled(run, expected, patch, backend, checks, stages)
    return stages.finish(outcome), run.spec


@dataclass(frozen=True)
class _Built:
    """A model built for a run, its inputs, the spec the build completed, how it is called."""

    model: Any
    inputs: dict[str, Any]
    spec: ModelSpec
    call: Call
    device: str


def _compiled(
    run: _Built,
    expected: Any,
    patch: dict[str, Any] | None,
    backend: str | Callable[..., Any] | None,
    checks: Collection[Check],
    stages: _Stages,
    timed_calls: bool = True,
) -> Outcome:
    """Compile and call the model under `patch`, then make the checks asked for; a ladder
    backend's calls are timed once warm unless `timed_calls` is False."""
    judged = Check.accuracy in checks
    counting = counting_backend(backend)
    try:
        with stages.timed("compile", marked=True), backend_settings(backend, judged):
            compiled, got = _compile_and_call(run.model, run.inputs, counting, patch, run.call)
    except Exception as error:
        return _failure(Status.crash, error)
    outcome = _counted(counting)
    if backend is not None and timed_calls:
        with stages.timed("calls", marked=True):
            outcome.call_seconds = _seconds_per_call(compiled, run, patch)
    if judged:
        outcome.accuracy = judge(run.model, run.inputs, expected, got, run.call, timed=stages.timed)
    if Check.recompiles in checks and backend is None:
        with stages.timed("recompile", marked=True):
            steady = outcome.accuracy is not None and outcome.accuracy.verdict != Accuracy.nondeterministic
            outcome.recompile, second = second_call(
                run.spec, run.model, compiled, counting, patch, run.device, steady
            )
            if second is not None and outcome.accuracy is not None and not outcome.mismatched:
                outcome.accuracy = second
    return outcome


def _backward(
    run: _Built, patch: dict[str, Any] | None, backend: str, checks: Collection[Check], stages: _Stages
) -> Outcome:
    """The backward rung: the model in train mode, forward and backward eagerly, then compiled
    with `backend` under `patch`; its loss and gradients judged against eager's. A model with no
    backward pass (no floating output depends on a parameter) is skipped; one whose eager
    backward fails is an eager error, untestable here."""
    training(run.model)
    call = gradient_call(run.call)
    try:
        with stages.timed("eager_backward", marked=True):
            expected = call(run.model, run.inputs)
    except NoGradient as error:
        return Outcome(status=Status.skipped, error=str(error))
    except Exception as error:
        return _failure(Status.eager_error, error)
    trained = _Built(run.model, run.inputs, run.spec, call, run.device)
    return _compiled(trained, expected, patch, backend, checks, stages, timed_calls=False)


def _seconds_per_call(compiled: Any, run: _Built, patch: dict[str, Any] | None) -> float | None:
    """The compiled model's seconds per call, warm: the median of `CALLS` calls under `patch`,
    fewer when they outlast `CALLS_SECONDS` (never fewer than one); None when a call raises."""
    seconds: list[float] = []
    with torch._dynamo.config.patch(**(patch or {})):
        while len(seconds) < CALLS and sum(seconds) < CALLS_SECONDS:
            began = time.perf_counter()
            try:
                run.call(compiled, run.inputs)
            except Exception:  # the compile call ran: a later one that fails is not timed
                return None
            seconds.append(time.perf_counter() - began)
    return round(statistics.median(seconds), 6)


def _compile_and_call(
    model: Any, inputs: dict[str, Any], counting: CountingBackend, patch: dict[str, Any] | None, call: Call
) -> tuple[Any, Any]:
    """The compiled model (`fullgraph=False`: Dynamo breaks the graph rather than fail) and its
    outputs on `inputs`, under the flag's `torch._dynamo.config` patch."""
    compiled = torch.compile(model, backend=counting, fullgraph=False)
    with torch._dynamo.config.patch(**(patch or {})):
        return compiled, call(compiled, inputs)


def _counted(counting: CountingBackend) -> Outcome:
    """A compiled call that ran: the graphs and ops the backend counted, Dynamo's break reasons."""
    return Outcome(
        status=Status.ok,
        graphs=counting.graphs,
        ops=counting.ops,
        break_reasons=list(counters["graph_break"]),
    )
