"""Rendering the bot's own comments (templates/tracker-*.md.j2): help and refusals, the rerun
answer table and its failure, the close and reopen comments, the cc comment, the mass-failure
alert. (Tracking-issue bodies and fixed/regression notices are the report package's.)

They render in the report package's jinja2 environment, so every value passes through the one
escaper's filters (`code`, `cell`, `prose`), and through its bounded renderer, so every comment
fits GitHub's 65,536 characters with its Markdown whole (a template's lists shed rows, saying
"and N more", until it fits).
"""

from __future__ import annotations

from typing import Any

from triagebot.report.fit import bounded
from triagebot.report.safety import code


def code_span(value: Any, limit: int = 120) -> str:
    """`value` as an inline code span, where `@name` never pings and `#123` never links."""
    return code(value, limit)


def render(name: str, **context: Any) -> str:
    """`templates/NAME` within GitHub's limit; only the tracker's own `tracker-*` templates."""
    if not name.startswith("tracker-"):
        raise ValueError(f"{name}: the tracker renders only its own tracker-* templates")
    return bounded(name, **context)
