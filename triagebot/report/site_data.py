"""What the dashboard site shows, computed from the store through the analysis API in one place.

`analyse_night(snapshot, previous)` is the adapter: it asks `triagebot.analysis` for one
nightly's effects, flag statistics, crash groups, break reasons and its diff against the
previous stored nightly, and returns

- a `NightData`: the nightly in compact form (every model's status, graphs, ops and signature
  under every config, and every flag's effect on it), its trend point per flag, its corpus
  health and its diff. The site keeps one per stored nightly, as `data/nights/<key>.js`: the
  compare view reads two of them, and a later build into the same folder reads them back
  instead of parsing the snapshot again (`read_night_data`, checked against a hash of the
  snapshot file, so the site stays derivable from the store alone);
- a `FlagView` per flag, the latest nightly's full detail for its flag page (every effect row,
  crash groups with their tracebacks and verified reproductions, models helped). Its trend and
  the first nightly of each crash group come from the `NightData` of the nightlies before it
  (`with_history`).

To build on the night record (`analysis.night`) and on a corpus health computed in analysis,
only this module changes: `FlagView` has the fields of the record's per-flag part, and `_health`
is the one place that counts the corpus's health here.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import Field, ValidationError

from triagebot.analysis import classify, crash_groups, diff, flag_stats, top_break_reasons
from triagebot.results import (
    BASELINE,
    BreakReasonCount,
    CrashGroup,
    Effect,
    Environment,
    FlagDiff,
    FlagStats,
    ModelEffect,
    Outcome,
    Record,
    Reproduction,
    Snapshot,
    SnapshotDiff,
    Status,
    TrendPoint,
)

FORMAT = 1
TOP_BREAK_REASONS = 50  # kept per nightly, so that the index can show the change of its top 15
TOP_MODELS = 10


class Run(NamedTuple):
    """One (model, config) run in compact form; a JSON array on disk."""

    status: Status
    graphs: int | None = None
    ops: int | None = None
    signature: int | None = None  # index into `NightData.signatures`
    recompiles: int | None = None  # once the sweep records them


class ModelNight(NamedTuple):
    """One model on one nightly: a JSON array on disk, read by the compare view's script too."""

    model: str
    stratum: str
    runs: list[Run | None]  # one per config of `NightData.configs`; None: no run under it
    effects: list[Effect | None]  # one per flag of `NightData.flags`; None: no effect recorded


class StratumHealth(Record):
    models: int = 0
    built: int = 0
    testable: int = 0  # built and ran eagerly
    compiled: int = 0  # the baseline compile ran
    one_graph: int = 0  # ... into exactly one graph


class Health(StratumHealth):
    """How Dynamo does on the corpus at baseline tonight: what the index charts over nightlies."""

    mean_graphs: float | None = None  # over the models whose baseline compiled
    p90_graphs: int | None = None
    mean_ops: float | None = None
    max_ops: int | None = None
    strata: dict[str, StratumHealth] = Field(default_factory=dict)
    top_models: list[tuple[str, int]] = Field(default_factory=list)  # most graphs first


class NightData(Record):
    """One stored nightly, compact: everything the index, the model pages and the compare view
    need from it. `source` is the SHA-256 of the snapshot file it was made from (None when the
    store keeps no file), `previous`/`previous_source` those of the nightly `diff` is against."""

    format: Literal[1] = FORMAT
    key: str
    created: datetime
    environment: Environment
    flags: dict[str, dict[str, Any]]
    source: str | None = None
    signatures: list[str] = Field(default_factory=list)
    models: list[ModelNight] = Field(default_factory=list)
    trend: dict[str, TrendPoint] = Field(default_factory=dict)
    crash_signatures: dict[str, list[str]] = Field(default_factory=dict)  # flag -> confirmed groups
    health: Health = Field(default_factory=Health)
    break_reasons: list[BreakReasonCount] = Field(default_factory=list)
    previous: str | None = None
    previous_source: str | None = None
    diff: SnapshotDiff | None = None

    @cached_property
    def configs(self) -> list[str]:
        """The configs in the order of every `ModelNight.runs`: the baseline, then each flag."""
        return [BASELINE, *self.flags]

    @cached_property
    def config_index(self) -> dict[str, int]:
        return {config: index for index, config in enumerate(self.configs)}

    def signature(self, run: Run | None) -> str | None:
        return self.signatures[run.signature] if run is not None and run.signature is not None else None


