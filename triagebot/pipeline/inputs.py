"""What a night starts from: which build is installed, which snapshot a command names, and
whether the store already has that build.

torch is never imported here: the build is read by a child process, so that the sweep's warm
parent stays the only process that holds torch.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from triagebot.config import Config, StoreSettings, flag_name_problem
from triagebot.errors import PipelineError
from triagebot.pipeline.analysing import night_of
from triagebot.reproduce.verify import groups_to_reproduce
from triagebot.results import Environment, KeyScheme, Night, Snapshot, keyed
from triagebot.store import Store, StoreError, check_key, key_order, open_store, read_snapshot
from triagebot.store.selection import describe, is_configured_night

_BUILD_PROBE = (
    "import json, importlib.metadata as m, torch;"
    "t = [d.version for d in m.distributions(name='transformers')];"
    "print(json.dumps({'torch_version': torch.__version__,"
    " 'torch_git_version': getattr(torch.version, 'git_version', '') or '',"
    " 'transformers_version': t[0] if t else ''}))"
)


def installed_build(python: str = sys.executable) -> Environment:
    """The build this interpreter would sweep: torch's version and git hash, and transformers'
    version (from its metadata, not imported), read in a child process."""
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


def already_swept(store: Store, build: Environment, config: Config, flags: Iterable[str] = ()) -> str | None:
    """The key of the stored configured night of `build` (`Store.find_build` where `[store] key`
    names the nights: the same git hash, or the same version when the hash is unknown, a local
    build; and with "torch+transformers", the same transformers) that ran every one of `flags`.
    A trial (a night of another selection, `selection.is_configured_night`) is not that night:
    the configured one still needs sweeping, and replaces it."""
    found = store.find_build(build, config.store.key)
    stored = store.readable(found) if found is not None else None
    if stored is None or not is_configured_night(stored.corpus, config):
        return None
    if any(flag not in stored.flags for flag in flags):
        return None
    return found


@dataclass(frozen=True)
class SweepNeed:
    """What a night must sweep of a build: whether (`sweep`) and why (`reason`, one line), the
    stored snapshot of the build (`existing`), and the configured flags that snapshot lacks
    (`flags`): only their runs are swept, into it."""

    sweep: bool
    reason: str
    existing: str | None = None
    flags: tuple[str, ...] = ()

    def outputs(self) -> dict[str, str]:
        """The step outputs of `run --check`: sweep=true|false, the flags to sweep, the reason."""
        return {"sweep": str(self.sweep).lower(), "flags": ",".join(self.flags), "reason": self.reason}


def sweep_need(store: Store, build: Environment, config: Config, *, force: bool = False) -> SweepNeed:
    """Whether `build` needs a sweep under `config` (see `SweepNeed`): not stored, or stored
    without a configured flag, or `force`; the one rule of `run` and `run --check`."""
    scheme = config.store.key
    name = f"torch {build.torch_version} ({build.torch_git_version[:12] or 'no git hash'})"
    if scheme != "torch" and build.transformers_version:
        name += f" with transformers {build.transformers_version}"
    existing = store.find_build(build, scheme)
    if force:
        return SweepNeed(True, f"{name}: --force sweeps it again", existing)
    if existing is None:
        return SweepNeed(True, f"{name} is not in the store")
    stored = store.get(existing)
    if not is_configured_night(stored.corpus, config):
        return SweepNeed(
            True,
            f"{name} is stored only as a trial, snapshot {describe(stored)}: the night of the configured "
            f"corpus {config.sweep.corpus_name!r} replaces it",
        )
    if not stored.environment.same_transformers(build):  # nights named by torch alone
        return SweepNeed(
            False,
            f"{name} was swept as snapshot {existing} with transformers "
            f"{stored.environment.transformers_version}, not the installed {build.transformers_version}, "
            'and the store names a night by torch alone: [store] key = "torch+transformers" keeps a '
            "night per transformers",
            existing,
        )
    missing = tuple(flag for flag in config.flags if flag not in stored.flags)
    if missing:
        flags = ", ".join(missing)
        reason = f"{name} is stored as snapshot {existing} without flag(s) {flags}: sweeping them"
        return SweepNeed(True, reason, existing, missing)
    reason = f"{name} was already swept: snapshot {existing}, every configured flag (--force sweeps again)"
    return SweepNeed(False, reason, existing)


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


def read_input(path: str | Path, scheme: KeyScheme | None = None, *, reproductions: bool = True) -> Snapshot:
    """A snapshot file, or a sweep's JSON Lines stream merged into one (a `.jsonl` file, or any
    file whose first line is a sweep header), keyed as `scheme` (`[store] key`) names its night
    (None: a file's own key, a stream's torch version). Its key and flag names are checked, since
    both end up in file names and in the hidden markers of issues.

    A stream holds no reproductions (`triagebot reproduce` adds them): where the command renders
    them (`reproductions`), a stream with a group to reproduce is refused, naming the file it
    got and the one it needs, so that no command renders a night without its reproductions."""
    # Imported here for start-up cost: the sweep package, for a stream only.
    from triagebot.sweep.stream import merge

    path = Path(path)
    stream = is_stream(path)
    snapshot = merge([path]) if stream else read_snapshot(path)
    if scheme is not None:
        snapshot = keyed(snapshot, scheme)
    try:
        check_key(snapshot.key)
    except StoreError as error:
        raise StoreError(f"{path}: {error}") from None
    for flag in snapshot.flags:
        if flag_name_problem(flag) is not None:
            raise StoreError(f"{path}: flag name {flag!r} is not one a configuration could give")
    groups = len(groups_to_reproduce(snapshot)) if stream and reproductions else 0
    if groups:
        raise StoreError(
            f"{path} is a sweep stream, without the reproductions of its {groups} crash group(s), and "
            f"this command needs a snapshot with them: `triagebot reproduce {path}` writes one, "
            f"{path.with_suffix('.json')}"
        )
    return snapshot


class Snapshots:
    """Snapshots by file (a snapshot, or a sweep's stream) or by key in the store: the one
    loader of every command that takes a snapshot. The store is opened on first use, so that a
    file never needs one."""

    def __init__(
        self, settings: StoreSettings, store: Store | None = None, *, reproductions: bool = True
    ) -> None:
        """`reproductions`: whether the command renders reproductions, so that a stream (which
        has none) is refused where its night has some (`read_input`)."""
        self.settings = settings
        self._store = store
        self.reproductions = reproductions

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = open_store(self.settings)
        return self._store

    def get(self, where: str | Path) -> Snapshot:
        path = Path(where)
        if path.is_file():
            return read_input(path, self.settings.key, reproductions=self.reproductions)
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
    """Whether `old` is the newer of the two: a later torch (then transformers) version, or, when the keys say
    nothing (the same version, or keys that are not versions), created later."""
    old_order, new_order = key_order(old.key), key_order(new.key)
    if old_order[0] == new_order[0] == 0 and old_order[1:5] != new_order[1:5]:
        return old_order > new_order
    return old.created > new.created
