"""`triagebot run`: one night's work, from the installed torch to the tracking issues.

detect the build -> skip it if the store has it -> sweep (crashes confirmed) -> store -> the
night (`night_of`: analysed once, against the previous stored build) -> publish (a dry run
without a token) -> render the report folder from the night as published -> summary.

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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from triagebot.config import Config
from triagebot.errors import PipelineError, TrackerError
from triagebot.results import Environment, Night, Snapshot
from triagebot.store import LocalStore, Store, StoreError, open_store, read_snapshot, write_snapshot


@dataclass
class RunOptions:
    """What the command line adds to, or overrides in, triagebot.toml."""

    out: Path | None = None  # default .triagebot/runs/<key>
    token: str | None = None
    dry_run: bool = False
    force: bool = False
    snapshot: Path | None = None  # an already swept (merged) snapshot: store and publish it
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
    published: str = ""  # one line: dry run, applied N writes, held, ...
    lines: list[str] = field(default_factory=list)


# The stages, as functions of other packages; a test may replace any of them.
Sweeper = Callable[[Config, Path, bool], Snapshot]  # config, work folder, resume
Renderer = Callable[[Night, Path], Path]  # the night as published, the report folder
# night, config, token, dry run, folder for the plan and bodies -> (one line, the night as published)
Publisher = Callable[[Night, Config, str | None, bool, Path], "tuple[str, Night]"]


@dataclass
class Selection:
    """What to sweep, from the command line; None keeps triagebot.toml's choice."""

    corpus: str | None = None
    models: list[str] | None = None
    flags: list[str] | None = None
    sample: int | None = None
    device: str | None = None
    jobs: int | None = None
    timeout: float | None = None


def configured(config: Config, selection: Selection) -> Config:
    """triagebot.toml with the command line's choices written over it."""
    sweep = {
        name: value
        for name, value in (
            ("corpus", selection.corpus),
            ("device", selection.device),
            ("jobs", selection.jobs),
            ("timeout", selection.timeout),
        )
        if value is not None
    }
    corpus = {"sample": selection.sample} if selection.sample is not None else {}
    return config.model_copy(
        update={
            "flags": config.select_flags(selection.flags),
            "sweep": config.sweep.model_copy(update=sweep),
            "corpus": config.corpus.model_copy(update=corpus),
        }
    )


def sweep_configured(
    config: Config, models: list[str] | None, work: Path, store: Store, *, resume: bool = False
) -> Snapshot:
    """Sweep the configured corpus (its sample, or the named models) with crashes confirmed;
    the stream goes to `work`/sweep.jsonl and, with `resume`, an interrupted one is finished."""
    from triagebot.corpus.sampling import SamplingError, sample
    from triagebot.sweep import merge, run_sweep
    from triagebot.sweep.command import select_models
    from triagebot.sweep.pool import start_parent
    from triagebot.sweep.progress import make_progress

    start_parent()  # the warm parent imports torch while this process loads the corpus
    name = config.sweep.corpus
    specs, selection = select_models(name, models)
    # Named models are swept as named; otherwise the configured sample, if any, is drawn.
    if not models and (config.corpus.sample is not None or config.corpus.strata):
        reference = None
        if config.corpus.only_breaking_in:
            try:
                reference = store.get(config.corpus.only_breaking_in)
            except StoreError as error:
                raise PipelineError(f"corpus.only_breaking_in: {error}") from None
        try:
            specs, selection = sample(
                specs,
                config.corpus.sample or 0,
                seed=config.corpus.seed,
                strata=config.corpus.strata,
                only_breaking_in=reference,
                corpus=name,
            )
        except SamplingError as error:
            raise PipelineError(f"corpus sample: {error}") from None
    stream = work / "sweep.jsonl"
    result = run_sweep(
        specs,
        config.flags,
        stream,
        corpus=selection,
        device=config.sweep.device,
        jobs=config.sweep.jobs,
        timeout=config.sweep.timeout,
        memory_limit_gb=config.sweep.memory_limit_gb,
        resume=resume and stream.exists(),
        confirm=config.sweep.confirm,
        progress=make_progress(None),
    )
    return with_reproductions(merge([result.path]), timeout=config.sweep.timeout)


def with_reproductions(snapshot: Snapshot, python: str = sys.executable, timeout: float = 300.0) -> Snapshot:
    """`snapshot` with a reproduction script per confirmed crash group, each run once with
    `python` (which must have torch) to verify that it raises the recorded signature."""
    from triagebot.reproduce import reproduce

    return snapshot.model_copy(update={"reproductions": reproduce(snapshot, python=python, timeout=timeout)})


def night_of(snapshot: Snapshot, store: Store, config: Config, *, previous: Snapshot | None = None) -> Night:
    """The night of `snapshot`, analysed once: compared with `previous` (default: the newest
    stored snapshot of another build ordered before it), its history the stored snapshots
    before that one (`analysis.choose_history`), cc lists from `[tracker]`. `run`, `report`
    and `publish` all build their night here, so that they render and close alike."""
    from triagebot.analysis import choose_history, night
    from triagebot.tracker.cc import cc_for

    try:
        stored = store.history(until=snapshot.key)
    except StoreError as error:
        raise PipelineError(f"cannot read the stored history: {error}") from None
    history, before = choose_history(snapshot, stored, previous)
    return night(
        snapshot,
        history,
        before,
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


def github_output(values: dict[str, str]) -> None:
    """Step outputs for the workflow, when run in GitHub Actions."""
    target = os.environ.get("GITHUB_OUTPUT")
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
    store: Store | None = None,
    build: Environment | None = None,
    say: Callable[[str], None] = print,
) -> RunReport:
    """One night's work; see the module docstring. Returns where everything went."""
    store = store if store is not None else open_store(config.store)
    pre_swept = read_snapshot(options.snapshot) if options.snapshot is not None else None
    if build is None:
        build = pre_swept.environment if pre_swept is not None else installed_build()

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

    if pre_swept is None:
        from triagebot.corpus import corpus_names

        if config.sweep.corpus not in corpus_names():
            known = ", ".join(corpus_names())
            raise PipelineError(f"unknown corpus {config.sweep.corpus!r} (known: {known})")
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

    night = night_of(snapshot, store, config)
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
    for line in report.lines:
        say(line)
    if incomplete is not None:
        raise incomplete
    return report


def default_stages(config: Config, store: Store, models: list[str] | None = None) -> dict[str, object]:
    """The real sweep, renderer and publisher, for `run`."""

    def sweeper(settings: Config, work: Path, resume: bool) -> Snapshot:
        return sweep_configured(settings, models, work, store, resume=resume)

    publisher = functools.partial(publish_night, store=store)  # the store remembers the issues
    return {"sweeper": sweeper, "renderer": render_report, "publisher": publisher}
