"""The accuracy check of a compiled call: its outputs against eager's, as a recorded verdict.

The rules are `accuracy`'s (PyTorch's own harness): a model whose two eager runs on the same
inputs differ is nondeterministic and is not judged; a floating output that fails `allclose` is
judged against a float64 reference. What costs is made only where it can change the verdict:
the compiled outputs are first compared with the eager run the sweep already made, and a clear
match (every output within `BORDERLINE` of its tolerance) is a match. Only a comparison that
fails or is borderline runs eager a second time (is the model deterministic at all?), then
compares in full, and the float64 reference is made only when a floating output fails
`allclose` there. A difference that survives all that is cross-checked (`sides`) before it is
called a wrong result: eager may be the side that is wrong.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from triagebot.results import Accuracy, AccuracyCheck
from triagebot.sweep import accuracy
from triagebot.sweep.calls import Call
from triagebot.sweep.sides import cross_checked

BORDERLINE = 0.1  # of a dtype's tolerance: outputs closer than this match without a second look

Timed = Callable[[str], AbstractContextManager[Any]]
"""`timed(stage)`: a context in which a stage of the run is timed (`run`'s stages)."""


def _untimed(stage: str) -> AbstractContextManager[Any]:
    return contextlib.nullcontext()


def verdict(difference: accuracy.Difference | None, prefix: str = "") -> AccuracyCheck:
    if difference is None:
        return AccuracyCheck(verdict=Accuracy.match)
    return AccuracyCheck(verdict=Accuracy.mismatch, where=prefix + difference.where, detail=difference.detail)


def unsteady(model: Any, inputs: dict[str, Any], expected: Any, call: Call) -> AccuracyCheck | None:
    """Run eager again: a `nondeterministic` verdict when it differs from the first run, else None."""
    try:
        difference = accuracy.compare(expected, call(model, inputs), exact=True)
    except Exception as error:  # the first run succeeded: a second that fails is unsteady too
        difference = accuracy.Difference("output", f"the second eager run raised {type(error).__name__}")
    if difference is None:
        return None
    return AccuracyCheck(verdict=Accuracy.nondeterministic, where=difference.where, detail=difference.detail)


def judge(
    model: Any,
    inputs: dict[str, Any],
    expected: Any,
    got: Any,
    call: Call,
    *,
    prefix: str = "",
    timed: Timed = _untimed,
) -> AccuracyCheck:
    """The compiled outputs `got` against eager's `expected` on `inputs` (see the module
    docstring). `prefix` names the call in a mismatch's `where` ("second call: "); `timed`
    times the stages: `accuracy` (the comparisons, the float64 reference's run included),
    `eager_again`, `float64`."""
    with timed("accuracy"):
        if accuracy.agrees(expected, got, margin=BORDERLINE):
            return AccuracyCheck(verdict=Accuracy.match)
    with timed("eager_again"):
        steadiness = unsteady(model, inputs, expected, call)
    if steadiness is not None:
        return steadiness

    def fp64() -> Any:
        with timed("float64"):
            return accuracy.float64_outputs(model, inputs, call)

    with timed("accuracy"):
        checked = verdict(accuracy.compare(expected, got, fp64=fp64), prefix)
    if checked.verdict != Accuracy.mismatch:
        return checked
    with timed("cross_checks"):  # only a difference pays for telling which side is wrong
        return cross_checked(model, inputs, expected, got, call, checked)
