"""The `triagebot` command: wires the packages together and holds no logic of its own.

Imports of torch-using packages (corpus, sweep) stay inside the commands that need them, so
that `publish`, `diff`, `report` and `command` run on a runner without torch.

Every error meant for a person is a `triagebot.errors.TriagebotError`, raised by the package
that found it; `main` prints it as one line on stderr and exits with its status (2; 130 for
Ctrl-C). The command line's settings (`--jobs`, `--repo`, ...) are applied over
triagebot.toml by `triagebot.config`, so that one check covers both; what is swept is chosen
by `triagebot.corpus.selection` alone; a snapshot argument is read by `pipeline.Snapshots`
(a snapshot file, a sweep's stream, or a key in the store).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from triagebot.config import Config, load_config
from triagebot.errors import TriagebotError, UsageError

NIGHT_ORDER = (
    "run",
    "sweep",
    "merge",
    "reproduce",
    "effects",
    "diff",
    "report",
    "publish",
    "site",
    "command",
    "nightly",
    "bisect",
    "corpus",
    "config",
)


class NightOrder(TyperGroup):
    """Commands listed in the order of a night rather than alphabetically."""

    def list_commands(self, ctx: Any) -> list[str]:
        names = list(self.commands)
        return sorted(names, key=lambda name: NIGHT_ORDER.index(name) if name in NIGHT_ORDER else len(names))


app = typer.Typer(
    name="triagebot",
    cls=NightOrder,
    help="Flag sweeps of torch.compile over a transformers corpus, and the issues they feed.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain click help: rich would read "[sweep] jobs" as markup and show switches as "<bool>".
    rich_markup_mode=None,
)


def _versions(value: bool) -> None:
    if not value:
        return
    from importlib.metadata import PackageNotFoundError, version

    def installed(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    print(", ".join(f"{name} {installed(name)}" for name in ("triagebot", "torch", "transformers")))
    raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_versions,
            is_eager=True,
            help="Print the triagebot, torch and transformers versions.",
        ),
    ] = False,
) -> None:
    """Flag sweeps of torch.compile over a transformers corpus, and the issues they feed."""


# --- options shared by several commands ---

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        metavar="FILE",
        help="triagebot.toml to read (default: ./triagebot.toml if present).",
    ),
]
StoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store", metavar="DIR", help="A folder of snapshots instead of [store] of triagebot.toml."
    ),
]
TokenOption = Annotated[
    str | None, typer.Option("--token", metavar="TOKEN", help="GitHub token (default: $GITHUB_TOKEN).")
]
RepoOption = Annotated[
    str | None,
    typer.Option(
        "--repo", metavar="OWNER/NAME", help="Tracking issues' repository (default: [tracker] repo)."
    ),
]
CorpusOption = Annotated[
    str | None,
    typer.Option(
        "--corpus", metavar="NAME", help="transformers, smoke or sentinels (default: [sweep] corpus)."
    ),
]
ModelsOption = Annotated[
    str | None,
    typer.Option("--models", metavar="A,B", help="Only these models of the corpus (no sample is drawn)."),
]
FlagsOption = Annotated[
    str | None, typer.Option("--flags", metavar="F1,F2", help="Only these configured flags (default: all).")
]
SampleOption = Annotated[
    int | None,
    typer.Option(
        "--sample", min=1, metavar="N", help="Draw a stratified sample of N (default: [corpus] sample)."
    ),
]
SeedOption = Annotated[
    int | None, typer.Option("--seed", metavar="N", help="Seed of the sample (default: [corpus] seed).")
]
DeviceOption = Annotated[
    str | None,
    typer.Option("--device", metavar="cpu|cuda|auto", help="Where to run (default: [sweep] device)."),
]


def _jobs(value: str | None) -> int | str | None:
    """`--jobs N` or `--jobs auto` (the runner's cores; on CUDA, its GPU's memory too)."""
    from triagebot.sweep.pool import parse_jobs

    return None if value is None else parse_jobs(value)


JobsOption = Annotated[
    str | None,
    typer.Option(
        "--jobs",
        "-j",
        metavar="N|auto",
        callback=_jobs,
        help="Runs at once, or auto (default: [sweep] jobs).",
    ),
]
TimeoutOption = Annotated[
    float | None, typer.Option("--timeout", metavar="SECONDS", help="Per run (default: [sweep] timeout).")
]
StratumOption = Annotated[
    str | None,
    typer.Option(
        "--stratum",
        metavar="NAME",
        help="Only this stratum: vl_multimodal, decoder_llm, encoder_decoder, vision_other.",
    ),
]
SnapshotArgument = Annotated[
    str,
    typer.Argument(
        metavar="SNAPSHOT", help="Snapshot JSON file, a sweep's .jsonl stream, or a key in the store."
    ),
]


def read_config(path: Path | None, **options: Any) -> Config:
    """triagebot.toml with the command line's settings (`jobs=4` is `--jobs 4`) applied over it."""
    return load_config(path, {f"--{name.replace('_', '-')}": value for name, value in options.items()})


