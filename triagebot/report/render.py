"""The jinja2 environment every report template renders in.

Templates live in `templates/` at the repository root and ship inside the package as
`triagebot/report/templates` (a link to them that setuptools copies as package data).
Filters make error text safe (`code`, `prose`, `fenced`) and format numbers.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from triagebot.report import safety

TEMPLATES = Path(__file__).resolve().parent / "templates"


def _percent(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.0f}%" if value == int(value) else f"{value:.1f}%"


def _pyline(value: Any) -> str:
    """Text for a docstring line of a generated script: one line, no quotes that could end it."""
    return safety.one_line(value, 300).replace('"""', "'''").replace("\\", "/")


@cache
def environment(autoescape: bool = False) -> jinja2.Environment:
    """Markdown templates (`*.md.j2`, `*.py.j2`) render unescaped; HTML (`*.html.j2`) escaped."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=autoescape,
    )
    env.filters.update(
        code=safety.code,
        prose=safety.prose,
        fenced=safety.fenced,
        percent=_percent,
        pyrepr=repr,
        pyline=_pyline,
        tojson_compact=lambda value: json.dumps(value, separators=(",", ":"), sort_keys=True),
    )
    return env


def render(name: str, **context: Any) -> str:
    return environment(name.endswith(".html.j2")).get_template(name).render(**context)
