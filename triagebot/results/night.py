"""What analysis/ computes and report/ and tracker/ present: effects, failure groups, a flag's
statistics, the corpus's health, diffs, and the night record."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar

from pydantic import Field

from triagebot.results.base import Record, formerly
from triagebot.results.bisection import Bisection
from triagebot.results.figures import CrashPattern, FlagFigures, FlagVerdict, SuiteCount
from triagebot.results.locus import WrongLocus
from triagebot.results.runs import CrossCheck, Environment, Reproduction, Snapshot, When
from triagebot.results.upstream import GroupTriage


class Effect(StrEnum):
    """A flag's effect on one model, against its baseline."""

    reduces_graphs = "reduces_graphs"
    no_effect = "no_effect"
    increases_graphs = "increases_graphs"
    crashes = "crashes"  # baseline ran, flag crashed
    fixes_crash = "fixes_crash"  # baseline crashed, flag ran
    both_crash = "both_crash"
    untestable = "untestable"  # build or eager run failed (or hung or died there)
    timeout = "timeout"  # the baseline or the flag run hung
    signal = "signal"  # the baseline or the flag run died
    flaky = "flaky"  # a crash that did not repeat when run again
    wrong_result = "wrong_result"  # ran, but its outputs differ from eager beyond tolerance (confirmed)
    skipped = "skipped"  # the flag run was skipped: the baseline had nothing the flag acts on
    engine_error = "engine_error"  # the flag run failed to rebuild what its baseline built: our fault


class ModelEffect(Record):
    """One row of `triagebot effects`: one (model, flag) pair."""

    model: str
    stratum: str
    flag: str
    effect: Effect
    baseline_graphs: int | None = None
    flag_graphs: int | None = None
    signature: str | None = None
    error_type: str | None = None
    error: str | None = None


class CleanRung(Record):
    """A backend under which a model ran clean under a flag: its graphs there and at baseline."""

    backend: str
    graphs: int | None = None
    baseline_graphs: int | None = None
    baseline_backend: str | None = None  # where the baseline's count is from: this backend, or counting
    outputs_match: bool = False  # its outputs were compared with eager's and matched


class FailureGroup(Record):
    """Models one flag crashes the same way: one signature, one bug."""

    flag: str
    signature: str
    error_type: str | None = None
    error: str | None = None  # the full first error line of the first model, for the report
    # The error's own name: the exception a wrapper names first in its message
    # (`InternalTorchDynamoError: PendingUnbackedSymbolNotFound: ...` is PendingUnbackedSymbolNotFound).
    name: str | None = None
    # Per suite, its members of the suite's models the flag could affect: a group may hold models
    # of several suites (empty: a night of one suite, or a group not counted so).
    suites: list[SuiteCount] = Field(default_factory=list)
    models: list[str]
    confirmed: bool = True  # False: the crash did not repeat when run again (flaky)
    first_seen: str | None = None  # key of the first stored snapshot with this signature
    traceback: str | None = None  # the tail of the first model's traceback, as the sweep kept it
    # Where it lives (Dynamo, AOTAutograd, Inductor): a crash of the sweep is Dynamo's; one met
    # only on the backend ladder lives where its first failing rung (`backend`) says.
    lives_in: str | None = None
    backend: str | None = None  # the ladder rung it was met on; None: the sweep's counting backend
    ladder: dict[str, str] = Field(default_factory=dict)  # its first model's rungs: rung -> ok, crash, ...
    baseline_too: list[str] = Field(default_factory=list)  # members that fail there at baseline too
    # Where its first model (the one the ladder climbs) fails beyond the sweep's counting backend:
    # the first backend that failed too (aot_eager, inductor, ...), "counting" when every backend
    # it was run under ran clean, None when no backend was run for it. `unchecked`: the backends
    # users run (and the ladder's own) that it was not run under.
    reach: str | None = None
    unchecked: list[str] = Field(default_factory=list)
    fails_under: list[str] = Field(default_factory=list)  # every backend beyond counting that failed too
    not_run: dict[str, str] = Field(default_factory=dict)  # its first model's rungs not run, and why
    # The backends beyond counting under which its first model ran clean under the flag, with
    # the graphs it compiled to there and at baseline: the other half of a counting-only crash.
    clean_under: list[CleanRung] = Field(default_factory=list)
    # Where it starts in the code, from its members' tracebacks: one pattern per distinct model
    # frame, the first model's first; more than one says the models reach the error differently.
    patterns: list[CrashPattern] = Field(default_factory=list)
    # Member -> the first nightly of the run of nightlies, ending with this one, in which it crashed
    # under the flag (a crash group of the sweep); `new`: members that did not crash in the previous
    # nightly (empty without a previous nightly).
    since: dict[str, str] = Field(default_factory=dict)
    new: list[str] = Field(default_factory=list)
    # How often it recurred (`analysis.recurrence`): of the last nights on which its members ran,
    # on how many one of them crashed (confirmed); fewer than `nights_ran` is an intermittent
    # crash. None before it was counted.
    nights_crashed: int | None = None
    nights_ran: int | None = None
    # The signature it had the nightly before under other words (a message reworded between
    # nightlies): every member crashed under that one then.
    continues: str | None = None

    @property
    def intermittent(self) -> bool:
        """It did not crash on every night of its window on which it ran."""
        return self.nights_ran is not None and (self.nights_crashed or 0) < self.nights_ran


