"""The corpus's health as a tracking issue of its own, and the notice of a baseline regression.

Both render `analysis.corpus_health` (the same record the nightly summary's health section
renders): `health_body` the issue body, first line `markers.HEALTH_MARKER`;
`baseline_regression_notice` the comment for models whose baseline graph count rose since the
previous nightly, with the commit range (None when there are none or both are one build).
"""

from __future__ import annotations

from collections.abc import Sequence

from triagebot.analysis import corpus_health
from triagebot.report import markers
from triagebot.report.render import render
from triagebot.results import BASELINE, Snapshot, SnapshotDiff


def health_body(
    snapshot: Snapshot, history: Sequence[Snapshot] = (), dashboard_url: str | None = None
) -> str:
    """The health issue's body; `history`: stored snapshots older than `snapshot`, oldest first."""
    return render(
        "health.md.j2",
        marker=markers.HEALTH_MARKER,
        health=corpus_health(snapshot, history),
        env=snapshot.environment,
        corpus=snapshot.corpus,
        dashboard_url=dashboard_url,
    )


def baseline_regression_notice(diff: SnapshotDiff) -> str | None:
    """A comment for the models that compile to more graphs at baseline than the night before."""
    rose = [
        change
        for change in diff.baseline_graph_changes
        if (change.new_graphs or 0) > (change.old_graphs or 0)
    ]
    if diff.same_build or not rose:
        return None
    return render(
        "baseline-regression.md.j2",
        marker=markers.notice_marker("regression", BASELINE, diff.new_key),
        changes=rose,
        old_key=diff.old_key,
        new_key=diff.new_key,
        compare_url=diff.compare_url,
    )
