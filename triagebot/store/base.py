"""The store interface, key ordering, snapshot files, records, and the in-memory double.

Files are written atomically (a unique temporary file in the same folder, flushed to disk, then
renamed over the target), so a reader or a second writer never sees half a file, with the mode
a plain `open` would give them (the umask's, not the temporary file's 0600). A stored snapshot
is replaced only by the same night (`selection`). A file that
cannot be read names itself in a one-line `StoreError`; readers of history (`history`,
`latest_before`, `latest`, `find_build`) skip such a file with a warning instead of failing.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import sys
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from triagebot.config import Config
from triagebot.errors import StoreError
from triagebot.results import Environment, KeyScheme, Snapshot, key_versions, same_night
from triagebot.store.selection import comparable, describe, replacement_problem

R = TypeVar("R", bound=BaseModel)

_SAFE_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+\-]*")  # used with fullmatch: the whole key
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+\-]{0,199}")
_DEV = re.compile(r"^(?P<release>[\d.]*\d)(?:\.?(?P<pre>a|b|rc)(?P<pre_n>\d+))?(?:\.dev(?P<dev>\d+))?")


def check_key(key: str) -> str:
    """A key becomes a file name: refuse anything that could leave the folder (checked whole, so
    a trailing newline is refused too)."""
    if not isinstance(key, str) or not _SAFE_KEY.fullmatch(key) or ".." in key:
        raise StoreError(f"snapshot key {key!r} is not a plain version string")
    return key


def check_record_path(folder: str, name: str) -> tuple[list[str], str]:
    """A record's folder (`/`-separated parts) and name become a path: each part checked whole."""
    parts = folder.split("/")
    for part in [*parts, name]:
        if not _SAFE_NAME.fullmatch(part) or ".." in part:
            raise StoreError(f"record {folder}/{name} is not a plain path: {part!r}")
    return parts, name


def warn(message: str) -> None:
    print(f"triagebot: warning: {message}", file=sys.stderr)


def key_order(key: str) -> tuple:
    """Sort key for snapshot keys: by torch version (2.12.0.dev20260408+cu128 < 2.12.0rc1 <
    2.12.0 < 2.12.1), then by transformers version where the key names one
    (`2.13.0+cpu_transformers-5.9.0` < `..._transformers-5.10.0`; a key of torch alone first).

    Keys that are not versions sort after every version, by name.
    """
    torch, transformers = key_versions(key)
    order = _version_order(torch)
    if order is None:
        return (1, (), 0, 0, (), key)
    return (0, *order, _version_order(transformers or "") or (), key)


def _version_order(version: str) -> tuple[tuple[int, ...], int, int] | None:
    """(release, stage, number) of a version, None when it is not one."""
    match = _DEV.match(version)
    if not match:
        return None
    release = tuple(int(part) for part in match["release"].split("."))
    # A dev build comes before any pre-release and release of its version; a release last.
    if match["dev"] is not None:
        stage, number = 0, int(match["dev"])
    elif match["pre"] is not None:
        stage, number = 1 + ["a", "b", "rc"].index(match["pre"]), int(match["pre_n"])
    else:
        stage, number = 4, 0
    return release, stage, number


def read_text(path: str | Path) -> str:
    """A UTF-8 file's text; an unreadable or undecodable file is a StoreError naming it."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise StoreError(f"{path}: cannot read: {error.strerror or error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise StoreError(f"{path}: not UTF-8 text (byte {error.start} is {data[error.start]:#04x})") from None


def read_record(path: str | Path, kind: type[R], what: str) -> R:
    """A JSON file read as the record `kind`; errors name the file and the first problem."""
    text = read_text(path)
    try:
        return kind.model_validate_json(text)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        message = " ".join(str(first["msg"]).split())[:200]
        raise StoreError(f"{path}: not {what}: '{where}': {message}") from None


def read_snapshot(path: str | Path) -> Snapshot:
    """A snapshot JSON file; errors name the file and what is wrong with it (including a key
    that could not name a file of the store)."""
    snapshot = read_record(path, Snapshot, "a snapshot")
    try:
        check_key(snapshot.key)
    except StoreError as error:
        raise StoreError(f"{path}: {error}") from None
    return snapshot


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_umask()
"""What `open` would give a new file: readable by the group and others as the umask allows."""


def write_text(path: str | Path, text: str) -> Path:
    """Write atomically: a unique temporary file beside `path`, flushed to disk, renamed over it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(handle, _FILE_MODE)  # mkstemp's 0600 would hide the store from the group
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError):  # the rename itself survives a crash once the folder is synced
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
    return path


def write_snapshot(snapshot: Snapshot, path: str | Path) -> Path:
    """Write atomically, so that a reader never sees half a snapshot."""
    return write_text(path, snapshot.model_dump_json(indent=1) + "\n")


