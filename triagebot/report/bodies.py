"""Renderings of one night: tracking-issue bodies, notices, summaries, and the report folder.

Everything here reads a `results.Night` (built once by `analysis.night`) and renders
templates/; nothing analyses again (see the package docstring).
"""

from __future__ import annotations

from pathlib import Path

from triagebot.report.fit import FULL, GITHUB_LIMIT, ISSUE_LADDER, Detail, bounded, fit
from triagebot.report.health import REGRESSION_FILE, baseline_regression_notice
from triagebot.report.markers import NoticeKind, flag_marker, notice_marker
from triagebot.report.render import render
from triagebot.report.wrong_issue import COMPILER_WRONG_FILE, compiler_wrong_body
from triagebot.results import Environment, FirstBuild, FlagNight, Night


def issue_file(flag: str) -> str:
    """The file of `flag`'s issue body in a folder (the report folder, a dry run's)."""
    return f"issue-{flag}.md"


def write_files(out_dir: str | Path, files: dict[str, str]) -> list[Path]:
    """Write each text of `files` (name -> text) into `out_dir` as it is; the paths written.
    Issue bodies go through here, as `issue_file`, byte for byte as published: a reader of a
    folder expects the issue's body, not a rendering of it."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def full_name(flag: str) -> str:
    """The report folder's file with `flag`'s complete body, when the published one is shortened."""
    return f"issue-{flag}.full.md"


def _issue_context(night: Night, flag: str) -> dict:
    if flag not in night.flags:
        raise KeyError(f"nightly {night.key} has no flag {flag!r} (flags: {', '.join(night.flags)})")
    state = night.flags[flag]
    return dict(
        marker=flag_marker(flag),
        night=night,
        flag=state,
        patch=", ".join(f"{name}={value!r}" for name, value in state.stats.patch.items()),
        rows={row.model: row for row in state.effects},
        repros={
            repro.signature: repro
            for repro in night.snapshot.reproductions
            if repro.flag == flag and repro.verified and repro.backend is None
        },
        ladder_repros={
            (repro.backend, repro.signature): repro
            for repro in night.snapshot.reproductions
            if repro.flag == flag and repro.verified and repro.backend is not None
        },
        full_name=full_name(flag),
    )


def issue_rendering(night: Night, flag: str, *, limit: int = GITHUB_LIMIT) -> tuple[str, Detail]:
    """The body of `flag`'s tracking issue within `limit`, and the detail it could keep."""
    context = _issue_context(night, flag)
    return fit(
        lambda detail: render("issue.md.j2", detail=detail, **context),
        ISSUE_LADDER,
        limit,
        f"the {flag} issue body",
    )


def issue_body(night: Night, flag: str, *, limit: int = GITHUB_LIMIT) -> str:
    """The tracking-issue body of `flag` (see the module docstring)."""
    return issue_rendering(night, flag, limit=limit)[0]


def _notice(kind: NoticeKind, night: Night, flag: str) -> str | None:
    state = night.flags.get(flag)
    change = state.diff if state is not None else None
    if state is None or night.diff is None or night.diff.same_build or change is None:
        return None
    news = state.news
    if news is None:
        changes, builds = (change.fixed, []) if kind == "fixed" else (change.newly_crashing, [])
    else:
        changes, builds = (news.fixed, news.fixed_builds) if kind == "fixed" else (news.new, news.new_builds)
    wrong = change.newly_wrong if kind == "regression" else []
    if not changes and not wrong:
        return None
    return bounded(
        f"{kind}.md.j2",
        marker=notice_marker(kind, flag, night.key),
        flag=flag,
        changes=changes,
        wrong=wrong,
        old_key=night.diff.old_key,
        new_key=night.diff.new_key,
        compare_url=night.diff.compare_url,
        builds=[bisected(build, state) for build in builds] if kind == "regression" else builds,
        dashboard_url=night.dashboard_url,
    )


def bisected(build: FirstBuild, state: FlagNight) -> FirstBuild:
    """`build` with the first bad nightly a conclusive bisection of its crash named, where the
    night's triage holds one."""
    for group in state.stats.crash_groups:
        triage = state.triage_of(group) if group.signature == build.signature else None
        bisection = triage.bisection if triage is not None else None
        if bisection is not None and bisection.conclusive and bisection.first_bad:
            return build.model_copy(
                update={"bisected": bisection.first_bad, "compare_url": bisection.compare_url}
            )
    return build


def fixed_notice(night: Night, flag: str) -> str | None:
    """A comment listing the models whose crash under `flag` is over (`FlagNight.news`), each
    range naming the first good build, or None."""
    return _notice("fixed", night, flag)


def regression_notice(night: Night, flag: str) -> str | None:
    """A comment listing the models that newly crash (`FlagNight.news`: not a crash returning
    within its window) or newly give a wrong result under `flag`, each range naming the first
    bad build (the bisection's, when one answered), or None."""
    return _notice("regression", night, flag)


def nightly_summary(night: Night) -> str:
    """Every flag's counts and what changed since the previous nightly (summary.md)."""
    return render("summary.md.j2", night=night, detail=Detail(rows=10))


def run_summary(
    build: Environment,
    night: Night | None,
    *,
    existing_key: str | None = None,
    stored_as_news: bool = True,
    published: str = "",
) -> str:
    """The step summary of `triagebot run`: what it did, then the night's summary."""
    return render(
        "run-summary.md.j2",
        build=build,
        night=night,
        existing_key=existing_key,
        stored_as_news=stored_as_news,
        published=published,
        detail=Detail(rows=10),
    )


def write_report(night: Night, out_dir: str | Path) -> list[Path]:
    """Write into `out_dir`: issue-FLAG.md (the body as published), issue-FLAG.full.md (every
    table, only when the published body is shortened), fixed-FLAG.md / regression-FLAG.md (when
    any), regression-baseline.md (models whose baseline graph count rose, when any),
    compiler-wrong-results.md (the body of the issue of wrong results at the default config, when
    there are any), summary.md
    and night.json (the record they were all rendered from); returns the paths written. The
    dashboard is the site (`triagebot site`), which summary.md points to."""
    files: dict[str, str] = {}
    for flag in night.flags:
        body, detail = issue_rendering(night, flag)
        files[issue_file(flag)] = body
        if detail != FULL:
            files[full_name(flag)] = render("issue.md.j2", detail=FULL, **_issue_context(night, flag))
        for name, notice in (
            ("fixed", fixed_notice(night, flag)),
            ("regression", regression_notice(night, flag)),
        ):
            if notice is not None:
                files[f"{name}-{flag}.md"] = notice
    regressed = baseline_regression_notice(night)
    if regressed is not None:
        files[REGRESSION_FILE] = regressed
    if night.compiler_wrong.findings:
        files[COMPILER_WRONG_FILE] = compiler_wrong_body(night)
    files["summary.md"] = nightly_summary(night)
    files["night.json"] = night.model_dump_json(indent=1) + "\n"
    return write_files(out_dir, files)
