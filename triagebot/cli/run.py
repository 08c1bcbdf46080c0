"""`triagebot run`: the nightly job end to end (`triagebot.pipeline` orders its stages)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import typer

from triagebot import pipeline
from triagebot.cli.options import (
    ConfigOption,
    CorpusOption,
    DeviceOption,
    FlagsOption,
    JobsOption,
    ModelsOption,
    RepoOption,
    SampleOption,
    SeedOption,
    StoreOption,
    TimeoutOption,
    TokenOption,
    configured,
    split_names,
)
from triagebot.config import Config
from triagebot.store import open_store
from triagebot.tracker.actions import github_token

RunOut = Annotated[
    Path | None,
    typer.Option("--out", metavar="DIR", help="Folder for this run's files (default: .triagebot/runs/KEY)."),
]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Plan the issue changes; write nothing.")]
Force = Annotated[bool, typer.Option("--force", help="Sweep even when this build is stored.")]
PreSwept = Annotated[
    Path | None,
    typer.Option(
        "--snapshot",
        metavar="FILE",
        help="A swept snapshot (or stream) to store and publish instead of sweeping.",
    ),
]
Bisections = Annotated[
    Path | None,
    typer.Option(
        "--bisections",
        metavar="DIR",
        help="Bisections (JSON, from `bisect --owed --out`) to keep in the store before the night.",
    ),
]
CheckOnly = Annotated[
    bool, typer.Option("--check", help="Only say if the installed build needs a sweep: sweep=true|false.")
]


@configured("corpus", "flags", "sample", "seed", "device", "jobs", "timeout", "repo", "store")
def run(
    settings: Config,
    corpus: CorpusOption = None,
    models: ModelsOption = None,
    flags: FlagsOption = None,
    sample: SampleOption = None,
    seed: SeedOption = None,
    device: DeviceOption = None,
    jobs: JobsOption = None,
    timeout: TimeoutOption = None,
    out: RunOut = None,
    repo: RepoOption = None,
    dry_run: DryRun = False,
    force: Force = False,
    snapshot: PreSwept = None,
    bisections: Bisections = None,
    check: CheckOnly = False,
    token: TokenOption = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """The night's work: sweep, store, diff, report, publish.

    Detects the installed torch and skips it if the store has it; otherwise sweeps (crashes
    confirmed), stores, diffs against the previous build, renders the reports, publishes (a
    dry run without a token) and prints where everything went. Interrupted, it resumes when
    run again."""
    options = pipeline.RunOptions(
        out=out,
        token=github_token(token),
        dry_run=dry_run,
        force=force,
        snapshot=snapshot,
        check_only=check,
        bisections=bisections,
    )
    if snapshot is not None:
        # A bad file or key is refused before anything is created.
        pipeline.read_input(snapshot, settings.store.key)
    snapshots = open_store(settings.store)
    stages = pipeline.default_stages(settings, snapshots, split_names(models))
    # Two runs on one store take turns (the second says so and waits); --check only reads.
    with nullcontext() if check else snapshots.lock():
        pipeline.run(settings, options, store=snapshots, **stages)
