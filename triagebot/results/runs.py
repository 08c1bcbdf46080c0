"""What a sweep produces and stores: environments, run outcomes and their checks, model specs,
the stream's lines, and the snapshot."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from triagebot.results.base import Record
from triagebot.results.locus import WrongLocus
from triagebot.results.operations import keyed_by_operation
from triagebot.results.rungs import BACKWARD
from triagebot.results.suites import DEFAULT_SUITE, SUITES, named_suites

BASELINE = "baseline"
"""The name under which a model's run with the default Dynamo config is stored."""

BASELINE_AGAIN = "baseline-again"
"""`RunRecord.config` of a baseline run a second time on the same night, for a fixed sample of
models (`sweep.schedule.noise_sample`): the spread of its compile seconds against the first
run's is the night's noise floor (`analysis.compile_time`)."""


class Environment(Record):
    """Where a sweep ran. A build is torch and transformers: two environments are one build when
    their torch is one (`same_torch`) and so is their transformers, where both name one."""

    torch_version: str
    torch_git_version: str = ""
    transformers_version: str = ""
    # The libraries of the night's other suites (`Suite.library`) -> their versions, where it
    # swept them (none: not swept, or a snapshot made before environments recorded them). Not
    # part of the build: see `library_versions`.
    libraries: dict[str, str] = Field(default_factory=dict)
    python_version: str = ""
    platform: str = ""
    device: Literal["cpu", "cuda"] = "cpu"
    gpu_name: str | None = None
    cuda_version: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _library_fields(cls, data: Any) -> Any:
        """A snapshot stored when each library had a field of its own (`diffusers_version`,
        `timm_version`) reads into `libraries`: a version recorded, "" none."""
        if not isinstance(data, dict) or not _LIBRARY_FIELDS & data.keys():
            return data
        data, libraries = dict(data), dict(data.get("libraries") or {})
        for field in sorted(_LIBRARY_FIELDS & data.keys()):
            library, version = field.removesuffix("_version"), data.pop(field)
            if version:
                libraries[library] = version
            else:
                libraries.pop(library, None)
        return {**data, "libraries": libraries}

    def same_build(self, other: Environment) -> bool:
        return self.same_torch(other) and self.same_transformers(other)

    def build_name(self) -> str:
        """The build in a message: `torch 2.13.0+cpu, transformers 5.23.0`."""
        transformers = f", transformers {self.transformers_version}" if self.transformers_version else ""
        return f"torch {self.torch_version}{transformers}"

    def library_versions(self) -> dict[str, str]:
        """The suites' libraries the night's models were built with -> their versions, in suite
        order, those recorded only. diffusers and timm are kept out of `same_build` and the
        store's keys: a night is named by its torch (and transformers), and a release of either
        alone is no new build to sweep; a diff says it moved (`analysis.diff.moved_between`)."""
        versions = {**self.libraries, DEFAULT_SUITE: self.transformers_version}
        libraries = [suite.library for suite in SUITES.values() if suite.library]
        libraries += sorted(set(versions) - set(libraries))
        return {library: versions[library] for library in libraries if versions.get(library)}

    def same_torch(self, other: Environment) -> bool:
        """One torch build: the same git hash, or the same version where either has no hash."""
        if self.torch_git_version and other.torch_git_version:
            return self.torch_git_version == other.torch_git_version
        return self.torch_version == other.torch_version

    def same_transformers(self, other: Environment) -> bool:
        """The same transformers, as far as both say: a snapshot made before environments
        recorded it is taken to have any."""
        mine, theirs = self.transformers_version, other.transformers_version
        return not (mine and theirs) or mine == theirs


_LIBRARY_FIELDS = frozenset({"diffusers_version", "timm_version"})
"""`Environment`'s fields of one library each, before `libraries` held them."""


KeyScheme = Literal["torch", "torch+transformers"]
"""What names a night in the store (`[store] key`): its torch version (the nightly stream, one
night per torch), or its torch and transformers versions (one torch under several transformers)."""

_TRANSFORMERS_IN_KEY = "_transformers-"


