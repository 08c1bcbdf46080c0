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

from pydantic import BaseModel, ConfigDict, Field

BASELINE = "baseline"
"""The name under which a model's run with the default Dynamo config is stored."""


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

    @property
    def ran(self) -> bool:
        return self.status == Status.ok

    @property
    def untestable(self) -> bool:
        return self.status in (Status.create_error, Status.eager_error)


class InputSpec(Record):
    """One input tensor fed to a model: enough to rebuild it, so that a repro needs no corpus code.

    `kind` says how values are made: `randn` (normal floats), `randint` (integers in [low, high)),
    `ones`, `zeros`, or `values` (the literal nested list in `values`, e.g. an image grid).
    Random kinds are drawn in input order from `torch.manual_seed(ModelSpec.seed)`.
    """

    name: str
    shape: list[int]
    dtype: str  # torch dtype name without the prefix: float32, int64, bool, ...
    kind: Literal["randn", "randint", "ones", "zeros", "values"] = "randn"
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


class RunRecord(Record):
    """One line of a sweep's JSON Lines stream: a finished (model, config) run."""

    kind: Literal["run"] = "run"
    model: str
    config: str  # BASELINE or a flag name
    attempt: int = 0  # 0 for the sweep, 1.. for confirmation reruns
    outcome: Outcome
    spec: ModelSpec | None = None


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
    corpus: CorpusSelection
    shard: str | None = None  # "i/n"
    started: datetime = Field(default_factory=lambda: datetime.now(UTC))


class ModelResult(Record):
    """One model's outcomes under the baseline and every flag."""

    model: str
    stratum: str = "other"
    outcomes: dict[str, Outcome]  # BASELINE and each flag name
    confirmations: dict[str, list[Outcome]] = Field(default_factory=dict)  # reruns of crashes
    spec: ModelSpec | None = None


class Reproduction(Record):
    """A self-contained script for one crash signature, and whether running it reproduced it."""

    flag: str
    signature: str
    model: str
    script: str
    verified: bool = False  # the script was run and raised an error with this signature
    observed: str | None = None  # the signature it raised, or why it could not be checked


class Snapshot(Record):
    """One sweep of one build: the unit that is stored, diffed and published."""

    key: str  # the torch version, e.g. 2.12.0.dev20260408+cu128
    created: datetime = Field(default_factory=lambda: datetime.now(UTC))
    environment: Environment
    flags: dict[str, dict[str, Any]]  # flag name -> torch._dynamo.config patch
    corpus: CorpusSelection
    results: list[ModelResult]
    reproductions: list[Reproduction] = Field(default_factory=list)

    def result(self, model: str) -> ModelResult | None:
        return next((r for r in self.results if r.model == model), None)


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


# Order matters: symbols before bare numbers, paths before line numbers.
_SIGNATURE_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.\-<>]+)+\.py"), "<file>"),
    (re.compile(r"\bline \d+"), "line ?"),
    (re.compile(r"\bu\d+\b"), "u*"),
    (re.compile(r"\bs\d+\b"), "s*"),
    (re.compile(r"(?:torch\.)?Size\(\[[^\]]*\]\)"), "Size([...])"),
    (re.compile(r"\b\d+\b"), "N"),
    (re.compile(r"([us]\*|N)(?:, \1)+"), r"\1"),  # {u1, u0} and {u6} are one bug
    (re.compile(r"\((?:N,? ?)+\)"), "(...)"),  # tensor sizes
    (re.compile(r"\s+"), " "),
]


def error_signature(error_type: str, message: str) -> str:
    """A normalised `Type: first line` that groups one bug across models and nightlies."""
    first_line = next((line for line in message.splitlines() if line.strip()), "")
    for pattern, replacement in _SIGNATURE_RULES:
        first_line = pattern.sub(replacement, first_line)
    return f"{error_type}: {first_line.strip()}"[:300]
