"""The order of a run's stages, and the one way every command turns a snapshot into its night.

- `inputs`: what a night starts from: the installed build (`installed_build`, read in a child
  process so that torch is never imported here), whether the store has its configured night (`already_swept`:
  a trial of another corpus or sample is not)
  and what a night must sweep of it (`sweep_need`: the build, or only the flags it lacks),
  the snapshot a command names (`read_input`, `Snapshots`: by file, stream or key, keyed as
  `[store] key` names its night), and `out_of_order`.
- `analysing`: `night_of(snapshot, store, config)`: the night analysed once against what earlier
  nights stored (`analysis.history`); `newest_night`, the one the site renders.
- `sweeping`: `sweep_configured`, `with_reproductions`, `reproduce_file`, `reduce_bounds`,
  `script_lanes`, `newest_stored`; a flag added to the configuration swept into the stored
  night that lacks it (`sweep_flags`, `add_flags`, `with_stored_flags`).
- `outputs`: what a night leaves behind: `RunReport`, the diff and summary files, the step
  summary (`summary_markdown`, written by `tracker.actions`), the site
  (`SiteStage` in `run`, `build_site` for `triagebot site`) and the lines printed.
- `publishing`: what counts as published: `publish_under_lock` (the real publisher, under the
  store's lock on the repository), `publish_recorded` (pending until every write is done),
  `publish_owed` (what an earlier run stored but could not publish), `owed` and `owed_outputs`
  (which nights wait, as step outputs), `writes_github`.
- `run_stages`: `run(config, options, ...)`, `triagebot run`, with its `RunOptions` and its real
  stages (`default_stages`, `render_report`).

Every name is importable from `triagebot.pipeline`; each module is imported on first use of one
of its names, so that a command that only loads a snapshot does not import the sweep, jinja2 or
PyGithub (start-up cost).
"""

from __future__ import annotations

import importlib
from typing import Any

_MODULES = {
    "inputs": (
        "Snapshots",
        "SweepNeed",
        "already_swept",
        "installed_build",
        "is_stream",
        "out_of_order",
        "read_input",
        "sweep_need",
    ),
    "analysing": ("newest_night", "night_of"),
    "sweeping": (
        "add_flags",
        "newest_stored",
        "reduce_bounds",
        "reproduce_file",
        "script_lanes",
        "sweep_configured",
        "sweep_flags",
        "with_reproductions",
        "with_stored_flags",
    ),
    "outputs": ("RunReport", "SiteStage", "build_site", "summary_markdown"),
    "publishing": (
        "owed",
        "owed_outputs",
        "publish_owed",
        "publish_recorded",
        "publish_stored",
        "publish_under_lock",
        "writes_github",
    ),
    "run_stages": ("RunOptions", "default_stages", "render_report", "run"),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}
__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