@contextlib.contextmanager
def file_lock(path: Path, what: str, say: Callable[[str], None] = warn) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing) for the duration; when another
    process holds it, say so and wait for it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            say(f"{what} is in use by {holder} ({path}); waiting for it to finish")
            fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class Store(ABC):
    """Snapshots keyed by torch version, or by torch and transformers versions
    (`results.snapshot_key`). The store is the source of truth that issues derive from.

    Backends implement `_write`, `_read` and `_keys` for snapshots and `_write_records`,
    `_read_records` for the tracker's records; ordering, build identity and skipping unreadable
    history live here.
    """

    warn: Callable[[str], None] = staticmethod(warn)

    @abstractmethod
    def _write(self, snapshot: Snapshot) -> None: ...

    @abstractmethod
    def _read(self, key: str) -> Snapshot | None: ...

    @abstractmethod
    def _keys(self) -> list[str]: ...

    @abstractmethod
    def _write_records(self, folder: list[str], texts: dict[str, str]) -> None: ...

    @abstractmethod
    def _read_records(self, folder: list[str]) -> dict[str, str]: ...

    def records(self, folder: str, kind: type[R]) -> dict[str, R]:
        """The records stored under `folder` (e.g. `issues/pytorch/pytorch`), by name; an
        unreadable one is skipped with a warning (the tracker then falls back on GitHub)."""
        parts, _ = check_record_path(folder, "x")
        found = {}
        for name, text in self._read_records(parts).items():
            try:
                found[name] = kind.model_validate_json(text)
            except ValidationError as error:
                where = "/".join([folder, name])
                self.warn(f"record {where} is unreadable ({error.errors()[0]['msg']}); skipped")
        return found

    def put_records(self, folder: str, records: dict[str, BaseModel]) -> None:
        """Store (or replace) `records` under `folder`, by name, in one write."""
        if not records:
            return
        parts = check_record_path(folder, "x")[0]
        for name in records:
            check_record_path(folder, name)
        self._write_records(parts, {name: r.model_dump_json(indent=1) + "\n" for name, r in records.items()})

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """Held by a run from before it reads the store until it has published: two runs on
        one store serialise. Nothing to hold for the in-memory store."""
        return contextlib.nullcontext()

    def put(self, snapshot: Snapshot, config: Config | None = None) -> bool:
        """Store `snapshot`, or replace the one under its key when that is the same night, or a
        trial of its build that `config`'s night replaces (`selection.replacement_problem`;
        anything else is a StoreError, and the stored night is kept); True when it is news, False
        when another stored key has the same build, torch and transformers (the same build under
        another name: nothing changed)."""
        self.check_put(snapshot, config)
        # One build is torch and transformers, whichever of them names the nights.
        same = self.find_build(snapshot.environment, "torch+transformers")
        self._write(snapshot)
        return same is None or same == snapshot.key

    def check_put(self, snapshot: Snapshot, config: Config | None = None) -> None:
        """Raise the StoreError `put` would raise for `snapshot`, storing nothing."""
        key = check_key(snapshot.key)
        stored = self._read(key) if key in self else None
        problem = replacement_problem(stored, snapshot, config) if stored is not None else None
        if problem is not None:
            raise StoreError(
                f"the store has snapshot {describe(stored)}; the new one ({describe(snapshot)}) would "
                f"replace it, and {problem}: kept the stored one (store the new one in another "
                "folder: --store DIR)"
            )

    def previous_of(self, snapshot: Snapshot) -> Snapshot | None:
        """The night `snapshot` is compared with: the newest readable snapshot ordered before
        it, of another build and a comparable selection (`selection.comparable`)."""
        order = key_order(snapshot.key)
        for key in reversed([k for k in self.keys() if key_order(k) < order]):
            candidate = self.readable(key)
            if (
                candidate is not None
                and not candidate.environment.same_build(snapshot.environment)
                and comparable(candidate.corpus, snapshot.corpus)
            ):
                return candidate
        return None

    def path_of(self, key: str) -> Path | None:
        """The file this store keeps snapshot `key` in; None when it keeps it in no file."""
        return None

    @property
    def location(self) -> Path | None:
        """The folder this store keeps its files in; None when it keeps none."""
        return None

    def get(self, key: str) -> Snapshot:
        snapshot = self._read(check_key(key))
        if snapshot is None:
            raise StoreError(f"no snapshot {key!r} in the store")
        return snapshot

    def __contains__(self, key: str) -> bool:
        return key in self._keys()

    def keys(self) -> list[str]:
        """Every stored key, oldest build first (a file whose name is not a key is left out)."""
        keys = []
        for key in self._keys():
            try:
                keys.append(check_key(key))
            except StoreError as error:
                self._skip(key, str(error))
        return sorted(keys, key=key_order)

    def _skip(self, key: str, reason: str) -> None:
        skipped = self.__dict__.setdefault("_skipped", set())
        if key not in skipped:
            skipped.add(key)
            self.warn(f"{reason}; skipped")

    def readable(self, key: str) -> Snapshot | None:
        """The snapshot `key`, or None (with a warning, once) when its file cannot be read:
        for readers of history, which go on without it."""
        try:
            return self.get(key)
        except StoreError as error:
            self._skip(key, str(error))
            return None

    def latest(self) -> Snapshot | None:
        """The newest readable snapshot."""
        for key in reversed(self.keys()):
            snapshot = self.readable(key)
            if snapshot is not None:
                return snapshot
        return None

    def latest_before(self, key: str, *, other_build: bool = True) -> Snapshot | None:
        """The newest snapshot ordered before `key`; with `other_build`, skip snapshots of the same
        build as `key` (when `key` is stored), since comparing a build with itself says nothing."""
        here = self.readable(check_key(key)) if key in self else None
        for candidate in reversed([k for k in self.keys() if key_order(k) < key_order(key)]):
            snapshot = self.readable(candidate)
            if snapshot is None:
                continue
            if other_build and here is not None and snapshot.environment.same_build(here.environment):
                continue
            return snapshot
        return None

    def history(self, until: str | None = None, limit: int | None = None) -> list[Snapshot]:
        """Readable stored snapshots up to and including `until` (all when None), oldest first,
        the last `limit`."""
        keys = [k for k in self.keys() if until is None or key_order(k) <= key_order(until)]
        snapshots = [s for s in map(self.readable, keys) if s is not None]
        if limit is not None:
            snapshots = snapshots[-limit:] if limit > 0 else []
        return snapshots

    def find_build(self, build: Environment, scheme: KeyScheme) -> str | None:
        """The key of the first readable snapshot of `build`'s night where `scheme` names the
        nights (`results.same_night`): its torch (by git hash; by version where either has none),
        and, with "torch+transformers", its transformers where both name one."""
        for key in self.keys():
            snapshot = self.readable(key)
            if snapshot is not None and same_night(snapshot.environment, build, scheme):
                return key
        return None


