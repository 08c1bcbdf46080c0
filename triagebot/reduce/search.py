"""Delta debugging over a spec's edits: the most of them made together that still reproduce.

`search(spec, reproduces, out_of_time)` makes rounds. Each round takes one edit per field
(`edits.candidate_edits`: a count to its smallest value first) and tries them as delta
debugging tries changes: all together first; when that no longer reproduces, each half, then
each quarter, down to single edits, keeping every group that still reproduces. An edit refused
on its own is not offered again, so the next round offers that field its next value (half the
count), and starts from what was kept. It ends when a round keeps nothing, or when
`out_of_time()` says no probe fits in the time left, with the smallest spec that reproduced so
far. `reproduces` runs a probe (a child process); nothing here runs torch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from triagebot.reduce.edits import Edit, apply_edits, candidate_edits
from triagebot.results import ModelSpec

Reproduces = Callable[[ModelSpec], bool]
OutOfTime = Callable[[], bool]


@dataclass
class Search:
    """Where a search got: the smallest spec that reproduced and how it was reached."""

    spec: ModelSpec
    steps: list[str] = field(default_factory=list)  # what changed, in words
    edits: list[Edit] = field(default_factory=list)  # the edits kept, in order
    probes: int = 0
    complete: bool = True  # False: time ran out with edits left untried


def search(spec: ModelSpec, reproduces: Reproduces, out_of_time: OutOfTime) -> Search:
    """The smallest spec the edits reach from `spec` that still reproduces (see the module)."""
    found = Search(spec)
    rejected: set[tuple] = set()
    while True:
        candidates = _one_per_field(
            edit for edit in candidate_edits(found.spec) if edit.target not in rejected
        )
        if not candidates:
            return found
        kept = _round(found, candidates, reproduces, out_of_time, rejected)
        if not found.complete or not kept:
            return found


def _one_per_field(edits: Iterable[Edit]) -> list[Edit]:
    """The first edit of each field: its smallest value not yet refused."""
    chosen: dict[tuple, Edit] = {}
    for edit in edits:
        chosen.setdefault(edit.field, edit)
    return list(chosen.values())


def _round(
    found: Search,
    candidates: list[Edit],
    reproduces: Reproduces,
    out_of_time: OutOfTime,
    rejected: set[tuple],
) -> bool:
    """One round of delta debugging over `candidates`; True when it kept any."""
    kept = False
    pending = [candidates]
    while pending:
        if out_of_time():
            found.complete = False
            return kept
        group = pending.pop(0)
        trial = apply_edits(found.spec, group)
        found.probes += 1
        if reproduces(trial):
            found.spec = trial
            found.edits += group
            found.steps += [str(edit) for edit in group]
            kept = True
        elif len(group) > 1:
            half = len(group) // 2
            pending[:0] = [group[:half], group[half:]]
        else:
            rejected.add(group[0].target)
    return kept
