"""People win: a tracking issue a person closed stays closed until something new appears.

The bot reopens an issue it closed itself as soon as a confirmed crash comes back. An issue a
person closed (a maintainer who decided the remaining crashes are not worth tracking, or
tracks them elsewhere) is reopened only when a crash signature appears that the issue did not
show when they closed it (a signature torch reworded, which its group says it continues, is
the same crash); the reopening comment names those signatures and the person. What
the issue showed is the store's memory of the last published body; without a memory, the
previous snapshot's signatures; without either, what it shows now (so the person wins).

Pure: desired state, GitHub's state and the memory in, the adjusted desired state and what to
remember out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from triagebot.report.markers import state_marker
from triagebot.results import IssueRecord, TrackedIssue, TrackerNotice
from triagebot.tracker.memory import FlagFacts
from triagebot.tracker.plan import RemoteIssue
from triagebot.tracker.render import render


@dataclass
class Verdict:
    desired: TrackedIssue
    remember: dict[str, object] = field(default_factory=dict)  # IssueRecord fields to store


def shown_when_closed(closer: str, record: IssueRecord | None, facts: FlagFacts) -> list[str]:
    if record is not None and record.closed_by and record.closed_by.lower() == closer.lower():
        return list(record.closed_signatures)
    if record is not None:
        return list(record.signatures)
    if facts.previous_signatures is not None:
        return list(facts.previous_signatures)
    return list(facts.signatures)


def respect_closer(
    desired: TrackedIssue,
    remote: RemoteIssue | None,
    record: IssueRecord | None,
    facts: FlagFacts | None,
    *,
    bot: str,
    key: str,
) -> Verdict:
    """`desired` kept closed when a person closed `remote` and nothing new crashes, or reopened
    with a comment naming what is new; the memory of who closed it and what it showed then."""
    if remote is None or facts is None:
        return Verdict(desired)
    if remote.open:
        forget = {"closed_by": None, "closed_signatures": []} if record and record.closed_by else {}
        return Verdict(desired, forget)
    closer = remote.closed_by
    if not desired.open or not closer or closer.lower() == bot.lower():
        return Verdict(desired)
    shown = shown_when_closed(closer, record, facts)
    # A crash torch reworded continues one the issue showed: the same crash, still closed, and
    # remembered in its new words (the next night no longer says which one it continues).
    reworded = [new for new, old in facts.continues.items() if old in shown and new not in shown]
    shown += reworded
    remember = {"closed_by": closer, "closed_signatures": shown}
    new = [(signature, models) for signature, models in facts.signatures.items() if signature not in shown]
    if not new:
        notices = [n for n in desired.notices if n.kind != "reopen"]
        return Verdict(desired.model_copy(update={"open": False, "notices": notices}), remember)
    marker = state_marker("reopen", desired.flag, key)
    body = render(
        "tracker-reopen-new.md.j2",
        marker=marker,
        flag=desired.flag,
        key=key,
        closer=closer,
        new=new,
        dashboard_url=facts.dashboard_url,
    )
    notices = [n for n in desired.notices if n.kind != "reopen"]
    notices.append(TrackerNotice(kind="reopen", marker=marker, body=body))
    return Verdict(desired.model_copy(update={"notices": notices}), remember)
