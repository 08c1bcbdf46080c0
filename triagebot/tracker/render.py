"""Rendering the bot's own comments (templates/tracker-*.md.j2) with jinja2.

The tracking-issue bodies and the fixed/regression notices are the report package's; the
texts here are the bot's answers: command help and refusals, the rerun answer table, the
close and reopen comments, the mass-failure alert.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
MAX_CELL = 120


def code_span(value: Any, limit: int = MAX_CELL) -> str:
    """`value` as an inline code span: inside one, `@name` never pings and `#123` never links.
    Backticks, pipes and newlines are replaced so the span (and a table row) cannot break."""
    text = " ".join(str(value).replace("`", "'").replace("|", "/").split())
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"`{text}`" if text else ""


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # Markdown, not HTML; values pass through code_span
    )
    env.filters["code"] = code_span
    return env


def render(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)
