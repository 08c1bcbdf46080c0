"""A sweep's closing words: the summary table per config, the crash and engine-error tables, and
the figures (wall time against its lower bound, the skipped share, the seconds per stage).

Engine errors (a flag run that could not rebuild what its baseline built: a fault of the sweep,
not of the model) are announced when the sweep closes and get a table of their own.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rich.markup import escape
from rich.table import Table

from triagebot.corpus.shrink.families import why_slow
from triagebot.results import BASELINE, BASELINE_AGAIN, SKIPPED_RUN, RunRecord, Status


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
SLOW_TAIL = 40  # models: the slow tail of a whole-corpus sweep (about a thousand models)
TAIL_FROM = 100  # models: a smaller sweep's slowest few are not a tail worth a line


@dataclass(frozen=True)
class SlowTail:
    """A sweep's slowest models and their share of its run seconds, each with why its family's
    compile stays slow once shrunk (its entry in `corpus/shrink/families.py`; "" where none says)."""

    share: float
    models: int  # in the sweep
    slowest: list[tuple[str, float, str]]  # (model, run seconds, why it stays slow), slowest first

    @property
    def unexplained(self) -> list[tuple[str, float]]:
        return [(model, seconds) for model, seconds, why in self.slowest if not why]

    def line(self) -> str:
        unexplained = self.unexplained
        line = (
            f"slow tail: the {len(self.slowest)} slowest of {self.models:,} models took "
            f"{100 * self.share:.1f}% of the run seconds; "
            f"{len(self.slowest) - len(unexplained)} of them in families that say why they stay slow"
        )
        if unexplained:
            named = ", ".join(f"{model} {seconds:.1f} s" for model, seconds in unexplained[:5])
            line += f"; the others: {named}{', ...' if len(unexplained) > 5 else ''}"
        return line


def slow_tail(seconds: Mapping[str, tuple[float, str | None]]) -> SlowTail:
    """The slow tail of a sweep, from each model's run seconds and model type: the slowest 40 per
    thousand models, at most 40 (the issues' 40 slowest of the whole corpus; 5 of a 12% share)."""
    count = min(SLOW_TAIL, max(1, round(len(seconds) * SLOW_TAIL / 1000)))
    ranked = sorted(seconds.items(), key=lambda item: (-item[1][0], item[0]))[:count]
    total = sum(taken for taken, _ in seconds.values())
    return SlowTail(
        share=sum(taken for _, (taken, _) in ranked) / total if total else 0.0,
        models=len(seconds),
        slowest=[(model, taken, why_slow(model_type)) for model, (taken, model_type) in ranked],
    )


def seconds_by_model(records: Sequence[RunRecord]) -> dict[str, tuple[float, str | None]]:
    """Each model's run seconds over its sweep runs (first attempts: no confirmation, no ladder
    rung) and its model type, for `slow_tail`."""
    taken: dict[str, float] = defaultdict(float)
    model_types: dict[str, str | None] = {}
    for r in records:
        if r.attempt == 0 and r.backend is None:
            taken[r.model] += run_seconds(r)
            if r.spec is not None:
                model_types[r.model] = r.spec.model_type
    return {model: (seconds, model_types.get(model)) for model, seconds in taken.items()}


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
    tail: SlowTail | None = None

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
            f"{SKIPPED_RUN} (its `when`)",
        ]
        if self.tail is not None and self.tail.models >= TAIL_FROM:
            lines.append(self.tail.line())
        if self.engine_errors:
            lines.append(engine_error_line(self.engine_errors))
        return lines


def copied(record: RunRecord) -> bool:
    """A flag's copy of its untestable baseline's record: nothing ran (a flag run that fails to
    build is an engine error, never untestable)."""
    return record.config != BASELINE and record.backend is None and record.outcome.untestable


def run_seconds(record: RunRecord) -> float:
    """The seconds a record's run took (none for a copy, nor for a skipped run)."""
    return 0.0 if copied(record) else record.outcome.seconds


RunMade = tuple[str, str, str, tuple[str, ...]]
"""One run as two ways of making a list of runs compare it: model, config, status, checks made."""


def runs_made(records: Sequence[RunRecord]) -> list[RunMade]:
    """The sweep's own runs (neither a crash's confirmation, a ladder rung, nor a noise floor's
    second baseline), sorted, each with its status and the checks it made: what another way of
    making the same runs must match."""
    return sorted(
        (r.model, r.config, r.outcome.status.value, tuple(r.outcome.checks_made))
        for r in records
        if r.attempt == 0 and r.backend is None and r.config != BASELINE_AGAIN
    )


def sweep_figures(records: Sequence[RunRecord], jobs: int, wall: float) -> SweepFigures:
    figures = SweepFigures(wall=wall, jobs=jobs, runs=len(records))
    for r in records:
        if copied(r):
            continue
        figures.run_seconds += r.outcome.seconds
        for stage, seconds in r.outcome.stage_seconds.items():
            figures.stages[stage] = figures.stages.get(stage, 0.0) + seconds
        if r.config not in (BASELINE, BASELINE_AGAIN) and r.attempt == 0 and r.backend is None:
            figures.flag_runs += 1
            figures.skipped += r.outcome.status == Status.skipped
        figures.engine_errors += r.outcome.status == Status.engine_error
    figures.tail = slow_tail(seconds_by_model(records))
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
