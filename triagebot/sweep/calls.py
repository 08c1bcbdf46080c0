"""Calling a model the same way every time, and the words for a call that raised.

Every call (eager, compiled, on a second shape) starts from the same random state and gets its
own copies of the input tensors, so that eager and compiled draw the same numbers and a call
that writes into its inputs changes no other call's.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from typing import Any

import torch

Call = Callable[[Any, dict[str, Any]], Any]


def _reseed(seed: int) -> None:
    torch.manual_seed(seed)
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed)


def _fresh(inputs: dict[str, Any]) -> dict[str, Any]:
    return {
        name: value.clone() if isinstance(value, torch.Tensor) else value for name, value in inputs.items()
    }


def seeded_call(seed: int) -> Call:
    """`call(model, inputs)`: reseed with `seed`, then call `model` on fresh copies of `inputs`."""

    def call(model: Any, inputs: dict[str, Any]) -> Any:
        _reseed(seed)
        return model(**_fresh(inputs))

    return call


def first_line(message: str) -> str:
    """The first non-blank line of an error message, at most 500 characters."""
    return next((line.strip() for line in message.splitlines() if line.strip()), "")[:500]