def group_key(group: FailureGroup) -> str:
    """A failure group's key among its flag's groups: its signature, and the ladder's rung it was
    met on (a failure met only on the ladder may share a sweep crash's signature)."""
    return group.signature if group.backend is None else f"{group.backend}: {group.signature}"


class LadderRow(Record):
    """One (model, flag) pair that climbed the backend ladder: the ladder's columns beside its effect."""

    model: str
    stratum: str = "other"
    effect: Effect
    rungs: dict[str, str] = Field(default_factory=dict)  # rung -> ok, wrong, crash, timeout, signal, flaky
    baseline_rungs: dict[str, str] = Field(default_factory=dict)  # the same model at baseline
    failed_at: str | None = None  # the first rung that failed, confirmed
    lives_in: str | None = None  # Dynamo, AOTAutograd, Inductor (a crash of the sweep: Dynamo)
    signature: str | None = None
    survives: bool | None = None  # a helped model: its flag run passed every rung it ran (None: not helped)
    # Rung -> why it was not run: `budget` or `pairs` (a bound of the ladder), `after_failure`
    # (a rung below failed), `failures_only` (climbed by the failures' representatives only),
    # `not_chosen` (the pair did not climb it for another reason).
    not_run: dict[str, str] = Field(default_factory=dict)


class RecompileRow(Record):
    """A flag's effect on recompiles for one model: the second call under the flag and at baseline."""

    model: str
    stratum: str = "other"
    effect: Effect
    change: str  # how the inputs changed for the second call
    baseline_recompiles: int | None = None  # None: the second call crashed
    flag_recompiles: int | None = None
    baseline_dynamic: bool | None = None
    flag_dynamic: bool | None = None
    baseline_again: int | None = None  # recompiles on a third shape
    flag_again: int | None = None
    guard_failures: list[str] = Field(default_factory=list)  # under the flag, the first few
    error: str | None = None  # the signature of a crash of the second call under the flag


class BreakReasonCount(Record):
    """A graph-break reason at baseline and how many models hit it."""

    reason: str
    models: int


class StratumStats(Record):
    """One stratum's effect counts for one flag."""

    stratum: str
    models: int
    testable: int
    counts: dict[Effect, int] = Field(default_factory=dict)


