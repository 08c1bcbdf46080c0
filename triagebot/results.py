"""The one vocabulary: every record that crosses a package boundary or lands on disk.

Only pydantic is imported here, so that publishing, diffing and reporting run on a runner
without torch. Field names are read by other tools (dashboards, scripts); change them only
with a migration.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

BASELINE = "baseline"
"""The name under which a model's run with the default Dynamo config is stored."""

HEALTH_ISSUE = "corpus-health"
"""`TrackedIssue.flag` of the corpus-health issue (its files, plan lines and memory go by this
name); no flag may take it."""


class Record(BaseModel):
    """Base for all records: unknown fields are errors, so a typo never passes silently."""

    model_config = ConfigDict(extra="forbid")


class Environment(Record):
    """Where a sweep ran. Two environments with the same `torch_git_version` are one build."""

    torch_version: str
    torch_git_version: str = ""
    transformers_version: str = ""
    python_version: str = ""
    platform: str = ""
    device: Literal["cpu", "cuda"] = "cpu"
    gpu_name: str | None = None
    cuda_version: str | None = None

    def same_build(self, other: Environment) -> bool:
        if self.torch_git_version and other.torch_git_version:
            return self.torch_git_version == other.torch_git_version
        return self.torch_version == other.torch_version


class Status(StrEnum):
    """What happened to one (model, config) run."""

    ok = "ok"
    create_error = "create_error"  # building the model failed
    eager_error = "eager_error"  # the eager run failed
    crash = "crash"  # an exception under torch.compile
    timeout = "timeout"  # the run outlived its time limit
    signal = "signal"  # the worker died: a signal, an OOM kill, or it vanished
    # A flag run not made because it cannot matter: the flag's `when = "graph_breaks"` and the
    # baseline compiled to one graph with no break. Recorded, never absent.
    skipped = "skipped"
    # A flag run that could not build or run eagerly although its baseline did: a fault of the
    # sweep (the recorded spec did not rebuild the model), never a property of the model.
    engine_error = "engine_error"


PRE_COMPILE_STAGES = frozenset({"build", "eager"})
"""Stages of a run before the compiled call: failing in one of them makes a model untestable."""

COUNTING_BACKEND = "counting"
"""The name reports use for the sweep's own backend, which counts graphs and runs them as they are."""

WRONG_RESULT = "WrongResult"
"""The error type a wrong result is reported (and its repro raises) under."""


class Accuracy(StrEnum):
    """How a compiled call's outputs compare with eager outputs on the same inputs and seed."""

    match = "match"  # within the benchmark harness's tolerances
    mismatch = "mismatch"  # beyond them: a wrong result once confirmed by a rerun
    nondeterministic = "nondeterministic"  # two eager runs already differ: not judged


class AccuracyCheck(Record):
    """The compiled outputs against the eager ones (`triagebot.sweep.accuracy` has the rules)."""

    verdict: Accuracy
    # The first output that differs (`logits`, `past_key_values.layers[0].keys`), prefixed with
    # `second call: ` when only the call on the second shape differs. For `nondeterministic`,
    # the output where the two eager runs differ.
    where: str | None = None
    detail: str | None = None  # how far: largest difference, tolerance, RMSE or cosine similarity


class RecompileCheck(Record):
    """The compiled model called again on a second shape of its inputs (`triagebot.sweep.shapes`)."""

    change: str  # how the inputs changed ("sequence 16 -> 24", "batch 1 -> 2"), or why none could be made
    status: Literal["ok", "crash", "skipped"]  # skipped: no second shape, or eager failed on it
    recompiles: int = 0  # frames Dynamo compiled again for the second call
    graphs: int = 0  # graphs the backend received for the second call
    dynamic: bool | None = None  # a graph of the second call took symbolic sizes (None: none compiled)
    guard_failures: list[str] = Field(default_factory=list)  # the guard that failed, per recompile
    # Recompiles of a third call on a third shape (the same rule again): more than none means the
    # second call specialised rather than generalised (overspecialisation). None: not made.
    again: int | None = None
    error_type: str | None = None  # a crash of the second call
    error: str | None = None
    signature: str | None = None


