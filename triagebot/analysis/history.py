"""What earlier nights stored, read once: the history a night is compared with, and the compact
data of every stored nightly the dashboard site shows.

- `read_history(store, cache, readers=...) -> StoredHistory`: every stored nightly's file and,
  for each but the newest, its `compact.NightData` (a `NightSummary`). Reading every snapshot
  dominates at corpus scale, so a nightly's data is read back from the data file that a site
  built into `cache` keeps for it (`DATA_FOLDER`) while the hashes of its snapshot file and of
  the one before it are unchanged; the others are computed from their snapshots by `readers`
  worker processes (default: the cores, `MAX_READERS` at most), each taking a run of consecutive
  nightlies, and the newest but one is kept whole
  with its rows for the newest night's diff. Writes nothing: the site writes the data files.
- `earlier(snapshot, store, previous=..., stored=...) -> Earlier`: what the night of `snapshot`
  is compared with (`night.choose_history`): its history and its previous nightly, whole. From
  `stored` when `snapshot` is its newest nightly (then only the previous nightly is read whole,
  not even that one when it was the last one read), else from every stored snapshot up to it.

The flow is one way: the store, then this history, then `analysis.night`, then the renderings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import NamedTuple

from triagebot.analysis.compact import (
    DATA_FOLDER,
    NightData,
    fingerprint,
    newest_data,
    night_data,
    read_night_data,
)
from triagebot.analysis.night_analysis import choose_history
from triagebot.errors import StoreError
from triagebot.results import ModelEffect, Night, NightSummary, Snapshot
from triagebot.store import Store, key_order, read_snapshot
from triagebot.workers import AUTO, workers

MAX_READERS = 4  # processes reading stored nightlies, at most, by default
# Below this many nightlies to read, worker processes cost more than they save.
PARALLEL_FROM = 8

Whole = tuple[Snapshot, list[ModelEffect]]
"""A nightly read whole, with its classified rows."""


@dataclass
class Source:
    """A stored nightly's file: where it is (None when the store keeps no file) and its SHA-256."""

    key: str
    path: Path | None
    source: str | None


@dataclass
class StoredHistory:
    """The store's nightlies as read once: every one's file (oldest first), the compact data of
    each but the newest (whose data comes from its night, `newest_data`), and the newest but
    one whole with its rows, when it was read here."""

    sources: list[Source]
    nights: list[NightData]  # of sources[:-1] (of all of them when read up to a night not stored)
    read: list[str]  # keys of the nightlies whose snapshot was read (the others: their data files)
    kept: Whole | None = None

    @property
    def newest(self) -> str | None:
        """The key of the newest stored nightly; None when the store holds none."""
        return self.sources[-1].key if self.sources else None

    def whole(self, key: str, store: Store) -> tuple[Snapshot, list[ModelEffect] | None]:
        """The stored nightly `key` whole, with its rows when they were kept."""
        if self.kept is not None and self.kept[0].key == key:
            return self.kept
        return store.get(key), None

    def newest_data(self, night: Night) -> NightData:
        """The newest nightly's data, from its night (which must be the newest's)."""
        before = self.sources[-2] if len(self.sources) > 1 else None
        diffed = before is not None and before.key == night.previous_key
        return newest_data(
            night, source=self.sources[-1].source, previous_source=before.source if diffed else None
        )


class Earlier(NamedTuple):
    """What a night is compared with: its history (oldest first, whole or summarised) and its
    previous nightly, whole, with its rows when they are already made."""

    history: list[Snapshot | NightSummary]
    previous: Snapshot | None
    previous_rows: list[ModelEffect] | None


def earlier(
    snapshot: Snapshot, store: Store, *, previous: Snapshot | None = None, stored: StoredHistory | None = None
) -> Earlier:
    """What the night of `snapshot` is compared with (see the module docstring); `previous`:
    the nightly to diff against instead of the newest stored one before it. Raises
    `StoreError` when the store cannot be listed."""
    if stored is None or stored.newest != snapshot.key:
        # Its summaries reach past `snapshot`, or there are none: the compact data of the
        # nightlies up to it, read one at a time (never every snapshot whole at once).
        stored = read_history(store, until=snapshot.key, readers=1, summaries=True)
    history, before = choose_history(snapshot, stored.nights, previous)
    if before is None or isinstance(before, Snapshot):
        return Earlier(history, before, None)
    whole, rows = stored.whole(before.key, store)  # the one nightly the diff reads whole
    return Earlier(history, whole, rows)