class FlagStats(Record):
    """One flag over one snapshot: the numbers a tracking issue reports.

    `testable` counts the models whose build and eager run succeeded (effect other than
    `untestable`), as the hand-written reports define it. `skipped` of them were not run under
    the flag (`when="graph_breaks"` and a baseline of one graph with no break: nothing for the
    flag to act on); `affectable` is the rest, the population the flag could affect, and every
    percentage is over it (without skipped runs it equals `testable`).
    `crash_to_benefit` is confirmed crashes per model helped (None when none is helped);
    reductions are over the models the flag helps.
    """

    flag: str
    patch: dict[str, Any] = Field(default_factory=dict)
    when: When = "always"
    models: int
    testable: int
    skipped: int = 0
    affectable: int = 0
    # The sentinels (`Snapshot.sentinels`) the flag ran on, skipped and untestable runs left out:
    # the bot's own test models, in none of the figures above (`analysis.effects.real_rows`).
    sentinels_affected: int = 0
    counts: dict[Effect, int] = Field(default_factory=dict)
    percentages: dict[Effect, float] = Field(default_factory=dict)
    strata: list[StratumStats] = Field(default_factory=list)
    crash_to_benefit: float | None = None
    mean_graph_reduction: float | None = None  # graphs removed per helped model
    mean_graph_reduction_percent: float | None = None
    crash_groups: list[FailureGroup] = Field(default_factory=list)  # confirmed, largest first
    # Per suite, its confirmed crashing models of its affectable ones (empty: a night of one suite).
    crash_suites: list[SuiteCount] = Field(default_factory=list)
    flaky_groups: list[FailureGroup] = Field(default_factory=list)
    overlap: dict[str, list[str]] = Field(default_factory=dict)  # other flag -> models both crash
    # Other flag -> models this one crashes and the other helps, and the other way round.
    overlap_helped: dict[str, list[str]] = Field(default_factory=dict)
    overlap_rescued: dict[str, list[str]] = Field(default_factory=dict)
    # Sentinels with fewer graphs under the flag: they show the detector works and are named as
    # such, but like every sentinel row are in no figure (not in `counts`, `helps`, its share, the
    # overlap, the crash-to-benefit ratio, the reductions or the ladder's survival).
    sentinels_helped: list[str] = Field(default_factory=list)
    # Models with fewer graphs under the flag whose outputs could not be judged (eager disagrees
    # with itself, or two eager runs differ): fewer graphs can be real, "safe" cannot, so like
    # the sentinels they are never counted as help (`analysis.effects.not_judged`).
    unjudged_helped: list[str] = Field(default_factory=list)
    # The sentinels' confirmed crash, wrong-result and ladder groups: reproduced as any group (the
    # bot's canary of its own machinery), never shown as the flag's nor kept open by.
    sentinel_groups: list[FailureGroup] = Field(default_factory=list)
    top_break_reasons: list[BreakReasonCount] = Field(default_factory=list)
    # The rest of the stack (empty when the sweep made no such checks):
    wrong_result_groups: list[FailureGroup] = Field(default_factory=list)  # confirmed, largest first
    nondeterministic: list[str] = Field(default_factory=list)  # not judged: two eager runs differ
    # Not the compiler's: eager disagrees with itself across attention implementations (a library
    # finding, reported in the corpus's health and never against a flag).
    eager_inconsistent: list[str] = Field(default_factory=list)
    ladder: list[str] = Field(default_factory=list)  # the ladder's rungs, in order
    ladder_rows: list[LadderRow] = Field(default_factory=list)  # pairs that climbed the ladder
    ladder_groups: list[FailureGroup] = Field(default_factory=list)  # failures met only on the ladder
    helped_survive: int | None = None  # helped models whose benefit survives the full stack
    helped_laddered: int = 0  # helped models with a verdict: every rung passed, or one failed (confirmed)
    helped_rungs: dict[str, int] = Field(default_factory=dict)  # rung -> helped models that ran it
    recompiles: list[RecompileRow] = Field(default_factory=list)
    recompiles_more: list[str] = Field(default_factory=list)  # models the flag makes recompile more
    # Models that climbed under the flag but have no recompile row, and why (no second shape...).
    recompile_gaps: dict[str, str] = Field(default_factory=dict)

    @property
    def helps(self) -> int:
        """Models the flag helps (fewer graphs), as evidence: the models not judged left out (the
        sentinels are in no count)."""
        return self.counts.get(Effect.reduces_graphs, 0) - len(self.unjudged_helped)

    @property
    def not_judged(self) -> list[str]:
        """The models the flag ran on whose outputs could not be judged, by name."""
        return sorted({*self.eager_inconsistent, *self.nondeterministic})


class ModelGraphs(Record):
    """A model and the graphs its baseline compiled to."""

    model: str
    stratum: str = "other"
    graphs: int
    ops: int | None = None


class BreakReasonChange(Record):
    """A graph-break reason at baseline: how many models hit it tonight and in the previous nightly."""

    reason: str
    models: int
    previous: int | None = None  # None: there is no previous nightly to compare with

    @property
    def change(self) -> int | None:
        return None if self.previous is None else self.models - self.previous


class HealthNumbers(Record):
    """Dynamo on the corpus (or on one stratum) at baseline, the 7k-model evaluation's numbers.

    Each count includes the next: built >= ran_eagerly >= compiled >= one_graph. Graph and
    operator statistics are over the models that compiled; the 90th percentile is nearest-rank.
    The stack's numbers count baseline runs: outputs that two eager runs already disagree on,
    confirmed wrong results, and, of the models called again on a second shape, those that
    recompiled and those whose new graphs took symbolic sizes.
    """

    stratum: str  # "all" for the whole corpus
    models: int
    built: int = 0
    ran_eagerly: int = 0
    compiled: int = 0
    one_graph: int = 0
    mean_graphs: float | None = None
    p90_graphs: float | None = None
    mean_ops: float | None = None
    max_ops: int | None = None
    max_ops_model: str | None = None
    nondeterministic: int = 0
    wrong_results: int = 0
    second_calls: int = 0
    recompiled: int = 0
    dynamic: int = 0  # recompiled with symbolic sizes, and a third shape recompiled nothing
    overspecialized: int = 0  # a third shape recompiled again
    top_models: list[ModelGraphs] = Field(default_factory=list)  # most graphs first
    top_break_reasons: list[BreakReasonChange] = Field(default_factory=list)  # most models first


