"""A lease on a git store's data branch: one job at a time holds it, across machines.

The lease is a file, `leases/<name>.json`, committed to the data branch to take it and removed
to give it back. git refuses a push that is not a fast-forward, so of two jobs taking the same
lease at once exactly one push lands; the other fetches, finds the lease held, and waits. A
lease names its holder and when it lapses, so that a job that died holding one holds up the
others for at most `ttl` seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from triagebot.store.base import StoreError, warn, write_text
from triagebot.store.git import GitStore

LEASES = "leases"
PUSH_ATTEMPTS = 8  # pushes rejected in a row before giving up (each after another job's push)


@dataclass
class Lease:
    """How long a lease lasts, how long to wait for one, and the clock (tests pass their own)."""

    ttl: float = 3600.0  # seconds a lease lasts unless given back: longer than any publish
    wait: float = 3600.0  # seconds to wait for another holder before giving up
    poll: float = 10.0  # seconds between two looks at a held lease
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.time


def holder_name() -> str:
    return f"{socket.gethostname()} pid {os.getpid()} {uuid.uuid4().hex[:8]}"


@contextlib.contextmanager
def branch_lease(
    store: GitStore, name: str, what: str, lease: Lease | None = None, say: Callable[[str], None] = warn
) -> Iterator[None]:
    """Hold the lease `name` on `store`'s data branch for the duration (`what`: what it guards,
    for the messages)."""
    lease = lease or Lease()
    holder = holder_name()
    path = f"{LEASES}/{name}.json"
    _take(store, path, holder, what, lease, say)
    try:
        yield
    finally:
        _give_back(store, path, holder)


def _held_by(store: GitStore, path: str) -> dict | None:
    try:
        return json.loads((store.checkout / path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _take(
    store: GitStore, path: str, holder: str, what: str, lease: Lease, say: Callable[[str], None]
) -> None:
    deadline = lease.clock() + lease.wait
    waiting, rejected = False, 0
    while True:
        store.sync()  # the branch as the remote has it: a rejected attempt of ours is dropped
        current = _held_by(store, path)
        if current and current.get("holder") != holder and float(current.get("until", 0)) > lease.clock():
            if lease.clock() >= deadline:
                raise StoreError(
                    f"{what} is held by {current.get('holder')} ({path} on {store.branch}) "
                    f"after waiting {lease.wait:.0f}s; it lapses by itself"
                )
            if not waiting:
                say(f"{what} is held by {current.get('holder')}; waiting for it")
                waiting = True
            lease.sleep(lease.poll)
            continue
        pushed = _commit(store, path, {"holder": holder, "until": lease.clock() + lease.ttl, "what": what})
        if pushed.returncode == 0:
            return
        # Another job pushed first (this lease, or anything else): look again, a few times.
        rejected += 1
        if rejected >= PUSH_ATTEMPTS:
            last = (pushed.stderr.strip().splitlines() or ["no output"])[-1]
            raise StoreError(f"cannot take {path} on {store.branch} for {what}: git push failed: {last}")


def _commit(store: GitStore, path: str, record: dict | None):
    """Commit `record` at `path` (None: remove it) and push; the push's completed process."""
    if record is None:
        store._git("rm", "--quiet", "--", path)
        message = f"lease {path}: given back"
    else:
        write_text(store.checkout / path, json.dumps(record, indent=1) + "\n")
        store._git("add", "--", path)
        message = f"lease {path}: {record['holder']}"
    store._git("commit", "--quiet", "-m", message)
    return store._git("push", "--quiet", "origin", f"HEAD:refs/heads/{store.branch}", check=False)


def _give_back(store: GitStore, path: str, holder: str) -> None:
    for _ in range(PUSH_ATTEMPTS):
        store.sync()
        current = _held_by(store, path)
        if not current or current.get("holder") != holder:
            return  # lapsed and taken by another: nothing of ours to give back
        if _commit(store, path, None).returncode == 0:
            return
    warn(f"could not give back {path} on {store.branch}; it lapses by itself")