class Outcome(Record):
    """One (model, config) run."""

    status: Status
    graphs: int | None = None  # FX graphs the counting backend received
    ops: int | None = None  # call nodes over all those graphs
    break_reasons: list[str] = Field(default_factory=list)
    error_type: str | None = None  # exception class name, or SIGSEGV / Timeout / ...
    error: str | None = None  # first line of the message
    signature: str | None = None  # normalised error, groups one bug across models
    traceback: str | None = None  # tail of the traceback
    seconds: float = 0.0  # wall time of the whole run
    stage_seconds: dict[str, float] = Field(default_factory=dict)  # build, eager, compile
    # Where a run that gave no result (timeout, signal) was: build, eager or compile. None for
    # the other statuses, and in snapshots older than this field (read as compile).
    stage: str | None = None
    accuracy: AccuracyCheck | None = None  # None: not checked (checks off, or the call did not run)
    recompile: RecompileCheck | None = None  # None: not tried (checks off, a ladder run, no result)

    @property
    def ran(self) -> bool:
        return self.status == Status.ok

    @property
    def mismatched(self) -> bool:
        """It ran, and its outputs differ from eager beyond tolerance."""
        checked = self.accuracy is not None and self.accuracy.verdict == Accuracy.mismatch
        return self.status == Status.ok and checked

    @property
    def suspect(self) -> bool:
        """A crash or a wrong result: what confirmation reruns are for."""
        return self.status == Status.crash or self.mismatched

    @property
    def untestable(self) -> bool:
        """The model could not be built or run eagerly: an error, or a hang or a death before the
        compiled call. Testable means built and ran eagerly, nothing less."""
        if self.status in (Status.create_error, Status.eager_error):
            return True
        return self.status in (Status.timeout, Status.signal) and self.stage in PRE_COMPILE_STAGES


class InputSpec(Record):
    """One input tensor fed to a model: enough to rebuild it, so that a repro needs no corpus code.

    `kind` says how values are made: `randn` (normal floats), `randint` (integers in [low, high)),
    `ones`, `zeros`, `values` (the literal nested list in `values`, e.g. an image grid), or
    `literal` (`values` passed as it is, not as a tensor: an int such as a codebook index).
    Random kinds are drawn in input order from `torch.manual_seed(ModelSpec.seed)`.
    """

    name: str
    shape: list[int]
    dtype: str  # torch dtype name without the prefix: float32, int64, bool, ...
    kind: Literal["randn", "randint", "ones", "zeros", "values", "literal"] = "randn"
    low: int = 0
    high: int | None = None
    values: Any = None


class ModelSpec(Record):
    """Everything needed to rebuild one corpus model without a hub: a repro is built from this."""

    model: str  # unique name in its corpus, e.g. "LlamaForCausalLM"
    source: Literal["sentinel", "transformers"] = "transformers"
    class_path: str = ""  # importable "module:Class"
    config_class: str | None = None
    model_type: str | None = None
    stratum: str = "other"
    modality: str = "text"
    config: dict[str, Any] | None = None  # tiny config as a dict (to_diff_dict-style)
    recipe: str | None = None  # which input recipe served
    partial: bool = False  # a multimodal model that only ran on a text-only recipe
    inputs: list[InputSpec] = Field(default_factory=list)
    params: int | None = None
    seed: int = 0
    code: str | None = None  # source of a module no released package has (sentinels), for repros


When = Literal["always", "graph_breaks"]
"""When a flag's runs are made: on every model, or only on models whose baseline graph-breaks."""

# Settings that act only where Dynamo would otherwise break the graph (a scalar output such as
# `.item()`, an op with a data-dependent output shape): on a model whose baseline compiled to one
# graph with no break they cannot change anything.
GRAPH_BREAK_SETTINGS = frozenset({"capture_scalar_outputs", "capture_dynamic_output_shape_ops"})


