"""Input tensors from their `InputSpec`s: the one place that turns a spec into tensors.

Random kinds are drawn in order from one CPU generator seeded with the model's seed and then
moved to the device, so values do not depend on the device, and the reproduction scripts
(`templates/repro.py.j2`) rebuild the very same tensors with the same rule.
"""

from __future__ import annotations

import torch

from triagebot.results import InputSpec

_DTYPES = {
    name: getattr(torch, name)
    for name in ("float32", "float16", "bfloat16", "float64", "int64", "int32", "bool", "uint8")
}


def torch_dtype(name: str) -> torch.dtype:
    try:
        return _DTYPES[name]
    except KeyError:
        raise ValueError(f"unsupported input dtype {name!r}") from None


def _tensor(item: InputSpec, generator: torch.Generator) -> torch.Tensor:
    """One tensor of a tensor kind: an input's, or one item of a list or dict input's."""
    dtype = torch_dtype(item.dtype)
    if item.kind == "randn":
        return torch.randn(item.shape, generator=generator, dtype=dtype)
    if item.kind == "randint":
        high = item.high if item.high is not None else item.low + 2
        return torch.randint(item.low, high, item.shape, generator=generator, dtype=dtype)
    if item.kind == "ones":
        return torch.ones(item.shape, dtype=dtype)
    if item.kind == "zeros":
        return torch.zeros(item.shape, dtype=dtype)
    return torch.tensor(item.values, dtype=dtype).reshape(item.shape)


def materialize_inputs(inputs: list[InputSpec], seed: int, device: str | torch.device = "cpu") -> dict:
    """Tensors for `inputs`, random kinds drawn in order (a collection's items in theirs) from
    `torch.manual_seed(seed)`.

    Drawn on the CPU and then moved, so the values do not depend on the device.
    """
    generator = torch.Generator().manual_seed(seed)
    tensors: dict[str, object] = {}
    for item in inputs:
        if item.kind == "literal":
            tensors[item.name] = item.values
        elif item.kind == "list":
            tensors[item.name] = [_tensor(element, generator).to(device) for element in item.items or []]
        elif item.kind == "dict":
            tensors[item.name] = {
                element.name: _tensor(element, generator).to(device) for element in item.items or []
            }
        else:
            tensors[item.name] = _tensor(item, generator).to(device)
    return tensors