def snapshot_key(environment: Environment, scheme: KeyScheme) -> str:
    """The key that names a night of `environment` under `scheme`: `2.13.0+cpu`, or
    `2.13.0+cpu_transformers-5.23.0` (the torch version alone where transformers is unknown)."""
    if scheme == "torch" or not environment.transformers_version:
        return environment.torch_version
    return f"{environment.torch_version}{_TRANSFORMERS_IN_KEY}{environment.transformers_version}"


def key_versions(key: str) -> tuple[str, str | None]:
    """A key's torch version and its transformers version (None in a key of torch alone)."""
    torch, named, transformers = key.partition(_TRANSFORMERS_IN_KEY)
    return torch, transformers if named else None


def same_night(stored: Environment, build: Environment, scheme: KeyScheme) -> bool:
    """Whether a night of `build` is the night swept in `stored` where `scheme` names the nights:
    the same torch, and, where nights are named by transformers too, the same transformers."""
    return stored.same_torch(build) and (scheme == "torch" or stored.same_transformers(build))


class Status(StrEnum):
    """What happened to one (model, config) run."""

    ok = "ok"
    create_error = "create_error"  # building the model failed
    eager_error = "eager_error"  # the eager run failed
    crash = "crash"  # an exception under torch.compile
    timeout = "timeout"  # the run outlived its time limit
    signal = "signal"  # the worker died: a signal, an OOM kill, or it vanished
    # A flag run not made because it cannot matter (the flag's `when`: the baseline compiled to
    # one graph with no break, or none of its breaks names the flag's setting). Recorded, never
    # absent.
    skipped = "skipped"
    # A flag run that could not build or run eagerly although its baseline did: a fault of the
    # sweep (the recorded spec did not rebuild the model), never a property of the model.
    engine_error = "engine_error"


PRE_COMPILE_STAGES = frozenset({"build", "eager"})
"""Stages of a run before the compiled call: failing in one of them makes a model untestable."""


def rung_backend(rung: str) -> tuple[str, bool]:
    """The backend a ladder rung compiles with, and whether it runs the backward pass too:
    "aot_eager+backward" -> ("aot_eager", True); "inductor" -> ("inductor", False)."""
    if rung.endswith(BACKWARD):
        return rung.removesuffix(BACKWARD), True
    return rung, False


WRONG_RESULT = "WrongResult"
"""The error type a wrong result is reported (and its repro raises) under."""

EAGER_INCONSISTENT = "EagerInconsistent"
"""The error type a library finding (eager disagreeing with itself across attention
implementations) is reported, and its no-compile repro raises, under."""


class Accuracy(StrEnum):
    """How a compiled call's outputs compare with eager outputs on the same inputs and seed."""

    match = "match"  # within the benchmark harness's tolerances
    mismatch = "mismatch"  # beyond them: a wrong result once confirmed by a rerun
    nondeterministic = "nondeterministic"  # two eager runs already differ: not judged
    # Compiled differs from eager, but eager differs from itself under another attention
    # implementation and compiled agrees with that one: the library's finding (a transformers
    # bug), never the compiler's wrong result (`CrossCheck` has the evidence).
    eager_inconsistent = "eager_inconsistent"


class Check(StrEnum):
    """What a run may check beyond counting its graphs: what a sweep asks of its runs, and what
    its header and snapshot say every run checked. Each check's result is a field of `Outcome`
    (`Outcome.checks_made`)."""

    accuracy = "accuracy"  # the compiled outputs against eager's (`AccuracyCheck`)
    recompiles = "recompiles"  # a second call on another input shape (`RecompileCheck`)


OTHER_ATTENTION = {"sdpa": "eager", "eager": "sdpa"}
"""The attention implementation a model is cross-checked under, by the one it runs with (and,
the pairs being symmetric, the one it ran with, by the one it was cross-checked under)."""


class CrossCheck(Record):
    """One cheap check made on a model whose compiled outputs differ from eager's, to tell which
    side is wrong (`triagebot.sweep.sides`): eager under another attention implementation against
    eager under the model's own, and the compiled outputs against that other eager, judged with
    its float64 run as the reference."""

    name: Literal["eager_other_attention", "compiled_vs_other_attention"]
    implementation: str  # the other attention implementation ("eager"; "sdpa" for a model on eager)
    agrees: bool | None  # None: the check could not be made (`detail` says why)
    detail: str | None = None  # the first difference, or why it could not be made


