"""Builds on a package index and the bisections run over them: which nightly (or transformers
release) first raised a crash group's reproduction, and the probes that showed it."""

from __future__ import annotations

import datetime as dt
from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal

from pydantic import Field

from triagebot.results.base import Record

Axis = Literal["torch", "transformers"]
"""What a bisection varies: torch nightlies, or transformers releases under one torch build."""

Change = Literal["regression", "improvement"]
"""What a bisection looks for: the first build that raises the reproduction, which is a
regression (a crash, more graphs) or an improvement (fewer graphs: the reproduction raises
where the model got better). Its probes say good and bad either way, as git bisect's old and
new; only the words of the answer differ (`Bisection.said`)."""


class Wheel(Record):
    """One wheel file a package index lists for a project."""

    project: str  # normalised: torch, transformers
    version: str  # the whole version, local label included: 2.12.0.dev20260408+cu128
    filename: str
    url: str  # absolute
    # The nightly's date (from `.devYYYYMMDD`), else the day the index says the file was
    # uploaded (PEP 700), else None.
    date: dt.date | None = None
    requires_python: str | None = None


class Verdict(StrEnum):
    """What one probe of a build said about the reproduction."""

    good = "good"  # every run ran clean
    bad = "bad"  # a run raised the crash group's signature
    # Nothing can be said: the build could not be installed or imported, the script raised
    # another error, or it outlived its time. As in cargo-bisect-rustc, never good or bad.
    skip = "skip"


def verdict_word(change: Change, verdict: Verdict) -> str:
    """A probe's verdict in the words of what is bisected: good and bad for a regression,
    unimproved and improved for an improvement."""
    if change == "improvement" and verdict != Verdict.skip:
        return "improved" if verdict == Verdict.bad else "unimproved"
    return verdict.value


class Probe(Record):
    """One build installed and the reproduction run in it."""

    version: str
    verdict: Verdict
    reason: str  # one line: "raised it on run 2 of 3", "ran clean 3 times", "install failed: ..."
    runs: int = 0  # runs of the script made
    raised: int = 0  # of them, runs that raised the signature
    git_version: str = ""  # torch.version.git_version of the build (torch bisections)
    seconds: float = 0.0  # install and runs

    @property
    def flaky(self) -> bool:
        """It raised on some runs and ran clean on others."""
        return 0 < self.raised < self.runs


class Bisection(Record):
    """A bisection of one crash signature between a last-good and a first-bad build; the store
    keeps it, so that one (signature, range) is never bisected twice."""

    axis: Axis
    signature: str
    change: Change = "regression"
    model: str  # the model whose verified reproduction was run
    flag: str
    good: str  # the range asked for: the version believed good ...
    bad: str  # ... and the one believed bad
    # What was held fixed while the axis moved: {"transformers": "5.23.0"} for a torch bisection,
    # {"torch": "2.12.0.dev20260408+cu128"} for a transformers one.
    pinned: dict[str, str] = Field(default_factory=dict)
    index: str  # the index the builds came from
    # A torch bisection over releases (2.13.0, 2.14.0, ...) rather than nightlies
    torch_releases: bool = False
    installer: str = ""  # what installed them: "uv" or "pip" ("" in answers stored before it was kept)
    # The answer: the newest build seen good and the oldest seen bad. Adjacent (apart from
    # `skipped`) when `conclusive`; narrowed as far as the budget allowed otherwise.
    last_good: str | None = None
    first_bad: str | None = None
    last_good_git: str = ""
    first_bad_git: str = ""
    compare_url: str | None = None  # the commit range between them on GitHub
    skipped: list[str] = Field(default_factory=list)  # untestable builds between them: any may be first bad
    untested: int = 0  # builds between them not probed (the budget ran out)
    conclusive: bool = False
    stopped: str | None = None  # why it ended without an answer: the budget, ends that disagree
    runs: int = 1  # runs a build needs to count as good
    probes: list[Probe] = Field(default_factory=list)  # in the order they were made
    seconds: float = 0.0
    created: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @property
    def subject(self) -> str:
        """What a build of this bisection is, as its answer names the first bad one."""
        if self.axis == "transformers":
            return "transformers release"
        return "torch release" if self.torch_releases else "nightly"

    def said(self, verdict: Verdict) -> str:
        """A probe's verdict in this bisection's words (`verdict_word`)."""
        return verdict_word(self.change, verdict)

    @property
    def first_label(self) -> str:
        """What the answer calls the first build that raised the reproduction: first bad."""
        return f"first {self.said(Verdict.bad)}"

    @property
    def last_label(self) -> str:
        """What the answer calls the newest build before it: last good."""
        return f"last {self.said(Verdict.good)}"

    @property
    def flaky(self) -> list[Probe]:
        """Probes whose runs disagreed: the reproduction is flaky."""
        return [probe for probe in self.probes if probe.flaky]
