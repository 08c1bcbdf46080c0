"""cc routing: who is mentioned on a flag's tracking issue, and the comment that reaches them.

People come from `[tracker.cc]` (a list per flag) and from `[[tracker.cc_routes]]`, regular
expressions on crash signatures, as a label-to-people routing file does in big projects. The
issue's author is already subscribed and never cc'd; nobody appears twice.

GitHub notifies the people a body mentions when the issue is opened, but not those a later
edit of the body adds. So a person routed onto an existing issue (a new signature matching
their route, or a new name in `tracker.cc`) is also mentioned once in a cc comment, whose
marker (flag and snapshot) keeps a rerun from posting it twice; the store remembers who has
been reached.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from triagebot.config import TrackerSettings
from triagebot.report.markers import cc_marker
from triagebot.results import IssueRecord, TrackerNotice
from triagebot.tracker.render import render


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


def routed(flag: str, signatures: Iterable[str], settings: TrackerSettings) -> dict[str, list[str]]:
    """login (lower case, without `@`) -> the signatures that route it to `flag`'s issue."""
    signatures = list(signatures)
    reasons: dict[str, list[str]] = {}
    for route in settings.cc_routes:
        try:
            pattern = re.compile(route.pattern)
        except re.error:
            continue  # cc_for names the bad pattern
        matched = [signature for signature in signatures if pattern.search(signature)]
        for person in route.people if matched else []:
            found = reasons.setdefault(person.removeprefix("@").lower(), [])
            found.extend(s for s in matched if s not in found)
    return reasons


def newly_mentioned(cc: list[str], reached: Iterable[str] | None) -> list[str]:
    """The people of `cc` not among `reached` (None: unknown, so nobody is pinged on a guess)."""
    if reached is None:
        return []
    known = {person.lower() for person in reached}
    return [person for person in cc if person.lower() not in known]


def cc_notice(
    flag: str,
    key: str,
    cc: list[str],
    routes: dict[str, list[str]],
    record: IssueRecord | None,
    previous_cc: list[str] | None,
) -> TrackerNotice | None:
    """The cc comment owed on `flag`'s existing issue tonight, if anyone is newly mentioned:
    compared with whom the store says was reached, else with the previous snapshot's cc list."""
    people = newly_mentioned(cc, record.cc if record is not None else previous_cc)
    if not people:
        return None
    marker = cc_marker(flag, key)
    reasons = {person: routes.get(person.lower(), []) for person in people}
    body = render("tracker-cc.md.j2", marker=marker, flag=flag, key=key, people=people, reasons=reasons)
    return TrackerNotice(kind="cc", marker=marker, body=body)