def default_when(patch: dict[str, Any]) -> When:
    """`graph_breaks` for a patch of graph-break settings only, `always` for anything else (a
    flag that acts on guards, recompiles or backends must run on every model)."""
    return "graph_breaks" if patch and set(patch) <= GRAPH_BREAK_SETTINGS else "always"


class FlagSettings(Record):
    """One flag under study: its `torch._dynamo.config` patch and when its runs are made.

    `when="graph_breaks"` skips the flag's run on a model whose baseline compiled to exactly one
    graph with no graph-break reason (recorded as a `skipped` run); `when="always"` runs it on
    every model. Left out, `when` is `default_when(patch)`.
    """

    patch: dict[str, Any]
    when: When = "always"

    @model_validator(mode="before")
    @classmethod
    def _default_when(cls, data: Any) -> Any:
        if isinstance(data, dict) and "when" not in data and isinstance(data.get("patch"), dict):
            return {**data, "when": default_when(data["patch"])}
        return data


class RunRecord(Record):
    """One line of a sweep's JSON Lines stream: a finished (model, config) run."""

    kind: Literal["run"] = "run"
    model: str
    config: str  # BASELINE or a flag name
    attempt: int = 0  # 0 for the sweep, 1.. for confirmation reruns
    outcome: Outcome
    spec: ModelSpec | None = None
    backend: str | None = None  # a ladder run's rung (counting, aot_eager, inductor); None: the sweep


class CorpusSelection(Record):
    """Which models a snapshot covers and how they were chosen."""

    name: str
    seed: int | None = None
    sample: int | None = None
    strata: dict[str, int] = Field(default_factory=dict)  # stratum -> models drawn
    models: list[str] = Field(default_factory=list)
    only_breaking_in: str | None = None  # snapshot key whose baseline graph breaks filtered


class SweepHeader(Record):
    """First line of a sweep's JSON Lines stream: what the runs below belong to."""

    kind: Literal["header"] = "header"
    environment: Environment
    flags: dict[str, dict[str, Any]]
    # flag -> when its runs are made; a flag not listed ran on every model (older streams)
    when: dict[str, When] = Field(default_factory=dict)
    corpus: CorpusSelection
    shard: str | None = None  # "i/n"
    started: datetime = Field(default_factory=lambda: datetime.now(UTC))
    checks: list[str] = Field(default_factory=list)  # checks of every run: "accuracy", "recompiles"
    ladder: list[str] = Field(default_factory=list)  # the ladder's rungs, in order (empty: no ladder)


class ModelResult(Record):
    """One model's outcomes under the baseline and every flag."""

    model: str
    stratum: str = "other"
    outcomes: dict[str, Outcome]  # BASELINE and each flag name
    confirmations: dict[str, list[Outcome]] = Field(default_factory=dict)  # reruns of crashes
    spec: ModelSpec | None = None
    # The backend ladder: config -> backend -> outcome, in ladder order, up to the first failure;
    # only for the (model, config) pairs the ladder chose. Its reruns of failures apart.
    ladder: dict[str, dict[str, Outcome]] = Field(default_factory=dict)
    ladder_confirmations: dict[str, dict[str, list[Outcome]]] = Field(default_factory=dict)


class Reproduction(Record):
    """A self-contained script for one crash signature, and whether running it reproduced it."""

    flag: str
    signature: str
    model: str
    script: str
    verified: bool = False  # the script was run and raised an error with this signature
    observed: str | None = None  # the signature it raised, or why it could not be checked
    backend: str | None = None  # the backend the script compiles with; None: the counting backend