def _names(text: str | None) -> list[str] | None:
    """`A,B` as a list (None when not given): the one comma splitter of the command line."""
    names = [name.strip() for name in (text or "").split(",") if name.strip()]
    return names or None


def _token(token: str | None) -> str | None:
    import os

    return token or os.environ.get("GITHUB_TOKEN") or None


def _snapshots(config: Path | None, store: Path | None):
    from triagebot.pipeline import Snapshots

    return Snapshots(read_config(config, store=store).store)


def fail(message: str) -> None:
    raise UsageError(message)


# --- run: the nightly job end to end (triagebot.pipeline) ---


@app.command()
def run(
    corpus: CorpusOption = None,
    models: ModelsOption = None,
    flags: FlagsOption = None,
    sample: SampleOption = None,
    seed: SeedOption = None,
    device: DeviceOption = None,
    jobs: JobsOption = None,
    timeout: TimeoutOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", metavar="DIR", help="Folder for this run's files (default: .triagebot/runs/KEY)."
        ),
    ] = None,
    repo: RepoOption = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Plan the issue changes; write nothing.")
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Sweep even when this build is stored.")] = False,
    snapshot: Annotated[
        Path | None,
        typer.Option(
            "--snapshot",
            metavar="FILE",
            help="A swept snapshot (or stream) to store and publish instead of sweeping.",
        ),
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Only say if the installed build needs a sweep: sweep=true|false.")
    ] = False,
    token: TokenOption = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """The night's work: sweep, store, diff, report, publish.

    Detects the installed torch and skips it if the store has it; otherwise sweeps (crashes
    confirmed), stores, diffs against the previous build, renders the reports, publishes (a
    dry run without a token) and prints where everything went. Interrupted, it resumes when
    run again."""
    from contextlib import nullcontext

    from triagebot import pipeline
    from triagebot.store import open_store

    settings = read_config(
        config,
        corpus=corpus,
        sample=sample,
        seed=seed,
        device=device,
        jobs=jobs,
        timeout=timeout,
        repo=repo,
        store=store,
    ).with_flags(_names(flags))
    options = pipeline.RunOptions(
        out=out, token=_token(token), dry_run=dry_run, force=force, snapshot=snapshot, check_only=check
    )
    if snapshot is not None:
        pipeline.read_input(snapshot)  # a bad file or key is refused before anything is created
    snapshots = open_store(settings.store)
    stages = pipeline.default_stages(settings, snapshots, _names(models))
    # Two runs on one store take turns (the second says so and waits); --check only reads.
    with nullcontext() if check else snapshots.lock():
        pipeline.run(settings, options, store=snapshots, **stages)


# --- sweep, merge, reproduce: the flag sweep (triagebot.sweep) ---


