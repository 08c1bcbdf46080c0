"""The tracking issue of torch.compile's wrong results at the default config, kept by the same
lifecycle as a flag's: planned whenever `[tracker] wrong_results_issue` is on (the plan creates
it only once it is open), open while any of the last `close_after` nightlies had a confirmed
wrong result at baseline (`Night.compiler_wrong.trend`, through `closing`), its body rewritten
when it changes, closed with a comment when they stop and reopened, never duplicated, when one
returns. Found again by its own marker; its people are `[tracker.cc]`'s entry of its name and
the cc routes matched against its groups' signatures (analysed into `CompilerWrongNight.cc`)."""

from __future__ import annotations

from triagebot.config import TrackerSettings
from triagebot.report.markers import COMPILER_WRONG_MARKER
from triagebot.report.wrong_issue import (
    close_comment,
    compiler_wrong_body,
    compiler_wrong_title,
    reopen_comment,
)
from triagebot.results import COMPILER_WRONG_ISSUE, Night, TrackedIssue, TrackerNotice
from triagebot.tracker import closing


def compiler_wrong_issue(night: Night, settings: TrackerSettings, labels: list[str]) -> TrackedIssue:
    """The issue as it should be after tonight (see the module docstring), with `labels`
    (`desired.issue_labels` of its groups, as a flag issue's)."""
    wrong = night.compiler_wrong
    close, close_body = close_comment(night, closing.clean_streak(wrong.trend))
    reopen, reopen_body = reopen_comment(night)
    return TrackedIssue(
        flag=COMPILER_WRONG_ISSUE,
        marker=COMPILER_WRONG_MARKER,
        title=compiler_wrong_title(night),
        body=compiler_wrong_body(night),
        labels=labels,
        open=closing.should_be_open(wrong.trend, settings.close_after, wrong.recurrence),
        notices=[
            TrackerNotice(kind="close", marker=close, body=close_body),
            TrackerNotice(kind="reopen", marker=reopen, body=reopen_body),
        ],
    )