class Snapshot(Record):
    """One sweep of one build: the unit that is stored, diffed and published."""

    key: str  # the torch version, e.g. 2.12.0.dev20260408+cu128
    created: datetime = Field(default_factory=lambda: datetime.now(UTC))
    environment: Environment
    flags: dict[str, dict[str, Any]]  # flag name -> torch._dynamo.config patch
    # flag -> when its runs were made; a flag not listed ran on every model (older snapshots)
    when: dict[str, When] = Field(default_factory=dict)
    corpus: CorpusSelection
    results: list[ModelResult]
    reproductions: list[Reproduction] = Field(default_factory=list)
    checks: list[str] = Field(default_factory=list)  # checks of every run: "accuracy", "recompiles"
    # The backend ladder's rungs, in order: `counting` (the recompile check on the ladder's
    # selection) and the backends (aot_eager, inductor); empty when no ladder ran.
    ladder: list[str] = Field(default_factory=list)

    def result(self, model: str) -> ModelResult | None:
        return next((r for r in self.results if r.model == model), None)

    def model_seconds(self) -> dict[str, float]:
        """Each model's recorded wall seconds over all its runs (every config, confirmations
        included): the cost estimate that orders and shards the next sweep of the corpus."""
        return {
            result.model: sum(outcome.seconds for outcome in result.outcomes.values())
            + sum(rerun.seconds for reruns in result.confirmations.values() for rerun in reruns)
            + sum(outcome.seconds for rungs in result.ladder.values() for outcome in rungs.values())
            for result in self.results
        }


class Effect(StrEnum):
    """A flag's effect on one model, against its baseline."""

    reduces_graphs = "reduces_graphs"
    no_effect = "no_effect"
    increases_graphs = "increases_graphs"
    crashes = "crashes"  # baseline ran, flag crashed
    fixes_crash = "fixes_crash"  # baseline crashed, flag ran
    both_crash = "both_crash"
    create_error = "create_error"  # untestable: build or eager run failed
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


# Order matters: reprs before their contents, symbols before bare numbers, paths before lines.
_SIGNATURE_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    # A FakeTensor repr carries sizes and strides of one model's tensor, not of the bug.
    (re.compile(r"FakeTensor\((?:[^()]|\([^()]*\))*\)"), "FakeTensor(...)"),
    (re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.\-<>]+)+\.py"), "<file>"),
    (re.compile(r"\bline \d+"), "line ?"),
    (re.compile(r"\bu\d+\b"), "u*"),  # unbacked symbols: u0, u12
    (re.compile(r"\bs\d+\b"), "s*"),  # backed symbols: s35
    (re.compile(r"(?:torch\.)?Size\(\[[^\]]*\]\)"), "Size([...])"),
    (re.compile(r"\b\d+(?:\.\d+)?\b"), "N"),
    (re.compile(r"([us]\*|N)(?:, \1)+"), r"\1"),  # {u1, u0} and {u6} are one bug
    (re.compile(r"\((?:N,? ?)+\)"), "(...)"),  # tensor sizes
    (re.compile(r"\(\((?:\.\.\.)\), N\)"), "(...)"),  # (stride, storage offset)
    (re.compile(r"\s+"), " "),
]

# A wrapper line such as "backend='eager' raised:" says where, not what: the wrapped
# exception's "Type: message" on the next line is the bug.
_WRAPPER_LINE = re.compile(r"raised:?\s*$|^(?:The above exception|During handling)")
_WRAPPED_ERROR = re.compile(r"^(?:[a-z_][\w]*\.)*(?P<type>[A-Z]\w*): (?P<rest>.*)$")
# Dynamo ends its messages with the user frame that raised: `File "...", line N, in forward`.
_USER_FRAME = re.compile(r'File "[^"]*", line \d+, in (?P<function>[\w<>]+)')
# A resumed frame is named after the function it resumes: torch_dynamo_resume_in_forward_at_42.
_RESUME_FUNCTION = re.compile(r"^torch_dynamo_resume_in_(?P<function>\w+?)_at_\d+$")


def _user_function(message: str) -> str | None:
    """The innermost user-code function named after Dynamo's `from user code:` line, if any."""
    _, marker, tail = message.partition("from user code:")
    if not marker:
        return None
    frames = _USER_FRAME.findall(tail)
    if not frames:
        return None
    function = frames[-1]
    resumed = _RESUME_FUNCTION.match(function)
    return resumed.group("function") if resumed else function


