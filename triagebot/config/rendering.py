"""`triagebot config`: the resolved configuration as TOML, each value with where it came from."""

from __future__ import annotations

import json
import re
from typing import Any

from triagebot.config.settings import DEFAULT, Config


def _toml_value(value: Any) -> str:
    """A value as TOML writes it inline (the subset the configuration uses)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def render_config(config: Config) -> str:
    """The resolved configuration as TOML, each value followed by where it came from; unset
    values are comments."""
    lines: list[str] = ["[flags]"]
    flags_source = config._sources.get("flags", DEFAULT)
    rows = [
        (f"{_toml_key(name)} = {_toml_value(settings.model_dump())}", flags_source)
        for name, settings in config.flags.items()
    ]
    section = "flags"
    for key, value, source in config.sources()[1:]:
        table, name = key.split(".", 1)
        if table != section:
            lines += [*_aligned(rows), "", f"[{table}]"]
            rows, section = [], table
        text = f"# {name} = (unset)" if value is None else f"{name} = {_toml_value(value)}"
        rows.append((text, source))
    return "\n".join(lines + _aligned(rows))


def _aligned(rows: list[tuple[str, str]]) -> list[str]:
    width = min(max((len(text) for text, _ in rows), default=0), 72)
    return [f"{text:<{width}}  # {source}" for text, source in rows]
