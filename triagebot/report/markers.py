"""Hidden markers: how the tracker finds its own issues and never posts one notice twice.

Formats (HTML comments, invisible on GitHub):

- tracking issue body, first line: `<!-- triagebot:flag=NAME -->`
- notice comment, first line: `<!-- triagebot:notice=KIND flag=NAME snapshot=KEY -->`, where KIND
  is `fixed` or `regression` and KEY is the snapshot key (the torch version) it reports on.
- corpus-health issue body, first line: `<!-- triagebot:health -->`.

Flag names and keys are plain identifiers and version strings; anything that could end the
comment (`--`, `>`) or split the fields (spaces) is refused, so a marker always parses back.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

NoticeKind = Literal["fixed", "regression"]
HEALTH_MARKER = "<!-- triagebot:health -->"
"""First line of the corpus-health tracking issue. Its baseline-regression notices carry
`notice_marker("regression", "baseline", KEY)` (no flag may be named `baseline`)."""
_VALUE = re.compile(r"^[A-Za-z0-9_.+\-]+$")
_FLAG_MARKER = re.compile(r"<!-- triagebot:flag=(?P<flag>[A-Za-z0-9_.+\-]+) -->")
_NOTICE_MARKER = re.compile(
    r"<!-- triagebot:notice=(?P<kind>fixed|regression) flag=(?P<flag>[A-Za-z0-9_.+\-]+)"
    r" snapshot=(?P<key>[A-Za-z0-9_.+\-]+) -->"
)


class Notice(NamedTuple):
    kind: str
    flag: str
    key: str


def _checked(value: str, what: str) -> str:
    if not _VALUE.match(value) or "--" in value:
        raise ValueError(f"{what} {value!r} cannot go in a marker")
    return value


def flag_marker(flag: str) -> str:
    return f"<!-- triagebot:flag={_checked(flag, 'flag')} -->"


def notice_marker(kind: NoticeKind, flag: str, key: str) -> str:
    if kind not in ("fixed", "regression"):
        raise ValueError(f"notice kind {kind!r} is not fixed or regression")
    return f"<!-- triagebot:notice={kind} flag={_checked(flag, 'flag')} snapshot={_checked(key, 'key')} -->"


def find_flag(body: str | None) -> str | None:
    """The flag a tracking-issue body is for, or None when it carries no marker."""
    found = _FLAG_MARKER.search(body or "")
    return found.group("flag") if found else None


def find_notice(body: str | None) -> Notice | None:
    """The (kind, flag, snapshot key) a notice comment carries, or None."""
    found = _NOTICE_MARKER.search(body or "")
    return Notice(found["kind"], found["flag"], found["key"]) if found else None
