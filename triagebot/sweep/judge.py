"""The accuracy check of a compiled call: its outputs against eager's, as a recorded verdict.

The rules are `accuracy`'s (PyTorch's own harness). A model whose two eager runs on the same
inputs differ is nondeterministic and is not judged.
"""

from __future__ import annotations

from typing import Any

from triagebot.results import Accuracy, AccuracyCheck
from triagebot.sweep import accuracy
from triagebot.sweep.calls import Call


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
    model: Any, inputs: dict[str, Any], expected: Any, got: Any, call: Call, prefix: str = ""
) -> AccuracyCheck:
    """The compiled outputs `got` against eager's `expected`; the float64 reference (the model run
    once more in float64) is made only when a floating output fails `allclose`."""
    fp64 = lambda: accuracy.float64_outputs(model, inputs, call)  # noqa: E731
    return verdict(accuracy.compare(expected, got, fp64=fp64), prefix)
