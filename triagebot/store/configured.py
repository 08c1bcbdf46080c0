"""The store `[store]` in triagebot.toml names: a local folder, or a git data branch."""

from __future__ import annotations

import subprocess
from pathlib import Path

from triagebot.config import StoreSettings
from triagebot.store.base import LocalStore, Store, StoreError
from triagebot.store.git import GitStore


def open_store(settings: StoreSettings, repo_dir: str | Path = ".") -> Store:
    """A LocalStore at `settings.path`, or, with `settings.branch`, a GitStore of that branch of the
    remote `settings.remote` of the repository at `repo_dir`, checked out at `settings.path`."""
    if not settings.branch:
        return LocalStore(settings.path)
    command = ["git", "remote", "get-url", settings.remote]
    found = subprocess.run(command, cwd=repo_dir, capture_output=True, text=True, check=False)
    if found.returncode != 0:
        where = Path(repo_dir).resolve()
        raise StoreError(f"store.remote {settings.remote!r} is not a git remote of {where}")
    return GitStore(found.stdout.strip(), settings.branch, settings.path)
