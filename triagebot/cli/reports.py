"""`triagebot effects`, `diff`, `report`, `site`: stored snapshots analysed and rendered.

rich (the effects table) and `triagebot.report` (jinja2) are imported inside the commands that
print with them: together a seventh of a second that `triagebot --help` and the other
commands should not pay.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from triagebot.analysis import classify, diff
from triagebot.cli.options import ConfigOption, SnapshotArgument, StoreOption, configured
from triagebot.config import Config
from triagebot.errors import UsageError
from triagebot.pipeline import Snapshots, build_site, out_of_order
from triagebot.results import ModelEffect
from triagebot.store.selection import comparable, describe

EffectsJson = Annotated[bool, typer.Option("--json", help="JSON Lines, one row per (model, flag).")]
Older = Annotated[str, typer.Argument(metavar="OLD", help="The older snapshot: file, stream or key.")]
Newer = Annotated[str, typer.Argument(metavar="NEW", help="The newer snapshot: file, stream or key.")]
DiffJson = Annotated[bool, typer.Option("--json", help="The diff record as JSON.")]
AnyOrder = Annotated[
    bool, typer.Option("--any-order", "--reverse", help="Compare even when OLD is the newer of the two.")
]
AnySelection = Annotated[
    bool, typer.Option("--any-selection", help="Compare even when the two sweep different selections.")
]
ReportOut = Annotated[Path, typer.Option("--out", metavar="DIR", help="Folder to write the reports into.")]
Previous = Annotated[
    str | None,
    typer.Option(
        "--previous",
        metavar="SNAPSHOT",
        help="Snapshot to diff against (default: the store's previous build).",
    ),
]
SiteOut = Annotated[
    Path,
    typer.Option(
        "--out", metavar="DIR", help="Folder to build in (again: unchanged nightlies are not re-read)."
    ),
]
Readers = Annotated[
    int | None,
    typer.Option(
        "--readers",
        "--jobs",  # its first name, before `--jobs` meant only the sweep's workers
        metavar="N",
        min=1,
        help="Processes reading stored snapshots (default: the cores, at most 4).",
    ),
]
EFFECT_COLUMNS = ("model", "stratum", "flag", "effect", "baseline graphs", "flag graphs", "signature")


@configured("store")
def effects(
    settings: Config,
    snapshot: SnapshotArgument,
    as_json: EffectsJson = False,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Each flag's effect on each model.

    One row per (model, flag): the effect, the graph counts and the crash signature."""
    rows = classify(Snapshots(settings.store, reproductions=False).get(snapshot))
    if as_json:
        for row in rows:
            print(row.model_dump_json())
        return
    print_effects(rows)


def print_effects(rows: list[ModelEffect]) -> None:
    """The effects as a table, every cell whole (a CI log keeps every character)."""
    from rich.console import Console  # start-up cost: see the module
    from rich.table import Table

    table = Table(*EFFECT_COLUMNS)
    for column in table.columns:
        column.overflow = "fold"  # never cut
    for row in rows:
        graphs = ["" if value is None else str(value) for value in (row.baseline_graphs, row.flag_graphs)]
        table.add_row(row.model, row.stratum, row.flag, row.effect.value, *graphs, row.signature or "")
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=max(console.width, 4000))  # one line per row
    console.print(table)


@configured("store")
def diff_snapshots(
    settings: Config,
    old: Older,
    new: Newer,
    as_json: DiffJson = False,
    any_order: AnyOrder = False,
    any_selection: AnySelection = False,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """What changed between two snapshots, with the commit range.

    Names the newly crashing and fixed models of each flag and says when the flag sets
    differ. Give the older snapshot first; --any-order compares them the other way round. Two
    sweeps of different selections (another corpus, sample or models) are not compared unless
    --any-selection."""
    from triagebot.report.render import render  # start-up cost: see the module

    snapshots = Snapshots(settings.store, reproductions=False)
    before, after = snapshots.get(old), snapshots.get(new)
    if out_of_order(before, after) and not any_order:
        raise UsageError(
            f"{old} ({before.key}) is newer than {new} ({after.key}): give the older snapshot first, "
            "or --any-order to compare them in this order"
        )
    if not comparable(before.corpus, after.corpus) and not any_selection:
        raise UsageError(
            f"{old} and {new} sweep different selections ({describe(before)}; {describe(after)}): "
            "a diff compares like with like; --any-selection compares them anyway"
        )
    change = diff(before, after)
    print((change.model_dump_json(indent=1) if as_json else render("diff.txt.j2", diff=change)).rstrip("\n"))


@configured("store")
def report(
    settings: Config,
    snapshot: SnapshotArgument,
    out: ReportOut,
    previous: Previous = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Write the issue bodies, notices and summary.

    One issue body per flag, fixed/regression notices against the previous snapshot,
    summary.md and night.json, into --out. The dashboard is `triagebot site`."""
    from triagebot.report import write_report  # start-up cost: see the module

    for path in write_report(Snapshots(settings.store).night(snapshot, settings, previous), out):
        print(path)


@configured("store")
def site(
    settings: Config,
    out: SiteOut = Path(".triagebot/site"),
    readers: Readers = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Build the dashboard site from every stored nightly.

    An index with the trends, a page per flag, per model and per pair of nightlies; it works
    offline from the folder and is what the nightly publishes to GitHub Pages. The newest
    nightly is analysed as `run` does, and its flag pages link the tracking issues the store
    remembers for [tracker] repo."""
    from triagebot.report.links import site_url  # start-up cost: see the module
    from triagebot.report.words import plural

    built = build_site(Snapshots(settings.store).store, out, settings, readers=readers, say=print)
    nights = plural(built.nights, "nightly", "nightlies")
    print(f"site: {nights} ({built.read} read), {built.pages} pages: {built.index}")
    if settings.tracker.dashboard_url:
        print(f"published at: {site_url(settings.tracker.dashboard_url)}")
