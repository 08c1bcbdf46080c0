"""Rendering the bot's own comments (templates/tracker-*.md.j2) in the report package's jinja2
environment, so that every value passes through the same safety filters (`code`, `prose`).

The tracking-issue bodies and the fixed/regression notices are the report package's; the
texts here are the bot's answers: command help and refusals, the rerun answer table and its
failure, the close and reopen comments, the cc comment, the mass-failure alert. Each keeps its
lists short by construction (first rows, then "and N more"); `bounded` is the last guard.
"""

from __future__ import annotations

from typing import Any

from triagebot.report.render import render as report_render
from triagebot.report.safety import code


def code_span(value: Any, limit: int = 120) -> str:
    """`value` as an inline code span, where `@name` never pings and `#123` never links."""
    return code(value, limit)


COMMENT_LIMIT = 65_536  # GitHub's limit for an issue comment or body, in characters


def bounded(text: str, limit: int = COMMENT_LIMIT) -> str:
    """`text` unchanged when it fits GitHub's limit, else cut at a line boundary with a note.
    The bot's own comments keep their tables short by construction; this is the last guard
    (their templates hold no fence or <details> a line cut could leave open)."""
    if len(text) <= limit:
        return text
    note = "\n\n_Cut to fit GitHub's comment limit._\n"
    cut = text[: limit - len(note)]
    return cut[: max(cut.rfind("\n"), 0)].rstrip() + note


def render(name: str, **context: Any) -> str:
    """A tracker-* template rendered, within GitHub's limit whatever its values."""
    if not name.startswith("tracker-"):
        raise ValueError(f"{name}: the tracker renders only its own tracker-* templates")
    return bounded(report_render(name, **context))
