"""The `triagebot` application: its commands in one registry, and `main`, the console script.

Every error meant for a person is a `triagebot.errors.TriagebotError`, raised by the package
that found it; `main` prints it as one line on stderr and exits with its status (2; 130 for
Ctrl-C). A file that cannot be read or written is the same one line.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib import metadata
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from triagebot.cli import corpus, doctor, reports, run, settings, sweeping, tracker, upstream
from triagebot.errors import TriagebotError

COMMANDS: dict[str, Callable[..., Any] | typer.Typer] = {
    "run": run.run,
    "sweep": sweeping.sweep,
    "merge": sweeping.merge,
    "reproduce": sweeping.reproduce,
    "effects": reports.effects,
    "diff": reports.diff_snapshots,
    "report": reports.report,
    "publish": tracker.publish,
    "site": reports.site,
    "command": tracker.command,
    "nightly": upstream.nightly,
    "bisect": upstream.bisect,
    "corpus": corpus.app,
    "config": settings.show_config,
    "doctor": doctor.doctor,
}
"""Every command (or group of commands), in the order of a night: the order `--help` lists."""


class NightOrder(TyperGroup):
    """Commands listed in the order of `COMMANDS` (typer lists groups after commands)."""

    def list_commands(self, ctx: Any) -> list[str]:
        order = list(COMMANDS)
        return sorted(self.commands, key=lambda name: order.index(name) if name in order else len(order))


app = typer.Typer(
    name="triagebot",
    cls=NightOrder,
    help=(
        "Flag sweeps of torch.compile over the transformers, diffusers and timm suites, and the issues "
        "they feed."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain click help: rich would read "[sweep] jobs" as markup and show switches as "<bool>".
    rich_markup_mode=None,
)
for name, entry in COMMANDS.items():
    if isinstance(entry, typer.Typer):
        app.add_typer(entry, name=name)
    else:
        app.command(name)(entry)


def _versions(value: bool) -> None:
    if not value:
        return

    def installed(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    print(", ".join(f"{name} {installed(name)}" for name in ("triagebot", "torch", "transformers")))
    raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_versions,
            is_eager=True,
            help="Print the triagebot, torch and transformers versions.",
        ),
    ] = False,
) -> None:
    """Flag sweeps of torch.compile over the transformers, diffusers and timm suites, and the
    issues they feed."""


def main(argv: list[str] | None = None) -> None:
    """The console script: every `TriagebotError` is one line on stderr and its exit status."""
    try:
        app(args=argv, prog_name="triagebot")
    except SystemExit as exit_:
        if exit_.code == 130:  # Ctrl-C where no command had more to say about it
            print("triagebot: interrupted", file=sys.stderr)
        raise
    except TriagebotError as error:
        print(f"triagebot: error: {error}", file=sys.stderr)
        sys.exit(error.exit_code)
    except OSError as error:  # a file that cannot be written, a full disk: not a bug of ours
        where = f"{error.filename}: " if error.filename else ""
        detail = error.strerror or (str(error).splitlines() or [type(error).__name__])[0]
        print(f"triagebot: error: {where}{detail}", file=sys.stderr)
        sys.exit(2)
