"""Is a compiled call's answer still right? Its outputs against eager ones, by the benchmark rules.

The rules are those of PyTorch's own accuracy harness (`benchmarks/dynamo/common.py`'s
`check_accuracy` and `torch._dynamo.utils.same`), for inference in the dtype the model runs in:

- Two eager runs on the same inputs, each after reseeding, must agree exactly (tolerance 0, NaN
  equal to NaN); when they do not, the model is *nondeterministic* and is not judged.
- Outputs are walked as nested structures: ModelOutput and dicts by key, tuples and lists by
  position, any other object (a KV cache) by its public attributes. A different structure, shape
  or dtype is a mismatch; integers, booleans, strings and None must be equal.
- A floating tensor passes `allclose` at its dtype's tolerance (1e-3 for float32, as the harness
  uses for HuggingFace models; 1e-2 for float16 and bfloat16; 1e-7 for float64), with NaN equal to
  NaN. Failing that, it is judged against a float64 reference (the model run once more in float64):
  it passes when its RMSE to the reference is at most `multiplier` times eager's RMSE plus a tenth
  of the tolerance (multiplier 2; 3 for half precision and for tensors of under 1000 elements).
  When the model cannot run in float64, a tensor of at least 1000 elements passes on a cosine
  similarity of at least 0.99, and a smaller one fails.

`agrees` is the cheap first look the sweep takes (`triagebot.sweep.judge`): `allclose` alone at a
fraction of the tolerance, no second eager run, no float64 reference.

This module imports only torch and the standard library: a reproduction script of a wrong
result inlines it, so that the script judges exactly as the sweep did.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch

TOLERANCES = {torch.float16: 1e-2, torch.bfloat16: 1e-2, torch.float32: 1e-3, torch.float64: 1e-7}
COSINE_MIN_ELEMENTS = 1000  # the harness's own line between small and large tensors
COSINE_THRESHOLD = 0.99
MAX_DEPTH = 8  # how deep the walk goes into objects that are neither tensors nor containers
_PLAIN = (bool, int, float, complex, str, bytes, type(None), torch.dtype, torch.device)


@dataclass
class Difference:
    """The first output that differs, and by how much."""

    where: str
    detail: str


def leaves(
    value: Any, path: str = "", depth: int = 0, seen: set[int] | None = None
) -> Iterator[tuple[str, Any]]:
    """(path, leaf) for every tensor and plain value in a nested output, in a stable order."""
    seen = set() if seen is None else seen
    name = path or "output"
    if isinstance(value, (torch.Tensor, *_PLAIN)):
        yield name, value
        return
    if id(value) in seen or depth >= MAX_DEPTH:
        yield name, f"<{type(value).__name__}>"
        return
    seen.add(id(value))
    if isinstance(value, Mapping):
        for key in value:
            yield from leaves(value[key], f"{path}.{key}" if path else str(key), depth + 1, seen)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from leaves(item, f"{path}[{index}]", depth + 1, seen)
    elif hasattr(value, "__dict__") and not isinstance(value, torch.nn.Module) and not callable(value):
        for key, item in vars(value).items():
            if not key.startswith("_") and not callable(item):
                yield from leaves(item, f"{path}.{key}" if path else key, depth + 1, seen)
    else:
        yield name, f"<{type(value).__name__}>"


def _tolerance(dtype: torch.dtype) -> float:
    return TOLERANCES.get(dtype, 1e-3)


def _rmse(reference: torch.Tensor, result: torch.Tensor) -> float:
    return torch.sqrt(torch.mean(torch.square(reference.double() - result.double()))).item()


def _largest(reference: torch.Tensor, result: torch.Tensor) -> str:
    diff = (reference.double() - result.double()).abs()
    diff = torch.where(torch.isnan(reference) & torch.isnan(result), torch.zeros_like(diff), diff)
    return f"largest difference {diff.nan_to_num(nan=math.inf).max().item():.3g}"


def _comparable(reference: torch.Tensor, result: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | str:
    """Both tensors dense, on the CPU, complex ones as real pairs; or why they cannot be compared."""
    if reference.dtype != result.dtype:
        return f"dtype {result.dtype} where eager gave {reference.dtype}"
    if reference.shape != result.shape:
        return f"shape {list(result.shape)} where eager gave {list(reference.shape)}"
    if reference.is_sparse:
        reference, result = reference.to_dense(), result.to_dense()
    reference, result = reference.detach().cpu(), result.detach().cpu()
    if reference.is_complex():
        reference, result = torch.view_as_real(reference), torch.view_as_real(result)
    return reference, result


def _compare_tensors(
    reference: torch.Tensor, result: torch.Tensor, exact: bool, fp64: Callable[[], torch.Tensor | None]
) -> str | None:
    """Why `result` is not `reference`, or None when it passes."""
    comparable = _comparable(reference, result)
    if isinstance(comparable, str):
        return comparable
    reference, result = comparable
    if not reference.is_floating_point():
        if torch.equal(reference, result):
            return None
        unequal = (reference != result).sum().item()
        return f"{unequal} of {reference.numel()} elements differ"
    tolerance = 0.0 if exact else _tolerance(reference.dtype)
    if torch.allclose(reference, result, atol=tolerance, rtol=tolerance, equal_nan=True):
        return None
    largest = _largest(reference, result)
    if exact:
        return largest
    precise = fp64()
    if precise is not None and precise.shape == reference.shape:
        precise = precise.detach().cpu().double()
        if precise.is_complex():
            precise = torch.view_as_real(precise)
        eager_error, compiled_error = _rmse(precise, reference), _rmse(precise, result)
        half = reference.dtype in (torch.float16, torch.bfloat16)
        multiplier = 3.0 if half or reference.numel() < COSINE_MIN_ELEMENTS else 2.0
        if compiled_error <= multiplier * eager_error + tolerance / 10 or (
            math.isnan(eager_error) and math.isnan(compiled_error)
        ):
            return None
        return (
            f"{largest} above tolerance {tolerance:g}; RMSE to float64 {compiled_error:.3g}, "
            f"eager's {eager_error:.3g}"
        )
    if reference.numel() >= COSINE_MIN_ELEMENTS:
        similarity = torch.nn.functional.cosine_similarity(
            reference.flatten().double(), result.flatten().double(), dim=0, eps=1e-6
        ).item()
        if similarity >= COSINE_THRESHOLD:
            return None
        return (
            f"{largest}; cosine similarity {similarity:.4f} below {COSINE_THRESHOLD} (no float64 reference)"
        )
    return f"{largest} above tolerance {tolerance:g} (no float64 reference)"


def compare(
    reference: Any, result: Any, *, exact: bool = False, fp64: Callable[[], Any] | None = None
) -> Difference | None:
    """The first difference of `result` from `reference` (eager's outputs), or None when they agree.

    `exact`: tolerance 0 (two eager runs). `fp64`: called at most once, when a floating tensor
    fails `allclose`, for the float64 reference outputs (None when the model cannot make them).
    """
    paired = _paired(reference, result)
    if isinstance(paired, Difference):
        return paired
    cache: dict[str, Any] = {}

    def precise(path: str) -> torch.Tensor | None:
        if "leaves" not in cache:
            outputs = fp64() if fp64 is not None else None
            cache["leaves"] = dict(leaves(outputs)) if outputs is not None else {}
        value = cache["leaves"].get(path)
        return value if isinstance(value, torch.Tensor) else None

    for path, want, have in paired:
        if isinstance(want, torch.Tensor):
            if not isinstance(have, torch.Tensor):
                return Difference(path, f"{type(have).__name__} where eager gave a tensor")
            why = _compare_tensors(want, have, exact, lambda path=path: precise(path))
        elif isinstance(want, float) and isinstance(have, float) and not exact:
            same = math.isclose(want, have, rel_tol=1e-3, abs_tol=1e-3) or (
                math.isnan(want) and math.isnan(have)
            )
            why = None if same else f"{have!r} where eager gave {want!r}"
        else:
            both_nan = want != want and have != have  # NaN is the one value unequal to itself
            why = None if want == have or both_nan else f"{have!r} where eager gave {want!r}"
        if why is not None:
            return Difference(path, why)
    return None


def _paired(reference: Any, result: Any) -> list[tuple[str, Any, Any]] | Difference:
    """(path, eager's leaf, the result's leaf) for every leaf, or how the structures differ."""
    expected = list(leaves(reference))
    got = list(leaves(result))
    if [path for path, _ in expected] != [path for path, _ in got]:
        missing = sorted({path for path, _ in expected} ^ {path for path, _ in got})
        where = missing[0] if missing else "output"
        return Difference(
            where, f"structure differs from eager's ({len(got)} outputs, eager {len(expected)})"
        )
    return [(path, want, have) for (path, want), (_, have) in zip(expected, got, strict=True)]


def agrees(reference: Any, result: Any, *, margin: float = 1.0) -> bool:
    """Whether `result` matches `reference` (eager's outputs) by `allclose` alone, within
    `margin` times each dtype's tolerance: the same structure, equal plain values and integer
    tensors, close floating ones. When it does, `compare` finds no difference and needs no
    float64 reference; when it does not, only `compare` can say."""
    paired = _paired(reference, result)
    if isinstance(paired, Difference):
        return False
    for _, want, have in paired:
        if isinstance(want, torch.Tensor):
            if not isinstance(have, torch.Tensor) or not _close(want, have, margin):
                return False
        elif isinstance(want, float) and isinstance(have, float):
            tolerance = 1e-3 * margin
            same = math.isclose(want, have, rel_tol=tolerance, abs_tol=tolerance)
            if not same and not (math.isnan(want) and math.isnan(have)):
                return False
        elif not (want == have or (want != want and have != have)):
            return False
    return True


def _close(reference: torch.Tensor, result: torch.Tensor, margin: float) -> bool:
    comparable = _comparable(reference, result)
    if isinstance(comparable, str):
        return False
    reference, result = comparable
    if not reference.is_floating_point():
        return torch.equal(reference, result)
    tolerance = _tolerance(reference.dtype) * margin
    return torch.allclose(reference, result, atol=tolerance, rtol=tolerance, equal_nan=True)


def _to_float64(value: Any) -> Any:
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.double()
    if isinstance(value, dict):
        return {key: _to_float64(item) for key, item in value.items()}
    return value


def float64_outputs(model: torch.nn.Module, inputs: dict[str, Any], call: Callable[[Any, dict], Any]) -> Any:
    """The outputs of a float64 copy of `model` on float64 copies of `inputs`, or None when the
    model cannot run in float64. `call(model, inputs)` reseeds and calls, as the eager runs do."""
    try:
        precise = copy.deepcopy(model).double()
        with torch.no_grad():
            return call(precise, _to_float64(inputs))
    except Exception:
        return None
