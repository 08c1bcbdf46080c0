"""The desired state of every tracking issue, derived from one night (and so from the store alone).

For each flag of the night: the title (from `tracker.title`), the body (the report package's
rendering of the night, starting with the flag marker), the labels, open or closed (`closing`,
reading the flag's trend: the history the night was built with; a confirmed wrong result keeps
an issue open as a confirmed crash does), and the notices owed: fixed models and regressions
against the night's previous nightly (none when both are one build), and the close or reopen
comment. With `[tracker] health_issue`, one more issue: the corpus's health (`Night.health`),
which the baseline-regression notice goes to. Nothing here analyses: cc lists, diffs, trends
and the health are the night's.
"""

from __future__ import annotations

from triagebot import report
from triagebot.config import TrackerSettings
from triagebot.report.markers import HEALTH_MARKER, flag_marker, notice_marker, state_marker
from triagebot.results import BASELINE, HEALTH_ISSUE, Effect, FlagStats, Night, TrackedIssue, TrackerNotice
from triagebot.tracker import closing
from triagebot.tracker.render import render


def title_for(settings: TrackerSettings, stats: FlagStats, key: str) -> str:
    """`tracker.title` filled in (its placeholders were checked when the config was read)."""
    values = {
        "flag": stats.flag,
        "crashes": stats.counts.get(Effect.crashes, 0),
        "wrong": stats.counts.get(Effect.wrong_result, 0),
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
    """One `TrackedIssue` per flag of `night`, its body exactly the report folder's, and the
    corpus-health issue when `settings.health_issue` is on."""
    desired = []
    for flag, state in night.flags.items():
        failures = [point.failures for point in state.trend]  # confirmed crashes and wrong results
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
                    streak=closing.clean_streak(failures),
                ),
            )
        )
        notices.append(
            TrackerNotice(
                kind="reopen",
                marker=reopen,
                body=render(
                    "tracker-reopen.md.j2",
                    marker=reopen,
                    flag=flag,
                    key=night.key,
                    crashes=state.crashes,
                    wrong=state.wrong,
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
                open=closing.should_be_open(failures, settings.close_after),
                notices=notices,
            )
        )
    if settings.health_issue and night.health is not None:
        desired.append(health_issue(night, settings))
    return desired


HEALTH = HEALTH_ISSUE


def health_issue(night: Night, settings: TrackerSettings) -> TrackedIssue:
    """The corpus-health tracking issue: the night's health, always open, and the notice for the
    models whose baseline graph count rose since the previous nightly."""
    assert night.health is not None
    overall = night.health.overall
    notices = []
    regressed = report.baseline_regression_notice(night)
    if regressed is not None:
        marker = notice_marker("regression", BASELINE, night.key)
        notices.append(TrackerNotice(kind="regression", marker=marker, body=regressed))
    return TrackedIssue(
        flag=HEALTH,
        marker=HEALTH_MARKER,
        title=(
            f"[triagebot] Dynamo on the {night.snapshot.corpus.name} corpus: {overall.one_graph} of "
            f"{overall.models} models compile to one graph"
        ),
        body=report.health_body(night),
        labels=list(settings.labels),
        open=True,
        notices=notices,
    )
