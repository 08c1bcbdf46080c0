"""`triagebot run`: one night's work, from the installed torch to the tracking issues.

detect the build -> skip it if the store has it -> sweep (crashes confirmed) -> store -> diff
against the previous stored build -> render -> publish (a dry run without a token) -> summary.

Each stage is a public function of its own package; this module only orders them and says
where every product landed. torch is never imported here: the build is read by a child
process, so that the sweep's warm parent stays the only process that holds torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from triagebot.config import Config
from triagebot.errors import PipelineError
from triagebot.results import Environment, Snapshot, SnapshotDiff
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
Renderer = Callable[[Snapshot, list[Snapshot], Snapshot | None, Path], Path]
Publisher = Callable[[Snapshot, list[Snapshot], Snapshot | None, Config, str | None, bool, Path], str]


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
    from triagebot.sweep.stack import stack_options

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
        **stack_options(config.sweep, specs, config.corpus.seed),
    )
    return with_reproductions(merge([result.path]), timeout=config.sweep.timeout)


def with_reproductions(snapshot: Snapshot, python: str = sys.executable, timeout: float = 300.0) -> Snapshot:
    """`snapshot` with a reproduction script per confirmed crash group, each run once with
    `python` (which must have torch) to verify that it raises the recorded signature."""
    from triagebot.report.repro import reproduce

    return snapshot.model_copy(update={"reproductions": reproduce(snapshot, python=python, timeout=timeout)})


def render_reports(config: Config) -> Renderer:
    def render(snapshot: Snapshot, history: list[Snapshot], previous: Snapshot | None, out: Path) -> Path:
        from triagebot.report import write_report

        write_report(
            snapshot,
            out,
            previous=previous,
            history=history,
            cc=config.tracker.cc,
            dashboard_url=config.tracker.dashboard_url,
        )
        return out

    return render


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


def summary_markdown(report: RunReport, change: SnapshotDiff | None, details: str = "") -> str:
    """The step summary: what this run did, then `details` (the report's own summary.md)."""
    build = report.build
    head = f"### triagebot run: torch {build.torch_version}"
    if build.torch_git_version:
        head += f" (`{build.torch_git_version[:12]}`)"
    if not report.swept:
        return f"{head}\n\nAlready swept: snapshot `{report.existing_key}` is in the store. Nothing to do."
    rows = [head, ""]
    rows.append(f"- snapshot `{report.snapshot_key}`" + ("" if report.stored_as_news else " (same build)"))
    if change is None:
        rows.append("- first snapshot in the store: nothing to compare with")
    else:
        moved = [
            f"{flag}: {len(d.newly_crashing)} newly crashing, {len(d.fixed)} fixed"
            for flag, d in change.flags.items()
        ]
        rows.append(f"- against `{change.old_key}`: " + ("; ".join(moved) or "no shared flags"))
        if change.compare_url:
            rows.append(f"- commits: {change.compare_url}")
    rows.append(f"- publishing: {report.published}")
    if details:
        rows += ["", details.strip()]
    return "\n".join(rows)


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

    # Read the history before storing, so that `previous` is the newest other build.
    history = [s for s in store.history() if not s.environment.same_build(snapshot.environment)]
    previous = history[-1] if history else None
    try:
        report.stored_as_news = store.put(snapshot)
    except StoreError as error:
        raise PipelineError(f"cannot store snapshot {snapshot.key}: {error}") from None
    report.stored_file = stored_path(store, snapshot.key)
    report.snapshot_file = write_snapshot(snapshot, out / "snapshot.json")

    change = None
    if previous is not None:
        from triagebot.analysis import diff

        change = diff(previous, snapshot)
        report.previous_key = previous.key
        report.diff_file = out / "diff.json"
        report.diff_file.write_text(change.model_dump_json(indent=1) + "\n", encoding="utf-8")

    report.reports_dir = renderer(snapshot, history, previous, out / "report")
    report.issues_dir = out / "issues"
    dry_run = options.dry_run or not options.token or not config.tracker.repo
    report.published = publisher(
        snapshot, history, previous, config, options.token, dry_run, report.issues_dir
    )

    rendered_summary = report.reports_dir / "summary.md"
    details = rendered_summary.read_text(encoding="utf-8") if rendered_summary.is_file() else ""
    summary = summary_markdown(report, change, details)
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
        f"diff against {previous.key}: {report.diff_file}" if previous else "diff: none (first snapshot)",
        f"reports: {report.reports_dir}",
        f"issues: {report.issues_dir} ({report.published})",
        f"summary: {report.summary_file}",
    ]
    for line in report.lines:
        say(line)
    return report


def default_stages(config: Config, store: Store, models: list[str] | None = None) -> dict[str, object]:
    """The real sweep, renderer and publisher, for `run`."""
    from triagebot.tracker import publish_snapshot

    def sweeper(settings: Config, work: Path, resume: bool) -> Snapshot:
        return sweep_configured(settings, models, work, store, resume=resume)

    return {"sweeper": sweeper, "renderer": render_reports(config), "publisher": publish_snapshot}
