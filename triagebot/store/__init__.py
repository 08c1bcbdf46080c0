"""Reading and writing snapshots and the tracker's records (imports results only).

Public API, for cli and tracker:

- `Store`: `put(snapshot, config=None) -> bool` (stores it, or replaces the same night: one
  build, torch and transformers, one selection, its flags and more; or, with the `config` the
  night ran under, a trial of its build (`selection.is_configured_night`); anything else, a night
  of another transformers included, is a StoreError and the stored night is kept; False when a snapshot of
  the same build is already stored under another key: not news), `check_put(snapshot)` (that
  refusal, storing nothing), `previous_of(snapshot)` (the night a diff compares it with: like
  with like), `get(key)`, `keys()` (oldest build first: torch version order, then transformers
  version order, `key_order`), `latest()`, `latest_before(key)` (skips the same build),
  `history(until, limit)` (oldest first), `find_build(build, scheme)` (the stored night of a
  build where `[store] key` is `scheme`), `key in store`;
  `path_of(key)`: the file it keeps a snapshot in (None in memory), `location`: its folder.
  Readers of history skip a snapshot that cannot be read, with a warning; `get` names it.
  `records(folder, kind)` / `put_records(folder, {name: record})`: the tracker's memory (which
  issue tracks which flag, which commands were answered), one JSON file per record.
  `lock()`: held by a run, so that two runs on one store take turns.
- `LocalStore(path)`: one `<key>.json` per snapshot in a folder, default `.triagebot/snapshots/`.
- `GitStore(remote, branch, checkout)`: one `snapshots/<key>.json` per snapshot on a data branch
  (e.g. `triagebot-data`), pushed after each put with rebase-and-retry when another job pushed first.
- `MemoryStore(snapshots)`: the test double.
- `open_store(settings, repo_dir)` (`configured`): the store `[store]` in triagebot.toml names.
- `read_snapshot(path)`, `write_snapshot(snapshot, path)` (atomic), `key_order(key)`; errors are
  `StoreError`, one line naming the file.
- `selection`: `same_selection`, `comparable` (like with like), `replacement_problem`, `describe`.
- `find_bisection(store, axis, signature, good, bad)` / `keep_bisection(store, bisection)`
  (`bisections`): the bisections run, so that one (signature, range) is never bisected twice;
  `bisections_by_signature(store)`: the one an issue shows for each signature;
  `keep_bisections_in(store, folder)`: those a workflow job made, kept.
- `mark_night(store, repo, key, state)` / `owed_nights(store, repo)` / `published_nights`
  (`publications`): which nightlies were published to a repository, so that one stored but not
  published is published by the next run; `tracking_lock(store, repo)`: held while publishing
  to a repository, so that two publishers take turns (a lease on the data branch for a git
  store, `lease`).
"""

from __future__ import annotations

from triagebot.store.base import (
    LocalStore,
    MemoryStore,
    Store,
    StoreError,
    check_key,
    key_order,
    read_snapshot,
    write_snapshot,
)
from triagebot.store.bisections import (
    bisections_by_signature,
    find_bisection,
    keep_bisection,
    keep_bisections_in,
)
from triagebot.store.configured import open_store
from triagebot.store.git import GitStore
from triagebot.store.publications import mark_night, owed_nights, published_nights, tracking_lock

__all__ = [
    "GitStore",
    "LocalStore",
    "MemoryStore",
    "Store",
    "StoreError",
    "bisections_by_signature",
    "check_key",
    "find_bisection",
    "keep_bisection",
    "keep_bisections_in",
    "key_order",
    "mark_night",
    "open_store",
    "owed_nights",
    "published_nights",
    "read_snapshot",
    "tracking_lock",
    "write_snapshot",
]
