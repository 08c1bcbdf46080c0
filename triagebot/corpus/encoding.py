"""Tiny configs recorded as standard JSON that rebuild exactly the config the baseline built.

A config dict holds what JSON cannot say: tuples, non-finite floats (Mamba 2's `time_step_limit`
is `(0.0, inf)`), dicts keyed by integers (`id2label`). Written as they are, pydantic turns `inf`
into `null` and a tuple into a list, and a flag run rebuilding the model from the recorded spec
gets another config, or none. So `ModelSpec.config` holds the encoded form, which is standard JSON
(the dashboard's browsers read it) and survives any number of round trips; the builder decodes it
(`decode`) before `from_dict`, and so does the repro script, with a copy of `decode`:

    {"$tuple": [...]}            a tuple
    {"$float": "inf"}            inf, -inf or nan
    {"$dict": [[key, value], ...]}  a dict with a key that is not a string, or whose only key is a tag

Everything else is written as it is. A value JSON cannot hold otherwise is refused with the path
of its key, so a spec that cannot be recorded fails where it is made, not in a later flag run.
"""

from __future__ import annotations

import math
from typing import Any

TUPLE, FLOAT, DICT = "$tuple", "$float", "$dict"
_TAGS = (TUPLE, FLOAT, DICT)


class UnrecordableConfig(TypeError):
    """A config value that no JSON encoding here can record."""


def encode(value: Any, path: str = "config") -> Any:
    """`value` as standard JSON values that `decode` turns back into an equal value."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {FLOAT: repr(value)}
    if isinstance(value, list):
        return [encode(item, f"{path}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, tuple):
        return {TUPLE: [encode(item, f"{path}[{index}]") for index, item in enumerate(value)]}
    if isinstance(value, dict):
        plain = all(isinstance(key, str) for key in value)
        if plain and not (len(value) == 1 and next(iter(value)) in _TAGS):
            return {key: encode(item, f"{path}.{key}") for key, item in value.items()}
        return {DICT: [[encode(key, path), encode(item, f"{path}.{key}")] for key, item in value.items()]}
    raise UnrecordableConfig(f"{path}: a {type(value).__name__} cannot be recorded in a spec ({value!r:.80})")


def decode(value: Any) -> Any:
    """The value `encode` was given (the repro template carries a copy of this function)."""
    if isinstance(value, list):
        return [decode(item) for item in value]
    if isinstance(value, dict):
        if len(value) == 1:
            ((tag, inner),) = value.items()
            if tag == FLOAT:
                return float(inner)
            if tag == TUPLE:
                return tuple(decode(item) for item in inner)
            if tag == DICT:
                return {decode(key): decode(item) for key, item in inner}
        return {key: decode(item) for key, item in value.items()}
    return value


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Where two values differ, as "key path: a != b", or None when they are equal: types must
    match (a tuple is not a list), nan equals nan, and configs compare attribute by attribute."""
    if hasattr(a, "to_dict") and hasattr(b, "to_dict") and hasattr(a, "__dict__") and hasattr(b, "__dict__"):
        if type(a) is not type(b):
            return f"{path or '.'}: {type(a).__name__} != {type(b).__name__}"
        a, b = vars(a), vars(b)
    if type(a) is not type(b):
        return f"{path or '.'}: {a!r:.80} != {b!r:.80}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b), key=repr):
            if key not in a or key not in b:
                return f"{path}.{key}: only on the {'second' if key in b else 'first'} side"
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list | tuple):
        if len(a) != len(b):
            return f"{path or '.'}: {len(a)} items != {len(b)}"
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{path}[{index}]")
            if found:
                return found
        return None
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return None
    return None if a == b else f"{path or '.'}: {a!r:.80} != {b!r:.80}"
