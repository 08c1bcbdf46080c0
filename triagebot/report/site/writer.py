"""Where the dashboard site's files go: the one part of the site that touches the disk.

As crater's report writers, a build hands every file to a `SiteWriter` by its path in the site
(`/`-separated, `report.links` names):

- `FolderWriter(out)`: a folder, readable offline and served as it is by GitHub Pages. It
  refuses a folder that holds anything but a site built here (`MARK`), so that a wrong `--out`
  never deletes someone's files, and empties the page folders of one that does, so that no
  page of a model or nightly that left the store remains.
- `MemoryWriter()`: the files in a dict, for tests.

Errors are `OSError`s; the build says which folder could not be written.
"""

from __future__ import annotations

import shutil
from abc import ABC, abstractmethod
from pathlib import Path, PurePosixPath

from triagebot.errors import SiteError

MARK = ".triagebot-site"  # says a folder holds a site built here, which a build may empty again
MARK_TEXT = "A dashboard site built by triagebot; `triagebot site` rebuilds it here.\n"
# Folders of pages a build writes; emptied before each build so no stale page remains.
PAGE_FOLDERS = ("flags", "models", "compare")


class SiteWriter(ABC):
    """The files of one build of the site."""

    out: Path | None = None  # the folder written to; None in memory

    @abstractmethod
    def start(self) -> None:
        """Make ready for a build: no page of an earlier build left in `PAGE_FOLDERS`."""

    @abstractmethod
    def write(self, path: str, content: str | bytes) -> None:
        """Write the file at `path` (text as UTF-8), replacing any."""

    @abstractmethod
    def update(self, path: str, text: str) -> None:
        """Write `text` at `path` unless the file there already holds it."""

    @abstractmethod
    def prune(self, folder: str, keep: set[str]) -> None:
        """Remove every file directly in `folder` whose name is not in `keep`."""


class FolderWriter(SiteWriter):
    """The site in the folder `out` (see the module docstring)."""

    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)

    def start(self) -> None:
        out = self.out
        if out.exists() and not (out / MARK).is_file() and any(out.iterdir()):
            raise SiteError(f"{out} is not empty and holds no site built by triagebot: choose another folder")
        out.mkdir(parents=True, exist_ok=True)
        for folder in PAGE_FOLDERS:
            shutil.rmtree(out / folder, ignore_errors=True)
        (out / MARK).write_text(MARK_TEXT, encoding="utf-8")

    def _path(self, path: str) -> Path:
        target = self.out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def write(self, path: str, content: str | bytes) -> None:
        target = self._path(path)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")

    def update(self, path: str, text: str) -> None:
        target = self._path(path)
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")

    def prune(self, folder: str, keep: set[str]) -> None:
        for stale in (self.out / folder).glob("*"):
            if stale.is_file() and stale.name not in keep:
                stale.unlink()


class MemoryWriter(SiteWriter):
    """The site as `files`: path -> content, for tests."""

    def __init__(self) -> None:
        self.files: dict[str, str | bytes] = {}

    def start(self) -> None:
        self.files = {
            path: content for path, content in self.files.items() if path.split("/")[0] not in PAGE_FOLDERS
        }
        self.files[MARK] = MARK_TEXT

    def write(self, path: str, content: str | bytes) -> None:
        self.files[path] = content

    def update(self, path: str, text: str) -> None:
        self.files[path] = text

    def prune(self, folder: str, keep: set[str]) -> None:
        for path in list(self.files):
            where = PurePosixPath(path)
            if str(where.parent) == folder and where.name not in keep:
                del self.files[path]
