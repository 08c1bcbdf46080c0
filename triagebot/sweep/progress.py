"""Showing a sweep as it runs: a live rich progress bar on a terminal, plain lines otherwise.

A sweep goes through phases (`sweep`, `confirmations`, `ladder`, `ladder confirmations`; a
night adds `repros`), each shown with its own done/total and ETA. A phase's total is known
when it starts and never grows: runs it planned and will not make (a pair that stops climbing
at a failure, a ladder out of time) are dropped from it. The crash counter counts distinct
(model, config) pairs that crashed in the sweep, not runs: a confirmation or a ladder run of
the same pair adds nothing. Engine errors (a flag run that could not rebuild what its baseline
built: a fault of the sweep, not of the model) are counted on every line and announced when the
sweep closes.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import IO, Protocol

import rich.progress
from rich.console import Console
from rich.markup import escape

from triagebot.analysis.figures import plural
from triagebot.results import SKIPPED_RUN, RunRecord, Status
from triagebot.sweep.summary import engine_error_line


class Progress(Protocol):
    def phase(self, name: str, total: int, recorded: Sequence[RunRecord] = (), note: str = "") -> None:
        """A phase starts: `total` runs (or steps), of which `recorded` are already in the stream
        (a resumed sweep); `note` says what the phase is for."""

    def update(self, record: RunRecord) -> None:
        """A run of the current phase finished."""

    def step(self, what: str) -> None:
        """A step of the current phase that is not a run finished (a reproduction checked)."""

    def resize(self, runs: int) -> None:
        """The current phase makes `runs` more runs than it said (negative: fewer, those it
        planned and will not make; positive: the ladder admitting more pairs once the seconds
        it spent show room its estimates did not)."""

    def close(self) -> None: ...


class NullProgress:
    def phase(self, name: str, total: int, recorded: Sequence[RunRecord] = (), note: str = "") -> None:
        pass

    def update(self, record: RunRecord) -> None:
        pass

    def step(self, what: str) -> None:
        pass

    def resize(self, runs: int) -> None:
        pass

    def close(self) -> None:
        pass


def describe(record: RunRecord) -> str:
    """One run in a few words: `ok, 1 graph, 5 ops, 1 break reason`, `crash: KeyError`."""
    outcome = record.outcome
    if outcome.status == Status.skipped:
        return f"skipped: {SKIPPED_RUN}"
    if outcome.status == Status.engine_error:
        return f"ENGINE ERROR: {outcome.error_type}: {outcome.error or ''}"[:120]
    if outcome.status == Status.ok:
        if outcome.graphs is None:
            return "ok"
        breaks = f", {plural(len(outcome.break_reasons), 'break reason')}" if outcome.break_reasons else ""
        wrong = ", WRONG RESULT" if outcome.mismatched else ""
        ops = f", {plural(outcome.ops, 'op')}" if outcome.ops is not None else ""
        return f"ok, {plural(outcome.graphs, 'graph')}{ops}{breaks}{wrong}"
    return f"{outcome.status.value}: {outcome.error_type}"


class Tally:
    """What every progress display counts: distinct crashing pairs, engine errors, and the current
    phase's done/total and ETA (from the pace of the runs it made so far)."""

    def __init__(self) -> None:
        self.crashed: set[tuple[str, str]] = set()
        self.engine_errors = 0
        self.name, self.total, self.done, self.made = "", 0, 0, 0
        self.started = time.monotonic()

    def phase(self, name: str, total: int, recorded: Sequence[RunRecord]) -> None:
        self.name, self.total, self.done, self.made = name, total, len(recorded), 0
        self.started = time.monotonic()
        for record in recorded:
            self.count(record)

    def count(self, record: RunRecord) -> None:
        if record.outcome.status == Status.crash and record.attempt == 0 and record.backend is None:
            self.crashed.add((record.model, record.config))
        self.engine_errors += record.outcome.status == Status.engine_error

    def advance(self) -> None:
        self.done += 1
        self.made += 1

    def resize(self, runs: int) -> None:
        self.total = max(self.done, self.total + runs)

    @property
    def left(self) -> float:
        """Seconds to the end of the phase at its pace so far."""
        pace = (time.monotonic() - self.started) / self.made if self.made else 0.0
        return (self.total - self.done) * pace


