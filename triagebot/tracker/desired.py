"""The desired state of every tracking issue, derived from the store alone.

For each flag of the snapshot: the title (from `tracker.title`), the body (rendered by the
report package, starting with the flag marker), the labels, open or closed (`closing`), the cc
list (`cc`), and the notices owed: fixed models and regressions against the previous snapshot
(none when both are the same build), and the close or reopen comment. The texts come from a
`Texts` object (the report package itself by default), which owns every issue and notice template.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Protocol

from triagebot import report
from triagebot.analysis import analyse, corpus_health, diff, trend
from triagebot.config import TrackerSettings
from triagebot.report import markers as report_markers
from triagebot.results import (
    BASELINE,
    Effect,
    FlagStats,
    Snapshot,
    SnapshotDiff,
    TrackedIssue,
    TrackerNotice,
)
from triagebot.tracker import cc as cc_routing
from triagebot.tracker import closing
from triagebot.tracker.markers import state_marker
from triagebot.tracker.render import render

TITLE_FIELDS = ("flag", "crashes", "testable", "flaky", "helps", "key")


class Texts(Protocol):
    """The report package's renderers as the tracker calls them (`triagebot.report` itself)."""

    def issue_body(
        self,
        snapshot: Snapshot,
        flag: str,
        *,
        history: Sequence[Snapshot] = (),
        issue_urls: dict[str, str] | None = None,
        cc: Sequence[str] = (),
        dashboard_url: str | None = None,
    ) -> str: ...

    def fixed_notice(self, diff: SnapshotDiff, flag: str) -> str | None: ...

    def regression_notice(self, diff: SnapshotDiff, flag: str) -> str | None: ...


def title_for(settings: TrackerSettings, stats: FlagStats, key: str) -> str:
    """`tracker.title` filled in; an unknown placeholder is an error naming it."""
    values = {
        "flag": stats.flag,
        "crashes": stats.counts.get(Effect.crashes, 0),
        "testable": stats.testable,
        "flaky": stats.counts.get(Effect.flaky, 0),
        "helps": stats.counts.get(Effect.reduces_graphs, 0),
        "key": key,
    }
    for _, name, _, _ in string.Formatter().parse(settings.title):
        if name is not None and name not in values:
            raise ValueError(
                f"tracker.title: unknown placeholder {{{name}}} (known: {', '.join(TITLE_FIELDS)})"
            )
    return settings.title.format(**values)


def _notices(flag: str, snapshot: Snapshot, change: SnapshotDiff | None, texts: Texts) -> list[TrackerNotice]:
    """Fixed-model and regression notices against the previous snapshot (none for one build)."""
    if change is None or change.same_build or flag not in change.flags:
        return []
    notices = []
    for kind, body in (
        ("fixed", texts.fixed_notice(change, flag)),
        ("regression", texts.regression_notice(change, flag)),
    ):
        if body:
            marker = report_markers.notice_marker(kind, flag, snapshot.key)  # type: ignore[arg-type]
            notices.append(TrackerNotice(kind=kind, marker=marker, body=body))
    return notices


def desired_issues(
    snapshot: Snapshot,
    history: Sequence[Snapshot],
    settings: TrackerSettings,
    texts: Texts = report,
    *,
    previous: Snapshot | None = None,
    author: str | None = None,
    issue_urls: dict[str, str] | None = None,
) -> list[TrackedIssue]:
    """One `TrackedIssue` per flag of `snapshot`. `history`: stored snapshots older than
    `snapshot`, oldest first (it is appended if missing). `previous` defaults to the newest of
    them. `author`: the bot's login, never cc'd. `issue_urls`: flag -> its tracking issue, for
    the overlap section's links."""
    older = [s for s in history if s.key != snapshot.key]
    if previous is None and older:
        previous = older[-1]
    analysis = analyse(snapshot, older)
    change = diff(previous, snapshot) if previous is not None else None
    timeline = [*older, snapshot]
    desired = []
    for flag, stats in analysis.flags.items():
        crashes = [point.crashes for point in trend(timeline, flag)]
        should_open = closing.should_be_open(crashes, settings.close_after)
        signatures = [group.signature for group in stats.crash_groups]
        people = cc_routing.cc_for(flag, signatures, settings, author=author)
        notices = _notices(flag, snapshot, change, texts)
        close = state_marker("close", flag, snapshot.key)
        reopen = state_marker("reopen", flag, snapshot.key)
        notices.append(
            TrackerNotice(
                kind="close",
                marker=close,
                body=render(
                    "tracker-close.md.j2",
                    marker=close,
                    flag=flag,
                    key=snapshot.key,
                    streak=closing.clean_streak(crashes),
                ),
            )
        )
        notices.append(
            TrackerNotice(
                kind="reopen",
                marker=reopen,
                body=render(
                    "tracker-reopen.md.j2", marker=reopen, flag=flag, key=snapshot.key, crashes=crashes[-1]
                ),
            )
        )
        desired.append(
            TrackedIssue(
                flag=flag,
                marker=report_markers.flag_marker(flag),
                title=title_for(settings, stats, snapshot.key),
                body=texts.issue_body(
                    snapshot,
                    flag,
                    history=older,
                    issue_urls=issue_urls,
                    cc=people,
                    dashboard_url=settings.dashboard_url,
                ),
                labels=list(settings.labels),
                open=should_open,
                notices=notices,
            )
        )
    if settings.health_issue:
        desired.append(health_issue(snapshot, older, change, settings))
    return desired


HEALTH = "corpus-health"
"""`TrackedIssue.flag` of the corpus-health issue (its files and plan lines go by this name)."""


def health_issue(
    snapshot: Snapshot, older: Sequence[Snapshot], change: SnapshotDiff | None, settings: TrackerSettings
) -> TrackedIssue:
    """The corpus-health tracking issue (`[tracker] health_issue`): the night's health, and a
    notice for the models whose baseline graph count rose since the previous nightly."""
    overall = corpus_health(snapshot, older).overall
    notices = []
    regressed = report.baseline_regression_notice(change) if change is not None else None
    if regressed is not None:
        marker = report_markers.notice_marker("regression", BASELINE, snapshot.key)
        notices.append(TrackerNotice(kind="regression", marker=marker, body=regressed))
    return TrackedIssue(
        flag=HEALTH,
        marker=report_markers.HEALTH_MARKER,
        title=(
            f"[triagebot] Dynamo on the {snapshot.corpus.name} corpus: {overall.one_graph} of "
            f"{overall.models} models compile to one graph"
        ),
        body=report.health_body(snapshot, older, dashboard_url=settings.dashboard_url),
        labels=list(settings.labels),
        open=True,
        notices=notices,
    )
