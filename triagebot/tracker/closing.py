"""Closing and reopening: a tracking issue is open while its flag has failures, confirmed crashes
and confirmed wrong results alike (`TrendPoint.failures`).

The issue closes once the flag has had no failure for `close_after` consecutive snapshots, so
that one lucky nightly does not close it, and reopens (never a duplicate) as soon as a failure
comes back. Each model's crash and wrong result must be over (`analysis.recurrence.settled`):
a night that did not run a model (an engine error, a timeout, the model not in the corpus), or
did not judge its outputs, neither closes its issue nor counts as clean, and an intermittent
crash keeps the issue open until its whole window ran clean.
"""

from __future__ import annotations

from collections.abc import Sequence

from triagebot.analysis.recurrence import settled
from triagebot.results import FlagNight, Recurrence


def failures_per_nightly(state: FlagNight) -> list[int]:
    """The flag's failures (confirmed crashes and wrong results) in each nightly of its trend,
    oldest first, the snapshot being published last: what `should_be_open` and `clean_streak` read."""
    return [point.failures for point in state.trend]


def should_be_open(failures: Sequence[int], close_after: int, recurrence: Recurrence | None = None) -> bool:
    """`failures`: the flag's `failures_per_nightly`. Open when any of the last `close_after` had
    a failure, or while the crash of a model of `recurrence` is not over."""
    if close_after < 1:
        raise ValueError(f"close_after must be at least 1, not {close_after}")
    if not failures:
        return False
    if failures[-1] > 0 or any(count > 0 for count in failures[-close_after:]):
        return True
    states = [*recurrence.states.values(), *recurrence.wrong.values()] if recurrence is not None else []
    return any(not settled(letters, close_after) for letters in states)


def clean_streak(failures: Sequence[int]) -> int:
    """How many of the newest snapshots in a row had no failure (for the close comment), from the
    flag's `failures_per_nightly`."""
    streak = 0
    for count in reversed(failures):
        if count > 0:
            break
        streak += 1
    return streak
