"""The desired state of every tracking issue, derived from one night (and so from the store alone).

For each flag of the night: the title (from `tracker.title`), the body (the report package's
rendering of the night, starting with the flag marker), the labels, open or closed (`closing`,
reading the flag's trend: the history the night was built with), and the notices owed: fixed
models and regressions against the night's previous nightly (none when both are one build), and
the close or reopen comment. Nothing here analyses: cc lists, diffs and trends are the night's.
"""

from __future__ import annotations

from triagebot import report
from triagebot.config import TrackerSettings
from triagebot.report.markers import flag_marker, notice_marker, state_marker
from triagebot.results import Effect, FlagStats, Night, TrackedIssue, TrackerNotice
from triagebot.tracker import closing
from triagebot.tracker.render import render


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


def _notices(night: Night, flag: str) -> list[TrackerNotice]:
    """Fixed-model and regression notices against the previous nightly (none for one build)."""
    notices = []
    for kind, body in (
        ("fixed", report.fixed_notice(night, flag)),
        ("regression", report.regression_notice(night, flag)),
    ):
        if body:
            marker = notice_marker(kind, flag, night.key)  # type: ignore[arg-type]
            notices.append(TrackerNotice(kind=kind, marker=marker, body=body))
    return notices


def desired_issues(night: Night, settings: TrackerSettings) -> list[TrackedIssue]:
    """One `TrackedIssue` per flag of `night`, its body exactly the report folder's."""
    desired = []
    for flag, state in night.flags.items():
        crashes = [point.crashes for point in state.trend]
        notices = _notices(night, flag)
        close = state_marker("close", flag, night.key)
        reopen = state_marker("reopen", flag, night.key)
        notices.append(
            TrackerNotice(
                kind="close",
                marker=close,
                body=render(
                    "tracker-close.md.j2",
                    marker=close,
                    flag=flag,
                    key=night.key,
                    streak=closing.clean_streak(crashes),
                ),
            )
        )
        notices.append(
            TrackerNotice(
                kind="reopen",
                marker=reopen,
                body=render(
                    "tracker-reopen.md.j2", marker=reopen, flag=flag, key=night.key, crashes=state.crashes
                ),
            )
        )
        desired.append(
            TrackedIssue(
                flag=flag,
                marker=flag_marker(flag),
                title=title_for(settings, state.stats, night.key),
                body=report.issue_body(night, flag),
                labels=list(settings.labels),
                open=closing.should_be_open(crashes, settings.close_after),
                notices=notices,
            )
        )
    return desired
