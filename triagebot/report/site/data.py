"""The dashboard site's data: one model across every stored nightly, and the rows, cells and
spans its pages show.

The newest nightly is rendered from its `results.Night` (analysed once by `analysis.night`);
every stored nightly comes as its compact `analysis.compact.NightData` (`analysis.history`).
What the pages add is the store as a whole: a model's history night by night with what changed
(`model_histories`), the spans of nightlies in which nothing about it changed, the list of
models, and the change of the most common break reasons.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

from triagebot.analysis.breaks import SHOWN_BREAK_REASONS
from triagebot.analysis.compact import RUN_FIELDS, ModelNight, NightData, Run, RunField
from triagebot.report import links
from triagebot.results import BASELINE, BreakReasonCount, Night

# --- model histories: one model across every nightly, with the nightlies where something changed ---


class Difference(NamedTuple):
    what: str  # a config or flag name, or "corpus"
    field: str  # a field of `Run` (`RUN_FIELDS`), effect, or present
    old: Any
    new: Any


class ModelNightRow(NamedTuple):
    """One model on one nightly, with what changed since the nightly before (where it was swept)."""

    night: NightData
    row: ModelNight
    changes: list[Difference]


def _run_fields(night: NightData, run: Run | None) -> dict[str, Any]:
    """field name -> its value as shown (nothing for no run)."""
    return dict(zip(Run._fields, night.values(run), strict=True)) if run is not None else {}


def differences(
    old_night: NightData, old: ModelNight, new_night: NightData, new: ModelNight
) -> list[Difference]:
    """What differs for one model between two nightlies: per config its run, per flag its effect."""
    found = []
    old_runs = dict(zip(old_night.configs, old.runs, strict=True))
    for config, run in zip(new_night.configs, new.runs, strict=True):
        before, after = _run_fields(old_night, old_runs.get(config)), _run_fields(new_night, run)
        for field in RUN_FIELDS:
            old_value, new_value = before.get(field.name), after.get(field.name)
            if old_value == new_value:
                continue
            # A run that starts or stops running loses or gains its counts: the status says it.
            implied = field.shown == "count" and None in (old_value, new_value)
            if not (implied and before.get("status") != after.get("status")):
                found.append(Difference(config, field.name, old_value, new_value))
    old_effects = dict(zip(old_night.flags, old.effects, strict=True))
    for flag, effect in zip(new_night.flags, new.effects, strict=True):
        if old_effects.get(flag) != effect:
            found.append(Difference(flag, "effect", old_effects.get(flag), effect))
    return found


def _state(night: NightData, shape: tuple, row: ModelNight) -> tuple:
    """Everything `differences` compares, as one value: equal states have no difference."""
    runs = tuple(None if run is None else night.values(run) for run in row.runs)
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


# --- the rows of the model pages and of the list of models ---


class Cell(NamedTuple):
    """One config's run in a model page's row."""

    config: str
    values: dict[str, Any]  # field of `Run` -> its value as shown
    error: str | None  # the crash signature
    group: str | None  # its crash group's page and anchor, when the flag page lists one


class Span(NamedTuple):
    """Consecutive nightlies in which nothing about a model changed: one row of its page."""

    first: str
    last: str
    nights: int
    runs: list[Cell | None]  # per config of the page
    effects: list[str | None]  # per flag of the page
    changes: list[Difference]  # what changed at `first`, since the nightly before it


Groups = dict[tuple[str, str], str]
"""(flag, model) -> the page and anchor of the crash group the latest nightly lists it in."""


def model_spans(
    rows: list[ModelNightRow], configs: list[str], flags: list[str], groups: Groups
) -> list[Span]:
    """`rows` (one model, oldest first) cut where anything changed. Crash groups are linked from
    the latest nightly's row only: they are the groups the flag pages show."""
    spans: list[Span] = []
    for entry in rows:
        if spans and not entry.changes:
            spans[-1] = spans[-1]._replace(last=entry.night.key, nights=spans[-1].nights + 1)
            if entry is rows[-1]:
                spans[-1] = spans[-1]._replace(runs=run_cells(entry, configs, groups))
            continue
        night, row = entry.night, entry.row
        effects = dict(zip(night.flags, row.effects, strict=True))
        spans.append(
            Span(
                night.key,
                night.key,
                1,
                run_cells(entry, configs, groups if entry is rows[-1] else {}),
                [effect.value if (effect := effects.get(flag)) else None for flag in flags],
                entry.changes,
            )
        )
    return spans


def run_cells(entry: ModelNightRow, configs: list[str], groups: Groups) -> list[Cell | None]:
    night, row = entry.night, entry.row
    runs = dict(zip(night.configs, row.runs, strict=True))
    cells: list[Cell | None] = []
    for config in configs:
        run = runs.get(config)
        if run is None:
            cells.append(None)
            continue
        error = night.signature(run)
        group = groups.get((config, row.model)) if error else None
        cells.append(Cell(config, _run_fields(night, run), error, group))
    return cells


def history_columns(rows: list[ModelNightRow]) -> list[RunField]:
    """The fields of `Run` a model page shows a column of, in order: those with a heading, an
    optional one only when some nightly of `rows` recorded it."""

    def recorded(name: str) -> bool:
        return any(
            run is not None and getattr(run, name) is not None for entry in rows for run in entry.row.runs
        )

    return [
        field
        for field in RUN_FIELDS
        if field.heading is not None and (not field.optional or recorded(field.name))
    ]


class ModelRow(NamedTuple):
    """A model in the list of models: its last swept nightly's baseline and effects."""

    model: str
    stratum: str
    key: str
    status: str | None
    graphs: int | None
    ops: int | None
    effects: list[str | None]  # one per flag of the latest nightly


def model_row(model: str, entry: ModelNightRow, flags: list[str]) -> ModelRow:
    night, row = entry.night, entry.row
    baseline = dict(zip(night.configs, row.runs, strict=True)).get(BASELINE)
    effects = dict(zip(night.flags, row.effects, strict=True))
    return ModelRow(
        model,
        row.stratum,
        night.key,
        baseline.status.value if baseline else None,
        baseline.graphs if baseline else None,
        baseline.ops if baseline else None,
        [effect.value if (effect := effects.get(flag)) else None for flag in flags],
    )


def run_columns(rows: list[ModelNightRow], configs: list[str]) -> dict[str, dict[str, list[Any]]]:
    """field (each count of `Run`: graphs, ops, ...) -> config -> one value per nightly of `rows`
    (None: no run)."""
    fields = [field.name for field in RUN_FIELDS if field.shown == "count"]
    found: dict[str, dict[str, list[Any]]] = {field: {config: [] for config in configs} for field in fields}
    for entry in rows:
        where, runs = entry.night.config_index, entry.row.runs
        for config in configs:
            index = where.get(config)
            run = runs[index] if index is not None else None
            for field in fields:
                found[field][config].append(getattr(run, field) if run is not None else None)
    return found


def crash_group_links(night: Night) -> Groups:
    """(flag, model) -> the crash group (confirmed or flaky) its flag page lists the model in."""
    return {
        (flag, model): links.crash_group(flag, group.signature, group.confirmed)
        for flag, view in night.flags.items()
        for group in view.stats.crash_groups + view.stats.flaky_groups
        for model in group.models
    }
