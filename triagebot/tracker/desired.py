"""The desired state of every tracking issue, derived from one night (and so from the store alone).

For each flag of the night: the title (from `tracker.title`), the body (the report package's
rendering of the night, starting with the flag marker), the labels (with `tracker.triage_labels`,
those the PT2 triage rubric suggests for its groups too), open or closed (`closing`,
reading the flag's trend and how its crashes recurred: the history the night was built with;
a confirmed wrong result keeps an issue open as a confirmed crash does), and the notices it
owes (`notices`). With `[tracker] health_issue`, one more issue: the corpus's health
(`Night.health`), which the baseline-regression notice goes to; and the issue of each flag no
longer swept, closed once with a comment saying why (`retired_issues`). Nothing here analyses:
cc lists, diffs, trends and the health are the night's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from triagebot import report
from triagebot.config import TrackerSettings
from triagebot.report.markers import HEALTH_MARKER, flag_marker, state_marker
from triagebot.report.words import title_values
from triagebot.results import (
    COMPILER_WRONG_ISSUE,
    HEALTH_ISSUE,
    FlagFigures,
    GroupTriage,
    Night,
    TrackedIssue,
    TrackerNotice,
    people_only,
)
from triagebot.tracker import closing
from triagebot.tracker.compiler_wrong import compiler_wrong_issue
from triagebot.tracker.notices import flag_notices, health_notices
from triagebot.tracker.render import render


def title_for(settings: TrackerSettings, figures: FlagFigures, key: str) -> str:
    """`tracker.title` filled in from the flag's figures, in the report's words (its
    placeholders were checked when the config was read)."""
    return settings.title.format(**title_values(figures, key).model_dump())


def desired_issues(night: Night, settings: TrackerSettings) -> list[TrackedIssue]:
    """One `TrackedIssue` per flag of `night`, its body exactly the report folder's, and the
    corpus-health issue when `settings.health_issue` is on."""
    desired = [flag_issue(night, flag, settings) for flag in night.flags]
    if settings.health_issue and night.health is not None:
        desired.append(health_issue(night, settings))
    if settings.wrong_results_issue:
        labels = issue_labels(night.compiler_wrong.triage, settings)
        desired.append(compiler_wrong_issue(night, settings, labels))
    return desired


def flag_issue(night: Night, flag: str, settings: TrackerSettings) -> TrackedIssue:
    """`flag`'s tracking issue: open while its trend has confirmed crashes or wrong results."""
    state = night.flags[flag]
    return TrackedIssue(
        flag=flag,
        marker=flag_marker(flag),
        title=title_for(settings, state.figures, night.key),
        body=report.issue_body(night, flag),
        labels=issue_labels(state.triage, settings),
        open=closing.should_be_open(
            closing.failures_per_nightly(state), settings.close_after, state.recurrence
        ),
        notices=flag_notices(night, flag),
    )


def issue_labels(triage: Mapping[str, GroupTriage], settings: TrackerSettings) -> list[str]:
    """An issue's labels (a flag's, or that of wrong results at the default config):
    `tracker.labels`, and with `tracker.triage_labels` the labels the PT2 triage rubric suggests
    for its failure groups, `triage` (never `triaged`). Labels are only ever added."""
    labels = list(settings.labels)
    if settings.triage_labels:
        labels += [name for group in triage.values() for name in group.label_names]
    return [label for label in dict.fromkeys(labels) if not people_only(label)]


def retired_issues(night: Night, known: Sequence[str]) -> list[TrackedIssue]:
    """The issues of the `known` flags (those the store remembers an issue for) that `night` no
    longer sweeps: closed, with one comment saying why (posted only with the close, so once; a
    flag swept again is planned as any flag, and reopened when it fails)."""
    kinds = (HEALTH_ISSUE, COMPILER_WRONG_ISSUE)
    retired = [flag for flag in known if flag and flag not in kinds and flag not in night.flags]
    return [retired_issue(flag, night.key) for flag in retired]


def retired_issue(flag: str, key: str) -> TrackedIssue:
    marker = flag_marker(flag)
    close = state_marker("close", flag, key)
    return TrackedIssue(
        flag=flag,
        marker=marker,
        title=f"[triagebot] {flag}: no longer swept",
        body=render("tracker-retired.md.j2", marker=marker, flag=flag),
        open=False,
        notices=[
            TrackerNotice(
                kind="close",
                marker=close,
                body=render("tracker-retired-close.md.j2", marker=close, flag=flag, key=key),
            )
        ],
    )


HEALTH = HEALTH_ISSUE


def health_issue(night: Night, settings: TrackerSettings) -> TrackedIssue:
    """The corpus-health tracking issue: the night's health, always open, and the notice for the
    models whose baseline graph count rose since the previous nightly."""
    assert night.health is not None
    overall = night.health.overall
    return TrackedIssue(
        flag=HEALTH,
        marker=HEALTH_MARKER,
        title=(
            f"[triagebot] Dynamo on the {_corpora(night.snapshot.corpus.suites())}: {overall.one_graph} of "
            f"{overall.models} models compile to one graph"
        ),
        body=report.health_body(night),
        labels=list(settings.labels),
        open=True,
        notices=health_notices(night),
    )


def _corpora(suites: list[str]) -> str:
    """ "the transformers corpus", or "the transformers, diffusers and timm corpora"."""
    if len(suites) == 1:
        return f"{suites[0]} corpus"
    return f"{', '.join(suites[:-1])} and {suites[-1]} corpora"
