"""The store interface, key ordering, snapshot files, and the in-memory double."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from pathlib import Path

from pydantic import ValidationError

from triagebot.errors import StoreError
from triagebot.results import Snapshot

_SAFE_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+\-]*$")
_DEV = re.compile(r"^(?P<release>[\d.]*\d)(?:\.?(?P<pre>a|b|rc)(?P<pre_n>\d+))?(?:\.dev(?P<dev>\d+))?")




def check_key(key: str) -> str:
    """A key becomes a file name: refuse anything that could leave the folder."""
    if not _SAFE_KEY.match(key) or ".." in key:
        raise StoreError(f"snapshot key {key!r} is not a plain version string")
    return key


def key_order(key: str) -> tuple:
    """Sort key for torch versions: 2.12.0.dev20260408+cu128 < 2.12.0rc1 < 2.12.0 < 2.12.1.

    Keys that are not versions sort after every version, by name.
    """
    match = _DEV.match(key)
    if not match:
        return (1, (), 0, 0, 0, key)
    release = tuple(int(part) for part in match["release"].split("."))
    # A dev build comes before any pre-release and release of its version; a release last.
    if match["dev"] is not None:
        stage, number = 0, int(match["dev"])
    elif match["pre"] is not None:
        stage, number = 1 + ["a", "b", "rc"].index(match["pre"]), int(match["pre_n"])
    else:
        stage, number = 4, 0
    return (0, release, stage, number, 0, key)


def read_snapshot(path: str | Path) -> Snapshot:
    """A snapshot JSON file; errors name the file and what is wrong with it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise StoreError(f"{path}: cannot read: {error.strerror}") from None
    try:
        return Snapshot.model_validate_json(text)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise StoreError(f"{path}: not a snapshot: '{where}': {first['msg']}") from None


def write_snapshot(snapshot: Snapshot, path: str | Path) -> Path:
    """Write atomically (temp file, then rename) so that a reader never sees half a snapshot."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(snapshot.model_dump_json(indent=1) + "\n", encoding="utf-8")
    temporary.replace(path)
    return path


class Store(ABC):
    """Snapshots keyed by torch version. The store is the source of truth that issues derive from.

    Backends implement `_write`, `_read` and `_keys`; ordering and build identity live here.
    """

    @abstractmethod
    def _write(self, snapshot: Snapshot) -> None: ...

    @abstractmethod
    def _read(self, key: str) -> Snapshot | None: ...

    @abstractmethod
    def _keys(self) -> list[str]: ...

    def put(self, snapshot: Snapshot) -> bool:
        """Store (or replace) `snapshot`; True when it is news, False when another stored key has
        the same torch git hash (the same build under another name: nothing changed)."""
        check_key(snapshot.key)
        same = self.find_build(snapshot.environment.torch_git_version)
        self._write(snapshot)
        return same is None or same == snapshot.key

    def get(self, key: str) -> Snapshot:
        snapshot = self._read(check_key(key))
        if snapshot is None:
            raise StoreError(f"no snapshot {key!r} in the store")
        return snapshot

    def __contains__(self, key: str) -> bool:
        return key in self._keys()

    def keys(self) -> list[str]:
        """Every stored key, oldest build first."""
        return sorted(self._keys(), key=key_order)

    def latest(self) -> Snapshot | None:
        keys = self.keys()
        return self.get(keys[-1]) if keys else None

    def latest_before(self, key: str, *, other_build: bool = True) -> Snapshot | None:
        """The newest snapshot ordered before `key`; with `other_build`, skip snapshots of the same
        build as `key` (when `key` is stored), since comparing a build with itself says nothing."""
        here = self._read(check_key(key)) if key in self else None
        for candidate in reversed([k for k in self.keys() if key_order(k) < key_order(key)]):
            snapshot = self.get(candidate)
            if other_build and here is not None and snapshot.environment.same_build(here.environment):
                continue
            return snapshot
        return None

    def history(self, until: str | None = None, limit: int | None = None) -> list[Snapshot]:
        """Stored snapshots up to and including `until` (all when None), oldest first, the last `limit`."""
        keys = [k for k in self.keys() if until is None or key_order(k) <= key_order(until)]
        if limit is not None:
            keys = keys[-limit:] if limit > 0 else []
        return [self.get(k) for k in keys]

    def find_build(self, git_version: str) -> str | None:
        """The key of the first stored snapshot built from torch commit `git_version`, if any."""
        if not git_version:
            return None
        for key in self.keys():
            if self.get(key).environment.torch_git_version == git_version:
                return key
        return None


class MemoryStore(Store):
    """A store in a dict: the double for tests, with the same semantics as the real ones."""

    def __init__(self, snapshots: list[Snapshot] | None = None) -> None:
        self._snapshots: dict[str, str] = {}
        for snapshot in snapshots or []:
            self.put(snapshot)

    def _write(self, snapshot: Snapshot) -> None:
        # Kept as JSON so that a test cannot mutate a stored snapshot through a reference.
        self._snapshots[snapshot.key] = snapshot.model_dump_json()

    def _read(self, key: str) -> Snapshot | None:
        text = self._snapshots.get(key)
        return Snapshot.model_validate_json(text) if text is not None else None

    def _keys(self) -> list[str]:
        return list(self._snapshots)


class LocalStore(Store):
    """One `<key>.json` per snapshot in a folder (default `.triagebot/snapshots/`)."""

    def __init__(self, path: str | Path = ".triagebot/snapshots") -> None:
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise StoreError(f"{self.path}: store path is not a folder")

    def file(self, key: str) -> Path:
        return self.path / f"{check_key(key)}.json"

    def _write(self, snapshot: Snapshot) -> None:
        write_snapshot(snapshot, self.file(snapshot.key))

    def _read(self, key: str) -> Snapshot | None:
        path = self.file(key)
        return read_snapshot(path) if path.exists() else None

    def _keys(self) -> list[str]:
        if not self.path.is_dir():
            return []
        return [path.stem for path in self.path.glob("*.json") if not path.name.startswith(".")]