class AccuracyCheck(Record):
    """The compiled outputs against the eager ones (`triagebot.sweep.accuracy` has the rules)."""

    verdict: Accuracy
    # The first output that differs (`logits`, `past_key_values.layers[0].keys`), prefixed with
    # `second call: ` when only the call on the second shape differs. For `nondeterministic`,
    # the output where the two eager runs differ.
    where: str | None = None
    detail: str | None = None  # how far: largest difference, tolerance, RMSE or cosine similarity
    # The checks made before calling a difference a wrong result, in order; empty for a match,
    # for a model with no other attention implementation, and in snapshots older than this field.
    cross_checks: list[CrossCheck] = Field(default_factory=list)


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
    # What a crash keeps of its traceback (`sweep.tracebacks`): the compiler's innermost frames,
    # the exception line, Dynamo's user frames once; a lost run's, the tail of its child's log.
    traceback: str | None = None
    seconds: float = 0.0  # wall time of the whole run
    stage_seconds: dict[str, float] = Field(default_factory=dict)  # build, eager, compile
    # Where a run that gave no result (timeout, signal) was: build, eager or compile. None for
    # the other statuses, and in snapshots older than this field (read as compile).
    stage: str | None = None
    accuracy: AccuracyCheck | None = None  # None: not checked (checks off, or the call did not run)
    recompile: RecompileCheck | None = None  # None: not tried (checks off, a ladder run, no result)
    # A compiled forward rung's seconds per call, warm (after the compile calls): the median of a
    # few calls (`sweep.run.CALLS`). None: not timed (the sweep's own runs, the backward rung, a
    # failure, or a snapshot older than the field).
    call_seconds: float | None = None

    @model_validator(mode="after")
    def _keyed_by_operation(self) -> Outcome:
        """A signature stored before crash groups were keyed by the torch operation reads as one
        signed now, so that an older nightly's groups meet tonight's (`keyed_by_operation`)."""
        if self.signature and self.traceback:
            self.signature = keyed_by_operation(self.signature, self.traceback)
        return self

    @property
    def ran(self) -> bool:
        return self.status == Status.ok

    @property
    def mismatched(self) -> bool:
        """It ran, and its outputs differ from eager beyond tolerance."""
        checked = self.accuracy is not None and self.accuracy.verdict == Accuracy.mismatch
        return self.status == Status.ok and checked

    @property
    def eager_inconsistent(self) -> bool:
        """It ran, and its compiled outputs differ from eager's only because eager disagrees with
        itself across attention implementations: a library finding, not a wrong result."""
        checked = self.accuracy is not None and self.accuracy.verdict == Accuracy.eager_inconsistent
        return self.status == Status.ok and checked

    @property
    def suspect(self) -> bool:
        """A crash or a wrong result: what confirmation reruns are for."""
        return self.status == Status.crash or self.mismatched

    @property
    def checks_made(self) -> list[Check]:
        """The checks this run made, sorted: those whose result it holds."""
        results = {Check.accuracy: self.accuracy, Check.recompiles: self.recompile}
        return sorted(check for check, result in results.items() if result is not None)

    @property
    def untestable(self) -> bool:
        """The model could not be built or run eagerly: an error, or a hang or a death before the
        compiled call. Testable means built and ran eagerly, nothing less."""
        if self.status in (Status.create_error, Status.eager_error):
            return True
        return self.status in (Status.timeout, Status.signal) and self.stage in PRE_COMPILE_STAGES


InputKind = Literal["randn", "randint", "ones", "zeros", "values", "literal", "list", "dict", "instance"]

TENSOR_KINDS = frozenset({"randn", "randint", "ones", "zeros", "values"})
"""The kinds of `InputSpec` that make one tensor."""

COLLECTION_KINDS = frozenset({"list", "dict"})
"""The kinds of `InputSpec` that hold tensors made from their `items` (or collections of them,
nested: a list of (encoding, mask) pairs)."""


