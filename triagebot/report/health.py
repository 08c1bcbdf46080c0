"""The corpus's health as a tracking issue of its own, and the notice of a baseline regression.

Both render `Night.health` (computed once by `analysis.night`, the record summary.md's health
section renders too): `health_body` the issue body, first line `markers.HEALTH_MARKER`, within
GitHub's limit (it sheds detail on `fit.ISSUE_LADDER`); `baseline_regression_notice` the comment
for the models whose baseline graph count rose since the night's previous nightly, with the
commit range (None when there are none or both nightlies are one build). The notice goes to the
health issue when `[tracker] health_issue` is on; the report folder always has it.
"""

from __future__ import annotations

from triagebot.errors import RenderError
from triagebot.report import markers
from triagebot.report.fit import GITHUB_LIMIT, ISSUE_LADDER, bounded, fit
from triagebot.report.render import render
from triagebot.results import BASELINE, Night

REGRESSION_FILE = "regression-baseline.md"
"""The report folder's copy of the baseline-regression notice."""


def health_body(night: Night, *, limit: int = GITHUB_LIMIT) -> str:
    """The health issue's body (see the module docstring)."""
    if night.health is None:
        raise RenderError(f"nightly {night.key} was analysed without the corpus's health")
    text, _ = fit(
        lambda detail: render(
            "health.md.j2", marker=markers.HEALTH_MARKER, night=night, health=night.health, detail=detail
        ),
        ISSUE_LADDER,
        limit,
        "the health issue body",
    )
    return text


def baseline_regression_notice(night: Night) -> str | None:
    """A comment for the models that compile to more graphs at baseline than the night before."""
    health = night.health
    if health is None or health.same_build or not health.baseline_regressions:
        return None
    return bounded(
        "baseline-regression.md.j2",
        marker=markers.notice_marker("regression", BASELINE, night.key),
        health=health,
    )
