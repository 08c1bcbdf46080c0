"""The one escaper: untrusted text made safe for GitHub Markdown.

Untrusted is everything that comes from model code, torch (errors, tracebacks, break reasons),
a snapshot file or a comment: model names, signatures, error lines, scripts, quotes. Every
template shows such text through one of these filters and nothing else; on GitHub it can then
never ping anyone (`@name`), cross-link (`#123`, `owner/repo#1`), form an HTML comment (and so
never pass for a marker), open or close a `<details>`, close the fence or the table it sits in,
or inject HTML. Shapes:

- `code(text)`: an inline code span, one line, bounded, for prose and headings;
- `cell(text)`: the same for a table cell, its `|` escaped so the row keeps its columns;
- `prose(text)`: plain text with mentions, references and bare URLs defused, Markdown and HTML
  escaped;
- `html_text(text)`: the same inside raw HTML (a `<summary>`), HTML escaped only;
- `fenced(text)`: a fenced block whose fence is longer than any backtick run inside it;
- `tail(text, lines)`: the last lines of a traceback, for `fenced`;
- `plain(text)`: letters, digits and a little punctuation only, for a chart's quoted labels;
- `commit(sha)`: a pytorch commit link when `sha` is a hash, a code span otherwise;
- `compare_link(url)`: a link to a GitHub commit range (`.../compare/A...B`), a code span
  for anything else;
- `issue_reference(number, repo, local)`: the one cross-link the bot means to make to an
  upstream issue: `#N` in the repository itself, `OWNER/NAME#N` from another;
- for the site's HTML: `breakable(name)`, a name that wraps only after its underscores
  (`capture_<wbr>scalar_<wbr>outputs`), and `code_spans(text)`, words whose backticks become
  `<code>`, as Markdown would show them.

Inside code spans and fences GitHub neither pings nor links nor reads HTML; markup that could
still fool a reader of the raw text (`<!--`, `-->`, `<details>`, `</summary>`, ...) gets a
zero-width space that GitHub shows as nothing.
"""

from __future__ import annotations

import html
import re

from markupsafe import Markup

MAX_INLINE = 200
ZERO_WIDTH = "\u200b"
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_REFERENCE = re.compile(r"#(?=\d)")
# What GitHub turns into a link with no Markdown around it (GFM's extended autolinks): a URL's
# scheme and `www.`; a zero-width space after the scheme or `www` leaves them plain text.
_AUTOLINK = re.compile(r"\b(?:https?|ftp|mailto|xmpp)(?=:)|\bwww(?=\.)", re.IGNORECASE)
_BACKTICKS = re.compile(r"`+")
# HTML that could open or close a comment or a block around the text, whatever the case.
_MARKUP = re.compile(r"<(?=!|/|\?|details|summary|pre|code)|(?<=-)-(?=>)|(?<=--)!(?=>)", re.IGNORECASE)
# The installation prefix of a file in a traceback: where it was installed says nothing.
_INSTALLED = re.compile(r'(?<=File ")[^"\n]*?[\\/](?=(?:site|dist)-packages[\\/])')
# Line endings as CommonMark reads them (a lone \r ends a line too), and Unicode's own.
_LINE_END = re.compile(r"\r\n?|[\u2028\u2029\x0b\x0c\x85]")


def neutral(text: object) -> str:
    """`text` with every would-be HTML comment or block tag broken by a zero-width space."""
    return _MARKUP.sub(lambda m: m.group() + ZERO_WIDTH, str(text))


def one_line(text: object, limit: int = MAX_INLINE) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def code(text: object, limit: int = MAX_INLINE) -> str:
    """An inline code span outside a table: one line, backticks become quotes."""
    flat = neutral(one_line(text, limit).replace("`", "'"))
    return "`" + flat + "`" if flat else ""


def cell(text: object, limit: int = MAX_INLINE) -> str:
    """An inline code span in a table cell: in a GFM table a `|` ends the cell even inside a
    code span unless escaped, so it is escaped here (and only here)."""
    span = code(text, limit)
    return span.replace("|", "\\|")


def _defused(text: str) -> str:
    """`text` with no mention, issue reference or bare URL GitHub would act on."""
    text = _MENTION.sub("@" + ZERO_WIDTH, text)
    text = _REFERENCE.sub("#" + ZERO_WIDTH, text)
    return _AUTOLINK.sub(lambda m: m.group() + ZERO_WIDTH, text)


