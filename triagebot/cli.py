"""The `triagebot` command: wires the packages together and holds no logic of its own.

Imports of torch-using packages (corpus, sweep) stay inside the commands that need them, so
that `publish`, `diff`, `report` and `command` run on a runner without torch.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from triagebot.config import Config, ConfigError, load_config

app = typer.Typer(
    name="triagebot",
    help="Flag sweeps of torch.compile over a transformers corpus, and the issues they feed.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="triagebot.toml to read (default: ./triagebot.toml if present)."),
]


class UserError(Exception):
    """An error in what the user asked for: printed as one line, exit status 2."""


def fail(message: str) -> None:
    raise UserError(message)


def read_config(path: Path | None) -> Config:
    return load_config(path)


# --- effects, diff, report: analysis and reports of stored snapshots ---

StoreOption = Annotated[
    Path | None, typer.Option("--store", help="Snapshot folder (default: [store] path of triagebot.toml).")
]


def _snapshot_store(store_dir: Path | None, config: Path | None):
    from triagebot.store import LocalStore, open_store

    return LocalStore(store_dir) if store_dir else open_store(read_config(config).store)


def _load_snapshot(where: str, store_dir: Path | None, config: Path | None):
    """A snapshot by path to its JSON file, or by key in the store."""
    from triagebot.store import StoreError, read_snapshot

    try:
        if Path(where).is_file():
            return read_snapshot(where)
        return _snapshot_store(store_dir, config).get(where)
    except StoreError as error:
        fail(f"{where}: {error}" if str(where) not in str(error) else str(error))


@app.command()
def effects(
    snapshot: Annotated[str, typer.Argument(help="Snapshot JSON file or key in the store.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON Lines, one row per (model, flag).")] = False,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Each flag's effect on each model: one row per (model, flag)."""
    from triagebot.analysis import classify

    rows = classify(_load_snapshot(snapshot, store, config))
    if as_json:
        for row in rows:
            print(row.model_dump_json())
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("model", "stratum", "flag", "effect", "baseline graphs", "flag graphs", "signature")
    for row in rows:
        graphs = ["" if value is None else str(value) for value in (row.baseline_graphs, row.flag_graphs)]
        table.add_row(row.model, row.stratum, row.flag, row.effect.value, *graphs, row.signature or "")
    Console().print(table)


@app.command("diff")
def diff_command(
    old: Annotated[str, typer.Argument(help="Older snapshot: JSON file or key.")],
    new: Annotated[str, typer.Argument(help="Newer snapshot: JSON file or key.")],
    as_json: Annotated[bool, typer.Option("--json", help="The diff record as JSON.")] = False,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """What changed between two snapshots, per flag, with the commit range."""
    from triagebot.analysis import diff
    from triagebot.report import nightly_summary

    before, after = _load_snapshot(old, store, config), _load_snapshot(new, store, config)
    change = diff(before, after)
    print(change.model_dump_json(indent=1) if as_json else nightly_summary(after, change), end="\n")


@app.command()
def report(
    snapshot: Annotated[str, typer.Argument(help="Snapshot JSON file or key in the store.")],
    out: Annotated[Path, typer.Option("--out", help="Folder to write the reports into.")],
    previous: Annotated[
        str | None,
        typer.Option("--previous", help="Snapshot to diff against (default: the store's previous build)."),
    ] = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Write issue bodies per flag, fixed/regression notices, summary.md and dashboard.html."""
    from triagebot.report import write_report
    from triagebot.store import StoreError

    settings = read_config(config)
    current = _load_snapshot(snapshot, store, config)
    history = []
    try:
        snapshots = _snapshot_store(store, config)
        history = [s for s in snapshots.history(until=current.key) if s.key != current.key]
        before = _load_snapshot(previous, store, config) if previous else snapshots.latest_before(current.key)
    except StoreError as error:
        fail(str(error))
    written = write_report(
        current,
        out,
        previous=before,
        history=history,
        cc=settings.tracker.cc,
        dashboard_url=settings.tracker.dashboard_url,
    )
    for path in written:
        print(path)


def main() -> None:
    try:
        app()
    except (UserError, ConfigError) as error:
        print(f"triagebot: error: {error}", file=sys.stderr)
        sys.exit(2)