class HealthPoint(Record):
    """One stored nightly in the corpus's health trend."""

    key: str
    models: int
    compiled: int
    one_graph: int
    mean_graphs: float | None = None
    p90_graphs: float | None = None
    ran_eagerly: int = 0


class LibraryFinding(Record):
    """A model whose compiled outputs differ from eager's only because eager disagrees with itself
    across attention implementations (`Accuracy.eager_inconsistent`): a transformers bug, reported
    as such and never as a torch.compile wrong result (`analysis.library`)."""

    model: str
    class_path: str = ""  # "transformers.models.aimv2.modeling_aimv2:Aimv2TextModel"
    attention: str  # the implementation it ran with ("sdpa")
    other_attention: str  # the one eager disagrees with ("eager")
    where: str  # the output that differs
    detail: str | None = None  # how far eager under `attention` is from the compiled outputs
    cross_checks: list[CrossCheck] = Field(default_factory=list)
    signature: str  # `EagerInconsistent: where`: what its repro raises
    title: str  # as a transformers maintainer would file it
    repro: Reproduction | None = None  # the no-compile script, verified or not (None: none made)


class CorpusHealth(Record):
    """How healthy Dynamo is on the corpus tonight: numbers overall and per stratum, the trend over
    stored nightlies, the full stack at baseline, and the models whose baseline graph count rose
    since the previous nightly (a Dynamo regression in its own right, whatever the flags do)."""

    key: str
    previous_key: str | None = None
    compare_url: str | None = None  # the commit range since the previous nightly
    moved: list[str] = Field(default_factory=list)  # what moved since it (`SnapshotDiff.moved`)
    model_code_only: bool = False  # transformers moved and the torch build did not
    same_build: bool = False  # the previous nightly is the same build (torch and transformers): not news
    overall: HealthNumbers
    strata: list[HealthNumbers] = Field(default_factory=list)
    # Per suite, its models compiled at baseline (empty: a night of one suite), and each configured
    # suite the night could not sweep, and why (`CorpusSelection.skipped`).
    suites: list[SuiteCount] = Field(default_factory=list)
    skipped_suites: dict[str, str] = Field(default_factory=dict)
    trend: list[HealthPoint] = Field(default_factory=list)  # stored nightlies, oldest first, tonight last
    strata_trend: dict[str, list[HealthPoint]] = Field(default_factory=dict)  # the same, per stratum
    ladder: list[str] = Field(default_factory=list)  # the ladder's rungs
    laddered: int = 0  # models that climbed the ladder at baseline
    ladder_failures: dict[str, int] = Field(default_factory=dict)  # rung -> baseline runs first failing there
    baseline_regressions: list[ModelChange] = Field(default_factory=list)  # more graphs than last night
    # Eager disagreeing with itself at baseline: the library's findings, not wrong results.
    library_findings: list[LibraryFinding] = Field(default_factory=list)


class TrendPoint(Record):
    """One stored nightly in a flag's trend."""

    key: str
    crashes: int  # confirmed crashes
    helps: int  # models with fewer graphs
    flaky: int = 0
    testable: int = 0
    wrong_results: int = Field(0, validation_alias=formerly("wrong_results", "wrong"))  # confirmed

    @property
    def failures(self) -> int:
        """Confirmed crashes and wrong results: what keeps a tracking issue open."""
        return self.crashes + self.wrong_results


class Recurrence(Record):
    """How a flag's confirmed crashes recurred over its last nightlies (`analysis.recurrence`):
    for each model that crashed in them, one letter per nightly, oldest first: `C` a confirmed
    crash, `F` a crash that did not repeat, `?` no verdict (not run, errored, not in the corpus),
    `.` ran without a crash; and, likewise, for each model that gave a confirmed wrong result."""

    keys: list[str]  # the nightlies, oldest first, tonight last
    states: dict[str, str] = Field(default_factory=dict)  # model -> its letters, one per key
    # model -> its letters for a confirmed wrong result, one per key: `W` a wrong result, `F` one
    # that did not repeat, `?` outputs not judged (not run, no accuracy check), `.` judged right
    wrong: dict[str, str] = Field(default_factory=dict)
    # model -> the signature of its last confirmed crash before tonight, where one is known
    signatures: dict[str, str] = Field(default_factory=dict)


