"""Rendering the bot's own comments (templates/tracker-*.md.j2) in the report package's jinja2
environment, so that every value passes through the same safety filters (`code`, `prose`).

The tracking-issue bodies and the fixed/regression notices are the report package's; the
texts here are the bot's answers: command help and refusals, the rerun answer table, the
close and reopen comments, the mass-failure alert.
"""

from __future__ import annotations

from typing import Any

from triagebot.report.render import render as report_render
from triagebot.report.safety import code


def code_span(value: Any, limit: int = 120) -> str:
    """`value` as an inline code span, where `@name` never pings and `#123` never links."""
    return code(value, limit)


def render(name: str, **context: Any) -> str:
    if not name.startswith("tracker-"):
        raise ValueError(f"{name}: the tracker renders only its own tracker-* templates")
    return report_render(name, **context)
