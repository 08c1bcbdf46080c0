"""Which side is wrong when a compiled call's outputs differ from eager's: the cheap cross-checks.

A transformers model's eager path is not one path: with the default `sdpa` attention and an
all-ones padding mask, the mask builders return None in plain eager and leave the pattern to the
attention module's `is_causal`, while under tracing they build the real mask. Where the two
disagree, compiled "differs from eager" because eager is the wrong side. So, before a difference
is called a wrong result, the model runs eagerly once more under another attention
implementation (`eager` for a model on `sdpa`, `sdpa` for one on `eager`), and that run's float64
twin is made as a reference:

- `eager_other_attention`: eager under the other implementation against eager under the model's
  own, at the harness's tolerance.
- `compiled_vs_other_attention`: the compiled outputs against eager under the other
  implementation, judged by the harness's rules with its float64 run as the reference.

Eager disagreeing with itself while the compiled outputs agree with the other implementation is
`eager_inconsistent`: the library's finding. Anything else stays the compiler's `mismatch`, with
the checks recorded. These run only for a model whose outputs already differ: no other run pays.
"""

from __future__ import annotations

import copy
from typing import Any

from triagebot.results import OTHER_ATTENTION, Accuracy, AccuracyCheck, CrossCheck
from triagebot.sweep import accuracy
from triagebot.sweep.calls import Call


def attention_of(model: Any) -> str | None:
    """The attention implementation a transformers model runs with, or None for any other module."""
    config = getattr(model, "config", None)
    implementation = getattr(config, "_attn_implementation", None)
    return implementation if hasattr(model, "set_attn_implementation") else None


def _other_attention(model: Any, implementation: str) -> Any:
    other = copy.deepcopy(model)
    other.set_attn_implementation(implementation)
    return other


def cross_checked(
    model: Any, inputs: dict[str, Any], expected: Any, got: Any, call: Call, check: AccuracyCheck
) -> AccuracyCheck:
    """`check` (a `mismatch`) with the cross-checks made, and its verdict `eager_inconsistent`
    when they show eager is the wrong side. A model with no other attention implementation
    keeps its check as it is."""
    other = OTHER_ATTENTION.get(attention_of(model) or "")
    if other is None:
        return check
    try:
        switched = _other_attention(model, other)
        eager_other = call(switched, inputs)
    except Exception as error:  # a model that cannot switch: no evidence either way
        failed = CrossCheck(
            name="eager_other_attention", implementation=other, agrees=None, detail=_why(error)
        )
        return check.model_copy(update={"cross_checks": [failed]})
    itself = accuracy.compare(expected, eager_other)
    checks = [_check("eager_other_attention", other, itself)]
    if itself is not None:
        precise = accuracy.float64_outputs(switched, inputs, call)
        compiled = accuracy.compare(eager_other, got, fp64=lambda: precise)
        checks.append(_check("compiled_vs_other_attention", other, compiled))
    verdict = Accuracy.eager_inconsistent if len(checks) == 2 and checks[1].agrees else check.verdict
    return check.model_copy(update={"cross_checks": checks, "verdict": verdict})


def _check(name: Any, implementation: str, difference: accuracy.Difference | None) -> CrossCheck:
    detail = None if difference is None else f"{difference.where}: {difference.detail}"
    return CrossCheck(name=name, implementation=implementation, agrees=difference is None, detail=detail)


def _why(error: BaseException) -> str:
    first = next((line for line in str(error).splitlines() if line.strip()), "")
    return f"{type(error).__name__}: {first}"[:300]