class LadderPoint(Record):
    """What one night's backend ladder said of one (model, config) pair: each rung it climbed
    and its word (`analysis.ladder.rung_word`: ok, wrong, crash, timeout, signal, flaky), and
    the graphs the pair's counting run captured that night (None: it did not run), so that a
    later night sees whether the flag's graphs changed since."""

    rungs: dict[str, str] = Field(default_factory=dict)
    graphs: int | None = None


class NightSummary(Record):
    """One stored nightly as the history of a later night reads it: per flag it ran, its trend
    point, its confirmed crash and wrong-result signatures (largest group first), and the corpus's
    health per stratum: what trends, first sightings and reopening need; `created` and
    `environment` order it (`analysis.choose_history`). `analysis.summarise` makes one from a
    snapshot. The dashboard's compact per-nightly data
    carries these fields too, so that a night can take its history from it instead of reading
    every stored snapshot again."""

    key: str
    created: datetime
    environment: Environment
    trend: dict[str, TrendPoint] = Field(default_factory=dict)  # flag -> its point, every flag it ran
    crash_signatures: dict[str, list[str]] = Field(default_factory=dict)  # flag -> confirmed groups
    crashing: dict[str, list[str]] = Field(default_factory=dict)  # flag -> models with a confirmed crash
    # flag -> model -> the signature of its confirmed crash (empty in data older than the field)
    crash_signature_of: dict[str, dict[str, str]] = Field(default_factory=dict)
    # flag -> models whose crash did not repeat; models whose flag run gave no verdict (an engine
    # error, a timeout, a death, an untestable model): nothing is known of their crash that night.
    flaky: dict[str, list[str]] = Field(default_factory=dict)
    unran: dict[str, list[str]] = Field(default_factory=dict)
    swept: list[str] | None = None  # every model of the nightly; None in data older than the field
    # Configured suites the nightly did not sweep (`CorpusSelection.skipped`): their models' absence
    # is no evidence, and no corpus change either.
    skipped_suites: list[str] = Field(default_factory=list)
    # flag -> models with a confirmed wrong result; whether the nightly compared outputs with
    # eager's at all (its accuracy check), and flag -> models that ran under the flag without their
    # outputs judged (two eager runs differed, or the baseline's were wrong too): for those, and on
    # a nightly that compared nothing, nothing is known of a wrong result.
    wrong: dict[str, list[str]] = Field(default_factory=dict)
    outputs_compared: bool = False
    unjudged: dict[str, list[str]] = Field(default_factory=dict)
    wrong_signatures: dict[str, list[str]] = Field(default_factory=dict)  # flag -> wrong-result groups
    health: dict[str, HealthPoint] = Field(default_factory=dict)  # stratum (and "all") -> its point
    # config -> model -> what the ladder said of the pair that night (`LadderPoint`), for the
    # pairs it climbed: a later night's rotation and coverage read each pair's latest evidence
    # from these (`analysis.rotation`); empty in data older than the field.
    ladder: dict[str, dict[str, LadderPoint]] = Field(default_factory=dict)
    # model -> its baseline run's compile seconds that night (those that compiled), so that a
    # later night judges a flag's compile time against each model's own spread over the nightlies
    # (`analysis.compile_time`); empty in data older than the field.
    compile_seconds: dict[str, float] = Field(default_factory=dict)
    # model -> its letter for a wrong result at the default config, where not judged right: `W`
    # confirmed, `F` not repeated, `?` outputs not judged (None: outputs not compared, or data
    # older than the field): what the lifecycle of their tracking issue reads.
    baseline_wrong: dict[str, str] | None = None

    @property
    def wrong_at_baseline(self) -> list[str]:
        """The models with a confirmed wrong result at the default config."""
        return [model for model, letter in (self.baseline_wrong or {}).items() if letter == "W"]


class ModelChange(Record):
    """One model whose result under one config changed between two snapshots."""

    model: str
    stratum: str = "other"
    old_effect: Effect | None = None
    new_effect: Effect | None = None
    old_signature: str | None = None
    new_signature: str | None = None
    old_graphs: int | None = None
    new_graphs: int | None = None
    error: str | None = None  # the new first error line, when it crashes now


