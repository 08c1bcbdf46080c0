"""The desired state of every tracking issue, derived from the store alone.

For each flag of the snapshot: the title (from `tracker.title`), the body (rendered by the
report package, starting with the flag marker), the labels, open or closed (`closing`), the cc
list (`cc`), and the notices owed: fixed models and regressions against the previous snapshot
(none when both are the same build), and the close or reopen comment. The texts come from a
`Texts` object (the report package itself by default), which owns every issue and notice template.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from triagebot import report
from triagebot.analysis import analyse, diff, trend
from triagebot.config import TrackerSettings
from triagebot.report import markers as report_markers
from triagebot.results import (
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
    """`tracker.title` filled in (its placeholders were checked when the config was read)."""
    values = {
        "flag": stats.flag,
        "crashes": stats.counts.get(Effect.crashes, 0),
        "testable": stats.testable,
        "flaky": stats.counts.get(Effect.flaky, 0),
        "helps": stats.counts.get(Effect.reduces_graphs, 0),
        "key": key,
    }
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
    return desired
