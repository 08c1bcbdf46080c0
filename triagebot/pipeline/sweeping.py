"""The sweep of a night, and the reproductions of what it found.

`sweep_configured` sweeps what `triagebot.corpus.selection` chooses from the configuration,
with crashes confirmed; `with_reproductions` adds a verified reproduction script per confirmed
crash group (`triagebot.reproduce`, which runs them in a Python that has torch), each reduced
to the smallest that still raises its signature within the configured time (`triagebot.reduce`).
"""

from __future__ import annotations

import sys
from pathlib import Path

from triagebot.config import Config
from triagebot.errors import on_ctrl_c
from triagebot.pipeline.inputs import Snapshots, is_stream, read_input
from triagebot.reduce import Bounds, reduce_reproductions
from triagebot.reproduce import reproduce
from triagebot.results import Snapshot
from triagebot.store import Store, write_snapshot
from triagebot.sweep import merge
from triagebot.sweep.command import choose, run_selected


def sweep_configured(
    config: Config, models: list[str] | None, work: Path, store: Store, *, resume: bool = False
) -> Snapshot:
    """Sweep what `triagebot.corpus.selection` chooses from `config` (its sample, or the named
    models) with crashes confirmed; the stream goes to `work`/sweep.jsonl and, with `resume`,
    an interrupted one is finished. Ctrl-C says where the finished runs are."""
    selected = choose(config, models=models, store=Snapshots(config.store, store))
    stream = work / "sweep.jsonl"
    with on_ctrl_c(stream, resume="run the same command again to resume"):
        result = run_selected(config, selected, stream, resume=resume and stream.exists())
    return with_reproductions(
        merge([result.path]), timeout=config.sweep.timeout, bounds=reduce_bounds(config)
    )


def reduce_bounds(config: Config, timeout: float | None = None) -> Bounds:
    """How long the night's reductions may take (`[sweep] reduce_group_seconds` and
    `reduce_night_seconds`), each candidate script within `timeout` (default `[sweep] timeout`)."""
    settings = config.sweep
    return Bounds(settings.reduce_group_seconds, settings.reduce_night_seconds, timeout or settings.timeout)


def with_reproductions(
    snapshot: Snapshot, python: str = sys.executable, timeout: float = 300.0, bounds: Bounds | None = None
) -> Snapshot:
    """`snapshot` with a reproduction script per confirmed crash group, each run once with
    `python` (which must have torch) to verify that it raises the recorded signature, then
    reduced within `bounds` (`triagebot.reduce`; None: not reduced)."""
    found = reproduce(snapshot, python=python, timeout=timeout)
    if bounds is not None:
        found = reduce_reproductions(snapshot, found, bounds, python=python)
    return snapshot.model_copy(update={"reproductions": found})


def reproduce_file(
    path: Path, out: Path | None = None, timeout: float = 300.0, bounds: Bounds | None = None
) -> tuple[Path, Snapshot]:
    """`triagebot reproduce`: the snapshot (or stream) at `path` with its reproductions, reduced
    within `bounds`, written to `out`, else in place (a stream's as a snapshot beside it, FILE.json)."""
    current = with_reproductions(read_input(path), timeout=timeout, bounds=bounds)
    target = out or (path.with_suffix(".json") if is_stream(path) else path)
    return write_snapshot(current, target), current