@app.command()
def sweep(
    corpus: CorpusOption = None,
    models: ModelsOption = None,
    flags: FlagsOption = None,
    sample: SampleOption = None,
    seed: SeedOption = None,
    shard: Annotated[
        str | None,
        typer.Option("--shard", metavar="I/N", help="Sweep shard I of N (1-based), split by recorded cost."),
    ] = None,
    device: DeviceOption = None,
    jobs: JobsOption = None,
    timeout: TimeoutOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", metavar="FILE", help="JSON Lines stream (default: .triagebot/sweep-CORPUS.jsonl)."
        ),
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Finish the stream in --out; redo nothing recorded.")
    ] = False,
    confirm: Annotated[
        int | None,
        typer.Option("--confirm", metavar="N", help="Reruns of each crash (default: [sweep] confirm)."),
    ] = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Compile each model under the baseline and each flag.

    One isolated worker per run. Sweeps what `run` would (the configured corpus and sample),
    or one shard of it; the shards are balanced by the seconds each model took in the newest
    stored snapshot."""
    from triagebot.pipeline import Snapshots
    from triagebot.sweep.command import sweep as sweep_selection

    settings = read_config(
        config,
        corpus=corpus,
        sample=sample,
        seed=seed,
        device=device,
        jobs=jobs,
        timeout=timeout,
        confirm=confirm,
        store=store,
    ).with_flags(_names(flags))
    sweep_selection(
        settings,
        models=_names(models),
        shard=shard,
        store=Snapshots(settings.store),
        out=out,
        resume=resume,
    )


@app.command("merge")
def merge_command(
    shards: Annotated[
        list[Path], typer.Argument(metavar="STREAM", help="Sweep streams (JSON Lines) to join.")
    ],
    out: Annotated[Path, typer.Option("--out", metavar="FILE", help="Snapshot JSON file to write.")],
) -> None:
    """Join the shard streams of one sweep into one snapshot.

    Streams of other sweeps (another build, flag set or corpus) are refused."""
    from triagebot.store import write_snapshot
    from triagebot.sweep import merge

    snapshot = merge(shards)
    write_snapshot(snapshot, out)
    print(f"snapshot {snapshot.key}: {len(snapshot.results)} models from {len(shards)} streams -> {out}")


@app.command()
def reproduce(
    snapshot: Annotated[
        Path,
        typer.Argument(
            metavar="SNAPSHOT", help="Snapshot JSON file (from `triagebot merge`) or a sweep stream."
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", metavar="FILE", help="Where to write it (default: in place; a stream's FILE.json)."
        ),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", metavar="SECONDS", help="Per reproduction script.")
    ] = 300.0,
) -> None:
    """Write and verify a reproduction script per crash group.

    Each confirmed crash group gets a script, run once with the installed torch to verify that
    it raises the recorded signature."""
    from triagebot.pipeline import reproduce_file

    path, current = reproduce_file(snapshot, out, timeout=timeout)
    verified = sum(repro.verified for repro in current.reproductions)
    print(f"{verified} of {len(current.reproductions)} reproductions verified: {path}")


# --- effects, diff, report: analysis and reports of stored snapshots ---


@app.command()
def effects(
    snapshot: SnapshotArgument,
    as_json: Annotated[bool, typer.Option("--json", help="JSON Lines, one row per (model, flag).")] = False,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Each flag's effect on each model.

    One row per (model, flag): the effect, the graph counts and the crash signature."""
    from rich.console import Console
    from rich.table import Table

    from triagebot.analysis import classify

    rows = classify(_snapshots(config, store).get(snapshot))
    if as_json:
        for row in rows:
            print(row.model_dump_json())
        return
    columns = ("model", "stratum", "flag", "effect", "baseline graphs", "flag graphs", "signature")
    table = Table(*columns)
    for column in table.columns:
        column.overflow = "fold"  # never cut: a CI log keeps every character
    for row in rows:
        graphs = ["" if value is None else str(value) for value in (row.baseline_graphs, row.flag_graphs)]
        table.add_row(row.model, row.stratum, row.flag, row.effect.value, *graphs, row.signature or "")
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=max(console.width, 4000))  # one line per row
    console.print(table)


