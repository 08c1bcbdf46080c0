"""Hidden markers of the bot's own comments, the idempotency keys of every write it makes.

Tracking-issue and fixed/regression notice markers are the report package's
(`triagebot.report.markers`); these are the ones only the tracker writes, in the same syntax:

- close / reopen comment: `<!-- triagebot:state=close flag=NAME snapshot=KEY -->`
- mass-failure alert issue: `<!-- triagebot:alert snapshot=KEY -->`
- answer to a command (help or refusal): `<!-- triagebot:answer=COMMENT_ID -->`
- result table of a rerun: `<!-- triagebot:rerun-result=COMMENT_ID -->`
- a rerun that gave no result: `<!-- triagebot:rerun-failed=COMMENT_ID -->`
- cc comment for people a body edit added: `<!-- triagebot:cc flag=NAME snapshot=KEY -->`
"""

from __future__ import annotations

import re
from typing import Literal

_VALUE = re.compile(r"^[A-Za-z0-9_.+\-]+$")


def _checked(value: str, what: str) -> str:
    if not _VALUE.match(value) or "--" in value:
        raise ValueError(f"{what} {value!r} cannot go in a marker")
    return value


def state_marker(kind: Literal["close", "reopen"], flag: str, key: str) -> str:
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
