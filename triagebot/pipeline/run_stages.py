"""`triagebot run`: one night's work, from the installed torch to the tracking issues.

detect the build -> skip it if the store has it -> sweep (crashes confirmed) -> store (and,
when it will be published, record it as pending; the night's bisections too, when given) ->
read what earlier nights stored (with the site's folder as its cache) -> the night
(`night_of`: analysed once, against the previous stored build) -> publish the nights an
earlier run stored but could not publish, then this one (a dry run without a token;
`publishing`) -> render the report folder and the site from the night as published ->
summary. A build the store has already is not swept again; a night of it still owed to GitHub
is published.

Each stage is a public function of its own package or module (`inputs`, `sweeping`,
`analysing`, `outputs`); `run` only orders them, and a test may replace any of the stages.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from triagebot.analysis.history import StoredHistory, read_history
from triagebot.config import Config
from triagebot.errors import PipelineError, TrackerError
from triagebot.pipeline.analysing import night_of
from triagebot.pipeline.inputs import SweepNeed, installed_build, read_input, sweep_need
from triagebot.pipeline.outputs import (
    RunReport,
    SiteStage,
    finish,
    site_failed,
    summary_markdown,
    write_diff,
)
from triagebot.pipeline.publishing import (
    Publisher,
    owe,
    owed,
    owed_outputs,
    publish_owed,
    publish_recorded,
    publish_under_lock,
    writes_github,
)
from triagebot.pipeline.sweeping import sweep_configured, sweep_flags, with_stored_flags
from triagebot.report import write_report
from triagebot.results import Environment, Night, Snapshot, snapshot_key
from triagebot.store import Store, StoreError, keep_bisections_in, open_store, write_snapshot
from triagebot.tracker.actions import step_summary, write_outputs


@dataclass
class RunOptions:
    """What the command line adds to, or overrides in, triagebot.toml."""

    out: Path | None = None  # default .triagebot/runs/<key>
    token: str | None = None
    dry_run: bool = False
    force: bool = False
    snapshot: Path | None = None  # an already swept snapshot (or sweep stream): store and publish it
    check_only: bool = False  # say whether the installed build needs a sweep, do nothing else
    bisections: Path | None = None  # a folder of bisections to keep in the store before the night

    def out_for(self, key: str) -> Path:
        """Where the run of nightly `key` writes: `out`, or `.triagebot/runs/<key>`."""
        return self.out or Path(".triagebot") / "runs" / key


# The stages, as functions of other packages; a test may replace any of them (and the
# publisher, `publishing.Publisher`).
Sweeper = Callable[[Config, Path, bool], Snapshot]  # config, work folder, resume
Renderer = Callable[[Night, Path], Path]  # the night as published, the report folder


def render_report(night: Night, out: Path) -> Path:
    """The report folder: every rendering of `night` (see `report.write_report`)."""
    write_report(night, out)
    return out


def default_stages(config: Config, store: Store, models: list[str] | None = None) -> dict[str, object]:
    """The real sweep, renderer, publisher and site, for `run`."""

    def sweeper(settings: Config, work: Path, resume: bool) -> Snapshot:
        return sweep_configured(settings, models, work, store, resume=resume)

    publisher = functools.partial(publish_under_lock, store=store)  # the store remembers the issues
    return {"sweeper": sweeper, "renderer": render_report, "publisher": publisher, "site": SiteStage()}


def run(
    config: Config,
    options: RunOptions,
    *,
    sweeper: Sweeper,
    renderer: Renderer,
    publisher: Publisher,
    site: SiteStage | None = None,
    store: Store | None = None,
    build: Environment | None = None,
    say: Callable[[str], None] = print,
) -> RunReport:
    """One night's work; see the module docstring. Returns where everything went."""
    store = store if store is not None else open_store(config.store)
    scheme = config.store.key
    given = read_input(options.snapshot, scheme) if options.snapshot is not None else None
    if build is None:
        build = given.environment if given is not None else installed_build()
    need = sweep_need(store, build, config, force=options.force)
    if options.check_only:
        return _check(build, need, owed(store, config), say)
    writes = writes_github(config, options.token, options.dry_run)
    if not need.sweep and given is None:
        return _skip(store, build, need, config, options, writes, publisher, say)
    if writes:  # refused before a sweep, not after it
        config.check_publishable(given.corpus.suites() if given is not None else config.sweep.corpus)

    out = options.out_for(given.key if given else snapshot_key(build, scheme))
    out.mkdir(parents=True, exist_ok=True)
    if given is not None:
        snapshot = with_stored_flags(store, given)
    else:
        snapshot = _sweep(config, options, need, store, out, sweeper, say)
    # Owed before it is stored: a record of a night never stored owes nothing (the next run
    # sweeps it again), but a night stored without its record would never be published.
    owe(store, config, writes, snapshot.key)  # until its writes are done
    report = _store(store, snapshot, out, config)
    if options.bisections is not None:  # the night's own bisections: its groups' entries show them
        kept = keep_bisections_in(store, options.bisections)
        say(f"bisections: {len(kept)} kept from {options.bisections}")
    # What earlier nights stored, read once with the site's folder as its cache, so that every
    # stored nightly is read and classified once; a site that cannot be built never holds back
    # the issues, nor the summary: the run fails with it at the end.
    stored, site_failure = _history(site, store, out / "site")
    night = night_of(snapshot, store, config, stored=stored)
    write_diff(report, night, out)
    report.issues_dir, report.reports_dir = out / "issues", out / "report"
    night, incomplete = _publish(report, night, config, options.token, not writes, publisher, store)
    # The report folder is the night as published (its bodies are the issues' bodies byte for
    # byte), and is written even when publishing failed, for the failure to be read.
    renderer(night, report.reports_dir)
    if site is not None and stored is not None:
        try:  # the night as published: its flag pages link the tracking issues
            report.site_dir = site.write(store, stored, night, config, out / "site")
        except PipelineError as error:
            site_failure = error
    finish(report, night, config, out, say)
    if incomplete is not None:
        raise incomplete
    if site_failure is not None:
        raise site_failure
    return report


