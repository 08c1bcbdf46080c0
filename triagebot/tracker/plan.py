"""Plan, then apply: the difference between the desired tracking issues and GitHub's state.

`make_plan` is pure: desired `TrackedIssue` records and the `RemoteState` read from GitHub in,
a list of `Action`s out. Publishing the same snapshot twice therefore plans nothing the second
time, and an interrupted publish plans exactly what is missing. Labels people added by hand are
never removed; a notice is owed only while its marker is absent from the bot's comments, and the
notices one issue owes in one night are one comment (`fold`), each under its own marker line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from triagebot.report.fit import GITHUB_LIMIT
from triagebot.results import TrackedIssue, TrackerNotice

# Notices tied to a state change: posted only together with that change.
CLOSE_KINDS = frozenset({"close"})
REOPEN_KINDS = frozenset({"reopen"})


@dataclass
class RemoteIssue:
    """What GitHub holds for one issue the bot wrote."""

    number: int
    title: str
    body: str
    labels: set[str]
    open: bool
    author: str
    comment_markers: set[str] = field(default_factory=set)  # markers found in the bot's comments
    comments_read: bool = False
    closed_by: str | None = None  # who closed it; read only for a closed issue that should be open


@dataclass
class RemoteState:
    issues: dict[str, RemoteIssue]  # desired marker -> the bot's issue carrying it
    labels: set[str] | None  # labels of the repository; None when not read


class Verb(StrEnum):
    create_label = "create label"
    create = "create"
    edit = "edit body"
    add_labels = "add labels"
    comment = "comment"
    close = "close"
    reopen = "reopen"
    nothing = "nothing"


WRITES = frozenset(Verb) - {Verb.nothing}


@dataclass
class Action:
    verb: Verb
    marker: str  # the tracked issue's marker (empty for a repository-wide action)
    flag: str = ""
    number: int | None = None  # None while the issue does not exist yet
    title: str | None = None
    body: str | None = None
    labels: list[str] = field(default_factory=list)
    notice: TrackerNotice | None = None

    def describe(self, repo: str | None = None) -> str:
        """The action in words: for the plan (`#123 (flag)`), or, given `repo`, for an error
        that names its issue (`edit body of pytorch/pytorch#123`)."""
        if self.number:
            target = f"{repo}#{self.number}" if repo else f"#{self.number}"
        else:
            target = f"a new issue in {repo}" if repo else "(new issue)"
        which = "" if repo else f" ({self.flag})"
        if self.verb == Verb.create_label:
            return f"create label {self.labels[0]!r}" + (f" in {repo}" if repo else "")
        if self.verb == Verb.create:
            if repo:
                return f"open the issue for {self.flag or 'the alert'} in {repo}"
            return f"create issue for {self.flag}: {self.title}"
        if self.verb == Verb.edit:
            parts = [p for p, v in (("title", self.title), ("body", self.body)) if v is not None]
            return f"edit {' and '.join(parts)} of {target}{which}"
        if self.verb == Verb.add_labels:
            return f"add labels {', '.join(self.labels)} to {target}{which}"
        if self.verb == Verb.comment:
            assert self.notice is not None
            return f"comment {self.notice.kind} notice on {target}{which}"
        if self.verb in (Verb.close, Verb.reopen):
            return f"{self.verb} {target}{which}"
        return f"nothing to do for {target}{which}"


@dataclass
class Plan:
    actions: list[Action]

    @property
    def writes(self) -> list[Action]:
        return [a for a in self.actions if a.verb in WRITES]

    def describe(self) -> list[str]:
        return [action.describe() for action in self.actions]


def _issue_actions(desired: TrackedIssue, remote: RemoteIssue | None) -> list[Action]:
    base = {"marker": desired.marker, "flag": desired.flag}
    if remote is None:
        if not desired.open:
            return []  # nothing to track and nothing was ever tracked
        return [Action(Verb.create, title=desired.title, body=desired.body, labels=desired.labels, **base)]
    number = remote.number
    actions: list[Action] = []
    title = desired.title if desired.title != remote.title else None
    body = desired.body if desired.body.strip() != remote.body.strip() else None
    if title is not None or body is not None:
        actions.append(Action(Verb.edit, number=number, title=title, body=body, **base))
    missing = [label for label in desired.labels if label not in remote.labels]
    if missing:
        actions.append(Action(Verb.add_labels, number=number, labels=missing, **base))
    closing = remote.open and not desired.open
    reopening = desired.open and not remote.open
    owed = []
    for notice in desired.notices:
        if notice.marker in remote.comment_markers:
            continue
        if notice.kind in CLOSE_KINDS and not closing:
            continue
        if notice.kind in REOPEN_KINDS and not reopening:
            continue
        owed.append(notice)
    actions += [Action(Verb.comment, number=number, notice=notice, **base) for notice in fold(owed)]
    if closing:
        actions.append(Action(Verb.close, number=number, **base))
    if reopening:
        actions.append(Action(Verb.reopen, number=number, **base))
    return actions or [Action(Verb.nothing, number=number, **base)]


def fold(notices: list[TrackerNotice], limit: int = GITHUB_LIMIT) -> list[TrackerNotice]:
    """The notices one issue owes tonight as one comment (at most one a night on an issue),
    each under its own marker line, so that each is still found and never posted twice; as many
    comments as GitHub's limit on a comment's length needs."""
    folded: list[TrackerNotice] = []
    for notice in notices:
        last = folded[-1] if folded else None
        body = f"{last.body.rstrip()}\n\n{notice.body}" if last is not None else ""
        if last is None or len(body) > limit:
            folded.append(notice)
        else:
            folded[-1] = last.model_copy(update={"kind": f"{last.kind}+{notice.kind}", "body": body})
    return folded


def make_plan(desired: list[TrackedIssue], remote: RemoteState) -> Plan:
    """The actions that bring GitHub to `desired`; labels first, since issues refer to them."""
    issue_actions: list[Action] = []
    for issue in desired:
        issue_actions.extend(_issue_actions(issue, remote.issues.get(issue.marker)))
    applied = [a for a in issue_actions if a.verb in (Verb.create, Verb.add_labels)]
    wanted_labels = dict.fromkeys(label for action in applied for label in action.labels)
    known = remote.labels if remote.labels is not None else set(wanted_labels)
    label_actions = [
        Action(Verb.create_label, marker="", labels=[name]) for name in wanted_labels if name not in known
    ]
    return Plan(label_actions + issue_actions)
