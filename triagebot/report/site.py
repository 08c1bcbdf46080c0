"""The dashboard site: static pages rebuilt from the store, readable offline from a folder.

A build has two steps, so that the newest nightly is analysed once, by `analysis.night`:
`read_store(store, out)` gives every stored nightly's compact data but the newest's (the
site's own store-wide data, `site_data`), from which `pipeline.night_of` takes the newest
night's history; `write_site(stored, night, out)` then renders the newest nightly from its
`Night` (with its tracking issues' links, when it has them) and writes, under the names of
`report.links`:

- `index.html`: the corpus's health and every flag's trend across the stored nightlies, the
  latest nightly's flags, its health in detail, and every nightly with a link to its diff;
- `flags/<flag>.html`: the newest night's effects table (sortable, filterable by stratum,
  effect, signature and model name), crash groups with their repros, models helped; its
  tracking issue;
- `models/<model>.html`: one model's status, graphs, ops (and recompiles, once recorded) under
  every config, night by night, with the first nightly where anything changed; `models.html`
  lists them;
- `compare/<old>...<new>.html`: the diff of each pair of consecutive nightlies, with its commit
  range; `compare.html` picks any two nightlies (consecutive ones open their page, any other
  pair is compared in the browser from the two nightlies' `data/nights/<key>.js`);
- `assets/`: the site's script and style sheet, and Chart.js (MIT, vendored, with its licence).

Tables are rendered here and read without JavaScript; the script only sorts, filters and draws
charts. Nothing is fetched from another site: every link is relative, so the folder works from
disk as well as from GitHub Pages.

Reading every snapshot dominates at corpus scale, so each nightly's compact `NightData` is
written as its data file and read back by a later build into the same folder while the
snapshot file's hash is unchanged; nightlies that must be read are read by `jobs` worker
processes, each taking a run of consecutive nightlies. `pipeline.build_site` is both steps
with the night between them (`triagebot site`); `triagebot run` reads the store before it
analyses the night and writes the site after publishing.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from importlib import resources
from multiprocessing import get_context
from pathlib import Path
from typing import Any, NamedTuple

from triagebot.analysis import RAN_EFFECTS
from triagebot.analysis.diff import COMPARE_URL
from triagebot.analysis.health import ALL
from triagebot.errors import SiteError, StoreError
from triagebot.report import links
from triagebot.report.render import environment
from triagebot.report.site_data import (
    Difference,
    ModelNightRow,
    NightData,
    break_reason_changes,
    fingerprint,
    model_histories,
    newest_data,
    night_data,
    night_script,
    read_night_data,
)
from triagebot.results import BASELINE, Effect, ModelEffect, ModelSpec, Night, Snapshot
from triagebot.store import Store, read_snapshot

ASSETS = ("site.js", "site.css")
VENDORED = ("chart.umd.min.js", "chart.js.LICENSE.md")
# Folders of pages this module writes; emptied before each build so no stale page remains.
PAGE_FOLDERS = ("flags", "models", "compare")
MARK = ".triagebot-site"  # says a folder holds a site built here, which a build may empty again
# Below this many nightlies to read, worker processes cost more than they save.
PARALLEL_FROM = 8


@dataclass
class SiteBuild:
    """What `build_site` wrote."""

    out: Path
    nights: int
    read: int  # nightlies whose snapshot was read (the others came from their data files)
    pages: int
    index: Path


@dataclass
class _Source:
    key: str
    path: Path | None
    source: str | None  # SHA-256 of the file


def _read(item: _Source, store: Store | None) -> Snapshot:
    if item.path is not None:
        return read_snapshot(item.path)
    assert store is not None
    return store.get(item.key)


Whole = tuple[Snapshot, list[ModelEffect]]
"""A nightly read whole, with its classified rows."""


def _summarise_run(
    items: list[_Source], before: _Source | None, store: Store | None = None, keep: bool = False
) -> tuple[list[NightData], Whole | None]:
    """The `NightData` of consecutive nightlies `items`, each diffed against the one before it,
    and with `keep` the last of them whole (for the diff of the nightly after it)."""
    previous = _read(before, store) if before is not None else None
    previous_source = before.source if before is not None else None
    previous_rows = None
    found = []
    for item in items:
        snapshot = _read(item, store)
        data, rows = night_data(
            snapshot,
            previous,
            source=item.source,
            previous_source=previous_source,
            previous_rows=previous_rows,
        )
        found.append(data)
        previous, previous_source, previous_rows = snapshot, item.source, rows
    kept = (previous, previous_rows) if keep and previous is not None and previous_rows is not None else None
    return found, kept


def _chunks(indexes: list[int], parts: int) -> list[list[int]]:
    """`indexes` (sorted) cut into runs of consecutive indexes, none longer than a `parts`-th of
    them: one run per worker when they are all consecutive (a first build)."""
    runs: list[list[int]] = []
    for index in indexes:
        if runs and runs[-1][-1] == index - 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    size = max(1, -(-len(indexes) // max(1, parts)))
    return [run[start : start + size] for run in runs for start in range(0, len(run), size)]


def _nights(
    store: Store, sources: list[_Source], out: Path, jobs: int, say: Callable[[str], None]
) -> tuple[list[NightData], list[str], Whole | None]:
    """The `NightData` of every nightly of `sources` but the newest, from its data file when
    still valid, else computed; the keys of those computed (their snapshots were read); and the
    last of them whole, when it was computed in this process (the newest night's diff reads
    it: it is then not read nor classified again).

    With worker processes, this process computes the last run of nightlies while the workers
    compute the others. Each run diffs its first nightly against the one before it, which a
    worker reads again: the one cost of reading in parallel."""
    sources = sources[:-1]
    nights: list[NightData | None] = []
    for index, item in enumerate(sources):
        cached = read_night_data(out / links.night_data(item.key)) if item.source else None
        before = sources[index - 1] if index else None
        valid = (
            cached is not None
            and cached.key == item.key
            and cached.source == item.source
            and cached.previous == (before.key if before else None)
            and cached.previous_source == (before.source if before else None)
        )
        nights.append(cached if valid else None)
    missing = [index for index, night in enumerate(nights) if night is None]
    # The newest is read too, for its night.
    say(f"reading {len(missing) + 1} of {len(sources) + 1} stored nightlies")
    files = all(sources[index].path is not None for index in missing)
    parallel = files and jobs > 1 and len(missing) >= PARALLEL_FROM
    runs = _chunks(missing, jobs if parallel else 1)
    work = [([sources[i] for i in run], sources[run[0] - 1] if run[0] else None) for run in runs]
    results: list[list[NightData] | None] = [None] * len(work)
    kept: Whole | None = None
    if parallel and len(work) > 1:
        workers = min(jobs - 1, len(work) - 1)
        try:
            with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
                futures = [pool.submit(_summarise_run, items, before) for items, before in work[:-1]]
                results[-1], kept = _summarise_run(*work[-1], store, keep=True)
                for index, future in enumerate(futures):
                    results[index] = future.result()[0]
        except BrokenProcessPool:
            # A worker could not start (a caller whose __main__ cannot be imported again, such
            # as a script read from stdin) or died: read the rest here instead.
            say("worker processes failed; reading the nightlies in this process")
    for index, (items, before) in enumerate(work):
        if results[index] is None:
            results[index], last = _summarise_run(items, before, store, keep=index == len(work) - 1)
            kept = last if index == len(work) - 1 else kept
    for run, found in zip(runs, results, strict=True):
        assert found is not None
        for index, night in zip(run, found, strict=True):
            nights[index] = night
    if not missing or missing[-1] != len(sources) - 1:
        kept = None  # the newest but one came from its data file
    computed = [sources[index].key for index in missing]
    return [night for night in nights if night is not None], computed, kept


def _prepare(out: Path) -> None:
    """Make `out` ready for a build: a new or empty folder, or one this module built before (its
    page folders are emptied, so no page of a model or nightly that left the store remains).
    Any other folder is refused, so that a wrong `--out` never deletes someone's files."""
    try:
        if out.exists() and not (out / MARK).is_file() and any(out.iterdir()):
            raise SiteError(f"{out} is not empty and holds no site built by triagebot: choose another folder")
        out.mkdir(parents=True, exist_ok=True)
        for folder in PAGE_FOLDERS:
            shutil.rmtree(out / folder, ignore_errors=True)
        (out / MARK).write_text("A dashboard site built by triagebot; `triagebot site` rebuilds it here.\n")
    except OSError as error:
        raise SiteError(f"{out}: cannot write the site there: {error.strerror or error}") from None