def _check(
    build: Environment, need: SweepNeed, unpublished: list[str], say: Callable[[str], None]
) -> RunReport:
    """`--check`: whether the installed build needs a sweep, as step outputs and as the same
    `name=value` lines on stdout (`sweep=true|false`, the flags to sweep, the reason), and
    `publish=true` and `owed` when a stored night still waits to be published."""
    outputs = need.outputs() | owed_outputs(unpublished)
    write_outputs(outputs)
    for name, value in outputs.items():
        say(f"{name}={value}")
    if unpublished:
        say(f"stored but not published yet: {', '.join(unpublished)} (the next run publishes them)")
    return RunReport(build=build, swept=False, existing_key=need.existing)


def _skip(
    store: Store,
    build: Environment,
    need: SweepNeed,
    config: Config,
    options: RunOptions,
    writes: bool,
    publisher: Publisher,
    say: Callable[[str], None],
) -> RunReport:
    """A build the store has: nothing to sweep. A night an earlier run stored but could not
    publish is published now; the summary and outputs say what was done."""
    assert need.existing is not None
    report = RunReport(build=build, swept=False, existing_key=need.existing)
    where = store.path_of(need.existing)
    owing = writes and owed(store, config)
    say(
        f"{need.reason}; in {where or 'the store'}: "
        + ("publishing what is owed to GitHub" if owing else "nothing to do")
    )
    out = options.out_for(need.existing) / "owed"
    try:
        published = publish_owed(
            store, config, options.token, options.dry_run, out, publisher=publisher, say=say
        )
        report.published = "; ".join(published)
    except TrackerError as error:
        report.published = f"failed: {error}"
        raise
    finally:
        step_summary(summary_markdown(report, None))
        write_outputs({"swept": "false", "snapshot": str(where or "")})
    return report


def _sweep(
    config: Config,
    options: RunOptions,
    need: SweepNeed,
    store: Store,
    out: Path,
    sweeper: Sweeper,
    say: Callable[[str], None],
) -> Snapshot:
    """Sweep what the store lacks, saying so first: the build, or only the flags its stored
    night lacks (`sweep_flags`)."""
    if need.flags and need.existing is not None:
        say(f"{need.reason} on the {config.sweep.corpus_name!r} models of that snapshot")
        return sweep_flags(store.get(need.existing), config, out, sweeper)
    say(f"{need.reason}: sweeping corpus {config.sweep.corpus_name!r} under {len(config.flags)} flags")
    # A sweep of this build interrupted on this machine is finished rather than started over;
    # --force starts over.
    return sweeper(config, out, not options.force)


def _store(store: Store, snapshot: Snapshot, out: Path, config: Config) -> RunReport:
    """Store `snapshot`, with a copy under `out` written first, so that a snapshot the store
    refuses is not lost (a trial night of the build is replaced by `config`'s night); the report
    says where both went."""
    report = RunReport(build=snapshot.environment, swept=True, snapshot_key=snapshot.key)
    report.snapshot_file = write_snapshot(snapshot, out / "snapshot.json")
    try:
        report.stored_as_news = store.put(snapshot, config)
    except StoreError as error:
        raise PipelineError(
            f"cannot store snapshot {snapshot.key}: {error}; it is kept in {report.snapshot_file}"
        ) from None
    report.stored_file = store.path_of(snapshot.key)
    return report


def _history(
    site: SiteStage | None, store: Store, folder: Path
) -> tuple[StoredHistory | None, PipelineError | None]:
    """What earlier nights stored, read with the site's `folder` as its cache (its data files);
    None without a site (the night then reads the store). A failure to read it holds back only
    the site."""
    if site is None:
        return None, None
    try:
        return read_history(store, folder, readers=site.readers), None
    except StoreError as error:
        return None, site_failed(error, folder)


def _publish(
    report: RunReport,
    night: Night,
    config: Config,
    token: str | None,
    dry_run: bool,
    publisher: Publisher,
    store: Store,
) -> tuple[Night, TrackerError | None]:
    """Publish the nights an earlier run could not (`publish_owed`), then `night`, into
    `report.issues_dir` (a dry run without a token or a repo): the night as published, and the
    error when publishing failed (said in the summary too; the run then fails with it)."""
    assert report.issues_dir is not None
    owed_out = report.issues_dir / "owed"
    try:
        earlier = publish_owed(store, config, token, dry_run, owed_out, publisher=publisher, before=night.key)
        line, night = publish_recorded(
            night, config, token, dry_run, report.issues_dir, publisher=publisher, store=store
        )
    except TrackerError as error:
        report.published = f"failed: {error}"
        return night, error
    report.published = "; ".join([*earlier, line])
    return night, None