class FirstBuild(Record):
    """Which build a notice's change came with: the one a conclusive bisection named, else the
    range of stored nightlies it may have come from (not yet bisected)."""

    models: list[str]  # the notice's models it is said for
    signature: str | None = None  # the crash (a new crash's, or the crash a fixed model had)
    bisected: str | None = None  # the first bad build a conclusive bisection named
    compare_url: str | None = None  # that bisection's commit range
    before: str | None = None  # the last stored nightly without the change (None: none stored)
    after: str  # the first stored nightly with it


class FlagNews(Record):
    """What a flag's notices say tonight (`analysis.recurrence`): the models that newly crash
    (not a crash returning within its window), and those whose crash is over (by the rule that
    closes an issue), each range with the build it came with."""

    new: list[ModelChange] = Field(default_factory=list)
    fixed: list[ModelChange] = Field(default_factory=list)
    new_builds: list[FirstBuild] = Field(default_factory=list)
    fixed_builds: list[FirstBuild] = Field(default_factory=list)


class FlagDiff(Record):
    """How one flag's effects moved between two snapshots (models present in both, and the
    failing ones that left the corpus)."""

    flag: str
    newly_crashing: list[ModelChange] = Field(default_factory=list)
    # Per suite, its newly crashing models of its models in both nights (empty: one suite).
    newly_crashing_suites: list[SuiteCount] = Field(default_factory=list)
    newly_wrong: list[ModelChange] = Field(default_factory=list)  # a wrong result now, not before
    fixed: list[ModelChange] = Field(default_factory=list)  # crashed, runs now
    signature_changes: list[ModelChange] = Field(default_factory=list)
    graph_changes: list[ModelChange] = Field(default_factory=list)  # graphs under the flag
    effect_changes: list[ModelChange] = Field(default_factory=list)  # any other effect change
    # Crashed or gave a wrong result under the flag, and left the corpus (its class is gone from
    # transformers): removed, never fixed.
    removed: list[ModelChange] = Field(default_factory=list)

    @property
    def has_changes(self) -> bool:
        return bool(
            self.removed
            or self.newly_crashing
            or self.newly_wrong
            or self.fixed
            or self.signature_changes
            or self.graph_changes
            or self.effect_changes
        )


class SnapshotDiff(Record):
    """What changed from one stored nightly to the next; `compare_url` is the commit range."""

    old_key: str
    new_key: str
    old_git_version: str = ""
    new_git_version: str = ""
    same_build: bool = False  # the same build (torch and transformers): nothing here is news
    compare_url: str | None = None
    # What moved between the two builds, e.g. ["torch 2.13.0+cpu → 2.14.1+cu130"] or
    # ["transformers 5.22.0 → 5.24.0"] (the torch build the same): what the changes came with
    moved: list[str] = Field(default_factory=list)
    torch_moved: bool = True  # another torch build (False: only transformers moved, or nothing)
    models_added: list[str] = Field(default_factory=list)
    models_removed: list[str] = Field(default_factory=list)
    baseline_graph_changes: list[ModelChange] = Field(default_factory=list)
    flags: dict[str, FlagDiff] = Field(default_factory=dict)
    flags_added: list[str] = Field(default_factory=list)
    flags_removed: list[str] = Field(default_factory=list)

    @property
    def model_code_only(self) -> bool:
        """Transformers moved and the torch build did not: what changed is the models' own code."""
        return bool(self.moved) and not self.torch_moved

    @property
    def has_changes(self) -> bool:
        return bool(
            self.models_added
            or self.models_removed
            or self.baseline_graph_changes
            or self.flags_added
            or self.flags_removed
            or any(flag.has_changes for flag in self.flags.values())
        )


# --- Wrong results of torch.compile at the default config: the night's first news, computed by
# `analysis.compiler_wrong`. A model whose eager run disagrees with itself is the library's
# (`LibraryFinding`), never one of these.

COMPILER_WRONG_ISSUE = "compiler-wrong-results"
"""The store's name of the tracking issue of wrong results at the default config (never a flag's)."""


class CompilerWrong(Record):
    """One model whose compiled output at the default config differs from eager's beyond
    tolerance, confirmed by a second run, eager agreeing with itself."""

    model: str
    suite: str = "transformers"
    stratum: str = "other"
    where: str  # the output that differs ("sample", "logits")
    detail: str | None = None  # the accuracy check's words: largest difference, tolerance, RMSEs
    compiled_rmse: float | None = None  # the compiled output's RMSE to the float64 run
    eager_rmse: float | None = None  # eager's own RMSE to it (None: no float64 reference)
    signature: str  # `WrongResult: where`: what its repro raises
    repro: Reproduction | None = None  # the model-level script, verified or not, with its locus

    @property
    def locus(self) -> WrongLocus | None:
        """Where it happens, once reduced (None: not reduced)."""
        return self.repro.locus if self.repro is not None else None


