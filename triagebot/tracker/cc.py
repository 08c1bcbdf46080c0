"""cc routing: who is mentioned on a flag's tracking issue.

People come from `[tracker.cc]` (a list per flag) and from `[[tracker.cc_routes]]`, regular
expressions on crash signatures, as a label-to-people routing file does in big projects. The
issue's author is already subscribed and never cc'd; nobody appears twice.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from triagebot.config import TrackerSettings

_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9_.-]+)?$")


def cc_for(
    flag: str, signatures: Iterable[str], settings: TrackerSettings, author: str | None = None
) -> list[str]:
    """Logins (without `@`) to cc on `flag`'s issue, in configuration order, deduplicated
    case-insensitively, the author left out. A route whose pattern is not a valid regular
    expression is a configuration error and raises ValueError naming it."""
    people: list[str] = list(settings.cc.get(flag, []))
    signatures = list(signatures)
    for route in settings.cc_routes:
        try:
            pattern = re.compile(route.pattern)
        except re.error as error:
            raise ValueError(f"tracker.cc_routes: bad pattern {route.pattern!r}: {error}") from None
        if any(pattern.search(signature) for signature in signatures):
            people.extend(route.people)
    seen = {author.lower()} if author else set()
    chosen = []
    for person in people:
        login = person.removeprefix("@")
        if not _LOGIN.match(login):
            raise ValueError(f"tracker.cc: {person!r} is not a GitHub login or org/team")
        if login.lower() not in seen:
            seen.add(login.lower())
            chosen.append(login)
    return chosen
