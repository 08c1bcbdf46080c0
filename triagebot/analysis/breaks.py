"""Baseline graph-break reasons: counted once per model, ranked one way, and how many each
place keeps.

A reason is its first line (the rest is Dynamo's hint and debug context), counted once per
model that hit it; the most common come first, ties by name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from triagebot.results import BASELINE, BreakReasonCount, ModelResult, Snapshot

# A flag's issue lists the corpus's most common reasons (`FlagStats.top_break_reasons`).
ISSUE_BREAK_REASONS = 10
# The corpus's health and the dashboard's index show this many, each with its change since the
# previous nightly.
SHOWN_BREAK_REASONS = 15
# Each stored nightly's compact data keeps this many (`NightData.break_reasons`), more than are
# shown, so that a reason shown tonight is still found among the previous nightly's when it was
# rarer then.
KEPT_BREAK_REASONS = 50


def reason_lines(break_reasons: Iterable[str]) -> set[str]:
    """A run's graph-break reasons as their first lines, each once."""
    return {reason.strip().splitlines()[0] for reason in break_reasons if reason.strip()}


def break_reason_counts(results: Iterable[ModelResult]) -> Counter[str]:
    """Baseline graph-break reasons by how many models hit each (first line, once per model)."""
    counted: Counter[str] = Counter()
    for result in results:
        baseline = result.outcomes.get(BASELINE)
        if baseline is not None:
            counted.update(reason_lines(baseline.break_reasons))
    return counted


def most_common(counted: Counter[str], limit: int) -> list[tuple[str, int]]:
    """The first `limit` (reason, models) pairs: the most models first, then by reason."""
    return sorted(counted.items(), key=lambda item: (-item[1], item[0]))[:limit]


def top_break_reasons(snapshot: Snapshot, limit: int = ISSUE_BREAK_REASONS) -> list[BreakReasonCount]:
    """The most common baseline graph-break reasons of `snapshot` (`break_reason_counts`)."""
    ranked = most_common(break_reason_counts(snapshot.results), limit)
    return [BreakReasonCount(reason=reason, models=models) for reason, models in ranked]