def _copy_assets(out: Path) -> None:
    target = out / links.ASSETS
    target.mkdir(parents=True, exist_ok=True)
    own = resources.files("triagebot.report") / "templates" / "site" / "assets"
    vendored = resources.files("triagebot.report") / "vendor"
    for folder, names in ((own, ASSETS), (vendored, VENDORED)):
        for name in names:
            (target / name).write_bytes((folder / name).read_bytes())


class _Pages:
    """Renders templates/site/* into the site folder; every page gets `link` (relative links
    from itself), `links` (the names) and the nightlies' list."""

    def __init__(self, out: Path, common: dict[str, Any]) -> None:
        self.out = out
        self.common = common
        self.written = 0
        self.env = environment(True)
        self._templates: dict[str, Any] = {}

    def write(self, page: str, template: str, **context: Any) -> Path:
        compiled = self._templates.get(template) or self.env.get_template(f"site/{template}")
        self._templates[template] = compiled

        def link(target: str) -> str:
            return links.relative(target, page)

        text = compiled.render(**self.common, **context, page=page, link=link, links=links)
        path = self.out / page
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.written += 1
        return path


class _Cell(NamedTuple):
    """One config's run in a model page's row."""

    config: str
    status: str
    graphs: int | None
    ops: int | None
    recompiles: int | None
    error: str | None  # the crash signature
    group: str | None  # its crash group's page and anchor, when the flag page lists one


