"""Showing a sweep: a live rich progress bar on a terminal, plain lines otherwise, closing tables.

Engine errors (a flag run that could not rebuild what its baseline built: a fault of the sweep,
not of the model) are counted on every progress line, announced when the sweep closes, and get
a table of their own.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from triagebot.results import BASELINE, RunRecord, Status


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
        self.bar = Progress(
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


def summary_table(records: Sequence[RunRecord], configs: Sequence[str]) -> Table:
    """Per config: how many runs ended in each status, and the graphs counted over the ok runs."""
    table = Table(title="sweep results")
    table.add_column("config")
    statuses = list(Status)
    for status in statuses:
        table.add_column(status.value, justify="right")
    table.add_column("graphs", justify="right")
    for config in configs:
        runs = [r for r in records if r.config == config and r.attempt == 0 and r.backend is None]
        counts = Counter(r.outcome.status for r in runs)
        graphs = sum(r.outcome.graphs or 0 for r in runs if r.outcome.status == Status.ok)
        table.add_row(config, *(str(counts.get(s, 0) or "") for s in statuses), str(graphs))
    return table


def engine_error_line(count: int) -> str:
    return (
        f"ENGINE ERRORS: {count} flag run{'s' if count != 1 else ''} could not rebuild the model "
        "its baseline built. This is a fault of the sweep, not of the model: those models are "
        "neither crashes nor untestable, and their flags were not tested."
    )


def engine_error_table(records: Sequence[RunRecord]) -> Table | None:
    """The runs that failed to rebuild what their baseline built (None when there are none)."""
    bad = [r for r in records if r.outcome.status == Status.engine_error]
    if not bad:
        return None
    table = Table(
        title=f"[bold red]ENGINE ERRORS: {len(bad)} runs could not rebuild what their baseline built",
        caption="a fault of the sweep (the recorded spec does not rebuild the model), not a model outcome",
        border_style="red",
    )
    table.add_column("model")
    table.add_column("config")
    table.add_column("stage")
    table.add_column("error")
    for r in sorted(bad, key=lambda r: (r.model, r.config, r.attempt)):
        stage = r.outcome.stage or ("build" if "eager" not in r.outcome.stage_seconds else "eager")
        error = f"{r.outcome.error_type}: {r.outcome.error or ''}"
        table.add_row(r.model, r.config + (f" #{r.attempt}" if r.attempt else ""), stage, escape(error[:100]))
    return table


STAGES = ("build", "eager", "compile")


@dataclass
class SweepFigures:
    """A sweep's closing numbers, over the runs one call made."""

    wall: float  # seconds from the call to its end
    jobs: int
    runs: int = 0  # records made (skipped ones included)
    run_seconds: float = 0.0  # the sum of their recorded seconds
    skipped: int = 0
    flag_runs: int = 0  # records of flag configs (first attempts), skipped ones included
    engine_errors: int = 0
    stages: dict[str, float] = field(default_factory=dict)  # stage -> summed seconds

    @property
    def lower_bound(self) -> float:
        """The wall time no scheduling can beat: the run seconds spread over the workers."""
        return self.run_seconds / self.jobs

    @property
    def skipped_share(self) -> float:
        return self.skipped / self.flag_runs if self.flag_runs else 0.0

    def lines(self) -> list[str]:
        stages = ", ".join(f"{stage} {self.stages.get(stage, 0.0):.0f} s" for stage in STAGES)
        lines = [
            f"wall {self.wall:.1f} s; lower bound {self.lower_bound:.1f} s "
            f"({self.run_seconds:.0f} run seconds / {self.jobs} workers; wall/bound "
            f"{self.wall / self.lower_bound if self.lower_bound else 0:.2f})",
            f"stages: {stages}",
            f"skipped: {self.skipped} of {self.flag_runs} flag runs ({100 * self.skipped_share:.1f}%): "
            "the baseline compiled to one graph with no break",
        ]
        if self.engine_errors:
            lines.append(engine_error_line(self.engine_errors))
        return lines


def sweep_figures(records: Sequence[RunRecord], jobs: int, wall: float) -> SweepFigures:
    figures = SweepFigures(wall=wall, jobs=jobs, runs=len(records))
    for r in records:
        if r.config != BASELINE and r.outcome.untestable:
            continue  # the baseline's record, copied for a flag: nothing ran
        figures.run_seconds += r.outcome.seconds
        for stage, seconds in r.outcome.stage_seconds.items():
            figures.stages[stage] = figures.stages.get(stage, 0.0) + seconds
        if r.config != BASELINE and r.attempt == 0:
            figures.flag_runs += 1
            figures.skipped += r.outcome.status == Status.skipped
        figures.engine_errors += r.outcome.status == Status.engine_error
    return figures


def crash_table(records: Sequence[RunRecord]) -> Table | None:
    """The sweep's crashes, timeouts, signals and wrong results by model and config (None when
    there are none)."""
    bad = [
        r
        for r in records
        if r.attempt == 0 and r.backend is None
        if r.outcome.status in (Status.crash, Status.timeout, Status.signal) or r.outcome.mismatched
    ]
    if not bad:
        return None
    table = Table(title="crashes, timeouts, signals and wrong results")
    table.add_column("model")
    table.add_column("config")
    table.add_column("status")
    table.add_column("error")
    for r in sorted(bad, key=lambda r: (r.model, r.config != BASELINE, r.config)):
        wrong = r.outcome.accuracy if r.outcome.mismatched else None
        status = "wrong result" if wrong else r.outcome.status.value
        error = f"{wrong.where}: {wrong.detail}" if wrong else r.outcome.signature or ""
        table.add_row(r.model, r.config, status, error[:100])
    return table