def error_signature(error_type: str, message: str) -> str:
    """A normalised `Type: first line [in function]` that groups one bug across models and nightlies.

    Unbacked (`u6`) and backed (`s35`) symbols, addresses, file paths, line numbers, tensor
    sizes and fake-tensor reprs are dropped, so `Eq(u0, 0)` and `Eq(u8, 0)` are one bug, and so
    are `{u6}` and `{u1, u0}`. A wrapper line (`backend='x' raised:`) gives way to the exception
    it wraps. The user-code function Dynamo names (`from user code: ... in get_rope_index`) is
    kept, by name only, so that one bug hit from one place in the model code groups across
    models and across a repro script whose file differs from the sweep's.
    """
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    first_line = lines[0] if lines else ""
    for index, line in enumerate(lines[:-1]):
        if _WRAPPER_LINE.search(line):
            wrapped = _WRAPPED_ERROR.match(lines[index + 1])
            if wrapped:
                error_type, first_line = wrapped.group("type"), wrapped.group("rest")
            else:
                first_line = lines[index + 1]
            break
    for pattern, replacement in _SIGNATURE_RULES:
        first_line = pattern.sub(replacement, first_line)
    signature = f"{error_type}: {first_line.strip()}"[:300]
    function = _user_function(message)
    return f"{signature} [in {function}]" if function else signature


def wrong_result_signature(where: str | None) -> str:
    """The signature of a wrong result: the output that differs, normalised like an error, so that
    one output of one family groups across models and a repro raising `WrongResult(where)` matches."""
    return error_signature(WRONG_RESULT, where or "output")


class TrackerNotice(Record):
    """A comment the bot owes on a tracking issue. `marker` (hidden in `body`) is its
    idempotency key: a notice whose marker is already on the issue is never posted again."""

    kind: str  # fixed, regression, close, reopen, alert, ...
    marker: str
    body: str


class TrackedIssue(Record):
    """The desired state of one tracking issue, derived from the store alone."""

    flag: str
    marker: str  # hidden marker that finds the issue again, e.g. <!-- triagebot:flag=NAME -->
    title: str
    body: str  # carries `marker`
    labels: list[str] = Field(default_factory=list)
    open: bool = True
    notices: list[TrackerNotice] = Field(default_factory=list)


class RerunRequest(Record):
    """A checked `/rerun-sweep` command: what the sweep job may run. Never the raw comment text."""

    repo: str
    issue: int
    comment_id: int
    requested_by: str
    models: list[str] = Field(default_factory=list)  # empty: every model of the issue's flag
    flags: list[str] = Field(default_factory=list)
    confirm: int = 1
    corpus: str | None = None  # the corpus of the stored snapshot the models were checked against


# --- Tracker records: what the tracker remembers in the store between runs. ---


class IssueRecord(Record):
    """The store's memory of one flag's tracking issue in one repository: found by number first,
    so an edited or removed marker never leads to a duplicate issue."""

    repo: str
    flag: str
    number: int
    signatures: list[str] = Field(default_factory=list)  # crash signatures the body last showed
    cc: list[str] = Field(default_factory=list)  # people the issue has mentioned (body or cc notice)
    closed_by: str | None = None  # the person (not the bot) who closed it, while it stays closed
    closed_signatures: list[str] = Field(default_factory=list)  # what it showed when they closed it


class CommandRecord(Record):
    """The store's memory of one `/rerun-sweep` comment, so polling never re-reads its reactions."""

    repo: str
    issue: int
    comment_id: int
    author: str
    state: Literal["answered", "refused", "quiet", "accepted", "failed", "ignored"]
    # answered: help or a rerun's result posted; refused: a refusal posted; quiet: refused
    # without a word (its author was already answered on this issue that day); accepted: a
    # sweep was started and no answer is known yet; failed: answered with why no result came;
    # ignored: not a command the bot acts on (an edited comment, with commands_on_edited off).
    at: datetime = Field(default_factory=lambda: datetime.now(UTC))  # when `state` was reached
    attempts: int = 0  # sweeps started for it


# --- Analysis records: what analysis/ computes and report/ and tracker/ present. ---