class _Span(NamedTuple):
    """Consecutive nightlies in which nothing about a model changed: one row of its page."""

    first: str
    last: str
    nights: int
    runs: list[_Cell | None]  # per config of the page
    effects: list[str | None]  # per flag of the page
    changes: list[Difference]  # what changed at `first`, since the nightly before it


Groups = dict[tuple[str, str], str]
"""(flag, model) -> the page and anchor of the crash group the latest nightly lists it in."""


def _spans(rows: list[ModelNightRow], configs: list[str], flags: list[str], groups: Groups) -> list[_Span]:
    """`rows` (one model, oldest first) cut where anything changed. Crash groups are linked from
    the latest nightly's row only: they are the groups the flag pages show."""
    spans: list[_Span] = []
    for entry in rows:
        if spans and not entry.changes:
            spans[-1] = spans[-1]._replace(last=entry.night.key, nights=spans[-1].nights + 1)
            if entry is rows[-1]:
                spans[-1] = spans[-1]._replace(runs=_cells(entry, configs, groups))
            continue
        night, row = entry.night, entry.row
        effects = dict(zip(night.flags, row.effects, strict=True))
        spans.append(
            _Span(
                night.key,
                night.key,
                1,
                _cells(entry, configs, groups if entry is rows[-1] else {}),
                [effect.value if (effect := effects.get(flag)) else None for flag in flags],
                entry.changes,
            )
        )
    return spans


def _cells(entry: ModelNightRow, configs: list[str], groups: Groups) -> list[_Cell | None]:
    night, row = entry.night, entry.row
    runs = dict(zip(night.configs, row.runs, strict=True))
    cells: list[_Cell | None] = []
    for config in configs:
        run = runs.get(config)
        if run is None:
            cells.append(None)
            continue
        error = night.signature(run)
        group = groups.get((config, row.model)) if error else None
        cells.append(_Cell(config, run.status.value, run.graphs, run.ops, run.recompiles, error, group))
    return cells


class _ModelRow(NamedTuple):
    """A model in the list of models: its last swept nightly's baseline and effects."""

    model: str
    stratum: str
    key: str
    status: str | None
    graphs: int | None
    ops: int | None
    effects: list[str | None]  # one per flag of the latest nightly


def _model_row(model: str, entry: ModelNightRow, flags: list[str]) -> _ModelRow:
    night, row = entry.night, entry.row
    baseline = dict(zip(night.configs, row.runs, strict=True)).get(BASELINE)
    effects = dict(zip(night.flags, row.effects, strict=True))
    return _ModelRow(
        model,
        row.stratum,
        night.key,
        baseline.status.value if baseline else None,
        baseline.graphs if baseline else None,
        baseline.ops if baseline else None,
        [effect.value if (effect := effects.get(flag)) else None for flag in flags],
    )


def _columns(rows: list[ModelNightRow], configs: list[str]) -> dict[str, dict[str, list[Any]]]:
    """field (graphs, ops, recompiles) -> config -> one value per nightly of `rows` (None: no run)."""
    fields = ("graphs", "ops", "recompiles")
    found: dict[str, dict[str, list[Any]]] = {field: {config: [] for config in configs} for field in fields}
    for entry in rows:
        where, runs = entry.night.config_index, entry.row.runs
        for config in configs:
            index = where.get(config)
            run = runs[index] if index is not None else None
            for field in fields:
                found[field][config].append(getattr(run, field) if run is not None else None)
    return found


