"""One build of the dashboard site: the stored nightlies' data and the newest night, rendered
and handed to a writer (see the package docstring)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from triagebot.analysis.compact import DATA_FOLDER, NightData, night_script
from triagebot.analysis.history import StoredHistory
from triagebot.errors import SiteError
from triagebot.report import links
from triagebot.report.site.data import model_histories
from triagebot.report.site.pages import Pages, write_pages
from triagebot.report.site.writer import FolderWriter, SiteWriter
from triagebot.results import ModelSpec, Night

ASSETS = ("site.js", "site.css")
VENDORED = ("chart.umd.min.js", "chart.js.LICENSE.md")


@dataclass
class SiteBuild:
    """What `write_site` wrote."""

    out: Path | None  # the folder (None: a writer in memory)
    nights: int
    read: int  # nightlies whose snapshot was read (the others came from their data files)
    pages: int
    index: Path | None


def _not_the_newest(history: StoredHistory, night: Night) -> str:
    """Why `night` is not the store's newest nightly, in one line: a file named otherwise than
    its snapshot's key (the store names each nightly by its file) says the name it wants."""
    said = f"the site renders the newest stored nightly {history.newest}, not {night.key}"
    if night.key not in {*history.read, *(data.key for data in history.nights)}:
        said += (
            f": the file {history.newest}.json holds nightly {night.key}, and a store names each "
            f"nightly's file by its key: rename it {night.key}.json"
        )
    return said


def write_site(
    history: StoredHistory, night: Night, out: str | Path | SiteWriter, *, silent_after_days: int = 0
) -> SiteBuild:
    """Build the site into `out` (a folder, or a writer): every stored nightly's data from
    `history`, and the newest nightly's from `night`, which must be its night. A static page
    cannot know how old it is when read: every page carries the newest nightly's time and
    `silent_after_days` (`tracker.stale_after_days`; 0: off), and `site.js` shows the
    watchdog's line when the reader's clock says no nightly came for that long."""
    if night.key != history.newest:
        raise SiteError(_not_the_newest(history, night))
    writer = out if isinstance(out, SiteWriter) else FolderWriter(out)
    nights = [*history.nights, history.newest_data(night)]
    fresh = {*history.read, night.key}  # the others' data files are what was read back
    try:
        writer.start()
        _write_data(writer, nights, fresh)
        _write_assets(writer)
        common = {
            "latest": nights[-1],
            "nights": nights,
            "site_flags": list(night.flags),
            "views": night.flags,
            "stored_at": night.snapshot.created.isoformat(),
            "silent_after_days": silent_after_days,
        }
        pages = Pages(writer, common)
        specs: dict[str, ModelSpec] = {r.model: r.spec for r in night.snapshot.results if r.spec is not None}
        index = write_pages(pages, nights, night, model_histories(nights), specs)
    except OSError as error:
        raise SiteError(f"{writer.out}: cannot write the site there: {error.strerror or error}") from None
    return SiteBuild(
        out=writer.out,
        nights=len(nights),
        read=len(fresh),
        pages=pages.written,
        index=writer.out / index if writer.out is not None else None,
    )


def _write_data(writer: SiteWriter, nights: list[NightData], fresh: set[str]) -> None:
    """Every nightly's data file (the compare view loads it; a later build reads it back): the
    stale ones removed, those of `fresh` nightlies written when they changed (the others are
    what was read back)."""
    writer.prune(DATA_FOLDER, {Path(links.night_data(data.key)).name for data in nights})
    for data in nights:
        if data.key in fresh:
            writer.update(links.night_data(data.key), night_script(data))


def _write_assets(writer: SiteWriter) -> None:
    """The site's script and style sheet, Chart.js with its licence, and `.nojekyll` (a gh-pages
    branch is served as it is)."""
    own = resources.files("triagebot.report") / "templates" / "site" / "assets"
    vendored = resources.files("triagebot.report") / "vendor"
    for folder, names in ((own, ASSETS), (vendored, VENDORED)):
        for name in names:
            writer.write(links.asset(name), (folder / name).read_bytes())
    writer.write(".nojekyll", "")
