"""The sweep of a night, and the reproductions of what it found.

`sweep_configured` sweeps what `triagebot.corpus.selection` chooses from the configuration,
with crashes confirmed; `with_reproductions` adds a verified reproduction script per confirmed
crash group (`triagebot.reproduce`, which runs them in a Python that has torch), each reduced
to the smallest that still raises its signature within the configured time (`triagebot.reduce`).

A flag added to the configuration is swept against a stored night that lacks it
(`sweep_flags`): the night's baseline runs are written as the start of a stream for those flags
alone, the sweep's own resume makes only the flags' runs, and `add_flags` merges them into the
stored night.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from triagebot.analysis.history import read_history
from triagebot.analysis.rotation import Evidences, latest_evidence
from triagebot.config import Config
from triagebot.errors import PipelineError, StoreError, StreamError, on_ctrl_c
from triagebot.pipeline.inputs import Snapshots, is_stream, read_input
from triagebot.reduce import Bounds, reduce_reproductions
from triagebot.reduce.wrong import locate_wrong_results
from triagebot.reproduce import reproduce
from triagebot.results import BASELINE, KeyScheme, ModelResult, Outcome, RunRecord, Snapshot, SweepHeader
from triagebot.store import Store, write_snapshot
from triagebot.store.selection import same_selection
from triagebot.sweep import merge
from triagebot.sweep.command import choose, run_selected
from triagebot.sweep.progress import make_progress
from triagebot.sweep.stream import StreamWriter, read_stream
from triagebot.sweep.summary import sweep_figures
from triagebot.workers import workers


def sweep_configured(
    config: Config, models: list[str] | None, work: Path, store: Store, *, resume: bool = False
) -> Snapshot:
    """Sweep what `triagebot.corpus.selection` chooses from `config` (its sample, or the named
    models) with crashes confirmed; the stream goes to `work`/sweep.jsonl and, with `resume`,
    an interrupted one is finished, on exactly the models it was started on (a stored night's,
    for the flags added to it: `sweep_flags`). Ctrl-C says where the finished runs are."""
    stream = work / "sweep.jsonl"
    if resume and models is None and stream.exists():
        models = read_stream(stream)[0].corpus.models or None
    snapshots = Snapshots(config.store, store, reproductions=False)
    selected = choose(config, models=models, store=snapshots)
    evidence = ladder_evidence(store)
    with on_ctrl_c(stream, resume="run the same command again to resume"):
        result = run_selected(config, selected, stream, resume=resume and stream.exists(), evidence=evidence)
    for line in sweep_figures(result.new_records, result.jobs, result.seconds).lines():
        print(line)  # as `triagebot sweep` closes: wall against its bound, stages, the slow tail
    return with_reproductions(
        merge([result.path], config.store.key),
        timeout=config.sweep.timeout,
        bounds=reduce_bounds(config),
        earlier=newest_stored(snapshots),
        lanes=script_lanes(config),
    )


def ladder_evidence(store: Store, say: Callable[[str], None] = print) -> Evidences | None:
    """Each pair's latest ladder evidence over every stored nightly, which orders tonight's
    rotation (`analysis.rotation`); None, said in one line, when the store cannot be read: the
    ladder then climbs the largest changes first."""
    try:
        stored = read_history(store, summaries=True)
        newest = store.latest()
    except StoreError as error:
        say(f"the ladder's rotation starts afresh: the store cannot be read ({error})")
        return None
    return latest_evidence([*stored.nights, *([newest] if newest is not None else [])])


def newest_stored(snapshots: Snapshots, say: Callable[[str], None] = print) -> Snapshot | None:
    """The store's newest nightly, whose reductions `run` and `triagebot reproduce` try first;
    None, said in one line, when the store cannot be read (a job without its credentials): the
    reductions then start afresh."""
    try:
        return snapshots.store.latest()
    except StoreError as error:
        say(f"no earlier reductions tried: the store cannot be read ({error})")
        return None


def reduce_bounds(config: Config, timeout: float | None = None) -> Bounds:
    """How long the night's reductions may take (`[sweep] reduce_group_seconds` and
    `reduce_night_seconds`), each candidate script within `timeout` (default `[sweep] timeout`)."""
    settings = config.sweep
    return Bounds(settings.reduce_group_seconds, settings.reduce_night_seconds, timeout or settings.timeout)


# Scripts "auto" runs at once, at most: a night has a handful of groups, and each script starts
# a Python with torch (on a GPU runner, a CUDA context each).
AUTO_SCRIPT_LANES = 4


def script_lanes(config: Config) -> int:
    """How many reproduction scripts run at once: as many as the sweep's workers (`[sweep]
    jobs`; "auto": the cores this process may use, `AUTO_SCRIPT_LANES` at most)."""
    return workers(config.sweep.jobs, most=AUTO_SCRIPT_LANES)


def with_reproductions(
    snapshot: Snapshot,
    python: str = sys.executable,
    timeout: float = 300.0,
    bounds: Bounds | None = None,
    earlier: Snapshot | None = None,
    lanes: int = 1,
) -> Snapshot:
    """`snapshot` with a reproduction script per confirmed crash group, each run once with
    `python` (which must have torch) to verify that it raises the recorded signature, then
    within `bounds` (None: not reduced) each wrong result at the default config located
    (`reduce.wrong`) and the reproductions reduced in what is left of the night's time
    (`triagebot.reduce`), the reductions of the nightly `earlier` tried first; `lanes` scripts
    at once (`script_lanes`)."""
    progress = make_progress()
    try:
        found = reproduce(snapshot, python=python, timeout=timeout, progress=progress, lanes=lanes)
        if bounds is not None:
            # Wrong results at the default config first (the night's first news), then the crash
            # reductions within what is left of the night's time.
            start = time.monotonic()
            found = locate_wrong_results(found, bounds, python)
            left = max(0.0, bounds.night_seconds - (time.monotonic() - start))
            rest = Bounds(bounds.group_seconds, left, bounds.probe_timeout)
            found = reduce_reproductions(snapshot, found, rest, python, progress, earlier, lanes)
    finally:
        progress.close()
    return snapshot.model_copy(update={"reproductions": found})


def reproduce_file(
    path: Path,
    out: Path | None = None,
    timeout: float = 300.0,
    bounds: Bounds | None = None,
    earlier: Snapshot | None = None,
    lanes: int = 1,
    scheme: KeyScheme | None = None,
) -> tuple[Path, Snapshot]:
    """`triagebot reproduce`: the snapshot (or stream) at `path`, keyed as `scheme` names its
    night (`read_input`), with its reproductions, reduced within `bounds` (`earlier`'s reductions
    tried first), `lanes` scripts at once, written to `out`, else in place (a stream's as a
    snapshot beside it, FILE.json)."""
    snapshot = read_input(path, scheme, reproductions=False)
    current = with_reproductions(snapshot, timeout=timeout, bounds=bounds, earlier=earlier, lanes=lanes)
    target = out or (path.with_suffix(".json") if is_stream(path) else path)
    return write_snapshot(current, target), current


def sweep_flags(
    stored: Snapshot, config: Config, work: Path, sweeper: Callable[[Config, Path, bool], Snapshot]
) -> Snapshot:
    """`stored` with the runs of `config`'s flags that it lacks: their stream in
    `work`/sweep.jsonl starts with the stored baseline runs (`seed_stream`), so that `sweeper`,
    resuming it, makes only the flags' runs; an interrupted one is finished."""
    flags = [flag for flag in config.flags if flag not in stored.flags]
    narrowed = config.with_flags(flags)
    stream = work / "sweep.jsonl"
    if not stream.exists():
        seed_stream(stored, narrowed, stream)
    try:
        return add_flags(stored, sweeper(narrowed, work, True))
    except StreamError as error:  # another machine's night: its baseline cannot be reused here
        raise PipelineError(
            f"cannot sweep flag(s) {', '.join(flags)} into the stored snapshot {stored.key}: {error} "
            "(the next build sweeps them; --force sweeps this one again, whole)"
        ) from None


def seed_stream(stored: Snapshot, config: Config, path: Path) -> None:
    """A stream of `config`'s flags over `stored`'s selection holding the stored baseline runs
    (the sweep's, the confirmations and the ladder's), as a sweep interrupted after them."""
    header = SweepHeader(
        environment=stored.environment,
        flags={name: flag.patch for name, flag in config.flags.items()},
        when={name: flag.when for name, flag in config.flags.items()},
        corpus=stored.corpus,
        started=stored.created,
        checks=stored.checks,
        ladder=stored.ladder,
    )
    writer = StreamWriter.create(path, header)
    try:
        for result in stored.results:
            for record in _baseline_records(result):
                writer.write(record)
    finally:
        writer.close()


def _baseline_records(result: ModelResult) -> list[RunRecord]:
    baseline = result.outcomes.get(BASELINE)
    if baseline is None:
        return []

    def record(outcome: Outcome, attempt: int = 0, backend: str | None = None) -> RunRecord:
        return RunRecord(
            model=result.model,
            config=BASELINE,
            attempt=attempt,
            outcome=outcome,
            spec=result.spec,
            backend=backend,
        )

    records = [record(baseline)]
    records += [record(again, n) for n, again in enumerate(result.confirmations.get(BASELINE, []), 1)]
    for rung, outcome in result.ladder.get(BASELINE, {}).items():
        records.append(record(outcome, backend=rung))
    for rung, reruns in result.ladder_confirmations.get(BASELINE, {}).items():
        records += [record(again, n, rung) for n, again in enumerate(reruns, 1)]
    return records


def add_flags(stored: Snapshot, extra: Snapshot) -> Snapshot:
    """`stored` with the runs of the flags of `extra` (a sweep of the same night) that it lacks,
    model by model, and their reproductions; everything else, its baseline included, stays as
    stored."""
    new = [flag for flag in extra.flags if flag not in stored.flags]
    by_model = {result.model: result for result in extra.results}

    def only_new(table: dict) -> dict:
        return {flag: value for flag, value in table.items() if flag in new}

    results = []
    for result in stored.results:
        more = by_model.get(result.model)
        if more is not None:
            result = result.model_copy(
                update={
                    "outcomes": {**result.outcomes, **only_new(more.outcomes)},
                    "confirmations": {**result.confirmations, **only_new(more.confirmations)},
                    "ladder": {**result.ladder, **only_new(more.ladder)},
                    "ladder_confirmations": {
                        **result.ladder_confirmations,
                        **only_new(more.ladder_confirmations),
                    },
                }
            )
        results.append(result)
    return stored.model_copy(
        update={
            "flags": {**stored.flags, **only_new(extra.flags)},
            "when": {**stored.when, **only_new(extra.when)},
            "results": results,
            "reproductions": [*stored.reproductions, *(r for r in extra.reproductions if r.flag in new)],
        }
    )


def with_stored_flags(store: Store, snapshot: Snapshot) -> Snapshot:
    """`snapshot` as the night to store: merged into the stored snapshot of its key when that
    is the same night swept under other flags (a sweep of only the flags it lacked), else as
    it is (the store refuses it when it would replace another night)."""
    if snapshot.key not in store:
        return snapshot
    stored = store.get(snapshot.key)
    if all(flag in snapshot.flags for flag in stored.flags):
        return snapshot
    same_night = stored.environment.same_build(snapshot.environment) and same_selection(
        stored.corpus, snapshot.corpus
    )
    if not same_night:
        return snapshot  # the store refuses it, naming both
    return add_flags(stored, snapshot)
