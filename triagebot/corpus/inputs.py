"""Input tensors from their `InputSpec`s: the one place that turns a spec into tensors.

Random kinds are drawn in order from one CPU generator seeded with the model's seed and then
moved to the device, so values do not depend on the device, and the reproduction scripts
(`templates/repro.py.j2`) rebuild the very same tensors with the same rule.
"""

from __future__ import annotations

import importlib
from typing import Any

import torch

from triagebot.results import InputSpec

_DTYPES = {
    name: getattr(torch, name)
    for name in ("float32", "float16", "bfloat16", "float64", "int64", "int32", "bool", "uint8")
}


def import_object(path: str) -> Any:
    """`"transformers:LlamaForCausalLM"` -> the class."""
    module_name, _, name = path.partition(":")
    if not name:
        raise ValueError(f"class path {path!r} is not of the form 'module:Class'")
    return getattr(importlib.import_module(module_name), name)


def torch_dtype(name: str) -> torch.dtype:
    try:
        return _DTYPES[name]
    except KeyError:
        raise ValueError(f"unsupported input dtype {name!r}") from None


def materialize_inputs(inputs: list[InputSpec], seed: int, device: str | torch.device = "cpu") -> dict:
    """Tensors for `inputs`, random kinds drawn in order (a collection's items in theirs) from
    `torch.manual_seed(seed)`.

    Drawn on the CPU and then moved, so the values do not depend on the device.
    """
    generator = torch.Generator().manual_seed(seed)
    return {item.name: _value(item, generator, device) for item in inputs}


def _value(item: InputSpec, generator: torch.Generator, device: str | torch.device) -> object:
    """An input's value, or one item's of a list or dict input: a tensor drawn on the CPU and
    moved, a list or dict of them made item by item, a plain value, or an instance."""
    if item.kind == "literal":
        return item.values
    if item.kind == "instance":  # afresh for each call of materialize_inputs: it may hold state
        return import_object(item.values["class_path"])(**item.values["kwargs"])
    if item.kind == "list":
        return [_value(element, generator, device) for element in item.items or []]
    if item.kind == "dict":
        return {element.name: _value(element, generator, device) for element in item.items or []}
    dtype = torch_dtype(item.dtype)
    if item.kind == "randn":
        tensor = torch.randn(item.shape, generator=generator, dtype=dtype)
    elif item.kind == "randint":
        high = item.high if item.high is not None else item.low + 2
        tensor = torch.randint(item.low, high, item.shape, generator=generator, dtype=dtype)
    elif item.kind == "ones":
        tensor = torch.ones(item.shape, dtype=dtype)
    elif item.kind == "zeros":
        tensor = torch.zeros(item.shape, dtype=dtype)
    else:
        tensor = torch.tensor(item.values, dtype=dtype).reshape(item.shape)
    return tensor.to(device)
