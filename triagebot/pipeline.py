"""`triagebot run`: one night's work, from the installed torch to the tracking issues.

detect the build -> skip it if the store has it -> sweep (crashes confirmed) -> store -> read
the store's compact data for the site -> the night (`night_of`: analysed once, against the
previous stored build, its history from that data) -> publish (a dry run without a token) ->
render the report folder and the site from the night as published -> summary.

Each stage is a public function of its own package; this module only orders them and says
where every product landed. `night_of` is the one way every command (`run`, `report`,
`publish`) turns a snapshot and the store into the night it renders. torch is never imported
here: the build is read by a child process, so that the sweep's warm parent stays the only
process that holds torch.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from triagebot.config import FLAG_NAME, Config, StoreSettings
from triagebot.errors import Interrupted, PipelineError, SiteError, TrackerError, TriagebotError
from triagebot.results import BASELINE, Environment, ModelEffect, Night, NightSummary, Snapshot
from triagebot.store import (
    LocalStore,
    Store,
    StoreError,
    check_key,
    key_order,
    open_store,
    read_snapshot,
    write_snapshot,
)

if TYPE_CHECKING:
    from triagebot.report.site import SiteBuild, StoredNights


@dataclass
class RunOptions:
    """What the command line adds to, or overrides in, triagebot.toml."""

    out: Path | None = None  # default .triagebot/runs/<key>
    token: str | None = None
    dry_run: bool = False
    force: bool = False
    snapshot: Path | None = None  # an already swept snapshot (or sweep stream): store and publish it
    check_only: bool = False  # say whether the installed build needs a sweep, do nothing else


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


# The stages, as functions of other packages; a test may replace any of them.
Sweeper = Callable[[Config, Path, bool], Snapshot]  # config, work folder, resume
Renderer = Callable[[Night, Path], Path]  # the night as published, the report folder
# night, config, token, dry run, folder for the plan and bodies -> (one line, the night as published)
Publisher = Callable[[Night, Config, str | None, bool, Path], "tuple[str, Night]"]


def sweep_configured(
    config: Config, models: list[str] | None, work: Path, store: Store, *, resume: bool = False
) -> Snapshot:
    """Sweep what `triagebot.corpus.selection` chooses from `config` (its sample, or the named
    models) with crashes confirmed; the stream goes to `work`/sweep.jsonl and, with `resume`,
    an interrupted one is finished. Ctrl-C says where the finished runs are."""
    from triagebot.sweep import merge
    from triagebot.sweep.command import choose, run_selected

    selected = choose(config, models=models, store=Snapshots(config.store, store))
    stream = work / "sweep.jsonl"
    try:
        result = run_selected(config, selected, stream, resume=resume and stream.exists())
    except KeyboardInterrupt:
        if not stream.exists():
            raise Interrupted("interrupted before the first run finished: nothing to resume") from None
        raise Interrupted(
            f"interrupted: the finished runs are in {stream}; run the same command again to resume"
        ) from None
    return with_reproductions(merge([result.path]), timeout=config.sweep.timeout)


def with_reproductions(snapshot: Snapshot, python: str = sys.executable, timeout: float = 300.0) -> Snapshot:
    """`snapshot` with a reproduction script per confirmed crash group, each run once with
    `python` (which must have torch) to verify that it raises the recorded signature."""
    from triagebot.reproduce import reproduce
    from triagebot.sweep.progress import make_progress

    progress = make_progress()
    try:
        reproductions = reproduce(snapshot, python=python, timeout=timeout, progress=progress)
    finally:
        progress.close()
    return snapshot.model_copy(update={"reproductions": reproductions})


def night_of(
    snapshot: Snapshot,
    store: Store,
    config: Config,
    *,
    previous: Snapshot | None = None,
    stored: Sequence[NightSummary] | None = None,
    kept: tuple[Snapshot, list[ModelEffect]] | None = None,
) -> Night:
    """The night of `snapshot`, analysed once: compared with `previous` (default: the newest
    stored snapshot of another build ordered before it), its history the stored snapshots
    before that one (`analysis.choose_history`), cc lists from `[tracker]`. `run`, `report`,
    `publish` and `site` all build their night here, so that they render and close alike.

    `stored`: the store's nightlies before `snapshot` as summaries (the site's compact data),
    when the caller has them: then only the previous nightly's snapshot is read from the
    store, for the diff, instead of every stored snapshot; not even that one when it is the
    nightly of `kept`, already read whole and classified (the site's last read)."""
    from triagebot.analysis import choose_history, night
    from triagebot.tracker.cc import cc_for

    before_rows = None
    try:
        history, before = choose_history(
            snapshot, store.history(until=snapshot.key) if stored is None else stored, previous
        )
        if before is not None and not isinstance(before, Snapshot):
            if kept is not None and kept[0].key == before.key:
                before, before_rows = kept
            else:
                before = store.get(before.key)  # the one nightly the diff reads whole
    except StoreError as error:
        raise PipelineError(f"cannot read the stored history: {error}") from None
    return night(
        snapshot,
        history,
        before,
        previous_rows=before_rows,
        cc=lambda flag, signatures: cc_for(flag, signatures, config.tracker),
        dashboard_url=config.tracker.dashboard_url,
    )


def render_report(night: Night, out: Path) -> Path:
    """The report folder: every rendering of `night` (see `report.write_report`)."""
    from triagebot.report import write_report

    write_report(night, out)
    return out


def publish_night(
    night: Night, config: Config, token: str | None, dry_run: bool, out: Path, *, store: Store | None = None
) -> tuple[str, Night]:
    """Publish `night` (`tracker.publish_night`): one line saying what was done, and the night
    as published (its issue links filled in). `store` remembers each flag's issue."""
    from triagebot.tracker import publish_night as publish

    published = publish(night, config, token, dry_run, out, store=store)
    return published.line, published.night


_BUILD_PROBE = (
    "import json, importlib.metadata as m, torch;"
    "print(json.dumps({'torch_version': torch.__version__,"
    " 'torch_git_version': getattr(torch.version, 'git_version', '') or ''}))"
)


def installed_build(python: str = sys.executable) -> Environment:
    """The torch this interpreter would sweep: version and git hash, read in a child process."""
    try:
        probe = subprocess.run(
            [python, "-c", _BUILD_PROBE], capture_output=True, text=True, timeout=300, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise PipelineError(f"cannot read the installed torch: {error}") from None
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        raise PipelineError(f"cannot import torch to read its version: {last}")
    return Environment.model_validate(json.loads(probe.stdout))


def already_swept(store: Store, build: Environment) -> str | None:
    """The key of a stored snapshot of `build`: same git hash, or the same version when the hash
    is unknown (a local build)."""
    found = store.find_build(build.torch_git_version)
    if found is not None:
        return found
    if not build.torch_git_version and build.torch_version in store:
        return build.torch_version
    return None


def stored_path(store: Store, key: str) -> Path | None:
    if isinstance(store, LocalStore):
        return store.file(key)
    checkout = getattr(store, "checkout", None)
    return Path(checkout) / "snapshots" / f"{key}.json" if checkout is not None else None


def github_output(values: dict[str, str], path: Path | None = None) -> None:
    """Step outputs for the workflow: `name=value` lines appended to `path`, else to
    `$GITHUB_OUTPUT` when run in GitHub Actions."""
    target = path or os.environ.get("GITHUB_OUTPUT")
    if not target:
        return
    with open(target, "a", encoding="utf-8") as handle:
        for name, value in values.items():
            handle.write(f"{name}={value}\n")


def step_summary(markdown: str) -> None:
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(markdown + "\n")


def summary_markdown(report: RunReport, night: Night | None) -> str:
    """The step summary: what this run did, then the night's summary."""
    from triagebot.report import run_summary

    return run_summary(
        report.build,
        night,
        existing_key=report.existing_key,
        stored_as_news=report.stored_as_news,
        published=report.published,
    )


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
    pre_swept = read_input(options.snapshot) if options.snapshot is not None else None
    if build is None:
        build = pre_swept.environment if pre_swept is not None else installed_build()

    if pre_swept is None:  # a misspelt corpus is an error whether or not this build needs a sweep
        from triagebot.corpus.selection import check_corpus

        check_corpus(config.sweep.corpus)
    existing = None if options.force else already_swept(store, build)
    if options.check_only:
        github_output({"sweep": "false" if existing else "true"})
        if existing:
            say(f"torch {build.torch_version} was already swept: snapshot {existing} (--force sweeps again)")
        else:
            say(f"torch {build.torch_version} is not in the store yet: it needs a sweep")
        return RunReport(build=build, swept=False, existing_key=existing)
    if existing is not None and pre_swept is None:
        report = RunReport(build=build, swept=False, existing_key=existing)
        say(
            f"torch {build.torch_version} ({build.torch_git_version[:12] or 'no git hash'}) was already "
            f"swept: snapshot {existing} in {stored_path(store, existing) or 'the store'}; "
            "nothing to do (use --force to sweep again)"
        )
        step_summary(summary_markdown(report, None))
        github_output({"swept": "false", "snapshot": str(stored_path(store, existing) or "")})
        return report

    out = options.out or Path(".triagebot") / "runs" / (pre_swept.key if pre_swept else build.torch_version)
    out.mkdir(parents=True, exist_ok=True)
    # A sweep of this build interrupted on this machine is finished rather than started over;
    # --force starts over.
    if pre_swept is None:
        say(
            f"torch {build.torch_version} ({build.torch_git_version[:12] or 'no git hash'}) is not in the "
            f"store: sweeping corpus {config.sweep.corpus!r} under {len(config.flags)} flags"
        )
    snapshot = pre_swept if pre_swept is not None else sweeper(config, out, not options.force)
    report = RunReport(build=snapshot.environment, swept=True, snapshot_key=snapshot.key)

    try:
        report.stored_as_news = store.put(snapshot)
    except StoreError as error:
        raise PipelineError(f"cannot store snapshot {snapshot.key}: {error}") from None
    report.stored_file = stored_path(store, snapshot.key)
    report.snapshot_file = write_snapshot(snapshot, out / "snapshot.json")

    # The site's store-wide data first, so that the night reads its history from it and every
    # stored nightly is read and classified once; a site that cannot be built never holds back
    # the issues, nor the summary: the run fails with it at the end.
    site_failure: PipelineError | None = None
    stored_site = None
    if site is not None:
        try:
            stored_site = site.read(store, out / "site")
        except PipelineError as error:
            site_failure = error
    is_newest = stored_site is not None and stored_site.newest == snapshot.key
    night = night_of(
        snapshot,
        store,
        config,
        stored=stored_site.nights if is_newest else None,
        kept=stored_site.kept if is_newest else None,
    )
    if night.diff is not None:
        report.previous_key = night.previous_key
        report.diff_file = out / "diff.json"
        report.diff_file.write_text(night.diff.model_dump_json(indent=1) + "\n", encoding="utf-8")

    report.issues_dir = out / "issues"
    report.reports_dir = out / "report"
    dry_run = options.dry_run or not options.token or not config.tracker.repo
    incomplete: TrackerError | None = None
    try:
        report.published, night = publisher(night, config, options.token, dry_run, report.issues_dir)
    except TrackerError as error:  # said in the summary too, then the run fails with it
        report.published, incomplete = f"failed: {error}", error
    # The report folder is the night as published (its bodies are the issues' bodies byte for
    # byte), and is written even when publishing failed, for the failure to be read.
    renderer(night, report.reports_dir)

    if site is not None and stored_site is not None:
        try:  # the night as published: its flag pages link the tracking issues
            report.site_dir = site.write(store, stored_site, night, config, out / "site")
        except PipelineError as error:
            site_failure = error

    summary = summary_markdown(report, night)
    report.summary_file = out / "summary.md"
    report.summary_file.write_text(summary + "\n", encoding="utf-8")
    step_summary(summary)
    github_output(
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
        f"snapshot {snapshot.key}: {report.stored_file or 'stored'} (copy: {report.snapshot_file})",
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
    if incomplete is not None:
        raise incomplete
    if site_failure is not None:
        raise site_failure
    return report


def is_stream(path: Path) -> bool:
    """Whether `path` is a sweep's JSON Lines stream: a `.jsonl` file, or one whose first line
    is a sweep header."""
    if path.suffix == ".jsonl":
        return True
    try:
        with path.open("rb") as handle:
            return handle.readline(64).lstrip().startswith(b'{"kind":"header"')
    except OSError as error:
        raise StoreError(f"{path}: cannot read: {error.strerror}") from None


def reproduce_file(path: Path, out: Path | None = None, timeout: float = 300.0) -> tuple[Path, Snapshot]:
    """`triagebot reproduce`: the snapshot (or stream) at `path` with its reproductions, written
    to `out`, else in place (a stream's as a snapshot beside it, FILE.json)."""
    current = with_reproductions(read_input(path), timeout=timeout)
    target = out or (path.with_suffix(".json") if is_stream(path) else path)
    return write_snapshot(current, target), current


def read_input(path: str | Path) -> Snapshot:
    """A snapshot file, or a sweep's JSON Lines stream merged into one (a `.jsonl` file, or any
    file whose first line is a sweep header). Its key and flag names are checked, since both
    end up in file names and in the hidden markers of issues."""
    from triagebot.sweep.stream import merge

    path = Path(path)
    snapshot = merge([path]) if is_stream(path) else read_snapshot(path)
    try:
        check_key(snapshot.key)
    except StoreError as error:
        raise StoreError(f"{path}: {error}") from None
    for flag in snapshot.flags:
        if not FLAG_NAME.match(flag) or "--" in flag or flag == BASELINE:
            raise StoreError(f"{path}: flag name {flag!r} is not one a configuration could give")
    return snapshot


class Snapshots:
    """Snapshots by file (a snapshot, or a sweep's stream) or by key in the store: the one
    loader of every command that takes a snapshot. The store is opened on first use, so that a
    file never needs one."""

    def __init__(self, settings: StoreSettings, store: Store | None = None) -> None:
        self.settings = settings
        self._store = store

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = open_store(self.settings)
        return self._store

    def get(self, where: str | Path) -> Snapshot:
        path = Path(where)
        if path.is_file():
            return read_input(path)
        if path.exists():
            raise StoreError(f"{where}: not a snapshot file (a folder?)")
        key = str(where)
        try:
            check_key(key)
        except StoreError:
            raise StoreError(f"{where}: no such file") from None
        if key not in self.store:
            raise StoreError(f"{where}: no such file, and no snapshot with that key in the store")
        return self.store.get(key)

    def latest(self) -> Snapshot | None:
        return self.store.latest()

    def night(self, where: str, config: Config, previous: str | None = None) -> Night:
        """The night of the snapshot at `where` (`night_of`), compared with the one at
        `previous` when given: what `report` and `publish` render and publish."""
        current = self.get(where)
        return night_of(current, self.store, config, previous=self.get(previous) if previous else None)


def out_of_order(old: Snapshot, new: Snapshot) -> bool:
    """Whether `old` is the newer of the two: a later torch version, or, when the keys say
    nothing (the same version, or keys that are not versions), created later."""
    old_order, new_order = key_order(old.key), key_order(new.key)
    if old_order[0] == new_order[0] == 0 and old_order[1:4] != new_order[1:4]:
        return old_order > new_order
    return old.created > new.created


def default_stages(config: Config, store: Store, models: list[str] | None = None) -> dict[str, object]:
    """The real sweep, renderer, publisher and site, for `run`."""

    def sweeper(settings: Config, work: Path, resume: bool) -> Snapshot:
        return sweep_configured(settings, models, work, store, resume=resume)

    publisher = functools.partial(publish_night, store=store)  # the store remembers the issues
    return {"sweeper": sweeper, "renderer": render_report, "publisher": publisher, "site": SiteStage()}


def _site_error(error: TriagebotError, out: Path) -> PipelineError:
    return PipelineError(
        f"{error} (the snapshot is stored and published; `triagebot site --out {out}` builds it again)"
    )


@dataclass
class SiteStage:
    """The dashboard site in `run`: the store's compact data read before the night (`read`),
    the pages written from the night as published (`write`). Failures are `PipelineError`s
    that say the snapshot is stored and published."""

    jobs: int | None = None

    def read(self, store: Store, out: Path) -> StoredNights:
        from triagebot.report.site import read_store

        try:
            return read_store(store, out, jobs=self.jobs)
        except (SiteError, StoreError) as error:
            raise _site_error(error, out) from None

    def write(self, store: Store, stored: StoredNights, night: Night, config: Config, out: Path) -> Path:
        from triagebot.report.site import write_site

        try:
            return write_site(store, stored, newest_night(store, config, stored, night), out).out
        except (SiteError, StoreError, PipelineError) as error:
            raise _site_error(error, out) from None


def newest_night(store: Store, config: Config, stored: StoredNights, night: Night | None = None) -> Night:
    """The night of the newest stored nightly, which the site renders: `night` when it is that
    one, else analysed here (`night_of`, its history from the site's data) and linked to the
    tracking issues the store remembers for `tracker.repo`."""
    if night is not None and night.key == stored.newest:
        return night
    tonight = night_of(store.get(stored.newest), store, config, stored=stored.nights, kept=stored.kept)
    repo = config.tracker.repo
    if not repo:
        return tonight
    from triagebot.tracker import issue_url
    from triagebot.tracker.memory import IssueMemory

    numbers = IssueMemory.load(store, repo).numbers(list(tonight.flags))
    return tonight.linked({flag: issue_url(repo, number) for flag, number in numbers.items()})


def build_site(
    store: Store, out: Path, config: Config, *, jobs: int | None = None, say: Callable[[str], None] = print
) -> SiteBuild:
    """`triagebot site`: the dashboard of every stored nightly built into `out`, the newest
    rendered from its night."""
    from triagebot.report.site import read_store, write_site

    stored = read_store(store, out, jobs=jobs, say=say)
    return write_site(store, stored, newest_night(store, config, stored), out)