class InputSpec(Record):
    """One input fed to a model: enough to rebuild it, so that a repro needs no corpus code.

    `kind` says how values are made: `randn` (normal floats), `randint` (integers in [low, high)),
    `ones`, `zeros`, `values` (the literal nested list in `values`, e.g. an image grid),
    `literal` (`values` passed as it is, not as a tensor: an int such as a codebook index),
    `list` (a Python list of tensors, one per spec in `items`, each of a tensor kind and its own
    shape and dtype: a model that takes one tensor per image, such as Z-Image's latents), or
    `dict` (a dict of such tensors keyed by their items' names: a protein's feature tensors); a
    list's or dict's items may be lists or dicts themselves (T5FilmDecoder's (encoding, mask) pairs).
    `instance` is an object the model's library defines, made afresh from `values`, a dict of its
    `class_path` ("module:Class") and keyword arguments `kwargs` (an empty KV cache to fill).
    Random kinds are drawn in input order, a collection's items in theirs, from
    `torch.manual_seed(ModelSpec.seed)`.
    """

    name: str
    shape: list[int]  # a list's or dict's: [number of items]
    dtype: str  # torch dtype name without the prefix: float32, int64, bool, ...
    kind: InputKind = "randn"
    low: int = 0
    high: int | None = None
    values: Any = None
    items: list[InputSpec] | None = None

    @model_validator(mode="after")
    def _an_instance_names_its_class(self) -> InputSpec:
        values = self.values
        if self.kind == "instance" and not (
            isinstance(values, dict)
            and set(values) == {"class_path", "kwargs"}
            and ":" in str(values["class_path"])
            and isinstance(values["kwargs"], dict)
        ):
            wanted = "{'class_path': 'module:Class', 'kwargs': {...}}"
            raise ValueError(f"instance input {self.name!r} needs values {wanted}")
        return self

    @model_validator(mode="after")
    def _items_only_in_a_collection(self) -> InputSpec:
        if self.kind not in COLLECTION_KINDS:
            if self.items is not None:
                raise ValueError(
                    f"input {self.name!r} of kind {self.kind!r} has items: only a list or dict has"
                )
            return self
        if not self.items:
            raise ValueError(f"{self.kind} input {self.name!r} has no items")
        strays = sorted({item.kind for item in self.items} - TENSOR_KINDS - COLLECTION_KINDS)
        if strays:
            kinds = ", ".join(strays)
            raise ValueError(f"{self.kind} input {self.name!r} holds items of kind {kinds}: tensors only")
        if self.shape != [len(self.items)]:
            raise ValueError(
                f"{self.kind} input {self.name!r} has shape {self.shape}, not [{len(self.items)}]"
            )
        if self.kind == "dict" and len({item.name for item in self.items}) < len(self.items):
            raise ValueError(f"dict input {self.name!r} names an item twice")
        return self


def instance(name: str, class_path: str, **kwargs: Any) -> InputSpec:
    """An `instance` input: an object of `class_path` ("module:Class") made from `kwargs`."""
    values = {"class_path": class_path, "kwargs": kwargs}
    return InputSpec(name=name, shape=[], dtype="int64", kind="instance", values=values)


def tensor_list(name: str, items: list[InputSpec], kind: Literal["list", "dict"] = "list") -> InputSpec:
    """A `list` input of `items` in order (their names for reading only), or a `dict` input of
    them keyed by their names."""
    dtype = items[0].dtype if items else "float32"
    return InputSpec(name=name, shape=[len(items)], dtype=dtype, kind=kind, items=items)


def model_key(suite: str, name: str) -> str:
    """The key of model `name` of `suite` in a night (runs, results, diffs, trackers, site
    paths): its bare name for transformers and the sentinels, `suite/name` for any other suite,
    so that a name is unique within its suite and two suites never collide."""
    known = SUITES.get(suite)
    return name if known is not None and known.bare_keys else f"{suite}/{name}"


def split_key(key: str) -> tuple[str, str]:
    """(suite, name) of a `model_key`: a bare key is a transformers model's (or a sentinel's,
    which says so in its spec)."""
    suite, slash, name = key.partition("/")
    return (suite, name) if slash and suite in SUITES else (DEFAULT_SUITE, key)


