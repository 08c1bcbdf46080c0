"""What a night starts from: which build is installed, which snapshot a command names, and
whether the store already has that build.

torch is never imported here: the build is read by a child process, so that the sweep's warm
parent stays the only process that holds torch.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from triagebot.config import Config, StoreSettings, flag_name_problem
from triagebot.errors import PipelineError
from triagebot.pipeline.night import night_of
from triagebot.results import Environment, Night, Snapshot
from triagebot.store import Store, StoreError, check_key, key_order, open_store, read_snapshot

_BUILD_PROBE = (
    "import json, importlib.metadata as m, torch;"
    "print(json.dumps({'torch_version': torch.__version__,"
    " 'torch_git_version': getattr(torch.version, 'git_version', '') or ''}))"
)


def installed_build(python: str = sys.executable) -> Environment:
    """The torch this interpreter would sweep: version and git hash, read in a child process."""
    try:
        probe = subprocess.run(
            [python, "-c", _BUILD_PROBE], capture_output=True, text=True, timeout=300, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise PipelineError(f"cannot read the installed torch: {error}") from None
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["no output"])[-1]
        raise PipelineError(f"cannot import torch to read its version: {last}")
    return Environment.model_validate(json.loads(probe.stdout))


def already_swept(store: Store, build: Environment) -> str | None:
    """The key of a stored snapshot of `build`: same git hash, or the same version when the hash
    is unknown (a local build)."""
    found = store.find_build(build.torch_git_version)
    if found is not None:
        return found
    if not build.torch_git_version and build.torch_version in store:
        return build.torch_version
    return None


def is_stream(path: Path) -> bool:
    """Whether `path` is a sweep's JSON Lines stream: a `.jsonl` file, or one whose first line
    is a sweep header."""
    if path.suffix == ".jsonl":
        return True
    try:
        with path.open("rb") as handle:
            return handle.readline(64).lstrip().startswith(b'{"kind":"header"')
    except OSError as error:
        raise StoreError(f"{path}: cannot read: {error.strerror}") from None


def read_input(path: str | Path) -> Snapshot:
    """A snapshot file, or a sweep's JSON Lines stream merged into one (a `.jsonl` file, or any
    file whose first line is a sweep header). Its key and flag names are checked, since both
    end up in file names and in the hidden markers of issues."""
    # Imported here for start-up cost: the sweep package, for a stream only.
    from triagebot.sweep.stream import merge

    path = Path(path)
    snapshot = merge([path]) if is_stream(path) else read_snapshot(path)
    try:
        check_key(snapshot.key)
    except StoreError as error:
        raise StoreError(f"{path}: {error}") from None
    for flag in snapshot.flags:
        if flag_name_problem(flag) is not None:
            raise StoreError(f"{path}: flag name {flag!r} is not one a configuration could give")
    return snapshot


class Snapshots:
    """Snapshots by file (a snapshot, or a sweep's stream) or by key in the store: the one
    loader of every command that takes a snapshot. The store is opened on first use, so that a
    file never needs one."""

    def __init__(self, settings: StoreSettings, store: Store | None = None) -> None:
        self.settings = settings
        self._store = store

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = open_store(self.settings)
        return self._store

    def get(self, where: str | Path) -> Snapshot:
        path = Path(where)
        if path.is_file():
            return read_input(path)
        if path.exists():
            raise StoreError(f"{where}: not a snapshot file (a folder?)")
        key = str(where)
        try:
            check_key(key)
        except StoreError:
            raise StoreError(f"{where}: no such file") from None
        if key not in self.store:
            raise StoreError(f"{where}: no such file, and no snapshot with that key in the store")
        return self.store.get(key)

    def latest(self) -> Snapshot | None:
        return self.store.latest()

    def night(self, where: str, config: Config, previous: str | None = None) -> Night:
        """The night of the snapshot at `where` (`night_of`), compared with the one at
        `previous` when given: what `report` and `publish` render and publish."""
        current = self.get(where)
        return night_of(current, self.store, config, previous=self.get(previous) if previous else None)


def out_of_order(old: Snapshot, new: Snapshot) -> bool:
    """Whether `old` is the newer of the two: a later torch version, or, when the keys say
    nothing (the same version, or keys that are not versions), created later."""
    old_order, new_order = key_order(old.key), key_order(new.key)
    if old_order[0] == new_order[0] == 0 and old_order[1:4] != new_order[1:4]:
        return old_order > new_order
    return old.created > new.created