def read_history(
    store: Store,
    cache: str | Path | None = None,
    *,
    readers: int | None = None,
    until: str | None = None,
    summaries: bool = False,
    say: Callable[[str], None] = lambda line: None,
) -> StoredHistory:
    """Every stored nightly's compact data but the newest's (see the module docstring), from the
    data files under `cache`/`DATA_FOLDER` while they are still valid (nothing for an empty
    store). With `until`, of the nightlies before it only (every one of them when `until` is
    not stored). `summaries`: each nightly's `NightSummary` only, what a night's history reads
    (a year of them fits in memory; their `NightData` do not). A stored snapshot that cannot be
    read is skipped with a warning naming it; raises `StoreError` when the store cannot be
    listed."""
    sources = _sources(store, until)
    if not sources:
        return StoredHistory([], [], [])
    readers = readers or workers(AUTO, most=MAX_READERS)
    # The newest is read for its night, not here (unless it is before a night not stored).
    older = sources[:-1] if until is None or sources[-1].key == until else sources
    folder = Path(cache) / DATA_FOLDER if cache is not None else None
    nights = _cached(older, folder)
    missing = [index for index, night in enumerate(nights) if night is None]
    say(f"reading {len(missing) + 1} of {len(sources)} stored nightlies")
    computed, kept = _compute(store, older, missing, readers, say, summaries)
    for index, night in computed.items():
        nights[index] = night
    if summaries:
        nights = [summary_of(night) if night is not None else None for night in nights]
    if not missing or missing[-1] != len(older) - 1:
        kept = None  # the newest but one came from its data file
    read = [older[index].key for index in missing]
    return StoredHistory(sources, [night for night in nights if night is not None], read, kept)


def _sources(store: Store, until: str | None = None) -> list[Source]:
    try:
        keys = store.keys()
    except StoreError as error:
        raise StoreError(f"cannot read the store: {error}") from None
    sources = []
    for key in keys if until is None else [key for key in keys if key_order(key) <= key_order(until)]:
        path = store.path_of(key)
        try:
            source = fingerprint(path.read_bytes()) if path is not None else None
        except OSError as error:
            raise StoreError(f"{path}: cannot read: {error.strerror}") from None
        sources.append(Source(key, path, source))
    return sources


def _data_files(folder: Path | None) -> dict[str, NightData]:
    """Every readable data file in `folder`, by the key of its nightly (whatever its name)."""
    found: dict[str, NightData] = {}
    if folder is None or not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.js")):
        data = read_night_data(path)
        if data is not None:
            found.setdefault(data.key, data)
    return found


def _cached(sources: list[Source], folder: Path | None) -> list[NightData | None]:
    """Per nightly of `sources`, its data file in `folder` when it is still valid: made from the
    same snapshot file, diffed against the same nightly before it."""
    files = _data_files(folder)
    found: list[NightData | None] = []
    for index, item in enumerate(sources):
        cached = files.get(item.key) if item.source else None
        before = sources[index - 1] if index else None
        valid = (
            cached is not None
            and cached.source == item.source
            and cached.previous == (before.key if before else None)
            and cached.previous_source == (before.source if before else None)
        )
        found.append(cached if valid else None)
    return found


def _compute(
    store: Store,
    sources: list[Source],
    missing: list[int],
    readers: int,
    say: Callable[[str], None],
    summaries: bool = False,
) -> tuple[dict[int, NightData], Whole | None]:
    """The data of the nightlies `missing` (indexes into `sources`) from their snapshots (those
    that can be read: a warning names each of the others), and the last of them whole when it
    was computed in this process.

    With worker processes, this process computes the last run of nightlies while the workers
    compute the others. Each run diffs its first nightly against the one before it, which a
    worker reads again: the one cost of reading in parallel."""
    files = all(sources[index].path is not None for index in missing)
    parallel = files and readers > 1 and len(missing) >= PARALLEL_FROM
    runs = _chunks(missing, readers if parallel else 1)
    work = [([sources[i] for i in run], sources[run[0] - 1] if run[0] else None) for run in runs]
    results: list[list[NightData | None] | None] = [None] * len(work)
    kept: Whole | None = None
    if parallel and len(work) > 1:
        results, kept = _in_workers(work, store, readers, say, summaries)
    for index, (items, before) in enumerate(work):
        if results[index] is None:
            last = index == len(work) - 1
            results[index], whole = _summarise_run(items, before, store, keep=last, summaries=summaries)
            kept = whole if last else kept
    computed: dict[int, NightData] = {}
    for run, found in zip(runs, results, strict=True):
        assert found is not None
        for index, data in zip(run, found, strict=True):
            if data is not None:
                computed[index] = data
            else:
                store.readable(sources[index].key)  # says once which file is skipped, and why
    return computed, kept