class MemoryStore(Store):
    """A store in a dict: the double for tests, with the same semantics as the real ones."""

    def __init__(self, snapshots: list[Snapshot] | None = None) -> None:
        self._snapshots: dict[str, str] = {}
        self._records: dict[tuple[str, ...], dict[str, str]] = {}
        for snapshot in snapshots or []:
            self.put(snapshot)

    def _write_records(self, folder: list[str], texts: dict[str, str]) -> None:
        self._records.setdefault(tuple(folder), {}).update(texts)

    def _read_records(self, folder: list[str]) -> dict[str, str]:
        return dict(self._records.get(tuple(folder), {}))

    def _write(self, snapshot: Snapshot) -> None:
        # Kept as JSON so that a test cannot mutate a stored snapshot through a reference.
        self._snapshots[snapshot.key] = snapshot.model_dump_json()

    def _read(self, key: str) -> Snapshot | None:
        text = self._snapshots.get(key)
        return Snapshot.model_validate_json(text) if text is not None else None

    def _keys(self) -> list[str]:
        return list(self._snapshots)


class LocalStore(Store):
    """One `<key>.json` per snapshot in a folder (default `.triagebot/snapshots/`); records in
    `records/<folder>/<name>.json` beneath it; `.lock` serialises two runs on one folder."""

    def __init__(self, path: str | Path = ".triagebot/snapshots") -> None:
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise StoreError(f"{self.path}: store path is not a folder")

    def file(self, key: str) -> Path:
        return self.path / f"{check_key(key)}.json"

    def path_of(self, key: str) -> Path:
        return self.file(key)

    @property
    def location(self) -> Path:
        return self.path

    def _write(self, snapshot: Snapshot) -> None:
        write_snapshot(snapshot, self.file(snapshot.key))

    def _read(self, key: str) -> Snapshot | None:
        path = self.file(key)
        return read_snapshot(path) if path.exists() else None

    def _keys(self) -> list[str]:
        if not self.path.is_dir():
            return []
        return [path.stem for path in self.path.glob("*.json") if not path.name.startswith(".")]

    def _write_records(self, folder: list[str], texts: dict[str, str]) -> None:
        for name, text in texts.items():
            write_text(self.path.joinpath("records", *folder, f"{name}.json"), text)

    def _read_records(self, folder: list[str]) -> dict[str, str]:
        return read_folder(self.path.joinpath("records", *folder), self)

    def lock(self) -> contextlib.AbstractContextManager[None]:
        return file_lock(self.path / ".lock", f"the store {self.path}", self.warn)


def read_folder(folder: Path, store: Store) -> dict[str, str]:
    """name -> text of every readable `*.json` record in `folder`."""
    if not folder.is_dir():
        return {}
    texts = {}
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith("."):
            continue
        try:
            texts[path.stem] = read_text(path)
        except StoreError as error:
            store.warn(f"{error}; skipped")
    return texts
