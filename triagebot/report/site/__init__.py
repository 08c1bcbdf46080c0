"""The dashboard site: static pages rebuilt from the store, readable offline from a folder.

`write_site(history, night, out)` renders every stored nightly (`analysis.history.StoredHistory`:
each one's compact `NightData`, read back from the data files of a site built into the same
folder before while they are still valid) and the newest nightly from its `Night` (analysed
once by `analysis.night`, with its tracking issues' links when it has them), and hands every
file to a writer (`writer`: a folder, or memory for tests), under the names of `report.links`:

- `index.html`: the corpus's health and every flag's trend across the stored nightlies, the
  latest nightly's flags, its health in detail, and every nightly with a link to its diff;
- `flags/<flag>.html`: the newest night's effects table (sortable, filterable by stratum,
  effect, signature and model name), crash groups with their repros, models helped; its
  tracking issue;
- `models/<model>.html`: one model's status, graphs, ops (and recompiles, once recorded) under
  every config, night by night, with the first nightly where anything changed (its columns are
  the fields `analysis.compact.Run` declares); `models.html` lists them;
- `compare/<old>...<new>.html`: the diff of each pair of consecutive nightlies, with its commit
  range; `compare.html` picks any two nightlies (consecutive ones open their page, any other
  pair is compared in the browser from the two nightlies' `data/nights/<key>.js`);
- `assets/`: the site's script and style sheet, and Chart.js (MIT, vendored, with its licence).

Tables are rendered here and read without JavaScript; the script only sorts, filters and draws
charts. Nothing is fetched from another site: every link is relative, so the folder works from
disk as well as from GitHub Pages.

Modules: `build` (one build), `data` (what the pages show across nightlies), `charts`, `pages`
(one function per kind of page) and `writer` (the only one that touches the disk).
`pipeline.build_site` reads the history, analyses the newest night and builds (`triagebot
site`); `triagebot run` builds after publishing, from the history its night was analysed with.
"""

from triagebot.report.site.build import SiteBuild, write_site
from triagebot.report.site.writer import FolderWriter, MemoryWriter, SiteWriter

__all__ = ["FolderWriter", "MemoryWriter", "SiteBuild", "SiteWriter", "write_site"]