class ModelSpec(Record):
    """Everything needed to rebuild one corpus model without a hub: a repro is built from this."""

    # Its key in the night (`model_key`): the name in its suite, e.g. "LlamaForCausalLM", with
    # the suite before it for a suite other than transformers ("timm/resnet10t").
    model: str
    # The suite (the library whose model it is) and so its builder; a record stored before
    # there was more than one suite is a transformers model.
    source: str = DEFAULT_SUITE
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
    # Methods of the built model called with no arguments, in order, before it runs: a mode its
    # constructor has no argument for (diffusers' `enable_tiling`, without which Allegro's VAE
    # does not encode).
    after_init: list[str] = Field(default_factory=list)
    # A sentinel's behaviour by construction (`corpus.sentinels.BUILT_TO`), so that a night can say
    # torch-free whether it behaved as built (`analysis.sentinels`): BASELINE -> its run's status,
    # or its outputs' verdict ("wrong_result", "nondeterministic"); a flag -> the flag's `Effect`.
    # Empty for a real model.
    built_to: dict[str, str] = Field(default_factory=dict)

    @field_validator("source")
    @classmethod
    def _known_suite(cls, source: str) -> str:
        if source not in SUITES:
            raise ValueError(f"source {source!r} is no suite: one of {', '.join(SUITES)}")
        return source

    @model_validator(mode="after")
    def _after_init_names_methods(self) -> ModelSpec:
        strays = [name for name in self.after_init if not name.isidentifier() or name.startswith("_")]
        if strays:
            raise ValueError(f"after_init of {self.model!r} names no public method: {strays}")
        return self

    @property
    def sentinel(self) -> bool:
        """Whether it is one of the test corpus's sentinels (built to fail, or to be helped, in one
        known way): the one test of what is a sentinel."""
        return self.source == "sentinel"


When = Literal["always", "graph_breaks", "named_in_breaks"]
"""When a flag's runs are made: on every model; only on models whose baseline graph-breaks; only
on models whose baseline breaks the graph where Dynamo's reason names the flag's setting."""

# Settings that act only where Dynamo would otherwise break the graph (a scalar output such as
# `.item()`, an op with a data-dependent output shape): on a model whose baseline compiled to one
# graph with no break they cannot change anything.
GRAPH_BREAK_SETTINGS = frozenset({"capture_scalar_outputs", "capture_dynamic_output_shape_ops"})

# Dynamo's reason for a break it could trace with a setting names that setting in its hint
# ("Enable tracing of dynamic shape operators with
# `torch._dynamo.config.capture_dynamic_output_shape_ops = True`"). A setting's own name is not
# the only sign of it: an op whose output shape depends on data may break at baseline on the
# scalar it reads inside (`aten._local_scalar_dense`), a "Data dependent operator" whose hint
# names capture_scalar_outputs (FastSpeech2Conformer's `repeat_interleave` on torch 2.13: more
# graphs under capture_dynamic_output_shape_ops, no break naming it). A user's own `.item()`
# ("Unsupported Tensor.item() call") is not such an op.
ALSO_BROKEN_AS: dict[str, tuple[str, ...]] = {
    "capture_dynamic_output_shape_ops": ("Data dependent operator",)
}

SKIPPED_RUN = "nothing at baseline for the flag to act on"
"""A skipped flag run, in the sweep's progress and summary lines (the reports say why, by `when`)."""

SKIPPED_BECAUSE: dict[str, str] = {
    "graph_breaks": "their baseline compiled to one graph with no graph break",
    "named_in_breaks": "no graph break of their baseline names the flag's setting",
}
"""Why a flag's run was not made on a model, by the flag's `when`: what every report says."""


def default_when(patch: dict[str, Any]) -> When:
    """`named_in_breaks` for a patch of graph-break settings only, `always` for anything else (a
    flag that acts on guards, recompiles or backends must run on every model)."""
    return "named_in_breaks" if patch and set(patch) <= GRAPH_BREAK_SETTINGS else "always"


def named_in_break(patch: dict[str, Any], reason: str) -> bool:
    """Whether a baseline's break reason makes a `named_in_breaks` flag's run worth making: it
    names one of the patch's settings, or is a break one of them may trace (`ALSO_BROKEN_AS`)."""
    return any(setting in reason or reason.startswith(ALSO_BROKEN_AS.get(setting, ())) for setting in patch)


