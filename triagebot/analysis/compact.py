"""Each stored nightly in compact form (`NightData`): what a later night's history and the
dashboard site read of it, instead of the snapshot.

A `NightData` is a `results.NightSummary` (key, created, environment, trend and crash signatures
per flag, health points), so a night's history can be read from these records, with what the
site adds: every model's run under every config (`Run`: status, graphs, ops, signature,
recompiles), every flag's effect on it, the nightly's most common break reasons and its diff
against the nightly before it.

`Run` is the one declaration of a model page's history: each field says how it is read from a
run and how the page shows it (`RunField`), and the site's pages, its comparisons and the
compare view's script (which reads the data file's arrays by the names `RUN_FIELDS` gives it)
all follow it.

- `night_data(snapshot, previous, ...)`: an earlier nightly's data, from its snapshot (classified
  here, once, and diffed against the nightly before it with the rows of both);
- `newest_data(night, ...)`: the newest nightly's data, from its night: nothing is classified or
  diffed again;
- `night_script(data)` / `read_night_data(path)`: the data file, `triagebotNight({...});`, kept
  in a site's folder: the site's compare view loads it from disk, and a later build reads it back
  instead of the snapshot (`analysis.history`), while a hash of the snapshot file (`source`,
  `fingerprint`) is unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, get_type_hints

from pydantic import Field, ValidationError

from triagebot.analysis.breaks import KEPT_BREAK_REASONS, top_break_reasons
from triagebot.analysis.diff import diff
from triagebot.analysis.effects import classify
from triagebot.analysis.ladder import recompile_run
from triagebot.analysis.night_analysis import summarise
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

# 5: the wrong results at the default config, for their issue (`NightSummary.baseline_wrong`);
# what the ladder said of each pair it climbed, for the rotation (`NightSummary.ladder`); each
# model's baseline compile seconds, for its own noise (`NightSummary.compile_seconds`)
# 6: the trend and crash signatures of real models alone, a sentinel in none (`effects.real_rows`).
FORMAT = 6


def _recompiles(result: ModelResult, config: str) -> int | None:
    """Frames recompiled when `result`'s model was called again on a second shape under `config`
    (None: no second call was made, or it crashed)."""
    run = recompile_run(result, config)
    check = run.recompile if run is not None else None
    return check.recompiles if check is not None and check.status == "ok" else None


@dataclass(frozen=True)
class RunField:
    """How one field of `Run` is read from a run and shown on a model page, declared beside it.

    `shown`: "status", the run's status (a badge, "no run" when there is none); "count", a number
    a run has only while it runs (a run that starts or stops running gains or loses it, and its
    status says so); "signature", the crash's signature, kept once per nightly
    (`NightData.signatures`) and shown as the status's title and in the page's list of errors.
    `heading`: its column on a model page (None: none of its own); `optional`: a column only on
    the pages of models some nightly recorded it for. `read`: its value from a model's result
    under a config that ran (None: the outcome's field of the same name)."""

    shown: Literal["status", "count", "signature"] = "count"
    heading: str | None = None
    optional: bool = False
    read: Callable[[ModelResult, str], Any] | None = None
    name: str = ""  # the field's name in `Run`, filled in by `RUN_FIELDS`

    def value(self, result: ModelResult, config: str) -> Any:
        if self.read is not None:
            return self.read(result, config)
        return getattr(result.outcomes[config], self.name)


class Run(NamedTuple):
    """One (model, config) run in compact form, one field per fact a model page's history shows:
    a JSON array on disk, in this order. A field added here is read, compared, stored and shown
    by what its `RunField` says (and `FORMAT` moves, so that older data files are made again)."""

    status: Annotated[Status, RunField("status", "Status")]
    graphs: Annotated[int | None, RunField("count", "Graphs")] = None
    ops: Annotated[int | None, RunField("count", "Ops")] = None
    signature: Annotated[int | None, RunField("signature")] = None  # index into `NightData.signatures`
    # frames a second input shape recompiled (None: no second call)
    recompiles: Annotated[int | None, RunField("count", "Recompiles", optional=True, read=_recompiles)] = None


def declared_fields(record: Any) -> tuple[RunField, ...]:
    """The `RunField` of each field of `record` (a NamedTuple), in order, named; a field declared
    without exactly one is a mistake in the code, said when the module is imported."""
    hints = get_type_hints(record, include_extras=True)
    fields = []
    for name in record._fields:
        declared = [meta for meta in getattr(hints[name], "__metadata__", ()) if isinstance(meta, RunField)]
        if len(declared) != 1:
            raise TypeError(f"{record.__name__}.{name} needs one RunField: Annotated[type, RunField(...)]")
        fields.append(replace(declared[0], name=name))
    return tuple(fields)


RUN_FIELDS = declared_fields(Run)
"""Every field of `Run`, in its order, with how it is read and shown."""
_SIGNATURE_FIELDS = [index for index, field in enumerate(RUN_FIELDS) if field.shown == "signature"]


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

    format: Literal[6] = FORMAT
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

    def values(self, run: Run) -> tuple[Any, ...]:
        """`run`'s fields as a model page shows them: its signature as text."""
        values = list(run)
        for index in _SIGNATURE_FIELDS:
            if values[index] is not None:
                values[index] = self.signatures[values[index]]
        return tuple(values)


def fingerprint(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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
        if config not in result.outcomes:
            return None
        values = [field.value(result, config) for field in RUN_FIELDS]
        for index in _SIGNATURE_FIELDS:  # kept once per nightly (`NightData.values` reads them back)
            values[index] = signatures.setdefault(values[index], len(signatures)) if values[index] else None
        return Run(*values)

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

# Where a site's folder keeps one data file per stored nightly: the site's compare view loads
# them, and a later read of the history (`analysis.history`) reads them back, whatever their name.
DATA_FOLDER = "data/nights"
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
