"""Closing and reopening: a tracking issue is open while its flag has confirmed crashes.

The issue closes once the flag has had no confirmed crash for `close_after` consecutive
snapshots, so that one lucky nightly does not close it, and reopens (never a duplicate) as soon
as a confirmed crash comes back.
"""

from __future__ import annotations

from collections.abc import Sequence


def should_be_open(confirmed_crashes: Sequence[int], close_after: int) -> bool:
    """`confirmed_crashes`: the flag's confirmed-crash count in each stored snapshot, oldest first,
    the snapshot being published last. Open when any of the last `close_after` had a crash."""
    if close_after < 1:
        raise ValueError(f"close_after must be at least 1, not {close_after}")
    if not confirmed_crashes:
        return False
    if confirmed_crashes[-1] > 0:
        return True
    return any(count > 0 for count in confirmed_crashes[-close_after:])


def clean_streak(confirmed_crashes: Sequence[int]) -> int:
    """How many of the newest snapshots in a row had no confirmed crash (for the close comment)."""
    streak = 0
    for count in reversed(confirmed_crashes):
        if count > 0:
            break
        streak += 1
    return streak
