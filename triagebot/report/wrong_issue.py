"""The tracking issue of torch.compile's wrong results at the default config: its body and its
close and reopen comments, rendering `Night.compiler_wrong` (computed once by
`analysis.compiler_wrong`) in `first_news`' words. First line `markers.COMPILER_WRONG_MARKER`;
within GitHub's limit, shedding detail on `fit.ISSUE_LADDER` as every body does."""

from __future__ import annotations

from triagebot.report import markers
from triagebot.report.fit import GITHUB_LIMIT, ISSUE_LADDER, bounded, fit
from triagebot.report.render import render
from triagebot.results import COMPILER_WRONG_ISSUE, Night

COMPILER_WRONG_FILE = "compiler-wrong-results.md"
"""The report folder's copy of the issue's body (written when the night has any)."""


def compiler_wrong_body(night: Night, *, limit: int = GITHUB_LIMIT) -> str:
    """The issue's body (see the module docstring)."""
    text, _ = fit(
        lambda detail: render(
            "compiler-wrong-issue.md.j2",
            marker=markers.COMPILER_WRONG_MARKER,
            night=night,
            wrong=night.compiler_wrong,
            detail=detail,
        ),
        ISSUE_LADDER,
        limit,
        "the wrong-results issue body",
    )
    return text


def compiler_wrong_title(night: Night) -> str:
    """The issue's title: what it tracks and tonight's count."""
    count = len(night.compiler_wrong.findings)
    models = f"{count} model" if count == 1 else f"{count} models"
    return f"[triagebot] torch.compile gives wrong results at the default config: {models} on {night.key}"


def close_comment(night: Night, streak: int) -> tuple[str, str]:
    """(marker, body) of the comment that closes the issue after `streak` clean nightlies."""
    marker = markers.state_marker("close", COMPILER_WRONG_ISSUE, night.key)
    return marker, bounded("tracker-wrong-close.md.j2", marker=marker, key=night.key, streak=streak)


def reopen_comment(night: Night) -> tuple[str, str]:
    """(marker, body) of the comment that reopens it, naming tonight's models."""
    marker = markers.state_marker("reopen", COMPILER_WRONG_ISSUE, night.key)
    models = [item.model for item in night.compiler_wrong.findings]
    return marker, bounded(
        "tracker-wrong-reopen.md.j2", marker=marker, key=night.key, models=models, night=night
    )
