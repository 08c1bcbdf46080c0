"""The recompile check: the compiled model called again on a second shape of its inputs
(`shapes.second_shape`, checked by an eager run on it first), then on a third.

What recompiled and why (the guard that failed for each frame), whether the new graphs took
symbolic sizes, whether a third shape recompiles again (the second call specialised rather than
generalised), and the second call's outputs against eager's on the same shape.
"""

from __future__ import annotations

import re
from typing import Any

import torch
import torch._dynamo
from torch._dynamo import guards

from triagebot.corpus.inputs import materialize_inputs
from triagebot.results import AccuracyCheck, InputSpec, ModelSpec, RecompileCheck, error_signature
from triagebot.sweep import shapes
from triagebot.sweep.backend import CountingBackend
from triagebot.sweep.calls import Call, first_line, seeded_call
from triagebot.sweep.judge import judge

_COMPILE_ID = re.compile(r"^\[?\d+/\d+\]?:\s*")
GUARD_FAILURES_KEPT = 20


def _guard_failures() -> dict[Any, list[str]] | None:
    """Dynamo's record of the guard failures that caused recompiles (code -> reasons), emptied,
    if this torch keeps one."""
    failures = getattr(guards, "guard_failures", None)
    if not isinstance(failures, dict):
        return None
    failures.clear()
    return failures


def second_call(
    spec: ModelSpec,
    model: Any,
    compiled: Any,
    counting: CountingBackend,
    patch: dict[str, Any] | None,
    device: str,
    judged: bool,
) -> tuple[RecompileCheck, AccuracyCheck | None]:
    """Call the compiled model on a second shape of the inputs: what recompiled and why, and (when
    `judged`) how its outputs compare with an eager run on the same shape."""
    inputs, change = shapes.second_shape(spec.inputs)
    if inputs is None:
        return RecompileCheck(change=change, status="skipped"), None
    second = materialize_inputs(inputs, spec.seed, device)
    call = seeded_call(spec.seed)
    try:
        expected = call(model, second)
    except Exception as error:
        failed = f"{change}: eager fails on it ({type(error).__name__})"
        return RecompileCheck(change=failed, status="skipped"), None
    failures = _guard_failures()
    before = counting.graphs
    try:
        with torch._dynamo.config.patch(**(patch or {})):
            got = call(compiled, second)
    except Exception as error:
        return _crashed(change, error), None
    check = _recompiled(change, failures, counting, before)
    check.again = _third_call(spec, inputs, compiled, patch, device, call)
    if not judged:
        return check, None
    return check, judge(model, second, expected, got, call, prefix="second call: ")


def _crashed(change: str, error: Exception) -> RecompileCheck:
    message = str(error)
    return RecompileCheck(
        change=change,
        status="crash",
        error_type=type(error).__name__,
        error=first_line(message),
        signature=error_signature(type(error).__name__, message),
    )


def _recompiled(
    change: str, failures: dict[Any, list[str]] | None, counting: CountingBackend, before: int
) -> RecompileCheck:
    """What the second call compiled: read before the third call clears Dynamo's record."""
    by_frame = list((failures or {}).values())
    reasons = [
        _COMPILE_ID.sub("", reason.strip().splitlines()[0]) if reason.strip() else "unknown"
        for frame in by_frame
        for reason in frame
    ]
    new = counting.dynamic[before:]
    return RecompileCheck(
        change=change,
        status="ok",
        # frames compiled again; a torch that keeps no record of its guard failures: graphs compiled
        recompiles=sum(bool(frame) for frame in by_frame) if failures is not None else len(new),
        graphs=counting.graphs - before,
        dynamic=any(new) if new else None,
        guard_failures=reasons[:GUARD_FAILURES_KEPT],
    )


def _third_call(
    spec: ModelSpec,
    second: list[InputSpec],
    compiled: Any,
    patch: dict[str, Any] | None,
    device: str,
    call: Call,
) -> int | None:
    """Recompiles of one more call, on the second shape grown by the same rule: none when the
    second call's graphs generalised, some when they specialised to it. None: no such call."""
    inputs, _ = shapes.second_shape(second)
    failures = _guard_failures() if inputs is not None else None
    if inputs is None or failures is None:
        return None
    try:
        with torch._dynamo.config.patch(**(patch or {})):
            call(compiled, materialize_inputs(inputs, spec.seed, device))
    except Exception:
        return None
    return sum(bool(reasons) for reasons in failures.values())