class CrashDetail(Record):
    """A crash group on a flag page: the group, its traceback's tail and its reproduction."""

    group: CrashGroup
    traceback: str | None = None
    repro: Reproduction | None = None
    rows: list[ModelEffect] = Field(default_factory=list)


class FlagView(Record):
    """One flag on the latest nightly, as its page shows it (the fields of the night record's
    per-flag part, and the crash groups' details)."""

    flag: str
    stats: FlagStats
    effects: list[ModelEffect] = Field(default_factory=list)
    trend: list[TrendPoint] = Field(default_factory=list)
    diff: FlagDiff | None = None
    issue_url: str | None = None
    crashes: list[CrashDetail] = Field(default_factory=list)
    flaky: list[CrashDetail] = Field(default_factory=list)

    @property
    def helped(self) -> list[ModelEffect]:
        rows = [row for row in self.effects if row.effect == Effect.reduces_graphs]
        return sorted(rows, key=lambda row: ((row.flag_graphs or 0) - (row.baseline_graphs or 0), row.model))

    @property
    def increased(self) -> list[ModelEffect]:
        return [row for row in self.effects if row.effect == Effect.increases_graphs]


class Analysed(NamedTuple):
    """What `analyse_night` gives: the compact nightly, its flag views, its classified rows."""

    data: NightData
    views: dict[str, FlagView]
    rows: list[ModelEffect]


def fingerprint(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _health(snapshot: Snapshot) -> Health:
    """Baseline health of the corpus: built, ran eagerly, compiled, one graph; graph and op counts."""
    strata: dict[str, StratumHealth] = defaultdict(StratumHealth)
    graphs: list[int] = []
    ops: list[int] = []
    tops: list[tuple[str, int]] = []
    for result in snapshot.results:
        baseline = result.outcomes.get(BASELINE)
        counts = strata[result.stratum]
        counts.models += 1
        if baseline is None:
            continue
        hung_in_build = baseline.status in (Status.timeout, Status.signal) and baseline.stage == "build"
        counts.built += baseline.status != Status.create_error and not hung_in_build
        counts.testable += not baseline.untestable
        if baseline.status != Status.ok:
            continue
        counts.compiled += 1
        counts.one_graph += baseline.graphs == 1
        if baseline.graphs is not None:
            graphs.append(baseline.graphs)
            tops.append((result.model, baseline.graphs))
        if baseline.ops is not None:
            ops.append(baseline.ops)
    total = Health(strata=dict(sorted(strata.items())))
    for counts in strata.values():
        for field in ("models", "built", "testable", "compiled", "one_graph"):
            setattr(total, field, getattr(total, field) + getattr(counts, field))
    if graphs:
        ordered = sorted(graphs)
        total.mean_graphs = round(sum(graphs) / len(graphs), 2)
        total.p90_graphs = ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]
    if ops:
        total.mean_ops = round(sum(ops) / len(ops), 1)
        total.max_ops = max(ops)
    total.top_models = sorted(tops, key=lambda item: (-item[1], item[0]))[:TOP_MODELS]
    return total


# Whether runs record their recompiles yet (asked once: a missing attribute is slow to ask for).
_RECORDS_RECOMPILES = "recompiles" in Outcome.model_fields


def _recompiles(outcome: Outcome) -> int | None:
    """The recompile count of a run, once the sweep records one."""
    value = getattr(outcome, "recompiles", None) if _RECORDS_RECOMPILES else None
    return value if isinstance(value, int) else None


def _trend_point(key: str, rows: Sequence[ModelEffect]) -> TrendPoint:
    """As `analysis.trend` counts one nightly, from rows already classified."""
    counts = Counter(row.effect for row in rows)
    return TrendPoint(
        key=key,
        crashes=counts[Effect.crashes],
        helps=counts[Effect.reduces_graphs],
        flaky=counts[Effect.flaky],
        testable=len(rows) - counts[Effect.create_error],
    )


def _tail(text: str | None, lines: int = 30) -> str | None:
    return "\n".join(text.splitlines()[-lines:]) if text else None


