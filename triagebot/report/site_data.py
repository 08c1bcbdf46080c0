"""The dashboard site's own store-wide data: every stored nightly in compact form.

The newest nightly is rendered from its `results.Night` (analysed once by `analysis.night`):
its flag pages read the record itself. What the site adds is the store as a whole: a
`NightData` per stored nightly (every model's status, graphs, ops and signature under every
config, every flag's effect on it, its trend point and crash signatures per flag, its corpus
health and its diff against the nightly before it), for the index, the model pages and the
compare view. The site keeps one per nightly as `data/nights/<key>.js`: the compare view reads
two of them, and a later build into the same folder reads them back instead of parsing the
snapshot again (`read_night_data`, checked against a hash of the snapshot file, so the site
stays derivable from the store alone).

- `night_data(snapshot, previous, ...)`: an earlier nightly's data, from its snapshot (classified
  here, once, and diffed against the nightly before it with the rows of both);
- `newest_data(night, ...)`: the newest nightly's data, from its night: nothing is classified or
  diffed again.

A `NightData` is a `results.NightSummary` too, so the history of the newest night can be read
from these records instead of from every stored snapshot (`pipeline.night_of`'s `stored`).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import Field, ValidationError

from triagebot.analysis import classify, diff, summarise
from triagebot.analysis.breaks import KEPT_BREAK_REASONS, SHOWN_BREAK_REASONS, top_break_reasons
from triagebot.analysis.ladder import recompile_run
from triagebot.results import (
    BASELINE,
    BreakReasonCount,
    Effect,
    ModelEffect,
    ModelResult,
    Night,
    NightSummary,
    Snapshot,
    SnapshotDiff,
    Status,
)

FORMAT = 2


class Run(NamedTuple):
    """One (model, config) run in compact form; a JSON array on disk."""

    status: Status
    graphs: int | None = None
    ops: int | None = None
    signature: int | None = None  # index into `NightData.signatures`
    recompiles: int | None = None  # frames a second input shape recompiled (None: no second call)


class ModelNight(NamedTuple):
    """One model on one nightly: a JSON array on disk, read by the compare view's script too."""

    model: str
    stratum: str
    runs: list[Run | None]  # one per config of `NightData.configs`; None: no run under it
    effects: list[Effect | None]  # one per flag of `NightData.flags`; None: no effect recorded


class NightData(NightSummary):
    """One stored nightly, compact: everything the index, the model pages and the compare view
    need from it, with the summary a later night's history reads (key, created, environment,
    trend and crash signatures per flag). `source` is the SHA-256 of the snapshot file it was
    made from (None when the store keeps no file), `previous`/`previous_source` those of the
    nightly `diff` is against."""

    format: Literal[2] = FORMAT
    flags: dict[str, dict[str, Any]]
    source: str | None = None
    signatures: list[str] = Field(default_factory=list)
    models: list[ModelNight] = Field(default_factory=list)
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


def fingerprint(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _recompiles(result: ModelResult, config: str) -> int | None:
    """Frames recompiled when `result`'s model was called again on a second shape under `config`
    (None: no second call was made, or it crashed)."""
    run = recompile_run(result, config)
    check = run.recompile if run is not None else None
    return check.recompiles if check is not None and check.status == "ok" else None


def _compact(
    snapshot: Snapshot,
    rows: Sequence[ModelEffect],
    change: SnapshotDiff | None,
    *,
    source: str | None,
    previous: str | None,
    previous_source: str | None,
) -> NightData:
    """The `NightData` of `snapshot` from its rows (`classify(snapshot)`) and its diff."""
    flags = list(snapshot.flags)
    configs = [BASELINE, *flags]
    signatures: dict[str, int] = {}

    def compact(result: ModelResult, config: str) -> Run | None:
        outcome = result.outcomes.get(config)
        if outcome is None:
            return None
        index = signatures.setdefault(outcome.signature, len(signatures)) if outcome.signature else None
        return Run(outcome.status, outcome.graphs, outcome.ops, index, _recompiles(result, config))

    effects: dict[tuple[str, str], Effect] = {(row.model, row.flag): row.effect for row in rows}
    models = [
        ModelNight(
            result.model,
            result.stratum,
            [compact(result, config) for config in configs],
            [effects.get((result.model, flag)) for flag in flags],
        )
        for result in snapshot.results
    ]
    # Made from records already checked: validating 1,000 models again would double the cost.
    return NightData.model_construct(
        **dict(summarise(snapshot, rows)),  # what a later night's history reads
        flags=snapshot.flags,
        source=source,
        signatures=list(signatures),
        models=models,
        break_reasons=top_break_reasons(snapshot, KEPT_BREAK_REASONS),
        previous=previous,
        previous_source=previous_source if previous is not None else None,
        diff=change,
    )


def night_data(
    snapshot: Snapshot,
    previous: Snapshot | None = None,
    *,
    source: str | None = None,
    previous_source: str | None = None,
    previous_rows: list[ModelEffect] | None = None,
) -> tuple[NightData, list[ModelEffect]]:
    """An earlier nightly's data from its snapshot, diffed against `previous` (`previous_rows`:
    its rows, when the caller kept them), and its classified rows for the next nightly's diff."""
    rows = classify(snapshot)
    change = None
    if previous is not None:
        if previous_rows is None:
            previous_rows = classify(previous)
        change = diff(previous, snapshot, old_rows=previous_rows, new_rows=rows)
    data = _compact(
        snapshot,
        rows,
        change,
        source=source,
        previous=previous.key if previous is not None else None,
        previous_source=previous_source,
    )
    return data, rows


def newest_data(night: Night, *, source: str | None = None, previous_source: str | None = None) -> NightData:
    """The newest nightly's data from its night: its rows and its diff as analysed, once."""
    return _compact(
        night.snapshot,
        night.effects,
        night.diff,
        source=source,
        previous=night.previous_key,
        previous_source=previous_source,
    )


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
    night: NightData, previous: NightData | None, limit: int = SHOWN_BREAK_REASONS
) -> list[tuple[BreakReasonCount, int | None]]:
    """The night's top break reasons, each with its change in models since `previous` (None when
    the reason was not among the previous nightly's counted reasons)."""
    before = Counter({item.reason: item.models for item in previous.break_reasons}) if previous else Counter()
    return [
        (item, (item.models - before[item.reason]) if item.reason in before else None)
        for item in night.break_reasons[:limit]
    ]
