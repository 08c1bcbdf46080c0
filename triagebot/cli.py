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


def main() -> None:
    try:
        app()
    except (UserError, ConfigError) as error:
        print(f"triagebot: error: {error}", file=sys.stderr)
        sys.exit(2)
