"""cc routing: who is mentioned on a flag's tracking issue.

People come from `[tracker.cc]` (a list per flag) and from `[[tracker.cc_routes]]`, regular
expressions on crash signatures, as a label-to-people routing file does in big projects. The
issue's author is already subscribed and never cc'd; nobody appears twice.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from triagebot.config import TrackerSettings


def cc_for(
    flag: str, signatures: Iterable[str], settings: TrackerSettings, author: str | None = None
) -> list[str]:
    """Logins (without `@`) to cc on `flag`'s issue, in configuration order, deduplicated
    case-insensitively, the author left out. Patterns and logins were checked when the
    configuration was read."""
    people: list[str] = list(settings.cc.get(flag, []))
    signatures = list(signatures)
    for route in settings.cc_routes:
        pattern = re.compile(route.pattern)
        if any(pattern.search(signature) for signature in signatures):
            people.extend(route.people)
    seen = {author.lower()} if author else set()
    chosen = []
    for person in people:
        login = person.removeprefix("@")
        if login.lower() not in seen:
            seen.add(login.lower())
            chosen.append(login)
    return chosen