@app.command("diff")
def diff_command(
    old: Annotated[str, typer.Argument(metavar="OLD", help="The older snapshot: file, stream or key.")],
    new: Annotated[str, typer.Argument(metavar="NEW", help="The newer snapshot: file, stream or key.")],
    as_json: Annotated[bool, typer.Option("--json", help="The diff record as JSON.")] = False,
    any_order: Annotated[
        bool, typer.Option("--any-order", "--reverse", help="Compare even when OLD is the newer of the two.")
    ] = False,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """What changed between two snapshots, with the commit range.

    Names the newly crashing and fixed models of each flag and says when the flag sets
    differ. Give the older snapshot first; --any-order compares them the other way round."""
    from triagebot.analysis import diff
    from triagebot.pipeline import out_of_order
    from triagebot.report.render import render

    snapshots = _snapshots(config, store)
    before, after = snapshots.get(old), snapshots.get(new)
    if out_of_order(before, after) and not any_order:
        fail(
            f"{old} ({before.key}) is newer than {new} ({after.key}): give the older snapshot first, "
            "or --any-order to compare them in this order"
        )
    change = diff(before, after)
    print((change.model_dump_json(indent=1) if as_json else render("diff.txt.j2", diff=change)).rstrip("\n"))


@app.command()
def report(
    snapshot: SnapshotArgument,
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Folder to write the reports into.")],
    previous: Annotated[
        str | None,
        typer.Option(
            "--previous",
            metavar="SNAPSHOT",
            help="Snapshot to diff against (default: the store's previous build).",
        ),
    ] = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Write the issue bodies, notices and summary.

    One issue body per flag, fixed/regression notices against the previous snapshot,
    summary.md and night.json, into --out. The dashboard is `triagebot site`."""
    from triagebot.pipeline import Snapshots
    from triagebot.report import write_report

    settings = read_config(config, store=store)
    for path in write_report(Snapshots(settings.store).night(snapshot, settings, previous), out):
        print(path)


@app.command()
def site(
    out: Annotated[
        Path,
        typer.Option(
            "--out", metavar="DIR", help="Folder to build in (again: unchanged nightlies are not re-read)."
        ),
    ] = Path(".triagebot/site"),
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", metavar="N", min=1, help="Processes reading snapshots (default: CPUs, at most 4)."
        ),
    ] = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Build the dashboard site from every stored nightly.

    An index with the trends, a page per flag, per model and per pair of nightlies; it works
    offline from the folder and is what the nightly publishes to GitHub Pages. The newest
    nightly is analysed as `run` does, and its flag pages link the tracking issues the store
    remembers for [tracker] repo."""
    from triagebot.pipeline import build_site
    from triagebot.report.links import site_url

    settings = read_config(config, store=store)
    built = build_site(_snapshots(config, store).store, out, settings, jobs=jobs, say=print)
    print(f"site: {built.nights} nightlies ({built.read} read), {built.pages} pages: {built.index}")
    if settings.tracker.dashboard_url:
        print(f"published at: {site_url(settings.tracker.dashboard_url)}")


# --- publish, command: the GitHub side (triagebot.tracker) ---


@app.command()
def publish(
    snapshot: SnapshotArgument,
    repo: RepoOption = None,
    previous: Annotated[
        str | None,
        typer.Option(
            "--previous", metavar="SNAPSHOT", help="Snapshot to diff against (default: the previous build)."
        ),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Plan and bodies only; no write.")] = False,
    out: Annotated[
        Path, typer.Option("--out", metavar="DIR", help="Folder for the plan and bodies of a dry run.")
    ] = Path(".triagebot/issues"),
    max_writes: Annotated[
        int | None,
        typer.Option("--max-writes", metavar="N", help="Write cap (default: [tracker] max_writes)."),
    ] = None,
    token: TokenOption = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Keep the tracking issues on GitHub true to a snapshot.

    Plans the tracking issues of SNAPSHOT against GitHub, prints the plan and applies only the
    difference (a dry run without a token)."""
    from triagebot.pipeline import Snapshots
    from triagebot.tracker import publish_night

    settings = read_config(config, repo=repo, max_writes=max_writes, store=store)
    snapshots = Snapshots(settings.store)
    night = snapshots.night(snapshot, settings, previous)
    published = publish_night(night, settings, _token(token), dry_run, out, store=snapshots.store)
    print(published.line)


@app.command()
def command(
    event: Annotated[
        Path | None,
        typer.Option("--event", metavar="FILE", help="Workflow event payload ($GITHUB_EVENT_PATH)."),
    ] = None,
    poll: Annotated[bool, typer.Option("--poll", help="Poll the tracking issues of --repo.")] = False,
    answer: Annotated[
        str | None,
        typer.Option(
            "--answer", metavar="SNAPSHOT", help="Rerun snapshot (file, stream or key) to answer with."
        ),
    ] = None,
    failed: Annotated[
        str | None,
        typer.Option(
            "--failed", metavar="RESULT", help="The sweep gave no result: its job's result, or why."
        ),
    ] = None,
    repo: RepoOption = None,
    issue: Annotated[int | None, typer.Option("--issue", metavar="N", help="Issue of the command.")] = None,
    comment_id: Annotated[
        int | None,
        typer.Option("--comment-id", metavar="ID", help="The command's comment (default: last accepted)."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", metavar="FILE", help="key=value outputs file (default: $GITHUB_OUTPUT)."),
    ] = None,
    token: TokenOption = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """/rerun-sweep: read a command, or answer it.

    Reads a command (--event, --poll) and writes the sweep job's plan as key=value outputs, or
    answers one on the issue with the rerun's results (--answer) or why there are none (--failed)."""
    from triagebot.tracker.dispatch import CommandOptions
    from triagebot.tracker.dispatch import command as run_command

    settings = read_config(config, repo=repo, store=store)
    snapshots = _snapshots(config, store)
    options = CommandOptions(event, poll, answer, failed, repo, issue, comment_id, output, _token(token))
    run_command(options, settings, snapshots.store, snapshots.get)


# --- nightly, bisect: the nightly index and the first bad build (triagebot.nightlies, .bisect) ---

VariantOption = Annotated[
    str,
    typer.Option(
        "--variant", envvar="TRIAGEBOT_VARIANT", metavar="NAME", help="Nightly variant: cu128, cpu, ..."
    ),
]
IndexOption = Annotated[
    str,
    typer.Option("--index", envvar="TRIAGEBOT_NIGHTLY_INDEX", metavar="URL", help="PyTorch's nightly index."),
]
PythonOption = Annotated[
    str | None,
    typer.Option("--python", metavar="3.X", help="Python the builds must install on (default: this one)."),
]
PlatformOption = Annotated[
    str | None,
    typer.Option(
        "--platform", metavar="TAG,TAG", help="Platform tags, best first (default: this machine's)."
    ),
]


@app.command()
def nightly(
    check: Annotated[
        bool, typer.Option("--check", help="Only say if the newest nightly needs a sweep: sweep=true|false.")
    ] = False,
    since: Annotated[
        str | None, typer.Option("--since", metavar="YYYY-MM-DD", help="List builds from this day.")
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", metavar="YYYY-MM-DD", help="List builds up to this day.")
    ] = None,
    version: Annotated[
        str | None,
        typer.Option("--nightly", metavar="VERSION", help="Check this nightly instead of the newest."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Answer sweep=true even when it is stored.")] = False,
    variant: VariantOption = "cu128",
    index: IndexOption = None,
    python: PythonOption = None,
    platform: PlatformOption = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", metavar="FILE", help="key=value outputs file (default: $GITHUB_OUTPUT)."),
    ] = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """The torch nightlies on the index, and whether the newest is stored.

    Lists the builds for this Python and platform between two days; with --check, asks whether
    the newest (or --nightly) is in the store and writes sweep=true|false, version and date for
    the workflow, before any image is built."""
    from triagebot.nightlies import NIGHTLY_INDEX, Target, check_newest, nightly_index
    from triagebot.pipeline import already_swept, github_output
    from triagebot.results import Environment
    from triagebot.store import open_store

    target = Target.of(python, _names(platform))
    with nightly_index(variant, index or NIGHTLY_INDEX) as builds:
        if not check:
            days = [_day(value, name) for value, name in ((since, "--since"), (until, "--until"))]
            for wheel in builds.builds("torch", target, since=days[0], until=days[1]):
                print(f"{wheel.version:<34} {wheel.date or '':<10}  {wheel.url}")
            return
        snapshots = open_store(read_config(config, store=store).store)
        answer = check_newest(
            builds,
            target,
            lambda found: already_swept(snapshots, Environment(torch_version=found)),
            version=version,
            force=force,
        )
    github_output(answer.outputs(), output)
    print(answer.reason)
    print(" ".join(f"{name}={value}" for name, value in answer.outputs().items()))


def _day(value: str | None, option: str):
    from datetime import date

    try:
        return None if value is None else date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{option} {value!r} is not a day (YYYY-MM-DD)") from None


@app.command("bisect")
def bisect_command(
    good: Annotated[
        str, typer.Argument(metavar="GOOD", help="Last good: a stored snapshot, a version or a day.")
    ],
    bad: Annotated[
        str, typer.Argument(metavar="BAD", help="First bad: a stored snapshot, a version or a day.")
    ],
    model: Annotated[
        str | None, typer.Option("--model", metavar="MODEL", help="The model whose reproduction runs.")
    ] = None,
    flag: Annotated[str | None, typer.Option("--flag", metavar="FLAG", help="Its flag.")] = None,
    signature: Annotated[
        str | None, typer.Option("--signature", metavar="TEXT", help="Part of its crash signature.")
    ] = None,
    snapshot: Annotated[
        str | None,
        typer.Option(
            "--snapshot",
            metavar="SNAPSHOT",
            help="Where the reproduction is (default: BAD's, or the newest).",
        ),
    ] = None,
    axis: Annotated[
        str, typer.Option("--axis", metavar="auto|torch|transformers", help="What to bisect over.")
    ] = "auto",
    torch_version: Annotated[
        str | None, typer.Option("--torch", metavar="VERSION", help="torch to hold while transformers moves.")
    ] = None,
    transformers_version: Annotated[
        str | None,
        typer.Option("--transformers", metavar="VERSION", help="transformers to hold while torch moves."),
    ] = None,
    runs: Annotated[int, typer.Option("--runs", min=1, metavar="N", help="Clean runs for a good build.")] = 3,
    timeout: Annotated[
        float, typer.Option("--timeout", metavar="SECONDS", help="Per run and per install.")
    ] = 600.0,
    budget: Annotated[
        float, typer.Option("--budget", metavar="SECONDS", help="For the whole bisection.")
    ] = 3600.0,
    cache: Annotated[
        Path, typer.Option("--cache", metavar="DIR", help="Cached environments, one per build.")
    ] = Path(".triagebot/envs"),
    again: Annotated[bool, typer.Option("--again", help="Bisect even if the store has an answer.")] = False,
    variant: VariantOption = "cu128",
    index: IndexOption = None,
    pypi: Annotated[
        str | None, typer.Option("--pypi", metavar="URL", help="transformers' index (default: PyPI).")
    ] = None,
    python: PythonOption = None,
    platform: PlatformOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="The bisection record as JSON.")] = False,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Find the first bad nightly of a crash, and its commit range.

    Installs the builds between GOOD and BAD into cached environments and runs a verified
    reproduction in each (builds that cannot be installed or imported are skipped); when both
    ends are stored snapshots of one torch build, bisects transformers releases instead. The
    answer is kept in the store, so a range is never bisected twice."""
    from triagebot.bisect import BisectOptions, describe
    from triagebot.bisect import bisect_command as run_bisect
    from triagebot.nightlies import NIGHTLY_INDEX, PYPI_INDEX

    if axis not in ("auto", "torch", "transformers"):
        fail(f"--axis {axis!r} is not auto, torch or transformers")
    options = BisectOptions(
        good=good,
        bad=bad,
        model=model,
        flag=flag,
        signature=signature,
        snapshot=snapshot,
        axis=axis,  # type: ignore[arg-type]  (checked above)
        torch=torch_version,
        transformers=transformers_version,
        variant=variant,
        index=index or NIGHTLY_INDEX,
        pypi=pypi or PYPI_INDEX,
        python=python,
        platforms=_names(platform),
        runs=runs,
        timeout=timeout,
        budget=budget,
        cache=cache,
        again=again,
    )
    snapshots = _snapshots(config, store)
    answer = run_bisect(options, snapshots.store, snapshots.get)
    print(answer.model_dump_json(indent=1) if as_json else "\n".join(describe(answer)))


# --- corpus list, corpus check: the model corpus (triagebot.corpus) ---

corpus_app = typer.Typer(
    help="The model corpus: what is swept, and whether it builds.\n\n"
    "`list` shows what `run` and `sweep` would sweep; `check` builds and runs every model eagerly."
)
app.add_typer(corpus_app, name="corpus")


@corpus_app.command("list")
def corpus_list(
    corpus: CorpusOption = None,
    stratum: StratumOption = None,
    models: ModelsOption = None,
    sample: SampleOption = None,
    seed: SeedOption = None,
    only_breaking_in: Annotated[
        str | None,
        typer.Option(
            "--only-breaking-in",
            metavar="SNAPSHOT",
            help="Sample only models whose baseline graph-breaks there (file or key).",
        ),
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option("--shard", metavar="I/N", help="Only shard I of N, as `sweep --shard` splits it."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object: the models and the selection.")
    ] = False,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """What `run` and `sweep` would sweep.

    The models of the configured selection (corpus, sample, or a shard of it) with their
    stratum and modality."""
    import json

    from triagebot.corpus.selection import select
    from triagebot.pipeline import Snapshots

    settings = read_config(
        config, corpus=corpus, sample=sample, seed=seed, only_breaking_in=only_breaking_in, store=store
    )
    chosen = select(
        settings, models=_names(models), stratum=stratum, shard=shard, store=Snapshots(settings.store)
    )
    rows = [
        {"model": s.model, "stratum": s.stratum, "modality": s.modality, "model_type": s.model_type}
        for s in chosen.specs
    ]
    if as_json:
        document = {
            "selection": chosen.selection.model_dump(mode="json"),
            "shard": chosen.shard,
            "costs": chosen.costs,
            "costs_from": chosen.costs_from,
            "models": rows,
        }
        print(json.dumps(document, indent=2))
        return
    for row in rows:
        print(f"{row['model']:<56} {row['stratum']:<16} {row['modality']}")
    whole = f" (shard {chosen.shard} of {len(chosen.selection.models)})" if chosen.shard else ""
    print(f"{len(rows)} models{whole} of corpus {chosen.selection.name!r}")


@corpus_app.command("check")
def corpus_check(
    corpus: CorpusOption = None,
    stratum: StratumOption = None,
    models: ModelsOption = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, metavar="N", help="Concurrent workers.")] = 2,
    timeout: Annotated[float, typer.Option("--timeout", min=1, metavar="SECONDS", help="Per model.")] = 120.0,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object: counts and one entry per model.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Build and run every model eagerly; report coverage.

    Each model of the corpus (or --stratum, --models) is built and run in an isolated worker
    with a time limit."""
    import json

    from triagebot.corpus.coverage import render, summarize
    from triagebot.corpus.selection import load, narrow
    from triagebot.sweep import check_models

    settings = read_config(config, corpus=corpus)
    name = settings.sweep.corpus
    specs = narrow(load(name), name, stratum, _names(models))
    records = list(
        check_models(
            specs, device="cpu", jobs=jobs, timeout=timeout, memory_limit_gb=settings.sweep.memory_limit_gb
        )
    )
    from triagebot.corpus.shrink import stale_fixes

    stale = [fix.describe() for fix in stale_fixes()] if name == "transformers" else []
    summary = summarize(records, specs, stale)
    print(json.dumps(summary, indent=2) if as_json else render(summary))


# --- config: what triagebot.toml and the command line resolve to ---


@app.command("config")
def config_command(
    corpus: CorpusOption = None,
    sample: SampleOption = None,
    seed: SeedOption = None,
    device: DeviceOption = None,
    jobs: JobsOption = None,
    timeout: TimeoutOption = None,
    repo: RepoOption = None,
    store: StoreOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="A JSON object: key -> value and source.")] = False,
    config: ConfigOption = None,
) -> None:
    """The resolved configuration, and where each value came from.

    Each value comes from the defaults, the toml file, or a command-line option given here
    (the same options as `run`)."""
    import json

    from triagebot.config import render_config

    settings = read_config(
        config,
        corpus=corpus,
        sample=sample,
        seed=seed,
        device=device,
        jobs=jobs,
        timeout=timeout,
        repo=repo,
        store=store,
    )
    if as_json:
        rows = {key: {"value": value, "source": source} for key, value, source in settings.sources()}
        print(json.dumps(rows, indent=2))
        return
    print(render_config(settings))


def main(argv: list[str] | None = None) -> None:
    """The console script: every `TriagebotError` is one line on stderr and its exit status."""
    try:
        app(args=argv, prog_name="triagebot")
    except SystemExit as exit_:
        if exit_.code == 130:  # Ctrl-C where no command had more to say about it
            print("triagebot: interrupted", file=sys.stderr)
        raise
    except TriagebotError as error:
        print(f"triagebot: error: {error}", file=sys.stderr)
        sys.exit(error.exit_code)
    except OSError as error:  # a file that cannot be written, a full disk: not a bug of ours
        where = f"{error.filename}: " if error.filename else ""
        detail = error.strerror or (str(error).splitlines() or [type(error).__name__])[0]
        print(f"triagebot: error: {where}{detail}", file=sys.stderr)
        sys.exit(2)
