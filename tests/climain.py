"""`triagebot ...` as a user runs it: through `cli.main`, which turns every error meant for a
person into one line on stderr and exit status 2 (CliRunner would call the app beneath it)."""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass
class Ran:
    status: int
    out: str
    err: str


def run_main(monkeypatch, capsys, *argv: str) -> Ran:
    from triagebot.cli import main

    monkeypatch.setattr(sys, "argv", ["triagebot", *argv])
    capsys.readouterr()
    try:
        main()
        status = 0
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    captured = capsys.readouterr()
    return Ran(status, captured.out, captured.err)