def prose(text: object, limit: int = MAX_INLINE) -> str:
    """One line of plain Markdown that cannot ping, cross-link, link, open HTML or start markup."""
    flat = _defused(html.escape(one_line(text, limit), quote=False))
    flat = _BACKTICKS.sub(lambda m: "\\`" * len(m.group()), flat)
    for special in "*_[]~":
        flat = flat.replace(special, "\\" + special)
    return flat


def html_text(text: object, limit: int = MAX_INLINE) -> str:
    """One line of text inside raw HTML (a `<summary>`), where Markdown escapes would show: HTML
    escaped, mentions, references and bare URLs defused."""
    return _defused(html.escape(one_line(text, limit), quote=True))


_CODE_SPAN = re.compile(r"`([^`]+)`")


def breakable(name: object) -> Markup:
    """`name`, HTML escaped, that a narrow cell wraps after an underscore, never inside a word."""
    return Markup(html.escape(str(name), quote=True).replace("_", "_<wbr>"))


def code_spans(text: object) -> Markup:
    """Words for a page, HTML escaped, each `span` in backticks shown as code, not as backticks."""
    return Markup(_CODE_SPAN.sub(r"<code>\1</code>", html.escape(str(text), quote=True)))


def tail(text: object, lines: int = 30, limit: int = 4_000) -> str:
    """The last `lines` lines of `text` (at most `limit` characters, cut at a line), with a note
    of what was left out; installed files are named from `site-packages/` on."""
    all_lines = _INSTALLED.sub(".../", _LINE_END.sub("\n", str(text or ""))).rstrip().split("\n")
    kept = all_lines[-lines:]
    while len(kept) > 1 and sum(len(line) + 1 for line in kept) > limit:
        kept = kept[1:]
    if sum(len(line) + 1 for line in kept) > limit:
        kept = [kept[-1][-limit:]]
    left_out = len(all_lines) - len(kept)
    head = [f"... ({left_out} line{'s' if left_out != 1 else ''} above left out)"] if left_out else []
    return "\n".join(head + kept)


def fenced(text: object, language: str = "", limit: int = 20_000) -> str:
    """A fenced code block that the text inside cannot close, whatever its backticks."""
    body = neutral(_LINE_END.sub("\n", str(text)))
    if len(body) > limit:
        cut = body.rfind("\n", 0, limit)
        body = body[: cut if cut > 0 else limit] + "\n... (truncated)"
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{body.rstrip()}\n{fence}"


_PLAIN = re.compile(r"[^A-Za-z0-9_.+\-: ]")
_COMMIT = re.compile(r"[0-9a-f]{7,40}\Z")
COMMIT_URL = "https://github.com/pytorch/pytorch/commit/{sha}"


def plain(text: object, limit: int = MAX_INLINE) -> str:
    """Only letters, digits and `_.+-:` and spaces: for text inside a chart's quotes."""
    return _PLAIN.sub("?", one_line(text, limit))


def commit(sha: object) -> str:
    """A pytorch commit as a link, when `sha` is one; otherwise as a code span."""
    text = str(sha or "")
    if _COMMIT.match(text):
        return f"[`{text[:12]}`]({COMMIT_URL.format(sha=text)})"
    return code(text, 60)


def mention(login: str) -> str:
    """`@login` for a configured person (config checks logins); never for untrusted text."""
    return "@" + login.removeprefix("@")


_COMPARE = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/compare/[\w.+-]{1,80}\.\.\.[\w.+-]{1,80}\Z")
_OWNER_NAME = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+\Z")


def compare_link(url: object) -> str:
    """A GitHub commit range as a link, when `url` is one; otherwise a code span."""
    text = str(url or "")
    if _COMPARE.match(text):
        return f"[{text.rpartition('/compare/')[2]}]({text})"
    return code(text, 200)


def issue_reference(number: object, repo: object, local: bool = False) -> str:
    """`#N` (in `repo` itself, `local`) or `OWNER/NAME#N`: GitHub links it, and says so in that
    issue. Anything but a whole number in a plain repository is shown as code, never linked."""
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        return code(number, 20)
    if local:
        return f"#{number}"
    if not _OWNER_NAME.match(str(repo or "")):
        return code(f"{repo}#{number}", 120)
    return f"{repo}#{number}"