class CrashGroup(Record):
    """Models one flag crashes the same way: one signature, one bug."""

    flag: str
    signature: str
    error_type: str | None = None
    error: str | None = None  # the full first error line of the first model, for the report
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


class StackRow(Record):
    """One (model, flag) pair that climbed the backend ladder: the ladder's columns beside its effect."""

    model: str
    stratum: str = "other"
    effect: Effect
    rungs: dict[str, str] = Field(default_factory=dict)  # rung -> ok, wrong, crash, timeout, signal, flaky
    baseline_rungs: dict[str, str] = Field(default_factory=dict)  # the same model at baseline
    failed_at: str | None = None  # the first rung that failed, confirmed
    lives_in: str | None = None  # Dynamo, AOTAutograd, Inductor (a crash of the sweep: Dynamo)
    signature: str | None = None
    survives: bool | None = None  # a helped model: its flag run passed every backend (None: not helped)


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
    `create_error`), as the hand-written reports define it. `skipped` of them were not run under
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
    counts: dict[Effect, int] = Field(default_factory=dict)
    percentages: dict[Effect, float] = Field(default_factory=dict)
    strata: list[StratumStats] = Field(default_factory=list)
    crash_to_benefit: float | None = None
    mean_graph_reduction: float | None = None  # graphs removed per helped model
    mean_graph_reduction_percent: float | None = None
    crash_groups: list[CrashGroup] = Field(default_factory=list)  # confirmed, largest first
    flaky_groups: list[CrashGroup] = Field(default_factory=list)
    overlap: dict[str, list[str]] = Field(default_factory=dict)  # other flag -> models both crash
    top_break_reasons: list[BreakReasonCount] = Field(default_factory=list)
    # The rest of the stack (empty when the sweep made no such checks):
    wrong_result_groups: list[CrashGroup] = Field(default_factory=list)  # confirmed, largest first
    nondeterministic: list[str] = Field(default_factory=list)  # not judged: two eager runs differ
    ladder: list[str] = Field(default_factory=list)  # the ladder's rungs, in order
    stack: list[StackRow] = Field(default_factory=list)  # pairs that climbed the ladder
    stack_groups: list[CrashGroup] = Field(default_factory=list)  # failures met only on the ladder
    helped_survive: int | None = None  # helped models whose benefit survives the full stack
    helped_laddered: int = 0  # helped models with a verdict: every rung passed, or one failed (confirmed)
    recompiles: list[RecompileRow] = Field(default_factory=list)
    recompiles_more: list[str] = Field(default_factory=list)  # models the flag makes recompile more


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


class CorpusHealth(Record):
    """How healthy Dynamo is on the corpus tonight: numbers overall and per stratum, the trend over
    stored nightlies, the full stack at baseline, and the models whose baseline graph count rose
    since the previous nightly (a Dynamo regression in its own right, whatever the flags do)."""

    key: str
    previous_key: str | None = None
    compare_url: str | None = None  # the commit range since the previous nightly
    same_build: bool = False  # the previous nightly is the same torch build: nothing here is news
    overall: HealthNumbers
    strata: list[HealthNumbers] = Field(default_factory=list)
    trend: list[HealthPoint] = Field(default_factory=list)  # stored nightlies, oldest first, tonight last
    strata_trend: dict[str, list[HealthPoint]] = Field(default_factory=dict)  # the same, per stratum
    ladder: list[str] = Field(default_factory=list)  # the ladder's rungs
    laddered: int = 0  # models that climbed the ladder at baseline
    ladder_failures: dict[str, int] = Field(default_factory=dict)  # rung -> baseline runs first failing there
    baseline_regressions: list[ModelChange] = Field(default_factory=list)  # more graphs than last night


class TrendPoint(Record):
    """One stored nightly in a flag's trend."""

    key: str
    crashes: int  # confirmed crashes
    helps: int  # models with fewer graphs
    flaky: int = 0
    testable: int = 0
    wrong: int = 0  # confirmed wrong results

    @property
    def failures(self) -> int:
        """Confirmed crashes and wrong results: what keeps a tracking issue open."""
        return self.crashes + self.wrong


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
    wrong_signatures: dict[str, list[str]] = Field(default_factory=dict)  # flag -> wrong-result groups
    health: dict[str, HealthPoint] = Field(default_factory=dict)  # stratum (and "all") -> its point


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


