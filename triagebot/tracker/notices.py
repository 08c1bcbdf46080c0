"""The comments a tracking issue owes tonight, each under its own marker so that it is posted once.

- fixed / regression: the models whose crash under a flag is over, and those that newly crash
  (`FlagNight.news`: a crash returning within its window is not new, a fix is said when closing
  would count it over), each with the build it came with (the report package's renderings;
  none when both nights are one build);
- removed: the failing models that left the corpus since the previous nightly (their class
  left transformers): removed, never fixed;
- close / reopen: posted only together with the state change they explain (`plan`), the close
  comment saying how many nightlies in a row were clean (`closing`);
- on the corpus-health issue, the models whose baseline graph count rose.

The cc comment (`cc`) and the comment naming what is new on an issue a person closed
(`people`) depend on GitHub's state and are added while publishing. What one issue owes in one
night is posted as one comment (`plan.fold`).
"""

from __future__ import annotations

from triagebot import report
from triagebot.report.markers import notice_marker, state_marker
from triagebot.results import BASELINE, FlagNight, Night, TrackerNotice
from triagebot.tracker import closing
from triagebot.tracker.render import render


def flag_notices(night: Night, flag: str) -> list[TrackerNotice]:
    """Every notice `flag`'s issue may owe tonight: fixed, regression, removed, close and reopen."""
    removed = removed_notice(night, flag)
    return [
        *change_notices(night, flag),
        *([removed] if removed is not None else []),
        *state_notices(night, flag, night.flags[flag]),
    ]


def removed_notice(night: Night, flag: str) -> TrackerNotice | None:
    """The failing models of `flag` that left the corpus since the previous nightly, or None."""
    change = night.flags[flag].diff
    if night.diff is None or night.diff.same_build or change is None or not change.removed:
        return None
    marker = notice_marker("removed", flag, night.key)
    body = render(
        "tracker-removed.md.j2",
        marker=marker,
        flag=flag,
        changes=change.removed,
        old_key=night.diff.old_key,
        new_key=night.diff.new_key,
        transformers=night.snapshot.environment.transformers_version,
    )
    return TrackerNotice(kind="removed", marker=marker, body=body)


def change_notices(night: Night, flag: str) -> list[TrackerNotice]:
    """Fixed-model and regression notices against the previous nightly (none for one build):
    only crashes new within their window, only crashes over as closing counts them
    (`FlagNight.news`), each with the build it came with."""
    notices = []
    for kind, body in (
        ("fixed", report.fixed_notice(night, flag)),
        ("regression", report.regression_notice(night, flag)),
    ):
        if body:
            marker = notice_marker(kind, flag, night.key)  # type: ignore[arg-type]
            notices.append(TrackerNotice(kind=kind, marker=marker, body=body))
    return notices


def state_notices(night: Night, flag: str, state: FlagNight) -> list[TrackerNotice]:
    """The close and reopen comments (the plan posts one only when the issue changes state)."""
    close = state_marker("close", flag, night.key)
    reopen = state_marker("reopen", flag, night.key)
    close_body = render(
        "tracker-close.md.j2",
        marker=close,
        flag=flag,
        key=night.key,
        streak=closing.clean_streak(closing.failures_per_nightly(state)),
    )
    reopen_body = render(
        "tracker-reopen.md.j2",
        marker=reopen,
        flag=flag,
        key=night.key,
        crashes=state.crashes,
        wrong_results=state.wrong_results,
    )
    return [
        TrackerNotice(kind="close", marker=close, body=close_body),
        TrackerNotice(kind="reopen", marker=reopen, body=reopen_body),
    ]


def health_notices(night: Night) -> list[TrackerNotice]:
    """The notice for the models whose baseline graph count rose since the previous nightly."""
    regressed = report.baseline_regression_notice(night)
    if regressed is None:
        return []
    marker = notice_marker("regression", BASELINE, night.key)
    return [TrackerNotice(kind="regression", marker=marker, body=regressed)]