Work = list[tuple[list[Source], Source | None]]
"""Runs of consecutive nightlies, each with the nightly before its first."""


def _in_workers(
    work: Work, store: Store, readers: int, say: Callable[[str], None], summaries: bool = False
) -> tuple[list[list[NightData | None] | None], Whole | None]:
    """`work` computed by worker processes, its last run by this one; a run left None when the
    workers failed, for this process to compute."""
    results: list[list[NightData | None] | None] = [None] * len(work)
    kept: Whole | None = None
    try:
        processes = min(readers - 1, len(work) - 1)
        with ProcessPoolExecutor(max_workers=processes, mp_context=get_context("spawn")) as pool:
            futures = [
                pool.submit(_summarise_run, items, before, summaries=summaries) for items, before in work[:-1]
            ]
            results[-1], kept = _summarise_run(*work[-1], store, keep=True, summaries=summaries)
            for index, future in enumerate(futures):
                results[index] = future.result()[0]
    except BrokenProcessPool:
        # A worker could not start (a caller whose __main__ cannot be imported again, such as a
        # script read from stdin) or died: the rest is read in this process instead.
        say("worker processes failed; reading the nightlies in this process")
    return results, kept


def _read(item: Source, store: Store | None) -> Snapshot | None:
    """The nightly of `item`; None when its file can no longer be read (truncated, or of a
    schema that changed): history goes on without it, as every reader of history does."""
    try:
        if item.path is not None:
            return read_snapshot(item.path)
        assert store is not None
        return store.get(item.key)
    except StoreError:
        return None


def _summarise_run(
    items: Sequence[Source],
    before: Source | None,
    store: Store | None = None,
    keep: bool = False,
    summaries: bool = False,
) -> tuple[list[NightData | None], Whole | None]:
    """The `NightData` of consecutive nightlies `items`, each diffed against the one before it
    (with `summaries`, its `NightSummary` only), and with `keep` the last of them whole (for the
    diff of the nightly after it); None for a nightly that cannot be read. A worker process is
    given no store: it reads the files."""
    previous = _read(before, store) if before is not None else None
    previous_source = before.source if previous is not None and before is not None else None
    previous_rows = None
    found: list[NightData | None] = []
    for item in items:
        snapshot = _read(item, store)
        if snapshot is None:
            found.append(None)  # said by `_compute`; the next nightly is diffed against the last read
            continue
        data, rows = night_data(
            snapshot,
            previous,
            source=item.source,
            previous_source=previous_source,
            previous_rows=previous_rows,
        )
        found.append(summary_of(data) if summaries else data)
        previous, previous_source, previous_rows = snapshot, item.source, rows
    kept = (previous, previous_rows) if keep and previous is not None and previous_rows is not None else None
    return found, kept


def summary_of(data: NightData) -> NightSummary:
    """What a later night's history reads of a nightly's data: its `NightSummary` alone."""
    return NightSummary.model_construct(**{name: getattr(data, name) for name in NightSummary.model_fields})


def _chunks(indexes: list[int], parts: int) -> list[list[int]]:
    """`indexes` (sorted) cut into runs of consecutive indexes, none longer than a `parts`-th of
    them: one run per worker when they are all consecutive (a first build)."""
    runs: list[list[int]] = []
    for index in indexes:
        if runs and runs[-1][-1] == index - 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    size = max(1, -(-len(indexes) // max(1, parts)))
    return [run[start : start + size] for run in runs for start in range(0, len(run), size)]