class FlagSettings(Record):
    """One flag under study: its `torch._dynamo.config` patch and when its runs are made.

    `when="graph_breaks"` skips the flag's run on a model whose baseline compiled to exactly one
    graph with no graph-break reason (recorded as a `skipped` run); `when="named_in_breaks"`
    also on one none of whose break reasons names one of the patch's settings
    (`named_in_break`); `when="always"` runs it on every model. Left out, `when` is
    `default_when(patch)`.
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

    @property
    def suite(self) -> str:
        return suite_of(self.model)


class UnreachedPair(Record):
    """A (model, config) pair the backend ladder chose and did not climb, whole or from some rung
    on, because a bound stopped it: a line of a sweep's stream, and `Snapshot.ladder_unreached`.
    What it says of the pair's rungs is "not checked", never a result."""

    kind: Literal["unreached"] = "unreached"
    model: str
    config: str  # BASELINE or a flag name
    rungs: list[str]  # the rungs not run, in ladder order
    # `pairs`: beyond [sweep] ladder_max_pairs; `seconds`: beyond the ladder's time budget
    # ([sweep] ladder_seconds of recorded run seconds)
    bound: Literal["pairs", "seconds"]


def suite_of(key: str) -> str:
    """The suite of the model keyed `key`, read from the key (`model_key`, written from its
    spec's source): a bare key, a record stored before there were suites included, is a
    transformers model's; the test corpora's sentinels stand with transformers."""
    return split_key(key)[0]


class CorpusSelection(Record):
    """Which models a snapshot covers and how they were chosen."""

    name: str  # the corpus, or the suites joined by SUITE_JOINER (`suites_name`)
    # A configured suite whose library could not be imported for this build -> why: said, and
    # the rest of the night swept (empty in a night of one corpus or one stored before suites).
    skipped: dict[str, str] = Field(default_factory=dict)
    seed: int | None = None
    sample: int | None = None
    strata: dict[str, int] = Field(default_factory=dict)  # stratum -> models drawn
    models: list[str] = Field(default_factory=list)
    only_breaking_in: str | None = None  # snapshot key whose baseline graph breaks filtered

    def suites(self) -> list[str]:
        """The corpora the night was configured to sweep, skipped ones included."""
        return named_suites(self.name)

    def swept_suites(self) -> list[str]:
        return [suite for suite in self.suites() if suite not in self.skipped]

    def skipped_lines(self) -> list[str]:
        """One line per configured suite the night did not sweep, and why: what the progress,
        the summary and the health say of it."""
        return [f"suite {suite} not swept: {why}" for suite, why in self.skipped.items()]


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
    checks: list[Check] = Field(default_factory=list)  # what every run checked, sorted
    ladder: list[str] = Field(default_factory=list)  # the ladder's rungs, in order (empty: no ladder)


class ModelResult(Record):
    """One model's outcomes under the baseline and every flag."""

    model: str
    stratum: str = "other"
    outcomes: dict[str, Outcome]  # BASELINE and each flag name
    # The baseline run again the same night, for the noise floor of compile times; None: not in
    # the night's sample (`BASELINE_AGAIN`).
    baseline_again: Outcome | None = None
    confirmations: dict[str, list[Outcome]] = Field(default_factory=dict)  # reruns of crashes
    spec: ModelSpec | None = None
    # The backend ladder: config -> backend -> outcome, in ladder order, up to the first failure;
    # only for the (model, config) pairs the ladder chose. Its reruns of failures apart.
    ladder: dict[str, dict[str, Outcome]] = Field(default_factory=dict)
    ladder_confirmations: dict[str, dict[str, list[Outcome]]] = Field(default_factory=dict)

    @property
    def suite(self) -> str:
        return suite_of(self.model)


class Reduction(Record):
    """How a reproduction was made smaller while it still raised its signature
    (`triagebot.reduce`): the spec its script is now rendered from, what changed, and the
    script's lines and run seconds before and after."""

    spec: ModelSpec  # the reduced spec: fewer layers, heads, ..., or one sub-model of a composite
    # what changed, in order ("text_config.num_hidden_layers 2 -> 1", "input attention_mask left out")
    steps: list[str] = Field(default_factory=list)
    lines_before: int
    lines_after: int
    seconds_before: float  # one run of the script before (interpreter start and imports included)
    seconds_after: float
    probes: int = 0  # candidate scripts run to find it
    seconds: float = 0.0  # wall time the search took
    complete: bool = True  # False: the time bound stopped it with candidates left untried
    # The nightly whose reduction this is, rendered again and still raising the signature
    # tonight: one probe instead of a search (None: found tonight).
    kept_from: str | None = None