class LiveProgress:
    """A rich progress bar per phase: done/total, crashing pairs so far, elapsed and ETA."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.tally = Tally()
        self.bar = rich.progress.Progress(
            rich.progress.TextColumn("[bold]{task.description}"),
            rich.progress.BarColumn(),
            rich.progress.MofNCompleteColumn(),
            rich.progress.TextColumn("[red]{task.fields[crashes]} crashing pairs"),
            rich.progress.TextColumn("[bold red]{task.fields[engine]}"),
            rich.progress.TextColumn("{task.fields[last]}"),
            rich.progress.TimeElapsedColumn(),
            rich.progress.TextColumn("ETA"),
            rich.progress.TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self.task: rich.progress.TaskID | None = None

    def phase(self, name: str, total: int, recorded: Sequence[RunRecord] = (), note: str = "") -> None:
        self.tally.phase(name, total, recorded)
        if note:
            self.console.print(escape(f"{name}: {note}"))
        if self.task is None:
            self.bar.start()
        done, crashes = self.tally.done, len(self.tally.crashed)
        self.task = self.bar.add_task(name, total=total, completed=done, crashes=crashes, engine="", last="")

    def update(self, record: RunRecord) -> None:
        self.tally.count(record)
        self.step(escape(f"{record.model} [{record.config}] {describe(record)}"[:70]))

    def step(self, what: str) -> None:
        if self.task is None:
            return
        self.tally.advance()
        errors = self.tally.engine_errors
        engine = f"{errors} ENGINE ERRORS" if errors else ""
        crashes = len(self.tally.crashed)
        self.bar.update(self.task, advance=1, crashes=crashes, engine=engine, last=what)

    def resize(self, runs: int) -> None:
        self.tally.resize(runs)
        if self.task is not None:
            self.bar.update(self.task, total=self.tally.total)

    def close(self) -> None:
        self.bar.stop()
        if self.tally.engine_errors:
            self.console.print(f"[bold red]{escape(engine_error_line(self.tally.engine_errors))}")


class PlainProgress:
    """One line per finished run, for logs and CI:
    `[sweep 12/24 crashing pairs 1 ETA 0:00:31] model [config] ok, ...`."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tally = Tally()

    def phase(self, name: str, total: int, recorded: Sequence[RunRecord] = (), note: str = "") -> None:
        self.tally.phase(name, total, recorded)
        done = self.tally.done
        said = f"{name}: {total} runs" + (f", {done} already recorded" if done else "")
        self._print(said + (f" ({note})" if note else ""))

    def update(self, record: RunRecord) -> None:
        self.tally.count(record)
        attempt = f" attempt {record.attempt}" if record.attempt else ""
        attempt += f" on {record.backend}" if record.backend else ""
        self.step(
            f"{record.model} [{record.config}{attempt}] {describe(record)} ({record.outcome.seconds:.1f}s)"
        )

    def step(self, what: str) -> None:
        tally = self.tally
        tally.advance()
        engine = f" ENGINE ERRORS {tally.engine_errors}" if tally.engine_errors else ""
        where = f"{tally.name} {tally.done}/{tally.total} crashing pairs {len(tally.crashed)}{engine}"
        self._print(f"[{where} ETA {_clock(tally.left)}] {what}")

    def resize(self, runs: int) -> None:
        self.tally.resize(runs)

    def close(self) -> None:
        if self.tally.engine_errors:
            self._print(engine_error_line(self.tally.engine_errors))

    def _print(self, line: str) -> None:
        print(line, file=self.stream, flush=True)


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def make_progress(interactive: bool | None = None) -> LiveProgress | PlainProgress:
    """A live bar when stderr is a terminal, plain lines otherwise (CI)."""
    if interactive is None:
        interactive = sys.stderr.isatty()
    return LiveProgress() if interactive else PlainProgress()
