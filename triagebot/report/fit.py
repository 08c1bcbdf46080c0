"""Every write fits GitHub's limit and keeps its meaning: renders that shed detail, never text.

GitHub refuses an issue body or a comment over 65,536 characters. Nothing here cuts a rendered
text: a template is rendered again with less `Detail` (per-model tables become lists of names,
tracebacks and scripts are left out, lists stop at their first names and say "and N more",
optional sections go, crash groups shrink to one line each and then to the largest ones) until
it fits, so that fences, tables and `<details>` blocks always close, and what a reader needs
(the summary with its counts, each crash group's signature and size, the overlap, the cc line)
is in every rendering. The complete tables stay in the run's report folder and on the dashboard.

- `Detail`: what a rendering shows; templates read it as `detail`.
- `ISSUE_LADDER` (tracking-issue bodies) and `COMMENT_LADDER` (notices, answers, refusals,
  alerts): from everything to the essentials.
- `fit(render, ladder, limit)`: the first rendering on the ladder that fits, checked whole.
- `bounded(template, **context)`: `fit` for one template; what the tracker renders its own
  comments with.
- `markdown_problems(text)`: unclosed fences and `<details>`, HTML comments past the marker line.
- `github_length(text)`: the length GitHub counts (UTF-16 code units, never fewer than characters).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from triagebot.errors import RenderError
from triagebot.report.render import render

GITHUB_LIMIT = 65_536
"""The most characters GitHub accepts in an issue body or a comment."""


@dataclass(frozen=True)
class Detail:
    """How much a rendering shows; the default shows everything."""

    tables: bool = True  # per-model tables; False: one line of model names instead
    tracebacks: bool = True  # each crash group's traceback tail, in a collapsed block
    reproductions: bool = True  # verified reproduction scripts, in a collapsed block
    rows: int | None = None  # models or rows per list or table, then "and N more"; None: all
    optional: bool = True  # sections a reader can do without (strata, helped, flaky, trend, ...)
    compact: bool = False  # one line per crash group: signature, count, first models
    groups: int | None = None  # crash groups listed (largest first), then "and N more"; None: all

    @property
    def shortened(self) -> bool:
        """Whether anything was left out to fit."""
        return self != FULL

    @property
    def left_out(self) -> list[str]:
        """What this rendering leaves out, in words, for the note that says so."""
        parts = []
        if not self.tables:
            parts.append("per-model tables are lists of names")
        if not self.tracebacks:
            parts.append("tracebacks are left out")
        if not self.reproductions:
            parts.append("reproduction scripts are left out")
        if self.rows is not None:
            parts.append(f"lists stop after their first {self.rows}")
        if not self.optional:
            parts.append("optional sections are left out")
        if self.groups is not None:
            parts.append(f"only the {self.groups} largest crash groups are listed")
        return parts

    def head(self, items: Sequence[Any]) -> list[Any]:
        """The items a list shows: all, or the first `rows`."""
        return list(items if self.rows is None else items[: self.rows])

    def more(self, items: Sequence[Any]) -> int:
        """How many items `head` leaves out."""
        return 0 if self.rows is None else max(0, len(items) - self.rows)


FULL = Detail()
_LEAN = Detail(tables=False, tracebacks=False, reproductions=False)
ISSUE_LADDER: tuple[Detail, ...] = (
    FULL,
    Detail(tables=False),
    Detail(tables=False, tracebacks=False),
    _LEAN,
    replace(_LEAN, rows=20),
    replace(_LEAN, rows=20, optional=False),
    replace(_LEAN, rows=5, optional=False, compact=True),
    *(
        replace(_LEAN, rows=3, optional=False, compact=True, groups=groups)
        for groups in (400, 200, 100, 50, 25, 10, 3, 1, 0)
    ),
)
COMMENT_LADDER: tuple[Detail, ...] = (
    FULL,
    *(Detail(tracebacks=False, reproductions=False, rows=rows) for rows in (500, 200, 100, 50, 20, 5, 0)),
)

_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_DETAILS_OPEN = re.compile(r"<details[\s>]", re.IGNORECASE)
_DETAILS_CLOSE = re.compile(r"</details\s*>", re.IGNORECASE)


def github_length(text: str) -> int:
    """Characters as GitHub counts them: UTF-16 code units (an emoji counts twice)."""
    return len(text.encode("utf-16-le")) // 2


def markdown_problems(text: str) -> list[str]:
    """What is not whole in `text`: a fence left open, a `<details>` not closed (or closed
    twice), an HTML comment anywhere but on the first line. Empty when it is whole."""
    problems = []
    fence: str | None = None
    depth = 0
    for number, line in enumerate(text.split("\n"), 1):
        if number > 1 and "<!--" in line:
            problems.append(f"line {number}: an HTML comment past the marker line")
        found = _FENCE.match(line)
        if fence is not None:
            closes = found and found["fence"][0] == fence[0] and len(found["fence"]) >= len(fence)
            if closes and not found["info"].strip():
                fence = None
            continue
        if found and not (found["fence"][0] == "`" and "`" in found["info"]):
            fence = found["fence"]
            continue
        depth += len(_DETAILS_OPEN.findall(line))
        depth -= len(_DETAILS_CLOSE.findall(line))
        if depth < 0:
            problems.append(f"line {number}: </details> without <details>")
            depth = 0
    if fence is not None:
        problems.append(f"a {fence} fence is never closed")
    if depth:
        problems.append(f"{depth} <details> never closed")
    return problems


def fit(
    render_one: Callable[[Detail], str],
    ladder: Sequence[Detail] = COMMENT_LADDER,
    limit: int = GITHUB_LIMIT,
    what: str = "text",
) -> tuple[str, Detail]:
    """The first rendering on `ladder` within `limit`, with the detail it shows. Raises
    `RenderError` when none fits or a rendering is not whole: a template fault, never posted."""
    for detail in ladder:
        text = render_one(detail)
        if github_length(text) <= limit:
            problems = markdown_problems(text)
            if problems:
                raise RenderError(f"{what} would not be whole Markdown: {problems[0]}")
            return text, detail
    raise RenderError(f"{what} does not fit {limit} characters even with every optional part left out")


def bounded(
    template: str, *, limit: int = GITHUB_LIMIT, ladder: Sequence[Detail] = COMMENT_LADDER, **context: Any
) -> str:
    """`template` rendered with the most `detail` that fits `limit`: what every comment the
    tracker writes (notices, answers, refusals, alerts) is rendered with."""
    text, _ = fit(lambda detail: render(template, detail=detail, **context), ladder, limit, template)
    return text
