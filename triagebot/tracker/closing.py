"""Closing and reopening: a tracking issue is open while its flag has confirmed crashes.

The issue closes once the flag has had no confirmed crash for `close_after` consecutive
snapshots, so that one lucky nightly does not close it, and reopens (never a duplicate) as soon
as a confirmed crash comes back. Each model's crash must be over (`analysis.recurrence.settled`):
a night that did not run a model (an engine error, a timeout, the model not in the corpus)
neither closes its issue nor counts as clean, and an intermittent crash keeps the issue open
until its whole window ran clean.
"""

from __future__ import annotations

from collections.abc import Sequence

from triagebot.analysis.recurrence import settled
from triagebot.results import Recurrence


def should_be_open(
    confirmed_crashes: Sequence[int], close_after: int, recurrence: Recurrence | None = None
) -> bool:
    """`confirmed_crashes`: the flag's confirmed-crash count in each stored snapshot, oldest first,
    the snapshot being published last. Open when any of the last `close_after` had a crash, or
    while the crash of a model of `recurrence` is not over."""
    if close_after < 1:
        raise ValueError(f"close_after must be at least 1, not {close_after}")
    if not confirmed_crashes:
        return False
    if confirmed_crashes[-1] > 0 or any(count > 0 for count in confirmed_crashes[-close_after:]):
        return True
    states = recurrence.states.values() if recurrence is not None else ()
    return any(not settled(letters, close_after) for letters in states)


def clean_streak(confirmed_crashes: Sequence[int]) -> int:
    """How many of the newest snapshots in a row had no confirmed crash (for the close comment)."""
    streak = 0
    for count in reversed(confirmed_crashes):
        if count > 0:
            break
        streak += 1
    return streak
