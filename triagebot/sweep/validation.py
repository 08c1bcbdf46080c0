"""What is checked in a child before any model runs (the probe): every flag's settings against
the installed `torch._dynamo.config`, every ladder backend against Dynamo's registry, and the
environment the sweep will record."""

from __future__ import annotations

import types
import typing
from typing import Any

import torch
import torch._dynamo
from torch._inductor import cpp_builder

from triagebot.errors import unknown
from triagebot.sweep.backend import resolve_backend
from triagebot.sweep.calls import first_line
from triagebot.sweep.environment import detect_environment

_SIMPLE_TYPES: dict[Any, tuple[str, Any]] = {  # type -> (its name, whether a value is one)
    bool: ("a bool", lambda value: isinstance(value, bool)),
    int: ("an int", lambda value: isinstance(value, int) and not isinstance(value, bool)),
    float: ("a float", lambda value: isinstance(value, int | float) and not isinstance(value, bool)),
    str: ("a string", lambda value: isinstance(value, str)),
    type(None): ("none", lambda value: value is None),
}


def _takes(value_type: Any, value: Any) -> str | None:
    """What a setting of `value_type` takes ("a bool"), when `value` is not one; None when it
    fits or the type is not one of the simple ones TOML can write (those are left to Dynamo)."""
    union = typing.get_origin(value_type) in (typing.Union, types.UnionType)
    options = typing.get_args(value_type) if union else (value_type,)
    if value_type is type(None) or not all(option in _SIMPLE_TYPES for option in options):
        return None
    if any(_SIMPLE_TYPES[option][1](value) for option in options):
        return None
    return " or ".join(_SIMPLE_TYPES[option][0] for option in options)


def config_problems(flags: dict[str, dict[str, Any]]) -> list[str]:
    """One line per patched setting the installed `torch._dynamo.config` lacks, or whose value
    is not of the setting's type (a bool setting given "yes"), naming the flag and the setting."""
    entries = torch._dynamo.config._config
    problems = []
    for flag, patch in flags.items():
        for key, value in patch.items():
            entry = entries.get(key)
            if entry is None:
                problems.append(f"flag {flag!r}: {unknown('torch._dynamo.config setting', key, entries)}")
                continue
            takes = _takes(getattr(entry, "value_type", None), value)
            if takes is not None:
                problems.append(f"flag {flag!r}: torch._dynamo.config.{key} takes {takes}, not {value!r}")
    return problems


def unknown_backends(names: list[str]) -> list[str]:
    """Why each ladder backend that cannot be found cannot be (a name Dynamo does not know, a
    `module:function` that does not import)."""
    problems = []
    for name in names:
        try:
            resolve_backend(name)
        except Exception as error:
            problems.append(f"{name!r}: {type(error).__name__}: {first_line(str(error))[:200]}")
    return problems


def cpp_compiler() -> bool:
    """Whether Inductor finds a C++ compiler (what it compiles to on the CPU)."""
    try:
        cpp_builder.get_cpp_compiler()
    except Exception:
        return False
    return True


def probe(payload: dict[str, Any]) -> dict[str, Any]:
    """The probe's reply: the environment (`device="auto"` resolved, the libraries of the
    payload's `suites` recorded; on CUDA this initialises CUDA, which is why it runs in a
    child), the problems of the flags and backends, whether a C++ compiler is found, and on
    CUDA the GPU's memory (how many workers it holds)."""
    device = payload["device"]
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return {
        "environment": detect_environment(device, payload.get("suites", [])).model_dump(mode="json"),
        "problems": config_problems(payload["flags"]),
        "unknown_backends": unknown_backends(payload.get("backends", [])),
        "cpp_compiler": cpp_compiler(),
        "gpu_memory": torch.cuda.get_device_properties(0).total_memory if device == "cuda" else None,
    }
