"""Hidden markers: how the bot finds its own issues and never posts one comment twice.

Every marker is an HTML comment (invisible on GitHub) on the *first line* of a text the bot
wrote, and is read from the first line only: text quoted from a crash, a comment or a person
further down can never pass for one (the escaper, `safety`, also keeps untrusted text from
forming an HTML comment at all). Formats:

- tracking issue body: `<!-- triagebot:flag=NAME -->`
- corpus-health tracking issue body: `<!-- triagebot:health -->`
- wrong results at the default config, tracking issue body: `<!-- triagebot:compiler-wrong -->`
- fixed / regression / removed notice: `<!-- triagebot:notice=KIND flag=NAME snapshot=KEY -->`
  (a baseline regression, on the health issue: `flag=baseline`, a name no flag may take;
  removed: failing models that left the corpus)
- close / reopen comment: `<!-- triagebot:state=KIND flag=NAME snapshot=KEY -->`
- mass-failure alert issue: `<!-- triagebot:alert snapshot=KEY -->`
- answer to a command (help or refusal): `<!-- triagebot:answer=COMMENT_ID -->`
- result table of a rerun: `<!-- triagebot:rerun-result=COMMENT_ID -->`
- a rerun that gave no result: `<!-- triagebot:rerun-failed=COMMENT_ID -->`
- cc comment for people a body edit added: `<!-- triagebot:cc flag=NAME snapshot=KEY -->`
- no nightly stored for days (the watchdog), since KEY: `<!-- triagebot:silence since=KEY -->`

KEY is a snapshot key (the torch version). Flag names and keys are plain identifiers and
version strings; anything that could end the comment (`--`, `>`) or split the fields (spaces)
is refused, so that a marker always parses back. Who wrote a body (the bot's account) is the
tracker's to check; this module reads markers and nothing else.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

from triagebot.config import MARKER_NAME, marker_safe
from triagebot.errors import ConfigError

NoticeKind = Literal["fixed", "regression", "removed"]
StateKind = Literal["close", "reopen"]
HEALTH_MARKER = "<!-- triagebot:health -->"
"""First line of the corpus-health tracking issue. Its baseline-regression notices carry
`notice_marker("regression", "baseline", KEY)` (no flag may be named `baseline`)."""
COMPILER_WRONG_MARKER = "<!-- triagebot:compiler-wrong -->"
"""First line of the tracking issue of wrong results at the default config; its close and reopen
comments carry `state_marker(KIND, "compiler-wrong-results", KEY)` (no flag may take the name)."""
_NAME = MARKER_NAME
_FLAG_MARKER = re.compile(rf"<!-- triagebot:flag=(?P<flag>{_NAME}) -->\Z")
_NOTICE_MARKER = re.compile(
    r"<!-- triagebot:(?:notice=(?P<notice>fixed|regression|removed)|state=(?P<state>close|reopen))"
    rf" flag=(?P<flag>{_NAME}) snapshot=(?P<key>{_NAME}) -->\Z"
)
_ANY_MARKER = re.compile(r"<!-- triagebot:[^>]*-->\Z")
_SWEEP_ANSWER_MARKER = re.compile(r"<!-- triagebot:rerun-(?:result|failed)=(?P<id>[0-9]+) -->\Z")


class Notice(NamedTuple):
    kind: str  # fixed, regression, removed, close or reopen
    flag: str
    key: str


def _checked(value: str, what: str) -> str:
    if not marker_safe(value):
        raise ConfigError(f"{what} {value!r} cannot go in a marker (letters, digits and _.+- only)")
    return value


def flag_marker(flag: str) -> str:
    return f"<!-- triagebot:flag={_checked(flag, 'flag')} -->"


def notice_marker(kind: NoticeKind, flag: str, key: str) -> str:
    if kind not in ("fixed", "regression", "removed"):
        raise ValueError(f"notice kind {kind!r} is not fixed, regression or removed")
    return f"<!-- triagebot:notice={kind} flag={_checked(flag, 'flag')} snapshot={_checked(key, 'key')} -->"


def state_marker(kind: StateKind, flag: str, key: str) -> str:
    if kind not in ("close", "reopen"):
        raise ValueError(f"state kind {kind!r} is not close or reopen")
    return f"<!-- triagebot:state={kind} flag={_checked(flag, 'flag')} snapshot={_checked(key, 'key')} -->"


def alert_marker(key: str) -> str:
    return f"<!-- triagebot:alert snapshot={_checked(key, 'key')} -->"


def answer_marker(comment_id: int) -> str:
    return f"<!-- triagebot:answer={int(comment_id)} -->"


def result_marker(comment_id: int) -> str:
    return f"<!-- triagebot:rerun-result={int(comment_id)} -->"


def failure_marker(comment_id: int) -> str:
    return f"<!-- triagebot:rerun-failed={int(comment_id)} -->"


def cc_marker(flag: str, key: str) -> str:
    return f"<!-- triagebot:cc flag={_checked(flag, 'flag')} snapshot={_checked(key, 'key')} -->"


def silence_marker(key: str) -> str:
    return f"<!-- triagebot:silence since={_checked(key, 'key')} -->"


def first_line(body: str | None) -> str:
    """The first line of `body` without its line ending and trailing blanks."""
    return (body or "").split("\n", 1)[0].rstrip()


def carries(body: str | None, marker: str) -> bool:
    """Whether `body`'s first line is `marker`: the only place a marker counts."""
    return bool(marker) and first_line(body) == marker


def marked(body: str | None) -> bool:
    """Whether `body` opens with a marker of any kind: every comment the bot writes does."""
    return bool(_ANY_MARKER.match(first_line(body)))


def find_flag(body: str | None) -> str | None:
    """The flag a tracking-issue body is for: its first line's flag marker, or None."""
    found = _FLAG_MARKER.match(first_line(body))
    return found["flag"] if found else None


def find_sweep_answer(body: str | None) -> int | None:
    """The comment id a rerun's result or failure answers (`result_marker`, `failure_marker`,
    on the first line), or None."""
    found = _SWEEP_ANSWER_MARKER.match(first_line(body))
    return int(found["id"]) if found else None


def find_notice(body: str | None) -> Notice | None:
    """The (kind, flag, snapshot key) on a notice's or state comment's first line, or None."""
    found = _NOTICE_MARKER.match(first_line(body))
    return Notice(found["notice"] or found["state"], found["flag"], found["key"]) if found else None
