"""A store on a git data branch: one `snapshots/<key>.json` per snapshot, pushed after each put.

The branch lives in its own clone (`checkout`, e.g. `.triagebot/data`), never in the user's
work tree. Two jobs may push at once: a rejected push is followed by `git pull --rebase` and
another push, up to `push_attempts` times. Snapshot files are named by key and records by
their own name, so two jobs only conflict when they write the same file; then the later job's
file wins (it is the rerun, or the newer memory of an issue).
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from pathlib import Path

from triagebot.results import Snapshot
from triagebot.store.base import (
    Store,
    StoreError,
    check_key,
    file_lock,
    read_folder,
    read_snapshot,
    write_snapshot,
    write_text,
)

FOLDER = "snapshots"
RECORDS = "records"
IDENTITY = ["-c", "user.name=triagebot", "-c", "user.email=triagebot@users.noreply.github.com"]


class GitStore(Store):
    """Snapshots on `branch` of the git repository at `remote` (a URL or a path)."""

    def __init__(
        self,
        remote: str,
        branch: str = "triagebot-data",
        checkout: str | Path = ".triagebot/data",
        *,
        push_attempts: int = 5,
    ) -> None:
        self.remote = remote
        self.branch = branch
        self.checkout = Path(checkout)
        self.push_attempts = push_attempts
        self._ready = False

    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        completed = subprocess.run(
            ["git", *IDENTITY, *args], cwd=self.checkout, capture_output=True, text=True, check=False
        )
        if check and completed.returncode != 0:
            detail = (completed.stderr or completed.stdout).strip().splitlines()
            last = detail[-1] if detail else "no output"
            raise StoreError(f"git {args[0]} failed in {self.checkout}: {last}")
        return completed

    def _remote_has_branch(self) -> bool:
        found = self._git("ls-remote", "--heads", "origin", self.branch)
        return bool(found.stdout.strip())

    def sync(self) -> None:
        """Clone on first use, then bring the checkout to the remote branch (which may not exist yet)."""
        if not (self.checkout / ".git").exists():
            self.checkout.mkdir(parents=True, exist_ok=True)
            self._git("init", "--quiet")
            self._git("remote", "add", "origin", self.remote)
        if self._remote_has_branch():
            self._git("fetch", "--quiet", "origin", self.branch)
            self._git("checkout", "--quiet", "-B", self.branch, f"origin/{self.branch}")
        elif not self._ready:
            self._git("checkout", "--quiet", "--orphan", self.branch, check=False)
        self._ready = True

    def _ensure(self) -> None:
        if not self._ready:
            self.sync()

    def _file(self, key: str) -> Path:
        return self.checkout / FOLDER / f"{key}.json"

    def path_of(self, key: str) -> Path | None:
        path = self._file(check_key(key))
        return path if path.is_file() else None

    @property
    def location(self) -> Path:
        return self.checkout

    def _write(self, snapshot: Snapshot) -> None:
        self._ensure()
        relative = f"{FOLDER}/{snapshot.key}.json"

        def write() -> None:
            write_snapshot(snapshot, self.checkout / relative)

        self._commit_and_push([relative], write, f"snapshot {snapshot.key}")

    def _write_records(self, folder: list[str], texts: dict[str, str]) -> None:
        self._ensure()
        relative = {"/".join([RECORDS, *folder, f"{name}.json"]): text for name, text in texts.items()}

        def write() -> None:
            for path, text in relative.items():
                write_text(self.checkout / path, text)

        self._commit_and_push(list(relative), write, f"records {'/'.join(folder)}: {', '.join(texts)}")

    def _read_records(self, folder: list[str]) -> dict[str, str]:
        self._ensure()
        return read_folder(self.checkout.joinpath(RECORDS, *folder), self)

    def lock(self) -> contextlib.AbstractContextManager[None]:
        lock = self.checkout.with_name(self.checkout.name + ".lock")
        return file_lock(lock, f"the data checkout {self.checkout}", self.warn)

    def _commit_and_push(self, paths: list[str], write, message: str) -> None:
        """Write `paths` (by calling `write`), commit them and push, rebasing on another job's
        push; on a conflict (the same file written by both) this job's files win."""
        write()
        self._git("add", "--", *paths)
        if not self._git("diff", "--cached", "--quiet", check=False).returncode:
            return  # the same content is already stored
        self._git("commit", "--quiet", "-m", message)
        for attempt in range(self.push_attempts):
            pushed = self._git("push", "--quiet", "origin", f"HEAD:refs/heads/{self.branch}", check=False)
            if pushed.returncode == 0:
                return
            # Another job pushed first: replay this commit on top of theirs and try again.
            self._git("fetch", "--quiet", "origin", self.branch)
            rebased = self._git("rebase", "--quiet", f"origin/{self.branch}", check=False)
            if rebased.returncode != 0:
                # Only the same files can conflict; this job's are the newer ones.
                self._git("checkout", "--theirs", "--", *paths, check=False)
                write()
                self._git("add", "--", *paths)
                self._git("-c", "core.editor=true", "rebase", "--continue")
            time.sleep(min(0.2 * 2**attempt, 5.0))
        attempts = self.push_attempts
        raise StoreError(f"could not push {message} to {self.branch} after {attempts} attempts")

    def _read(self, key: str) -> Snapshot | None:
        self._ensure()
        path = self._file(key)
        return read_snapshot(path) if path.exists() else None

    def _keys(self) -> list[str]:
        self._ensure()
        folder = self.checkout / FOLDER
        if not folder.is_dir():
            return []
        return [path.stem for path in folder.glob("*.json") if not path.name.startswith(".")]
