"""What a compiler developer reads first about a flag: its figures (one set of numbers, every
surface prints them), its verdict (ready to be on by default or not, and what blocks it), and
where in the code each crash starts (the innermost model and compiler frames)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, field_validator

from triagebot.results.base import Record, formerly
from triagebot.results.runs import When


class Frame(Record):
    """One frame of a stored traceback: a file (its path from the package root on, e.g.
    `transformers/models/mistral3/modeling_mistral3.py`), a line, a function, its source line."""

    file: str
    line: int
    function: str
    source: str | None = None  # the source line as the traceback printed it, stripped


class CrashPattern(Record):
    """Where a crash starts in the code, read from a traceback: the innermost frame in model code
    (what triggers it: an `.item()`, a `nonzero`, a `split` by a tensor's values), the torch
    operation it reached, and the innermost frame of the compiler (where torch gives up);
    `models`: the members of the group whose tracebacks show this model frame and operation."""

    model_frame: Frame | None = None  # None: the stored tail holds no frame of model code
    # The torch code the model's operation ran when the compiler gave up (a decomposition, a meta
    # function, a lowering): the innermost frame outside Dynamo, fake tensors and FX. None: Dynamo
    # gave up on the model's code itself, or the stored tail holds no such frame.
    operation_frame: Frame | None = None
    compiler_frame: Frame | None = None  # None: the stored tail holds no compiler frame
    models: list[str] = Field(default_factory=list)


class CompileRiser(Record):
    """A model whose compile time rose under a flag: its compile seconds at baseline and under
    the flag, on the same night."""

    model: str
    baseline_seconds: float
    flag_seconds: float
    # The highest compiled rung of the backend ladder (aot_eager, inductor) it compiled under the
    # flag, with that rung's compile seconds under the flag and at baseline (None: not climbed).
    rung: str | None = None
    rung_baseline_seconds: float | None = None
    rung_flag_seconds: float | None = None

    @property
    def ratio(self) -> float:
        return self.flag_seconds / self.baseline_seconds


RATIO_EDGES = (0.5, 0.67, 0.8, 0.9, 0.95, 1.05, 1.1, 1.25, 1.5, 2.0, 3.0)
"""The edges of the bins a flag's compile-time ratios are counted in (`CompileTime.bins`): below
the first, between each two, from the last on."""


class CompileTime(Record):
    """What a flag costs in compile time on one night (`analysis.compile_time`): over the models
    the flag could affect whose baseline and flag run both compiled, the ratio of the flag run's
    compile seconds to the baseline's, said against the night's noise floor (the spread of the
    ratios of a fixed sample of baselines run twice). A median inside the floor is no
    measurable change, never a finding."""

    models: int  # the pairs with both compile seconds: the ratios' denominator
    median: float | None = None  # the median ratio (None: no pair)
    low: float | None = None  # the 10th percentile of the ratios
    high: float | None = None  # the 90th percentile
    # The night's noise floor: the largest ratio (or its inverse, whichever is above 1) of a
    # baseline run again to its first run, over `noise_models` models. None: not measured.
    noise_floor: float | None = None
    noise_models: int = 0
    rose: int = 0  # models whose ratio is above the noise floor (none without a floor)
    fell: int = 0  # models whose ratio is below the floor's inverse: faster beyond the floor
    risers: list[CompileRiser] = Field(default_factory=list)  # the largest rises above 1, largest first
    bins: list[int] = Field(default_factory=list)  # the ratios counted in the bins of `RATIO_EDGES`
    # The median ratio that blocks the flag from being on by default ([tracker] compile_time_blocks);
    # None: compile time never blocks.
    blocks_above: float | None = None
    # Over the sentinels alone (triagebot's test models): no real model was timed tonight.
    sentinels_only: bool = False
    # Against each model's own spread over the stored nightlies (its baseline compile seconds,
    # Tukey's fences on their interquartile range, as rustc-perf and PyTorch's HUD judge a change
    # against a multi-day baseline): the models with enough history to judge, those under the
    # flag slower or faster beyond their own spread, and those without history yet.
    history_models: int = 0
    history_rose: int = 0
    history_fell: int = 0
    no_history: int = 0
    history_nights: int = 0  # the nightlies a model needs before its own spread judges it

    @property
    def measurable(self) -> bool:
        """Whether the median ratio lies beyond the noise floor, either way; without a floor
        measured tonight, nothing is."""
        if self.median is None or self.noise_floor is None:
            return False
        return self.median > self.noise_floor or self.median < 1 / self.noise_floor

    @property
    def blocks(self) -> bool:
        return self.blocks_above is not None and self.measurable and (self.median or 0) > self.blocks_above


CALL_BAND = 1.1
"""A flag's call is said faster or slower than its baseline's only beyond this ratio (or its
inverse): warm calls of tiny models vary by a few percent from call to call."""


class CallPair(Record):
    """A model's time per call, warm, on one compiled rung of the ladder, at baseline and under a
    flag (`Outcome.call_seconds`), and whether the flag gives it fewer graphs."""

    model: str
    rung: str
    helped: bool = False  # the flag gives the model fewer graphs
    baseline_graphs: int | None = None
    flag_graphs: int | None = None
    baseline_seconds: float
    flag_seconds: float

    @property
    def ratio(self) -> float:
        return self.flag_seconds / self.baseline_seconds

    @property
    def change(self) -> str:
        """ "faster", "slower", or "same" within `CALL_BAND`."""
        if self.ratio > CALL_BAND:
            return "slower"
        return "faster" if self.ratio < 1 / CALL_BAND else "same"


class CallTime(Record):
    """What a flag does to the compiled model's time per call (`analysis.call_time`): over the
    models that climbed the ladder at baseline and under the flag and ran on one of its compiled
    forward rungs both ways, the ratio of the flag's seconds per call to the baseline's (each
    the median of a few warm calls), on the highest such rung each model ran. Tiny models
    measure the overhead around the kernels (guards, graph breaks, Python), not the kernels."""

    models: int  # the pairs timed both ways: the ratios' denominator
    median: float | None = None  # the median ratio (None: no pair)
    faster: int = 0  # pairs faster under the flag beyond `CALL_BAND`
    slower: int = 0  # pairs slower beyond it
    helped: int = 0  # of the pairs, the models the flag gives fewer graphs
    helped_faster: int = 0
    helped_slower: int = 0
    pairs: list[CallPair] = Field(default_factory=list)  # every pair, the largest ratio first


class SuiteCount(Record):
    """One suite's share of a night's figure: `count` of its `total` models (`analysis.figures.
    suite_counts`, the one place they are counted; every surface prints these)."""

    suite: str
    count: int
    total: int


class RungCoverage(Record):
    """How much of what a flag changes one rung has checked under the flag, over the stored
    nights (`analysis.rotation.coverage`): of the `changed` models (tonight's, fewer or more
    graphs or a crash fixed), those whose latest evidence on the rung is within the last `window`
    nightlies (`checked`; `failing` of them fail there, `carried` of them were checked on an
    earlier nightly, the `oldest` of which is named by its build). A failure counts where the
    model's baseline did not fail on the same rung: like with like."""

    rung: str
    window: int
    changed: int
    checked: int = 0
    failing: int = 0
    carried: int = 0
    oldest: str | None = None  # the build of the oldest evidence counted (None: all tonight's)
    # Of `failing`, those seen on an earlier nightly: the rotation rechecks them first, and until
    # then the flag is not judged on the rung.
    failing_earlier: int = 0

    @property
    def not_yet(self) -> int:
        return self.changed - self.checked


class FlagFigures(Record):
    """One flag's numbers on one night, computed once (`analysis.figures`); the issue title and
    body, the step summary, the report folder and every page of the site print these and no
    others. Each share is over the denominator named beside it: `affectable` (the models the
    flag could affect: testable, less those skipped) for crashes, wrong results and the models
    with fewer or more graphs; `recompile_checked` for recompile changes."""

    flag: str
    when: When = "always"
    swept: int  # models with a baseline and a run (or a skipped run) under the flag
    untestable: int = 0  # could not be built or run eagerly: not judged
    testable: int = 0  # swept - untestable
    skipped: int = 0  # testable, not run under the flag (`when = "graph_breaks"`: one graph, no break)
    affectable: int = 0  # testable - skipped: the population the flag could affect
    # The sentinels the flag ran on, triagebot's own test models: in none of these figures.
    sentinels: int = 0
    engine_errors: int = 0  # the flag run could not rebuild the model: untested, a fault of the sweep
    crashes: int = 0  # confirmed crashes
    crash_suites: list[SuiteCount] = Field(
        default_factory=list
    )  # per suite, of its affectable (several suites)
    crash_errors: int = 0  # confirmed crash groups (distinct signatures)
    crashes_reachable: int = 0  # models in groups that also fail under a backend users run
    crashes_counting_only: int = 0  # models in groups that crash under the counting backend only
    crashes_unchecked: int = 0  # models in groups whose representative no backend was run for
    new_crashes: int = 0  # crashing models that did not crash in the previous nightly
    # Models whose crash keeps the issue open (not over) though tonight gave it no verdict (its
    # suite not swept, an engine error, a timeout): how many, and model -> why, in words.
    unverified: int = 0
    unverified_crashes: dict[str, str] = Field(default_factory=dict)
    new_errors: list[str] = Field(default_factory=list)  # the error names of the new crashes' groups
    errors: list[str] = Field(default_factory=list)  # every confirmed crash group's error name, largest first
    flaky: int = 0
    outputs_checked: bool = True  # the sweep compared compiled outputs with eager ones (`accuracy`)
    wrong_results: int = Field(0, validation_alias=formerly("wrong_results", "wrong"))  # confirmed ones
    # Models the flag ran on whose outputs could not be judged (eager disagrees with itself, or two
    # eager runs differ): fewer graphs can be real, "safe" cannot. Never in `helped`, and a flag
    # with no other model to judge is not ready.
    not_judged: int = 0
    helped: int = 0  # fewer graphs
    increases_graphs: int = Field(0, validation_alias=formerly("increases_graphs", "hurt"))  # more graphs
    fixes: int = 0  # a baseline crash the flag runs through
    laddered: int = 0  # models that climbed the backend ladder under the flag
    ladder_failures: int = 0  # models failing under the flag on a ladder rung their baseline passes
    recompile_checked: int = 0  # models called again on a second shape, under the flag and at baseline
    recompile_more: int = 0
    recompile_fewer: int = 0
    newly_fixed: int = 0  # crashed in the previous nightly, run now
    compile_slower: int = 0  # models whose compile time rose beyond the night's noise floor
    compile_time: CompileTime | None = None  # None: a night older than compile-time figures
    call_time: CallTime | None = None  # None: a night older than time-per-call figures
    # Per rung users run, how much of what the flag changes it has checked within the ladder's
    # window (empty: the flag changes nothing, or a night older than the rotation).
    coverage: list[RungCoverage] = Field(default_factory=list)
    # The backward rung (`BACKWARD_RUNG`) on the ladder's pairs under the flag: the models that
    # ran it (None: not on the night's ladder), and those that fail there (confirmed) where
    # their baseline passes, each with its word ("wrong": gradients differ; "crash", ...).
    backward_ran: int | None = None
    backward_failures: dict[str, str] = Field(default_factory=dict)


class VerdictRow(StrEnum):
    """The rows of a verdict's table, in its order: each names the `FlagFigures` count it shows
    (`analysis.verdict` counts them), says what the table calls it (`label`), and whether a model
    counted there blocks the flag from being on by default (`blocks`); what does not block stands
    beside the verdict, to be weighed against the models it helps."""

    label: str
    blocks: bool

    def __new__(cls, name: str, label: str, blocks: bool) -> VerdictRow:
        row = str.__new__(cls, name)
        row._value_ = name
        row.label = label
        row.blocks = blocks
        return row

    wrong_results = "wrong_results", "Wrong results (confirmed)", True
    # Blocks only where no model the flag could affect was judged (`analysis.verdict`).
    not_judged = "not_judged", "Outputs not judged (eager disagrees with itself)", False
    crashes = "crashes", "Crashes (confirmed)", True
    unverified = "unverified", "Crashes not verified tonight (not over: the issue stays open)", True
    ladder_failures = "ladder_failures", "Failures on the backend ladder, not at baseline", True
    recompile_more = "recompile_more", "More recompiles", False
    increases_graphs = "increases_graphs", "More graphs", False
    engine_errors = "engine_errors", "Engine errors (the flag untested there)", False
    compile_slower = "compile_slower", "Slower compilation (beyond the noise floor)", False
    helped = "helped", "Fewer graphs (helped)", False


class VerdictLine(Record):
    """One row of a verdict's table: what stands in the way (or what the flag buys), how many
    models, and whether it blocks turning the flag on by default."""

    what: VerdictRow
    models: int
    blocks: bool

    @field_validator("what", mode="before")
    @classmethod
    def _formerly(cls, what: object) -> object:
        # The row's name before it took its effect's (`Effect.increases_graphs`), in a stored night.json.
        return VerdictRow.increases_graphs if what == "more_graphs" else what


class FlagVerdict(Record):
    """Whether a flag is ready to be on by default, by the one rule (`analysis.verdict`, written
    down in the README), and the rows that decided it."""

    ready: bool
    lines: list[VerdictLine] = Field(default_factory=list)
    # The rungs users run whose coverage is below the rule (every changed model checked within
    # the window, no failure from an earlier nightly awaiting its recheck): with nothing else
    # blocking, the flag is not judged yet, never ready.
    awaiting: list[RungCoverage] = Field(default_factory=list)

    @property
    def blockers(self) -> list[VerdictLine]:
        return [line for line in self.lines if line.blocks and line.models]
