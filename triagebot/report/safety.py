"""Making text from tracebacks safe for GitHub Markdown.

Error text is written by whoever wrote the model code or the exception. On GitHub it must not
ping people (`@name`), cross-link (`#123`, `owner/repo#1`), break a table (`|`, newlines),
open a code fence that swallows the rest of the issue, or inject HTML. Three shapes:

- `code(text)`: an inline code span, one line, bounded (table cells, the error line);
- `prose(text)`: plain text with mentions and references defused, HTML escaped, one line;
- `fenced(text)`: a fenced block whose fence is longer than any backtick run inside it.

Inside code spans and fences GitHub neither pings nor links, so only escaping is needed there.
"""

from __future__ import annotations

import html
import re

MAX_INLINE = 200
ZERO_WIDTH = "\u200b"
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_REFERENCE = re.compile(r"#(?=\d)")
_BACKTICKS = re.compile(r"`+")


def one_line(text: object, limit: int = MAX_INLINE) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def code(text: object, limit: int = MAX_INLINE) -> str:
    """An inline code span: backticks become quotes, `|` an escaped pipe that tables keep whole."""
    flat = one_line(text, limit).replace("`", "'")
    if not flat:
        return ""
    # In a GFM table a `|` ends the cell even inside a code span unless escaped.
    return "`" + flat.replace("|", "\\|") + "`"


def prose(text: object, limit: int = MAX_INLINE) -> str:
    """One line of plain Markdown that cannot ping, cross-link, open HTML or break a table."""
    flat = html.escape(one_line(text, limit), quote=False)
    flat = _MENTION.sub("@" + ZERO_WIDTH, flat)
    flat = _REFERENCE.sub("#" + ZERO_WIDTH, flat)
    flat = _BACKTICKS.sub(lambda m: "\\`" * len(m.group()), flat)
    for special in "|*_[]<>":
        flat = flat.replace(special, "\\" + special)
    return flat


def fenced(text: object, language: str = "", limit: int = 20_000) -> str:
    """A fenced code block that the text inside cannot close."""
    body = str(text)
    if len(body) > limit:
        body = body[:limit] + "\n... (truncated)"
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{body.rstrip()}\n{fence}"