class GraphRepro(Record):
    """The graph-level reproduction PyTorch's own minifier wrote for a failure in a backend
    (`TORCHDYNAMO_REPRO_AFTER`), run alone as a person would run it from the issue."""

    after: Literal["dynamo", "aot"]  # where the minifier cut: Dynamo's FX graph or AOTAutograd's
    script: str = ""  # empty when the minifier wrote none (the reason is in `observed`)
    lines: int = 0
    verified: bool = False  # it raised the group's error (its user-code function aside: it has none)
    observed: str | None = None  # the signature it raised, or why there is none
    seconds: float = 0.0  # the minifier's run and the check's, together


class Reproduction(Record):
    """A self-contained script for one crash signature, and whether running it reproduced it."""

    flag: str
    signature: str
    model: str
    script: str  # the smallest verified script found (`reduction` says how it was reduced)
    verified: bool = False  # the script was run and raised an error with this signature
    observed: str | None = None  # the signature it raised, or why it could not be checked
    backend: str | None = None  # the backend the script compiles with; None: the counting backend
    seconds: float | None = None  # one run of `script`; None in snapshots older than this field
    reduction: Reduction | None = None  # None: not reduced (off, out of time, or nothing to reduce)
    graph: GraphRepro | None = None  # for a failure in a backend (aot_eager, inductor); else None
    locus: WrongLocus | None = None  # a wrong result at baseline reduced below the model (`reduce.wrong`)


class Snapshot(Record):
    """One sweep of one build: the unit that is stored, diffed and published."""

    key: str  # `snapshot_key`: 2.12.0.dev20260408+cu128, or 2.13.0+cpu_transformers-5.23.0
    created: datetime = Field(default_factory=lambda: datetime.now(UTC))
    environment: Environment
    flags: dict[str, dict[str, Any]]  # flag name -> torch._dynamo.config patch
    # flag -> when its runs were made; a flag not listed ran on every model (older snapshots)
    when: dict[str, When] = Field(default_factory=dict)
    corpus: CorpusSelection
    results: list[ModelResult]
    reproductions: list[Reproduction] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)  # what every run checked, sorted
    # The backend ladder's rungs, in order: `counting` (the recompile check on the ladder's
    # selection) and the backends (aot_eager, inductor); empty when no ladder ran.
    ladder: list[str] = Field(default_factory=list)
    # The pairs the ladder chose and did not climb (whole, or from some rung on), and why: what
    # a report says was not checked. Empty when every chosen pair climbed as far as it could.
    ladder_unreached: list[UnreachedPair] = Field(default_factory=list)

    def result(self, model: str) -> ModelResult | None:
        return next((r for r in self.results if r.model == model), None)

    @property
    def sentinels(self) -> frozenset[str]:
        """The test corpus's sentinel models (`ModelSpec.sentinel`). They prove a detector works
        and say so wherever they are named; they never count as evidence that a flag helps
        (`FlagStats.sentinels_helped`)."""
        return frozenset(
            result.model for result in self.results if result.spec is not None and result.spec.sentinel
        )

    def model_seconds(self) -> dict[str, float]:
        """Each model's recorded wall seconds over all its runs (every config, confirmations
        included): the cost estimate that orders and shards the next sweep of the corpus."""
        return {
            result.model: sum(outcome.seconds for outcome in result.outcomes.values())
            + sum(rerun.seconds for reruns in result.confirmations.values() for rerun in reruns)
            + sum(outcome.seconds for rungs in result.ladder.values() for outcome in rungs.values())
            for result in self.results
        }


def keyed(snapshot: Snapshot, scheme: KeyScheme) -> Snapshot:
    """`snapshot` under the key `scheme` gives its environment (`snapshot_key`)."""
    key = snapshot_key(snapshot.environment, scheme)
    return snapshot if snapshot.key == key else snapshot.model_copy(update={"key": key})
