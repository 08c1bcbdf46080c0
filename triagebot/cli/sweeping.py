"""`triagebot sweep`, `merge`, `reproduce`: the flag sweep and what is made of its streams.

`triagebot.sweep` is imported inside the commands: its modules take a fifth of a second to
import, which `triagebot --help` and every other command should not pay.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from triagebot.cli.options import (
    ConfigOption,
    CorpusOption,
    DeviceOption,
    FlagsOption,
    JobsOption,
    ModelsOption,
    SampleOption,
    SeedOption,
    StoreOption,
    TimeoutOption,
    configured,
    split_names,
)
from triagebot.config import Config
from triagebot.errors import UsageError
from triagebot.pipeline import Snapshots, newest_stored, reduce_bounds, reproduce_file, script_lanes
from triagebot.store import write_snapshot

Shard = Annotated[
    str | None,
    typer.Option("--shard", metavar="I/N", help="Sweep shard I of N (1-based), split by recorded cost."),
]
StreamOut = Annotated[
    Path | None,
    typer.Option("--out", metavar="FILE", help="JSON Lines stream (default: .triagebot/sweep-CORPUS.jsonl)."),
]
Resume = Annotated[bool, typer.Option("--resume", help="Finish the stream in --out; redo nothing recorded.")]
Overwrite = Annotated[bool, typer.Option("--force", help="Start the stream in --out over, losing its runs.")]
Confirm = Annotated[
    int | None,
    typer.Option("--confirm", metavar="N", help="Reruns of each crash (default: [sweep] confirm)."),
]
Streams = Annotated[list[Path], typer.Argument(metavar="STREAM", help="Sweep streams (JSON Lines) to join.")]
SnapshotOut = Annotated[Path, typer.Option("--out", metavar="FILE", help="Snapshot JSON file to write.")]
SweptSnapshot = Annotated[
    Path,
    typer.Argument(metavar="SNAPSHOT", help="Snapshot JSON file (from `triagebot merge`) or a sweep stream."),
]
ReproducedOut = Annotated[
    Path | None,
    typer.Option(
        "--out", metavar="FILE", help="Where to write it (default: in place; a stream's FILE.json)."
    ),
]
ScriptTimeout = Annotated[
    float, typer.Option("--timeout", metavar="SECONDS", help="Per reproduction script.")
]
EarlierReductions = Annotated[
    str | None,
    typer.Option(
        "--previous",
        metavar="SNAPSHOT",
        help="The nightly (file or stored key) whose reductions are tried first (default: newest stored).",
    ),
]


@configured("corpus", "flags", "sample", "seed", "device", "jobs", "timeout", "confirm", "store")
def sweep(
    settings: Config,
    corpus: CorpusOption = None,
    models: ModelsOption = None,
    flags: FlagsOption = None,
    sample: SampleOption = None,
    seed: SeedOption = None,
    shard: Shard = None,
    device: DeviceOption = None,
    jobs: JobsOption = None,
    timeout: TimeoutOption = None,
    out: StreamOut = None,
    resume: Resume = False,
    force: Overwrite = False,
    confirm: Confirm = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Compile each model under the baseline and each flag.

    One isolated worker per run. Sweeps what `run` would (the configured corpus and sample),
    or one shard of it; the shards are balanced by the seconds each model took in the newest
    stored snapshot."""
    from triagebot.sweep.command import default_stream  # start-up cost: see the module
    from triagebot.sweep.command import sweep as sweep_selection

    out = out or default_stream(settings.sweep.corpus_name, shard)
    if out.exists() and not (resume or force):
        raise UsageError(
            f"{out} holds a sweep's stream already: --resume finishes it, --force starts it over "
            "(losing its runs), or give another --out"
        )
    if resume and force:
        raise UsageError("--resume and --force: finish the stream, or start it over, not both")
    snapshots = Snapshots(settings.store, reproductions=False)
    sweep_selection(
        settings, models=split_names(models), shard=shard, store=snapshots, out=out, resume=resume
    )


@configured()
def merge(settings: Config, shards: Streams, out: SnapshotOut, config: ConfigOption = None) -> None:
    """Join the shard streams of one sweep into one snapshot, keyed as `[store] key` names it.

    Streams of other sweeps (another build, flag set or corpus) are refused."""
    from triagebot.sweep import merge as merge_streams  # start-up cost: see the module

    snapshot = merge_streams(shards, settings.store.key)
    write_snapshot(snapshot, out)
    print(f"snapshot {snapshot.key}: {len(snapshot.results)} models from {len(shards)} streams -> {out}")


@configured()
def reproduce(
    settings: Config,
    snapshot: SweptSnapshot,
    out: ReproducedOut = None,
    timeout: ScriptTimeout = 300.0,
    previous: EarlierReductions = None,
    config: ConfigOption = None,
) -> None:
    """Write and verify a reproduction script per crash group, then reduce it.

    Each confirmed crash group gets a script, run once with the installed torch to verify that
    it raises the recorded signature, then made as small as still raises it within `[sweep]
    reduce_group_seconds` (and `reduce_night_seconds` for all), as many scripts at once as
    `[sweep] jobs`. The reductions of the store's newest nightly (or of --previous) are tried
    first, as `run` tries them."""
    snapshots = Snapshots(settings.store)
    earlier = snapshots.get(previous) if previous else newest_stored(snapshots)
    bounds = reduce_bounds(settings, timeout)
    lanes = script_lanes(settings)
    path, current = reproduce_file(
        snapshot, out, timeout=timeout, bounds=bounds, earlier=earlier, lanes=lanes, scheme=settings.store.key
    )
    verified = sum(repro.verified for repro in current.reproductions)
    reduced = sum(bool(repro.reduction and repro.reduction.steps) for repro in current.reproductions)
    print(f"{verified} of {len(current.reproductions)} reproductions verified, {reduced} reduced: {path}")