def analyse_night(
    snapshot: Snapshot,
    previous: Snapshot | None = None,
    *,
    source: str | None = None,
    previous_source: str | None = None,
    previous_rows: list[ModelEffect] | None = None,
    detail: bool = True,
) -> Analysed:
    """The adapter (see the module docstring): one nightly through the analysis API, once.
    `previous_rows` are the `rows` of `previous`'s own analysis, when the caller kept them.
    Without `detail` (a nightly before the latest), no flag views are made ({})."""
    rows = classify(snapshot)
    flags = list(snapshot.flags)
    by_flag: dict[str, list[ModelEffect]] = {flag: [] for flag in flags}
    for row in rows:
        by_flag[row.flag].append(row)
    configs = [BASELINE, *flags]
    signatures: dict[str, int] = {}

    def compact(outcome: Outcome | None) -> Run | None:
        if outcome is None:
            return None
        index = signatures.setdefault(outcome.signature, len(signatures)) if outcome.signature else None
        return Run(outcome.status, outcome.graphs, outcome.ops, index, _recompiles(outcome))

    effects: dict[tuple[str, str], Effect] = {(row.model, row.flag): row.effect for row in rows}
    models = [
        ModelNight(
            result.model,
            result.stratum,
            [compact(result.outcomes.get(config)) for config in configs],
            [effects.get((result.model, flag)) for flag in flags],
        )
        for result in snapshot.results
    ]
    change = None
    if previous is not None:
        change = diff(previous, snapshot, old_rows=previous_rows, new_rows=rows)
    # Made from records already checked: validating 1,000 models again would double the cost.
    data = NightData.model_construct(
        key=snapshot.key,
        created=snapshot.created,
        environment=snapshot.environment,
        flags=snapshot.flags,
        source=source,
        signatures=list(signatures),
        models=models,
        trend={flag: _trend_point(snapshot.key, by_flag[flag]) for flag in flags},
        crash_signatures={
            flag: [group.signature for group in crash_groups(by_flag[flag], flag, Effect.crashes)]
            for flag in flags
        },
        health=_health(snapshot),
        break_reasons=top_break_reasons(snapshot, TOP_BREAK_REASONS),
        previous=previous.key if previous is not None else None,
        previous_source=previous_source if previous is not None else None,
        diff=change,
    )
    if not detail:
        return Analysed(data, {}, rows)
    views = {}
    for flag in flags:
        stats = flag_stats(snapshot, flag, rows)
        views[flag] = FlagView(
            flag=flag,
            stats=stats,
            effects=by_flag[flag],
            diff=change.flags.get(flag) if change is not None else None,
            crashes=_details(snapshot, flag, stats.crash_groups, by_flag[flag]),
            flaky=_details(snapshot, flag, stats.flaky_groups, by_flag[flag]),
        )
    return Analysed(data, views, rows)


def _details(
    snapshot: Snapshot, flag: str, groups: list[CrashGroup], rows: list[ModelEffect]
) -> list[CrashDetail]:
    repros = {repro.signature: repro for repro in snapshot.reproductions if repro.flag == flag}
    by_model = {result.model: result for result in snapshot.results}
    details = []
    for group in groups:
        first = by_model.get(group.models[0])
        outcome = first.outcomes.get(flag) if first is not None else None
        crashed = outcome if outcome is not None and outcome.status == Status.crash else None
        if crashed is None and first is not None:
            crashed = first.outcomes.get(BASELINE)
        members = set(group.models)
        details.append(
            CrashDetail(
                group=group,
                traceback=_tail(crashed.traceback if crashed is not None else None),
                repro=repros.get(group.signature),
                rows=[row for row in rows if row.model in members],
            )
        )
    return details


def with_history(views: dict[str, FlagView], nights: Sequence[NightData]) -> dict[str, FlagView]:
    """The latest nightly's flag views with their trend over `nights` (oldest first, the latest
    last) and each crash group's first nightly, the oldest in `nights` that had its signature."""
    result = {}
    for flag, view in views.items():
        seen: dict[str, str] = {}
        for night in nights:
            for signature in night.crash_signatures.get(flag, []):
                seen.setdefault(signature, night.key)
        details = []
        for detail in view.crashes:
            group = detail.group.model_copy(update={"first_seen": seen.get(detail.group.signature)})
            details.append(detail.model_copy(update={"group": group}))
        trend = [night.trend[flag] for night in nights if flag in night.trend]
        result[flag] = view.model_copy(update={"trend": trend, "crashes": details})
    return result


# --- the per-night data file: `triagebotNight({...});`, a script the compare view loads from disk ---

