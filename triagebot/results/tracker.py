"""What the tracker wants on GitHub and what it remembers in the store between runs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import Field

from triagebot.results.base import Record

HEALTH_ISSUE = "corpus-health"
"""`TrackedIssue.flag` of the corpus-health issue (its files, plan lines and memory go by this
name); no flag may take it."""


class TrackerNotice(Record):
    """A comment the bot owes on a tracking issue. `marker` (hidden in `body`) is its
    idempotency key: a notice whose marker is already on the issue is never posted again."""

    kind: str  # fixed, regression, close, reopen, alert, ...
    marker: str
    body: str


class TrackedIssue(Record):
    """The desired state of one tracking issue, derived from the store alone."""

    flag: str
    marker: str  # hidden marker that finds the issue again, e.g. <!-- triagebot:flag=NAME -->
    title: str
    body: str  # carries `marker`
    labels: list[str] = Field(default_factory=list)
    open: bool = True
    notices: list[TrackerNotice] = Field(default_factory=list)


class IssueTitle(Record):
    """What the placeholders of `[tracker] title` stand for in one flag's issue title: the one
    declaration of their names (`config.TITLE_FIELDS`), of the values a title is tried with
    when the config is read, and of what `report.words.title_values` fills in."""

    flag: str
    crashes: int
    wrong: int
    testable: int
    affectable: int
    flaky: int
    helps: int
    new: int
    headline: str
    key: str


class RerunRequest(Record):
    """A checked `/rerun-sweep` command: what the sweep job may run. Never the raw comment text."""

    repo: str
    issue: int
    comment_id: int
    requested_by: str
    models: list[str] = Field(default_factory=list)  # empty: every model of the issue's flag
    flags: list[str] = Field(default_factory=list)
    confirm: int = 1
    # The corpora of the stored snapshot the models were checked against (empty: no snapshot).
    corpus: list[str] = Field(default_factory=list)


# --- Tracker records: what the tracker remembers in the store between runs. ---


class IssueRecord(Record):
    """The store's memory of one flag's tracking issue in one repository: found by number first,
    so an edited or removed marker never leads to a duplicate issue."""

    repo: str
    flag: str
    number: int
    signatures: list[str] = Field(default_factory=list)  # crash signatures the body last showed
    cc: list[str] = Field(default_factory=list)  # people the issue has mentioned (body or cc notice)
    closed_by: str | None = None  # the person (not the bot) who closed it, while it stays closed
    closed_signatures: list[str] = Field(default_factory=list)  # what it showed when they closed it


# Labels only people set: `triaged` hides an issue from the PT2 on-call. GitHub's label names
# are case-insensitive, so `Triaged` is the same label.
PEOPLE_ONLY_LABELS = frozenset({"triaged"})


def people_only(label: str) -> bool:
    """Whether `label` is one the bot never sets (`PEOPLE_ONLY_LABELS`), in any case or spacing."""
    return label.strip().casefold() in PEOPLE_ONLY_LABELS


class RefusedLabels(Record):
    """Labels GitHub refused to create or set in one repository (the token lacks triage or push
    access): not asked for again, so that a missing permission is said once, not every night.
    Removing the record (or granting the access and removing it) tries them again."""

    repo: str
    labels: list[str] = Field(default_factory=list)
    reason: str = ""  # GitHub's answer when it first refused, one line
    key: str = ""  # the nightly being published then


PublishedState = Literal["pending", "published", "superseded"]


class PublishedNight(Record):
    """Whether one stored nightly was published to one repository: `pending` from the moment it
    is stored for publishing until every write is done, so that a publish that failed (a
    revoked token, GitHub down) is finished by the next run instead of being forgotten;
    `superseded` when a newer nightly was published first (publishing it would roll back)."""

    repo: str
    key: str
    state: PublishedState
    at: datetime = Field(default_factory=lambda: datetime.now(UTC))  # when `state` was reached
    line: str = ""  # what publishing said last: what was applied, or why it failed


class CommandRecord(Record):
    """The store's memory of one `/rerun-sweep` comment, so polling never re-reads its reactions."""

    repo: str
    issue: int
    comment_id: int
    author: str
    state: Literal["answered", "refused", "quiet", "accepted", "failed", "ignored"]
    # answered: help or a rerun's result posted; refused: a refusal posted; quiet: refused
    # without a word (its author was already answered on this issue that day); accepted: a
    # sweep was started and no answer is known yet; failed: answered with why no result came;
    # ignored: not a command the bot acts on (an edited comment, with commands_on_edited off).
    at: datetime = Field(default_factory=lambda: datetime.now(UTC))  # when `state` was reached
    attempts: int = 0  # sweeps started for it
