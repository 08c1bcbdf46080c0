"""What a crash group's entry in a tracking issue says beyond the crash itself: the labels a PT2
triager would set, the upstream issues that may already track it (searched once per night), the
one a maintainer pinned it to, and the first bad nightly its bisection found."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import Field

from triagebot.results.base import Record
from triagebot.results.bisection import Bisection


class UpstreamIssue(Record):
    """One issue of the upstream repository that a search found. `title` is untrusted text."""

    number: int
    title: str
    state: Literal["open", "closed"]
    url: str
    matched: list[str] = Field(default_factory=list)  # the searched words its title or body holds


class UpstreamSearch(Record):
    """The search of the upstream repository's issues for one signature, made for one nightly:
    the store keeps the newest per signature, so that a signature is searched once per night."""

    repo: str  # OWNER/NAME searched
    signature: str
    key: str  # the nightly it was made for
    words: list[str] = Field(default_factory=list)  # the error's name, its words, the compiler frame
    query: str = ""  # the query that answered (or the last one tried)
    requests: int = 0  # search requests it took
    total: int = 0  # issues GitHub counted for that query
    matches: list[UpstreamIssue] = Field(default_factory=list)  # the best few, best first
    error: str = ""  # why no answer came (GitHub refused every query), one line
    at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class UpstreamPin(Record):
    """A maintainer's word on a signature: it is tracked upstream in issue `number` (None: in no
    upstream issue; the configuration's entry no longer applies). From `/rerun-sweep link` or
    `unlink`, kept in the store; the configuration's `tracker.upstream_links` are pins too."""

    repo: str  # OWNER/NAME of the upstream issue
    signature: str
    number: int | None
    by: str  # the login that said so, or "config"
    comment_id: int | None = None  # the command's comment
    at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class LabelReason(Record):
    """A label a PT2 triager would set on a group, and why (in words, for the issue)."""

    label: str
    reason: str


class GroupTriage(Record):
    """One failure group of one flag, as a triager reads it: its suggested labels, where it is
    (or may be) tracked upstream, and its first bad build."""

    signature: str
    group_id: str  # `signature_id(signature)`: how `/rerun-sweep link` names it
    labels: list[LabelReason] = Field(default_factory=list)
    repo: str | None = None  # the upstream repository searched and pinned to
    local: bool = False  # it is the tracker repository too: `#N` rather than `OWNER/NAME#N`
    tracked_in: int | None = None  # the pinned upstream issue
    pinned_by: str = ""  # who pinned it: a login, or "config"
    known: list[UpstreamIssue] = Field(default_factory=list)  # possibly known: the best matches
    searched: str | None = None  # the nightly of the search those come from; None: never searched
    search_error: str = ""
    bisection: Bisection | None = None  # the newest stored bisection of its signature

    @property
    def label_names(self) -> list[str]:
        return [reason.label for reason in self.labels]