class FlagDiff(Record):
    """How one flag's effects moved between two snapshots (models present in both)."""

    flag: str
    newly_crashing: list[ModelChange] = Field(default_factory=list)
    newly_wrong: list[ModelChange] = Field(default_factory=list)  # a wrong result now, not before
    fixed: list[ModelChange] = Field(default_factory=list)  # crashed, runs now
    signature_changes: list[ModelChange] = Field(default_factory=list)
    graph_changes: list[ModelChange] = Field(default_factory=list)  # graphs under the flag
    effect_changes: list[ModelChange] = Field(default_factory=list)  # any other effect change

    @property
    def has_changes(self) -> bool:
        return bool(
            self.newly_crashing
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
    same_build: bool = False  # the same torch build: nothing here is news
    compare_url: str | None = None
    models_added: list[str] = Field(default_factory=list)
    models_removed: list[str] = Field(default_factory=list)
    baseline_graph_changes: list[ModelChange] = Field(default_factory=list)
    flags: dict[str, FlagDiff] = Field(default_factory=dict)
    flags_added: list[str] = Field(default_factory=list)
    flags_removed: list[str] = Field(default_factory=list)

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


# --- The night record: one night analysed once, then rendered (report folder, issue bodies,
# notices, step summary, dashboard). Built by `analysis.night`; renderers only read it.


class FlagNight(Record):
    """One flag on one night: what its tracking issue, its notices and a per-flag page show."""

    flag: str
    stats: FlagStats  # counts, percentages, crash groups (largest first, `first_seen` filled), overlap
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

    @property
    def crashes(self) -> int:
        """Confirmed crashes (flaky ones are not counted)."""
        return self.stats.counts.get(Effect.crashes, 0)

    @property
    def wrong(self) -> int:
        """Confirmed wrong results (worse than crashes: they keep the issue open too)."""
        return self.stats.counts.get(Effect.wrong_result, 0)

    @property
    def tracked(self) -> list[CrashGroup]:
        """What the issue tracks and its people are routed by: the confirmed wrong-result groups,
        then the confirmed crash groups, each largest first."""
        return [*self.stats.wrong_result_groups, *self.stats.crash_groups]

    @property
    def helps(self) -> int:
        return self.stats.counts.get(Effect.reduces_graphs, 0)

    @property
    def helped(self) -> list[ModelEffect]:
        """Models with fewer graphs under the flag, the largest reduction first."""
        rows = [row for row in self.effects if row.effect == Effect.reduces_graphs]
        return sorted(rows, key=lambda row: ((row.flag_graphs or 0) - (row.baseline_graphs or 0), row.model))

    @property
    def increased(self) -> list[ModelEffect]:
        """Models with more graphs under the flag, in snapshot order."""
        return [row for row in self.effects if row.effect == Effect.increases_graphs]


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

    @property
    def effects(self) -> list[ModelEffect]:
        """Every (model, flag) row, flag by flag."""
        return [row for flag in self.flags.values() for row in flag.effects]

    def linked(self, issue_urls: dict[str, str], *, author: str | None = None) -> Night:
        """This night with its tracking issues' addresses, and `author` (the bot's login, already
        subscribed to its issues) left out of every cc list. Nothing is analysed again."""
        flags = {}
        for name, flag in self.flags.items():
            cc = [person for person in flag.cc if not author or person.lower() != author.lower()]
            url = issue_urls.get(name, flag.issue_url)
            flags[name] = flag.model_copy(update={"issue_url": url, "cc": cc})
        return self.model_copy(update={"flags": flags})

    def issue_urls(self) -> dict[str, str]:
        """flag -> its tracking issue, for the flags whose issue is known."""
        return {name: flag.issue_url for name, flag in self.flags.items() if flag.issue_url}
