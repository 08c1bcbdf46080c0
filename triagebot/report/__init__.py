"""Reports rendered from templates/ (imports results, analysis and jinja2; never torch).

Public API, for the tracker and `triagebot run` / `triagebot report`:

- `issue_body(snapshot, flag, *, history=(), issue_urls={}, cc=[], dashboard_url=None) -> str`:
  the tracking-issue body for one flag. First line `markers.flag_marker(flag)`. Sections: summary,
  environment, methodology, results, models helped, crashing models by signature (with first
  nightly seen and the verified repro from `snapshot.reproductions`), flaky crashes, models with
  more graphs, overlap with other flags (linking `issue_urls[other]`), a Mermaid trend over
  `history` (older snapshots, oldest first) and this one, analysis, cc. At most `BODY_LIMIT`
  characters: long tables fold into <details>, then whole sections are cut with a link to
  `dashboard_url`.
- `fixed_notice(diff, flag) -> str | None` and `regression_notice(diff, flag) -> str | None`:
  comments for models that stopped / started crashing, None when there are none or the two
  snapshots are one build. First line `markers.notice_marker(kind, flag, diff.new_key)`.
- `nightly_summary(snapshot, diff=None, history=()) -> str`: Markdown for $GITHUB_STEP_SUMMARY,
  the corpus's health last.
- `health_body(snapshot, history=(), dashboard_url=None) -> str`: the health tracking issue's
  body (first line `markers.HEALTH_MARKER`); `baseline_regression_notice(diff) -> str | None`: the
  comment for models whose baseline graph count rose (`health.py`).
- `dashboard_html(snapshot, history=(), issue_urls={}) -> str`: one static HTML file.
- `write_report(snapshot, out_dir, previous=None, history=(), ...) -> list[Path]`: all of them.
- `repro`: `repro_script`, `verify`, `reproduce` (see that module); `markers`; `safety`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from triagebot.analysis import analyse, classify, corpus_health, trend
from triagebot.analysis import diff as diff_snapshots
from triagebot.report import markers, safety
from triagebot.report.health import baseline_regression_notice, health_body
from triagebot.report.render import render
from triagebot.results import Effect, ModelChange, Snapshot, SnapshotDiff

BODY_LIMIT = 65_536
# Leave room for the tracker to add a line or two without crossing GitHub's limit.
BODY_BUDGET = BODY_LIMIT - 1_536
FOLD_AT = 10
_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9_.-]+)?$")


def _cc(people: Sequence[str]) -> list[str]:
    """Configured logins (or org/team) only: anything else in the config would be a stray ping."""
    bad = [person for person in people if not _LOGIN.match(person.lstrip("@"))]
    if bad:
        raise ValueError(f"cc entry {bad[0]!r} is not a GitHub login")
    return [person.lstrip("@") for person in people]


def _truncate(body: str, limit: int, dashboard_url: str | None) -> str:
    """Cut whole sections from the end until the body fits, and say where the rest is."""
    where = f" See the full report: {dashboard_url}" if dashboard_url else ""
    note = f"\n\n_Report truncated to fit GitHub's {BODY_LIMIT}-character limit._{where}\n"
    cut = body[: limit - len(note)]
    boundary = cut.rfind("\n## ")
    if boundary <= 0:
        boundary = cut.rfind("\n\n")
    return cut[: max(boundary, 0)].rstrip() + note


def issue_body(
    snapshot: Snapshot,
    flag: str,
    *,
    history: Sequence[Snapshot] = (),
    issue_urls: dict[str, str] | None = None,
    cc: Sequence[str] = (),
    dashboard_url: str | None = None,
    limit: int = BODY_BUDGET,
) -> str:
    """The tracking-issue body of `flag` (see the module docstring)."""
    analysis = analyse(snapshot, history)
    stats = analysis.flags[flag]
    rows = [row for row in analysis.effects if row.flag == flag]
    crashes = stats.counts.get(Effect.crashes, 0)
    helps = stats.counts.get(Effect.reduces_graphs, 0)
    repros = {
        repro.signature: repro
        for repro in snapshot.reproductions
        if repro.flag == flag and repro.verified and repro.backend is None
    }
    stack_repros = {
        (repro.backend, repro.signature): repro
        for repro in snapshot.reproductions
        if repro.flag == flag and repro.verified and repro.backend is not None
    }
    context = dict(
        marker=markers.flag_marker(flag),
        key=snapshot.key,
        stats=stats,
        env=snapshot.environment,
        corpus=snapshot.corpus,
        patch=", ".join(f"{name}={value!r}" for name, value in stats.patch.items()),
        crashes=crashes,
        helps=helps,
        crash_pct=stats.percentages.get(Effect.crashes, 0.0),
        help_pct=stats.percentages.get(Effect.reduces_graphs, 0.0),
        effect_rows=[(effect.value, count) for effect, count in stats.counts.items()],
        helped=sorted(
            (row for row in rows if row.effect == Effect.reduces_graphs),
            key=lambda row: (row.flag_graphs - (row.baseline_graphs or 0), row.model),
        ),
        increased=[row for row in rows if row.effect == Effect.increases_graphs],
        crash_rows={
            group.signature: [row for row in rows if row.model in group.models]
            for group in stats.crash_groups
        },
        repros=repros,
        stack_repros=stack_repros,
        checks=snapshot.checks,
        wrong_rows={
            group.signature: [row for row in rows if row.model in group.models]
            for group in stats.wrong_result_groups
        },
        issue_urls=issue_urls or {},
        trend=trend([*history, snapshot], flag),
        cc=_cc(cc),
        dashboard_url=dashboard_url,
        fold_at=FOLD_AT,
        fold_helped=len(rows) > 0 and sum(row.effect == Effect.reduces_graphs for row in rows) > FOLD_AT,
    )
    body = render("issue.md.j2", **context)
    if len(body) > limit:
        body = render("issue.md.j2", **{**context, "fold_at": 0, "fold_helped": True})
    return body if len(body) <= limit else _truncate(body, limit, dashboard_url)


def _notice(
    kind: markers.NoticeKind, diff: SnapshotDiff, flag: str, changes: list[ModelChange]
) -> str | None:
    if diff.same_build or not changes:
        return None
    return render(
        f"{kind}.md.j2",
        marker=markers.notice_marker(kind, flag, diff.new_key),
        flag=flag,
        changes=changes,
        old_key=diff.old_key,
        new_key=diff.new_key,
        compare_url=diff.compare_url,
    )


def fixed_notice(diff: SnapshotDiff, flag: str) -> str | None:
    """A comment listing the models that stopped crashing under `flag`, or None."""
    change = diff.flags.get(flag)
    return _notice("fixed", diff, flag, change.fixed if change else [])


def regression_notice(diff: SnapshotDiff, flag: str) -> str | None:
    """A comment listing the models that newly crash under `flag`, or None."""
    change = diff.flags.get(flag)
    return _notice("regression", diff, flag, change.newly_crashing if change else [])


def nightly_summary(
    snapshot: Snapshot, diff: SnapshotDiff | None = None, history: Sequence[Snapshot] = ()
) -> str:
    """`history`: stored snapshots older than `snapshot`, oldest first (the health trend)."""
    analysis = analyse(snapshot)
    flags = list(analysis.flags.values())
    return render(
        "summary.md.j2",
        key=snapshot.key,
        env=snapshot.environment,
        models=len(snapshot.results),
        flags=flags,
        diff=diff,
        judged="accuracy" in snapshot.checks,
        stacked=any(stats.stack or stats.recompiles for stats in flags),
        health=corpus_health(snapshot, history),
    )


def dashboard_html(
    snapshot: Snapshot, history: Sequence[Snapshot] = (), issue_urls: dict[str, str] | None = None
) -> str:
    analysis = analyse(snapshot, history)
    return render(
        "dashboard.html.j2",
        key=snapshot.key,
        env=snapshot.environment,
        flags=list(analysis.flags.values()),
        effects=classify(snapshot),
        trends={flag: trend([*history, snapshot], flag) for flag in snapshot.flags},
        issue_urls=issue_urls or {},
    )


def write_report(
    snapshot: Snapshot,
    out_dir: str | Path,
    *,
    previous: Snapshot | None = None,
    history: Sequence[Snapshot] = (),
    issue_urls: dict[str, str] | None = None,
    cc: dict[str, list[str]] | None = None,
    dashboard_url: str | None = None,
) -> list[Path]:
    """Write issue-<flag>.md, fixed-<flag>.md / regression-<flag>.md (when any), summary.md and
    dashboard.html into `out_dir`; returns the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    change = diff_snapshots(previous, snapshot) if previous is not None else None
    files: dict[str, str] = {}
    for flag in snapshot.flags:
        files[f"issue-{flag}.md"] = issue_body(
            snapshot,
            flag,
            history=history,
            issue_urls=issue_urls,
            cc=(cc or {}).get(flag, []),
            dashboard_url=dashboard_url,
        )
        if change is not None:
            for name, notice in (
                ("fixed", fixed_notice(change, flag)),
                ("regression", regression_notice(change, flag)),
            ):
                if notice is not None:
                    files[f"{name}-{flag}.md"] = notice
    files["summary.md"] = nightly_summary(snapshot, change, history)
    regressed = baseline_regression_notice(change) if change is not None else None
    if regressed is not None:
        files["regression-baseline.md"] = regressed
    files["dashboard.html"] = dashboard_html(snapshot, history, issue_urls)
    written = []
    for name, text in files.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


__all__ = [
    "BODY_LIMIT",
    "baseline_regression_notice",
    "dashboard_html",
    "fixed_notice",
    "health_body",
    "issue_body",
    "markers",
    "nightly_summary",
    "regression_notice",
    "safety",
    "write_report",
]