def _chart(labels: Sequence[str], series: dict[str, Sequence[Any]], y: str, x: str = "nightly") -> dict:
    """A chart's data block: labels, then (name, values) pairs in legend order, and axis titles."""
    pairs = [[name, list(values)] for name, values in series.items()]
    return {"labels": list(labels), "series": pairs, "x": x, "y": y}


@dataclass
class StoredNights:
    """The store as the site reads it: every stored nightly's file (oldest first) and the compact
    data of each but the newest, whose data comes from its night (`write_site`)."""

    sources: list[_Source]
    nights: list[NightData]  # of sources[:-1]
    read: list[str]  # keys of the nightlies whose snapshot was read (the others: their data files)
    kept: Whole | None = None  # the newest but one, whole with its rows, when read here

    @property
    def newest(self) -> str:
        """The key of the newest stored nightly: the one whose night the site renders."""
        return self.sources[-1].key


def read_store(
    store: Store, out: str | Path, *, jobs: int | None = None, say: Callable[[str], None] = lambda line: None
) -> StoredNights:
    """Every stored nightly's compact data but the newest's, from the data files of a site built
    into `out` before while they are still valid, else from the snapshots (read by `jobs` worker
    processes). Writes nothing."""
    out = Path(out)
    try:
        keys = store.keys()
    except StoreError as error:
        raise SiteError(f"cannot read the store: {error}") from None
    if not keys:
        place = f"the store at {store.location}" if store.location else "the store"
        raise SiteError(f"no snapshot in {place}: nothing to build a site from")
    jobs = jobs or min(4, os.cpu_count() or 1)
    sources = []
    for key in keys:
        path = store.path_of(key)
        try:
            source = fingerprint(path.read_bytes()) if path is not None else None
        except OSError as error:
            raise SiteError(f"{path}: cannot read: {error.strerror}") from None
        sources.append(_Source(key, path, source))
    nights, read, kept = _nights(store, sources, out, jobs, say)
    return StoredNights(sources, nights, read, kept)


def write_site(store: Store, stored: StoredNights, night: Night, out: str | Path) -> SiteBuild:
    """Build the site into `out` (see the module docstring): the stored nightlies' data, and
    the newest nightly's from `night`, which must be its night (`night.key == stored.newest`)."""
    out = Path(out)
    if night.key != stored.newest:
        raise SiteError(f"the site renders the newest stored nightly {stored.newest}, not {night.key}")
    before = stored.sources[-2] if len(stored.sources) > 1 else None
    newest = newest_data(
        night,
        source=stored.sources[-1].source,
        previous_source=before.source if before is not None and before.key == night.previous_key else None,
    )
    _prepare(out)
    try:
        return _write(store, stored, [*stored.nights, newest], night, out)
    except OSError as error:
        raise SiteError(f"{out}: cannot write the site there: {error.strerror or error}") from None


def _write(store: Store, stored: StoredNights, nights: list[NightData], night: Night, out: Path) -> SiteBuild:
    specs: dict[str, ModelSpec] = {r.model: r.spec for r in night.snapshot.results if r.spec is not None}
    histories = model_histories(nights)

    data_folder = out / "data" / "nights"
    data_folder.mkdir(parents=True, exist_ok=True)
    wanted = {Path(links.night_data(data.key)).name for data in nights}
    for stale in data_folder.glob("*.js"):
        if stale.name not in wanted:
            stale.unlink()
    fresh = {*stored.read, night.key}  # the others' files are what was read back
    for data in nights:
        if data.key in fresh:
            path, text = out / links.night_data(data.key), night_script(data)
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                path.write_text(text, encoding="utf-8")
    _copy_assets(out)
    (out / ".nojekyll").write_text("", encoding="utf-8")  # a gh-pages branch is served as it is

    pages = _Pages(out, {"latest": nights[-1], "nights": nights, "site_flags": list(night.flags)})
    index = _render(pages, nights, night, histories, specs)
    return SiteBuild(out=out, nights=len(nights), read=len(fresh), pages=pages.written, index=index)


