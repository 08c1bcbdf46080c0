"""Showing a sweep as it runs: a live rich progress bar on a terminal, plain lines otherwise.

Engine errors (a flag run that could not rebuild what its baseline built: a fault of the sweep,
not of the model) are counted on every progress line and announced when the sweep closes.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Protocol

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import (
    Progress as Bar,
)

from triagebot.results import RunRecord, Status
from triagebot.sweep.summary import engine_error_line


class Progress(Protocol):
    def start(self, total: int, done: int, crashes: int) -> None: ...
    def add(self, runs: int, what: str | None = ...) -> None: ...
    def update(self, record: RunRecord) -> None: ...
    def close(self) -> None: ...


class NullProgress:
    def start(self, total: int, done: int, crashes: int) -> None:
        pass

    def add(self, runs: int, what: str | None = None) -> None:
        pass

    def update(self, record: RunRecord) -> None:
        pass

    def close(self) -> None:
        pass


def describe(record: RunRecord) -> str:
    """One run in a few words: `ok, 2 graphs, 5 ops` or `crash: GuardOnDataDependentSymNode`."""
    outcome = record.outcome
    if outcome.status == Status.skipped:
        return "skipped: one graph, no break at baseline"
    if outcome.status == Status.engine_error:
        return f"ENGINE ERROR: {outcome.error_type}: {outcome.error or ''}"[:120]
    if outcome.status == Status.ok:
        if outcome.graphs is None:
            return "ok"
        breaks = f", {len(outcome.break_reasons)} break reasons" if outcome.break_reasons else ""
        wrong = ", WRONG RESULT" if outcome.mismatched else ""
        return f"ok, {outcome.graphs} graphs, {outcome.ops} ops{breaks}{wrong}"
    return f"{outcome.status.value}: {outcome.error_type}"


class LiveProgress:
    """A rich progress bar: done/total, crashes so far, elapsed and ETA."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.crashes = 0
        self.engine_errors = 0
        self.bar = Bar(
            TextColumn("[bold]sweep"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[red]{task.fields[crashes]} crashes"),
            TextColumn("[bold red]{task.fields[engine]}"),
            TextColumn("{task.fields[last]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self.task = None

    def start(self, total: int, done: int, crashes: int) -> None:
        self.crashes = crashes
        self.bar.start()
        self.task = self.bar.add_task(
            "sweep", total=total, completed=done, crashes=crashes, engine="", last=""
        )

    def add(self, runs: int, what: str | None = "confirming crashes") -> None:
        self.bar.update(self.task, total=self.bar.tasks[0].total + runs)

    def update(self, record: RunRecord) -> None:
        self.crashes += record.outcome.status == Status.crash
        self.engine_errors += record.outcome.status == Status.engine_error
        last = escape(f"{record.model} [{record.config}] {describe(record)}"[:70])
        engine = f"{self.engine_errors} ENGINE ERRORS" if self.engine_errors else ""
        self.bar.update(self.task, advance=1, crashes=self.crashes, engine=engine, last=last)

    def close(self) -> None:
        self.bar.stop()
        if self.engine_errors:
            self.console.print(f"[bold red]{escape(engine_error_line(self.engine_errors))}")


class PlainProgress:
    """One line per finished run, for logs and CI: `[12/24 ETA 0:00:31] model [config] ok, ...`."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stderr
        self.total = self.done = self.crashes = self.ran = self.engine_errors = 0
        self.started = time.monotonic()

    def start(self, total: int, done: int, crashes: int) -> None:
        self.total, self.done, self.crashes = total, done, crashes
        self.started = time.monotonic()
        if done:
            self._print(f"resuming: {done} of {total} runs already recorded")

    def add(self, runs: int, what: str | None = "confirming crashes") -> None:
        """`runs` more to do; `what` they are for is said once (None: nothing said)."""
        self.total += runs
        if what:
            self._print(f"{what}: {runs} more runs")

    def update(self, record: RunRecord) -> None:
        self.done += 1
        self.ran += 1
        self.crashes += record.outcome.status == Status.crash
        self.engine_errors += record.outcome.status == Status.engine_error
        elapsed = time.monotonic() - self.started
        left = (self.total - self.done) * elapsed / self.ran
        attempt = f" attempt {record.attempt}" if record.attempt else ""
        attempt += f" on {record.backend}" if record.backend else ""
        engine = f" ENGINE ERRORS {self.engine_errors}" if self.engine_errors else ""
        self._print(
            f"[{self.done}/{self.total} crashes {self.crashes}{engine} ETA {_clock(left)}] "
            f"{record.model} [{record.config}{attempt}] {describe(record)} ({record.outcome.seconds:.1f}s)"
        )

    def close(self) -> None:
        if self.engine_errors:
            self._print(engine_error_line(self.engine_errors))

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
