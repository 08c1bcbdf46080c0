"""What a night leaves behind: the diff and summary files, the dashboard site, the step summary
and step outputs of the workflow, and the lines printed, each saying where a product landed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from triagebot.analysis.history import StoredHistory, read_history
from triagebot.config import Config
from triagebot.errors import PipelineError, SiteError, TriagebotError
from triagebot.pipeline.analysing import newest_night
from triagebot.report import run_summary
from triagebot.report.site import SiteBuild, write_site
from triagebot.results import Environment, Night
from triagebot.store import Store, StoreError
from triagebot.tracker.actions import step_summary, write_outputs


@dataclass
class RunReport:
    """Where everything went; `swept` is False when the build was already in the store."""

    build: Environment
    swept: bool
    existing_key: str | None = None  # the stored snapshot of this build, when skipped
    snapshot_key: str | None = None
    snapshot_file: Path | None = None  # the copy under `out`
    stored_file: Path | None = None  # where the store keeps it (local folder or data checkout)
    stored_as_news: bool = True
    previous_key: str | None = None
    diff_file: Path | None = None
    reports_dir: Path | None = None
    issues_dir: Path | None = None
    summary_file: Path | None = None
    site_dir: Path | None = None  # the dashboard site, rebuilt from the store
    published: str = ""  # one line: dry run, applied N writes, held, ...
    lines: list[str] = field(default_factory=list)


def summary_markdown(report: RunReport, night: Night | None) -> str:
    """The step summary: what this run did, then the night's summary."""
    return run_summary(
        report.build,
        night,
        existing_key=report.existing_key,
        stored_as_news=report.stored_as_news,
        published=report.published,
    )


def write_diff(report: RunReport, night: Night, out: Path) -> None:
    """The night's diff as `out`/diff.json, when it has one."""
    if night.diff is None:
        return
    report.previous_key = night.previous_key
    report.diff_file = out / "diff.json"
    report.diff_file.write_text(night.diff.model_dump_json(indent=1) + "\n", encoding="utf-8")


def finish(report: RunReport, night: Night, config: Config, out: Path, say: Callable[[str], None]) -> None:
    """The summary file and the step summary, the step outputs, and the lines that say where
    everything went."""
    summary = summary_markdown(report, night)
    report.summary_file = out / "summary.md"
    report.summary_file.write_text(summary + "\n", encoding="utf-8")
    step_summary(summary)
    write_outputs(
        {
            "swept": "true",
            "snapshot": str(report.snapshot_file),
            "summary": str(report.summary_file),
            "diff": str(report.diff_file or ""),
            "report": str(report.reports_dir),
            "site": str(report.site_dir or ""),
            "site_publish": config.dashboard.publish if report.site_dir else "none",
            "site_branch": config.dashboard.branch,
        }
    )
    report.lines = [
        f"snapshot {night.key}: {report.stored_file or 'stored'} (copy: {report.snapshot_file})",
        f"diff against {report.previous_key}: {report.diff_file}"
        if report.previous_key
        else "diff: none (first snapshot)",
        f"reports: {report.reports_dir}",
        f"issues: {report.issues_dir} ({report.published})",
        f"summary: {report.summary_file}",
    ]
    if report.site_dir is not None:
        report.lines.append(f"site: {report.site_dir / 'index.html'}")
    for line in report.lines:
        say(line)


@dataclass
class SiteStage:
    """The dashboard site in `run`: written from the night as published, from what earlier
    nights stored (read with the site's folder as its cache, by `readers` processes). A failure is
    a `PipelineError` that says the snapshot is stored and published (`site_failed`)."""

    readers: int | None = None

    def write(self, store: Store, stored: StoredHistory, night: Night, config: Config, out: Path) -> Path:
        silent_days = config.tracker.stale_after_days
        try:
            built = write_site(
                stored, newest_night(store, config, stored, night), out, silent_after_days=silent_days
            )
        except (SiteError, StoreError, PipelineError) as error:
            raise site_failed(error, out) from None
        assert built.out is not None
        return built.out


def site_failed(error: TriagebotError, out: Path) -> PipelineError:
    """Why the site of `run` could not be built into `out`, and how to build it again."""
    return PipelineError(
        f"{error} (the snapshot is stored and published; `triagebot site --out {out}` builds it again)"
    )


def build_site(
    store: Store, out: Path, config: Config, *, readers: int | None = None, say: Callable[[str], None] = print
) -> SiteBuild:
    """`triagebot site`: the dashboard of every stored nightly built into `out`, the newest
    rendered from its night."""
    stored = read_history(store, out, readers=readers, say=say)
    if stored.newest is None:
        place = f"the store at {store.location}" if store.location else "the store"
        raise SiteError(f"no snapshot in {place}: nothing to build a site from")
    silent_days = config.tracker.stale_after_days
    return write_site(stored, newest_night(store, config, stored), out, silent_after_days=silent_days)
