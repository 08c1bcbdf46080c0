"""The flag sweep: compile each model under the baseline and every flag, in isolated children.

Public API (importing this package does not import torch; the children and the warm parent do):

- `run_sweep(specs, flags, out, *, corpus, device, jobs, timeout, memory_limit_gb, resume, shard,
  confirm, progress, costs) -> SweepResult`: every (model, config) in its own child forked from a
  warm parent (see `pool`), records streamed to `out` as JSON Lines (a `SweepHeader`, then
  `RunRecord`s), `resume=True` finishes an interrupted stream, `shard="i/n"` records which
  slice of the sweep `specs` are (`triagebot.corpus.selection` chooses it), `confirm=N` reruns
  each crash N times (records with `attempt` 1..N).
  `flags` maps a name to its `FlagSettings` (`patch`, `when`) or to a bare patch. A flag with
  `when="graph_breaks"` is not run on a model whose baseline compiled to one graph with no break:
  a `skipped` record says so (no child is forked). A flag run that cannot build or run eagerly
  though its baseline did is an `engine_error`. `jobs="auto"`: the cores this process may use
  (cgroup-aware) and, on CUDA, what the GPU's memory holds at `memory_limit_gb` per worker.
  `costs` (model -> seconds, `Snapshot.model_seconds()` of the previous sweep) queues the
  longest models first, after the models it has no cost for; a model's flag runs follow its
  baseline. `SweepResult.jobs` and `.seconds` give the workers used and the wall time;
  `progress.sweep_figures` the closing numbers (lower bound, skipped share, stages).
- `confirm_crashes(path, count, ...) -> list[RunRecord]`: the same confirmation reruns for an
  existing stream, appended to it.
- `check_models(specs, *, device="cpu", jobs=1, timeout=120.0, memory_limit_gb=8.0, progress=None)
  -> Iterator[RunRecord]`: build + eager run only (no compile), isolated and time-limited like a
  sweep run; one record per spec as each finishes, `config="eager"`, the completed spec, and
  status ok / create_error / eager_error / timeout / signal. For checking a corpus.
- `merge(paths) -> Snapshot`: shard streams into one snapshot keyed by the torch version
  (`triagebot.store.write_snapshot` writes it); shards of different environments, flag sets or
  corpora, duplicated shards or models, and incomplete streams are refused with a one-line
  `StreamError`.
- `read_stream(path) -> (SweepHeader, [RunRecord])`, tolerant of a torn last line.
- `detect_environment(device) -> Environment` (in-process; on "cuda" it initialises CUDA, so the
  sweep calls it in a child), `validate_flags(flags)` (torch._dynamo.config names and value types).
- `start_parent()`: start the warm parent before the models are known (call it before loading a
  large corpus: its imports then overlap with the loading); the next sweep or check sends it the
  model classes to warm up.
- `worker.run_one(spec, patch, device, compile=True, fresh=False) -> (Outcome, ModelSpec)`: one
  run in the calling process (repro checks, benchmarks).

Errors meant for the user (`SweepError`, `StreamError`) are `triagebot.errors.TriagebotError`s
with one-line messages.
"""

from triagebot.sweep.engine import (
    CHECK_CONFIG,
    NullProgress,
    Progress,
    SweepError,
    SweepResult,
    check_models,
    confirm_crashes,
    run_sweep,
    validate_flags,
)
from triagebot.sweep.environment import detect_environment
from triagebot.sweep.pool import start_parent
from triagebot.sweep.stream import StreamError, merge, read_stream

__all__ = [
    "CHECK_CONFIG",
    "NullProgress",
    "Progress",
    "StreamError",
    "SweepError",
    "SweepResult",
    "check_models",
    "confirm_crashes",
    "detect_environment",
    "merge",
    "read_stream",
    "run_sweep",
    "start_parent",
    "validate_flags",
]