def _render(
    pages: _Pages,
    nights: list[NightData],
    night: Night,
    histories: dict[str, list],
    specs: dict[str, ModelSpec],
) -> Path:
    latest = nights[-1]
    keys = [night.key for night in nights]
    every_flag = list(dict.fromkeys(flag for night in nights for flag in night.flags))
    corpus = [night.health.get(ALL) for night in nights]  # None: a nightly summarised before health

    def health_series(field: str) -> list:
        return [getattr(point, field) if point is not None else None for point in corpus]

    health_chart = _chart(
        keys,
        {
            "models swept": health_series("models"),
            "built and ran eagerly": health_series("ran_eagerly"),
            "compiled (baseline)": health_series("compiled"),
            "one graph": health_series("one_graph"),
        },
        "models",
    )
    graphs_chart = _chart(
        keys,
        {
            "mean graphs per model": health_series("mean_graphs"),
            "90th percentile": health_series("p90_graphs"),
        },
        "graphs per compiled model",
    )
    flags_chart = _chart(
        keys,
        {
            f"{flag}: {what}": [
                getattr(night.trend[flag], field) if flag in night.trend else None for night in nights
            ]
            for flag in every_flag
            for what, field in (("crashes", "crashes"), ("helped", "helps"))
        },
        "models",
    )
    previous = nights[-2] if len(nights) > 1 else None
    index = pages.write(
        links.INDEX,
        "index.html.j2",
        flags=night.flags,
        every_flag=every_flag,
        charts={"health": health_chart, "graphs": graphs_chart, "flags": flags_chart},
        health=night.health,
        reasons=break_reason_changes(latest, previous),
    )
    for flag, view in night.flags.items():
        trend_chart = _chart(
            [point.key for point in view.trend],
            {
                "confirmed crashes": [point.crashes for point in view.trend],
                "fewer graphs": [point.helps for point in view.trend],
                "flaky": [point.flaky for point in view.trend],
            },
            "models",
        )
        pages.write(
            links.flag_page(flag),
            "flag.html.j2",
            view=view,
            night=night,
            repros={repro.signature: repro for repro in night.snapshot.reproductions if repro.flag == flag},
            chart=trend_chart,
            strata=sorted({row.stratum for row in view.effects}),
            effects=[effect.value for effect in Effect if view.stats.counts.get(effect)],
            signatures=sorted({row.signature for row in view.effects if row.signature}),
            # model -> the crash group (confirmed or flaky) it is listed in
            grouped={
                model: group
                for group in view.stats.crash_groups + view.stats.flaky_groups
                for model in group.models
            },
        )
    latest_rows = {row.model: row for row in latest.models}
    groups: Groups = {
        (flag, model): links.crash_group(flag, group.signature, group.confirmed)
        for flag, view in night.flags.items()
        for group in view.stats.crash_groups + view.stats.flaky_groups
        for model in group.models
    }
    model_list = []
    for model, rows in sorted(histories.items()):
        model_list.append((model, rows[-1]))
        configs = list(dict.fromkeys(config for entry in rows for config in entry.night.configs))
        flags = [config for config in configs if config != BASELINE]
        labels = [entry.night.key for entry in rows]
        columns = _columns(rows, configs)
        recompiles = any(value is not None for values in columns["recompiles"].values() for value in values)
        changed = [entry for entry in rows if entry.changes]
        pages.write(
            links.model_page(model),
            "model.html.j2",
            model=model,
            rows=rows,
            spans=_spans(rows, configs, flags, groups if rows[-1].night is latest else {}),
            configs=configs,
            flags=flags,
            spec=specs.get(model),
            in_latest=model in latest_rows,
            first_change=changed[0] if changed else None,
            changes=len(changed),
            recompiles=recompiles,
            charts={
                "graphs": _chart(labels, columns["graphs"], "graphs"),
                "ops": _chart(labels, columns["ops"], "operators"),
            },
        )
    listed = [_model_row(model, entry, list(night.flags)) for model, entry in model_list]
    pages.write(
        links.MODELS,
        "models.html.j2",
        models=model_list,
        rows=listed,
        latest_rows=latest_rows,
        strata=sorted({row.stratum for row in listed}),
        statuses=sorted({row.status for row in listed if row.status}),
        effects=sorted({effect for row in listed for effect in row.effects if effect}),
    )
    for old, new in itertools.pairwise(nights):
        page = links.compare_page(old.key, new.key)
        pages.write(page, "compare.html.j2", old=old, new=new, change=new.diff)
    pages.write(
        links.COMPARE,
        "compare-any.html.j2",
        settings={
            "compareUrl": COMPARE_URL,  # the commit range, as `analysis.diff` links it
            "ran": sorted(effect.value for effect in RAN_EFFECTS),
            "crash": Effect.crashes.value,
            "baseline": BASELINE,
            "nights": [
                {
                    "key": night.key,
                    "data": links.night_data(night.key),
                    "page": links.compare_page(nights[i - 1].key, night.key) if i else None,
                }
                for i, night in enumerate(nights)
            ],
            "modelPage": {night_model: links.model_page(night_model) for night_model in histories},
        },
    )
    return index
