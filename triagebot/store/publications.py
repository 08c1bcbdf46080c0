"""What the store remembers of publishing: which nightlies were published to which repository,
and the lock two publishers of one repository take turns on.

Beside the tracker's memory of each issue (`issues/OWNER/NAME/`), one `PublishedNight` per
(repository, nightly) under `published/OWNER/NAME/<key>`: `pending` from the moment the nightly
is stored to be published until every write is done, then `published`; `superseded` when a
newer nightly was published first, so that publishing it now would roll the issues back.

`tracking_lock(store, repo)` is held while a run reads and writes a repository's tracking
issues, so that two publishers never both open the same issue: a file lock for a local store
(runs on one machine), a lease on the data branch for a git store (runs anywhere).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from triagebot.results import PublishedNight, PublishedState
from triagebot.store.base import LocalStore, Store, file_lock, key_order, warn
from triagebot.store.git import GitStore
from triagebot.store.lease import Lease, branch_lease

FOLDER = "published"
_IN_MEMORY: dict[tuple[int, str], threading.Lock] = {}
_IN_MEMORY_GUARD = threading.Lock()


def folder(repo: str) -> str:
    return f"{FOLDER}/{repo}"


def published_nights(store: Store, repo: str) -> dict[str, PublishedNight]:
    """key -> the record of publishing that nightly to `repo`."""
    return {record.key: record for record in store.records(folder(repo), PublishedNight).values()}


def mark_night(store: Store, repo: str, key: str, state: PublishedState, line: str = "") -> None:
    """Record that nightly `key` is `state` for `repo` (`line`: what publishing said)."""
    known = store.records(folder(repo), PublishedNight).get(key)
    if known is not None and known.state == state and known.line == line:
        return  # nothing new: no write (a git store would push a commit for it)
    record = PublishedNight(repo=repo, key=key, state=state, at=datetime.now(UTC), line=line)
    store.put_records(folder(repo), {key: record})


def owed_nights(store: Store, repo: str) -> tuple[list[str], list[str]]:
    """The nightlies stored but not published to `repo`, oldest first: those still to publish,
    and those a newer published nightly has superseded (publishing them would roll back)."""
    records = published_nights(store, repo)
    published = [key for key, record in records.items() if record.state == "published"]
    newest = max(published, key=key_order) if published else None
    pending = sorted(
        (key for key, record in records.items() if record.state == "pending" and key in store),
        key=key_order,
    )
    if newest is None:
        return pending, []
    late = [key for key in pending if key_order(key) < key_order(newest)]
    return [key for key in pending if key not in late], late


def tracking_lock(
    store: Store, repo: str, *, lease: Lease | None = None, say: Callable[[str], None] = warn
) -> contextlib.AbstractContextManager[None]:
    """The lock on `repo`'s tracking state in `store`: hold it from reading GitHub to the last
    write, so that a second publisher waits and then finds the first one's issues."""
    what = f"publishing to {repo}"
    name = repo.replace("/", "--")
    if isinstance(store, GitStore):
        return branch_lease(store, f"publish-{name}", what, lease, say)
    if isinstance(store, LocalStore):
        return file_lock(store.path / f".publish-{name}.lock", what, say)
    with _IN_MEMORY_GUARD:  # a store in memory: the publishers are threads of this process
        return _IN_MEMORY.setdefault((id(store), repo), threading.Lock())