class CompilerWrongNight(Record):
    """The night's wrong results at the default config, their groups (by the op and code line
    they reduce to; by the output that differs where not reduced), each group's triage, and the
    trend their tracking issue's lifecycle reads."""

    findings: list[CompilerWrong] = Field(default_factory=list)
    groups: list[FailureGroup] = Field(default_factory=list)  # largest first
    # Confirmed wrong results at baseline per nightly (`keys`), oldest first, tonight last; a
    # nightly that compared no outputs counts none.
    keys: list[str] = Field(default_factory=list)
    trend: list[int] = Field(default_factory=list)
    cc: list[str] = Field(default_factory=list)  # people on its issue (`[tracker.cc]` and routes)
    issue_url: str | None = None
    # How each model's wrong result recurred (`Recurrence.wrong`), by the flags' rule: what
    # keeps the issue open through nights that did not judge its outputs.
    recurrence: Recurrence | None = None
    triage: dict[str, GroupTriage] = Field(default_factory=dict)  # by `group_key`, once filled

    def triage_of(self, group: FailureGroup) -> GroupTriage | None:
        return self.triage.get(group_key(group))

    def of_group(self, group: FailureGroup) -> list[CompilerWrong]:
        """The findings of `group`'s models, in its order."""
        found = {finding.model: finding for finding in self.findings}
        return [found[model] for model in group.models if model in found]


# --- The night record: one night analysed once, then rendered (report folder, issue bodies,
# notices, step summary, dashboard). Built by `analysis.night`; renderers only read it.


class FlagNight(Record):
    """One flag on one night: what its tracking issue, its notices and a per-flag page show."""

    flag: str
    stats: FlagStats  # counts, percentages, crash groups (largest first, `first_seen` filled), overlap
    figures: FlagFigures  # the numbers every surface prints (`analysis.figures`)
    verdict: FlagVerdict  # ready to be on by default or not (`analysis.verdict`)
    effects: list[ModelEffect] = Field(default_factory=list)  # this flag's rows, in snapshot order
    # Every nightly of the history that has this flag, oldest first, this night last: what the
    # trend chart draws and what closing reads (confirmed crashes per nightly).
    trend: list[TrendPoint] = Field(default_factory=list)
    diff: FlagDiff | None = None  # this flag's part of `Night.diff`; None without one or without the flag
    cc: list[str] = Field(default_factory=list)  # logins and org/teams mentioned on its issue, in order
    issue_url: str | None = None  # its tracking issue, once one is known
    # Confirmed wrong-result then crash signatures of the previous nightly under this flag,
    # largest group first; None when there is no previous nightly with the flag (what a person
    # saw, for reopening).
    previous_signatures: list[str] | None = None
    # Each failure group's labels, upstream issues and bisection (`analysis.triage`), by
    # `group_key`: filled once its store and GitHub were read; empty before.
    triage: dict[str, GroupTriage] = Field(default_factory=dict)
    recurrence: Recurrence | None = None  # how its crashes recurred over the last nightlies
    news: FlagNews | None = None  # what its notices say; None without a previous nightly

    def triage_of(self, group: FailureGroup) -> GroupTriage | None:
        """What a triager reads about `group` beyond the crash (none before it was filled)."""
        return self.triage.get(group_key(group))

    @property
    def crashes(self) -> int:
        """Confirmed crashes (flaky ones are not counted)."""
        return self.stats.counts.get(Effect.crashes, 0)

    @property
    def wrong_results(self) -> int:
        """Confirmed wrong results (worse than crashes: they keep the issue open too)."""
        return self.stats.counts.get(Effect.wrong_result, 0)

    @property
    def tracked(self) -> list[FailureGroup]:
        """What the issue tracks and its people are routed by: the confirmed wrong-result groups,
        then the confirmed crash groups, each largest first."""
        return [*self.stats.wrong_result_groups, *self.stats.crash_groups]

    @property
    def helps(self) -> int:
        return self.stats.helps

    @property
    def helped(self) -> list[ModelEffect]:
        """Models with fewer graphs under the flag, the largest reduction first; sentinels are
        no evidence of help (`FlagStats.sentinels_helped` names them), nor are the models whose
        outputs could not be judged (`FlagStats.unjudged_helped`)."""
        sentinels = {*self.stats.sentinels_helped, *self.stats.unjudged_helped}
        rows = [
            row for row in self.effects if row.effect == Effect.reduces_graphs and row.model not in sentinels
        ]
        return sorted(rows, key=lambda row: ((row.flag_graphs or 0) - (row.baseline_graphs or 0), row.model))

    @property
    def unchanged(self) -> list[str]:
        """Models the flag ran on and left as they were (`no_effect`), by name."""
        return sorted(row.model for row in self.effects if row.effect == Effect.no_effect)

    @property
    def increased(self) -> list[ModelEffect]:
        """Models with more graphs under the flag, in snapshot order."""
        return [row for row in self.effects if row.effect == Effect.increases_graphs]


