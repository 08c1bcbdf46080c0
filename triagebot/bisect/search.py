"""The search itself, free of installs and processes: builds in order, a probe per build, and
the narrowing of [last good, first bad] with untestable builds skipped.

As cargo-bisect-rustc does, both ends are tested first (the bad end, then the good one): a
range whose ends do not disagree has no answer, and saying so beats a confident wrong one. A
build that cannot be tested is skipped, and the next probe is the untested build nearest the
middle of what is left; skipped builds left between the answer's two ends are named in it,
since any of them may be the first bad one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from triagebot.results import Probe, Verdict


class OutOfTime(Exception):
    """Raised by a probe, or before one, when the bisection's time budget is spent."""


@dataclass
class Search:
    """Where a search stands: indices into `builds` of the newest good and the oldest bad."""

    builds: Sequence[str]
    low: int = 0
    high: int = -1
    probes: list[Probe] = field(default_factory=list)
    skipped: set[int] = field(default_factory=set)
    stopped: str | None = None
    confirmed: bool = False  # both ends tested and they disagree

    def __post_init__(self) -> None:
        if self.high < 0:
            self.high = len(self.builds) - 1

    def left(self) -> list[int]:
        """Builds strictly between the two ends still to be probed."""
        return [i for i in range(self.low + 1, self.high) if i not in self.skipped]

    @property
    def conclusive(self) -> bool:
        return self.confirmed and self.stopped is None and not self.left()

    def skipped_between(self) -> list[str]:
        return [self.builds[i] for i in sorted(self.skipped) if self.low < i < self.high]


def next_probe(search: Search) -> int | None:
    """The untested build nearest the middle of the range (the older of two as near)."""
    left = search.left()
    if not left:
        return None
    middle = (search.low + search.high) / 2
    return min(left, key=lambda i: (abs(i - middle), i))


def check_ends(search: Search, probe: Callable[[str], Probe]) -> bool:
    """Test the bad end, then the good one; False (with `stopped` saying why) when they do not
    disagree. A search already `confirmed` (resumed) tests nothing again."""
    if search.confirmed:
        return True
    good, bad = search.builds[search.low], search.builds[search.high]
    for index, expected in ((search.high, Verdict.bad), (search.low, Verdict.good)):
        result = probe(search.builds[index])
        search.probes.append(result)
        if result.verdict == expected:
            continue
        if result.verdict == Verdict.skip:
            search.stopped = f"{result.version} cannot be tested ({result.reason})"
        elif expected == Verdict.bad:
            search.stopped = (
                f"the reproduction does not fail on {bad}, the build believed bad ({result.reason})"
            )
        else:
            search.stopped = (
                f"the reproduction already fails on {good}, the build believed good ({result.reason}): "
                "the crash is older than the range"
            )
        return False
    search.confirmed = True
    return True


def run_search(search: Search, probe: Callable[[str], Probe]) -> Search:
    """Narrow `search` until no untested build is left between its ends, or the time is out
    (`probe` raises `OutOfTime`): then `stopped` says so and the range is as narrow as it got."""
    try:
        if len(search.builds) < 2:
            search.stopped = "the range holds fewer than two builds"
            return search
        if not check_ends(search, probe):
            return search
        while (index := next_probe(search)) is not None:
            result = probe(search.builds[index])
            search.probes.append(result)
            if result.verdict == Verdict.good:
                search.low = index
            elif result.verdict == Verdict.bad:
                search.high = index
            else:
                search.skipped.add(index)
    except OutOfTime as spent:
        search.stopped = str(spent)
    return search
