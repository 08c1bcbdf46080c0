"""Keeping the cache of bisection environments within a budget of disk (`--cache-gib`).

Each environment holds a torch build (about 5 GB), and a runner's tool cache keeps them between
nights: without a budget it fills the disk. After an environment is made, the least recently
used others are removed until the cache fits (each removal said in the log). An environment in
use is never removed: whoever uses one holds a shared lock on its lock file (`lock_of`) for as
long as it may run (a bisection: for one probe, `EnvironmentCache.done_with` releases it), and
pruning removes only a folder whose exclusive lock it gets at once, so an environment in use by
this process or by another job on the same runner is left alone. When last used is the lock
file's modification time, touched at each use.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

LOCK = ".lock"  # beside each environment's folder (an installer may empty the folder)
GIB = 1 << 30
DEFAULT_CACHE_GIB = 40.0  # eight environments of about 5 GB each


def size_of(folder: Path) -> int:
    """The bytes of every file under `folder` (links not followed)."""
    total = 0
    for top, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(top, name)).st_size
            except OSError:  # removed meanwhile
                continue
    return total


def lock_of(folder: Path) -> Path:
    """The lock file of the environment in `folder`: beside it, kept when it is removed."""
    return folder.with_name(folder.name + LOCK)


class InUse:
    """The shared locks this process holds on the environments it uses (see the module)."""

    def __init__(self) -> None:
        self._held: dict[Path, IO[bytes]] = {}

    def hold(self, folder: Path) -> None:
        """Mark `folder` in use until it is released, and used now."""
        lock = lock_of(folder)
        if folder not in self._held:
            handle = lock.open("ab")
            fcntl.flock(handle, fcntl.LOCK_SH)
            self._held[folder] = handle
        os.utime(lock)

    def release(self, folder: Path, *, forget: bool = False) -> None:
        """No longer in use; with `forget`, its lock file removed too (an install that failed
        leaves nothing in the cache)."""
        handle = self._held.pop(folder, None)
        if forget:
            lock_of(folder).unlink(missing_ok=True)
        if handle is not None:
            handle.close()

    def release_all(self) -> None:
        for handle in self._held.values():
            handle.close()
        self._held.clear()


@dataclass(frozen=True)
class Entry:
    folder: Path
    used: float  # when last used (seconds since the epoch); 0: never (an install cut short)
    size: int


def prune(root: Path, budget_bytes: int, say: Callable[[str], None]) -> list[Path]:
    """Remove the least recently used environments under `root` until what is left fits in
    `budget_bytes`, never one in use; the folders removed, each said."""
    entries = sorted(_entries(root), key=lambda entry: entry.used)
    total = sum(entry.size for entry in entries)
    removed = []
    for entry in entries:
        if total <= budget_bytes:
            break
        if _remove_unless_in_use(entry.folder):
            total -= entry.size
            removed.append(entry.folder)
            say(
                f"  {entry.folder.name}: removed from the environment cache, the least recently used "
                f"({entry.size / GIB:.1f} GiB; the cache now holds {total / GIB:.1f} GiB of "
                f"{budget_bytes / GIB:.1f} GiB)"
            )
    return removed


def _entries(root: Path) -> list[Entry]:
    if not root.is_dir():
        return []
    found = []
    for folder in root.iterdir():
        if folder.is_dir() and not folder.is_symlink():
            lock = lock_of(folder)
            used = lock.stat().st_mtime if lock.is_file() else 0.0
            found.append(Entry(folder, used, size_of(folder)))
    return found


def _remove_unless_in_use(folder: Path) -> bool:
    """Remove `folder` when no one holds its lock; False when someone does."""
    try:
        handle = lock_of(folder).open("ab")
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        shutil.rmtree(folder, ignore_errors=True)
    return True