class SentinelMiss(Record):
    """A sentinel that did not behave as built under one config (`ModelSpec.built_to`)."""

    model: str
    config: str  # BASELINE or a flag
    built: str  # what it is built to do there
    got: str  # what it did


class SentinelBehaviour(Record):
    """Whether a night's sentinels behaved as built (`analysis.sentinels`): on a line of its own,
    apart from every real figure."""

    judged: list[str] = Field(default_factory=list)  # the sentinels with a judged expectation
    misses: list[SentinelMiss] = Field(default_factory=list)  # each config where one did not

    @property
    def behaved(self) -> int:
        """How many of `judged` behaved as built under every config judged."""
        return len(set(self.judged) - {miss.model for miss in self.misses})


_Issue = TypeVar("_Issue", FlagNight, CompilerWrongNight)
"""What a tracking issue of the night is made from: a flag's findings, or the wrong results'."""


class Night(Record):
    """One nightly analysed once: the snapshot, what it is compared with, and every flag's findings.

    `history` and `previous_key` are chosen by one rule (`analysis.choose_history`) for every
    command: the stored nightlies ordered before this one (other builds only), oldest first,
    ending with the one it is diffed against. Renderers read this record and nothing else, so
    that the report folder, the published bodies, the step summary and the dashboard's flag
    pages agree (its pages per model read the site's own data of every stored nightly).
    """

    key: str  # the snapshot's key (the torch version)
    snapshot: Snapshot
    previous_key: str | None = None  # the nightly `diff` compares with; None for a first nightly
    history: list[str] = Field(default_factory=list)  # keys before this night, oldest first
    diff: SnapshotDiff | None = None  # from `previous_key` to `key`
    flags: dict[str, FlagNight] = Field(default_factory=dict)  # in the snapshot's flag order
    dashboard_url: str | None = None  # where the complete tables are published, when configured
    # Dynamo's health on the corpus at baseline, its trend over `history`, and the models whose
    # baseline graph count rose since `previous_key`: what summary.md's health section, the
    # health issue and the baseline-regression notice all render.
    health: CorpusHealth | None = None
    # model -> the bisection of its baseline graph-count regression (the store's, by
    # `analysis.triage.annotate`), what its page on the dashboard says.
    baseline_bisections: dict[str, Bisection] = Field(default_factory=dict)
    # Wrong results of torch.compile at the default config: what every surface says first.
    compiler_wrong: CompilerWrongNight = Field(default_factory=lambda: CompilerWrongNight())
    sentinels_built: SentinelBehaviour = Field(default_factory=lambda: SentinelBehaviour())

    @property
    def sentinels(self) -> frozenset[str]:
        """The night's sentinel models (`Snapshot.sentinels`): every row that names one says so,
        and no label is suggested from them alone."""
        return self.snapshot.sentinels

    @property
    def effects(self) -> list[ModelEffect]:
        """Every (model, flag) row, flag by flag."""
        return [row for flag in self.flags.values() for row in flag.effects]

    def linked(self, issue_urls: dict[str, str], *, author: str | None = None) -> Night:
        """This night with its tracking issues' addresses, and `author` (the bot's login, already
        subscribed to its issues) left out of every cc list. Nothing is analysed again."""

        def link(name: str, issue: _Issue) -> _Issue:
            cc = [person for person in issue.cc if not author or person.lower() != author.lower()]
            return issue.model_copy(update={"issue_url": issue_urls.get(name, issue.issue_url), "cc": cc})

        flags = {name: link(name, flag) for name, flag in self.flags.items()}
        wrong = link(COMPILER_WRONG_ISSUE, self.compiler_wrong)
        return self.model_copy(update={"flags": flags, "compiler_wrong": wrong})

    def issue_urls(self) -> dict[str, str]:
        """flag -> its tracking issue, for the flags whose issue is known."""
        urls = {name: flag.issue_url for name, flag in self.flags.items() if flag.issue_url}
        if self.compiler_wrong.issue_url:
            urls[COMPILER_WRONG_ISSUE] = self.compiler_wrong.issue_url
        return urls