PREFIX = "triagebotNight("
SUFFIX = ");\n"


def night_script(data: NightData) -> str:
    """The data file's text: a call the compare view's script answers (files:// allows no fetch)."""
    return PREFIX + data.model_dump_json() + SUFFIX


def read_night_data(path: Path) -> NightData | None:
    """A data file written by `night_script`, or None when it is missing, stale in format or damaged."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    if not (text.startswith(PREFIX) and text.endswith(SUFFIX)):
        return None
    try:
        return NightData.model_validate_json(text[len(PREFIX) : -len(SUFFIX)])
    except ValidationError:
        return None


# --- model histories: one model across every nightly, with the nightlies where something changed ---


class Difference(NamedTuple):
    what: str  # a config or flag name, or "corpus"
    field: str  # status, graphs, ops, signature, recompiles, effect, present
    old: Any
    new: Any


class ModelNightRow(NamedTuple):
    """One model on one nightly, with what changed since the nightly before (where it was swept)."""

    night: NightData
    row: ModelNight
    changes: list[Difference]


def _run_fields(night: NightData, run: Run | None) -> dict[str, Any]:
    if run is None:
        return {"status": None}
    return {
        "status": run.status,
        "graphs": run.graphs,
        "ops": run.ops,
        "signature": night.signature(run),
        "recompiles": run.recompiles,
    }


def differences(
    old_night: NightData, old: ModelNight, new_night: NightData, new: ModelNight
) -> list[Difference]:
    """What differs for one model between two nightlies: per config its run, per flag its effect."""
    found = []
    old_runs = dict(zip(old_night.configs, old.runs, strict=True))
    for config, run in zip(new_night.configs, new.runs, strict=True):
        before, after = _run_fields(old_night, old_runs.get(config)), _run_fields(new_night, run)
        for field in ("status", "graphs", "ops", "signature", "recompiles"):
            old_value, new_value = before.get(field), after.get(field)
            if old_value == new_value:
                continue
            # A run that starts or stops running loses or gains its counts: the status says it.
            implied = field in ("graphs", "ops", "recompiles") and None in (old_value, new_value)
            if not (implied and before.get("status") != after.get("status")):
                found.append(Difference(config, field, old_value, new_value))
    old_effects = dict(zip(old_night.flags, old.effects, strict=True))
    for flag, effect in zip(new_night.flags, new.effects, strict=True):
        if old_effects.get(flag) != effect:
            found.append(Difference(flag, "effect", old_effects.get(flag), effect))
    return found


def _state(night: NightData, shape: tuple, row: ModelNight) -> tuple:
    """Everything `differences` compares, as one value: equal states have no difference."""
    runs = tuple(
        None if run is None else (run.status, run.graphs, run.ops, night.signature(run), run.recompiles)
        for run in row.runs
    )
    return (shape, runs, tuple(row.effects))


def model_histories(nights: Sequence[NightData]) -> dict[str, list[ModelNightRow]]:
    """Every model swept in any of `nights` (oldest first) -> its rows, oldest first, each with
    what changed since the previous nightly that swept it ("present" when it joins again)."""
    histories: dict[str, list[ModelNightRow]] = {}
    last_seen: dict[str, tuple[int, NightData, ModelNight, tuple]] = {}
    for index, night in enumerate(nights):
        shape = (tuple(night.configs), tuple(night.flags))
        for row in night.models:
            state = _state(night, shape, row)
            before = last_seen.get(row.model)
            if before is None:
                changes = []
            else:
                changes = [] if before[3] == state else differences(before[1], before[2], night, row)
                if before[0] != index - 1:
                    changes.insert(0, Difference("corpus", "present", "absent", "swept"))
            histories.setdefault(row.model, []).append(ModelNightRow(night, row, changes))
            last_seen[row.model] = (index, night, row, state)
    return histories


def break_reason_changes(
    night: NightData, previous: NightData | None, limit: int = 15
) -> list[tuple[BreakReasonCount, int | None]]:
    """The night's top break reasons, each with its change in models since `previous` (None when
    the reason was not among the previous nightly's counted reasons)."""
    before = Counter({item.reason: item.models for item in previous.break_reasons}) if previous else Counter()
    return [
        (item, (item.models - before[item.reason]) if item.reason in before else None)
        for item in night.break_reasons[:limit]
    ]
