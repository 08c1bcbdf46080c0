"""The backend ladder as a rotation: each (model, config) pair's latest evidence per rung over
the stored nights, which pairs climb first tonight, and how much of what a flag changes the
evidence covers.

A CPU night cannot climb Inductor for every model a flag changes, but the flag changes the same
models night after night and the store keeps every night: each night climbs the pairs whose
evidence is oldest, so that every changed pair is checked within a window of nightlies.

- `ladder_points(snapshot)`: what one night's ladder said of each pair it climbed
  (`NightSummary.ladder`, kept in the compact history).
- `latest_evidence(nights)`: pair -> rung -> its latest `Evidence` (word, night, build, age).
- `rotation_pairs(results, flags)`: the pairs the rotation covers: every model whose graphs a
  flag changes (fewer, more, a crash fixed, a crash), under the flag and at baseline.
- `staleness(pair, rungs, evidence, graphs)`: a pair's place in tonight's order: a failure seen
  on an older build first (rechecked before anything else: it is what a verdict waits on), then
  a pair never climbed, then the oldest evidence, and among equals a pair whose graphs changed
  since; `by_staleness(evidence, rungs)` orders a flag's changed models by it
  (`ladder_pairs`' `order`).
- `coverage(flag, rows, evidence, rungs, window)`: per rung, how many of the models a flag
  changes tonight it has checked within the window, how many fail there, and the build of the
  oldest evidence carried from an earlier night (`FlagFigures.coverage`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from triagebot.analysis.effects import model_effect
from triagebot.analysis.ladder import CHANGED, FAILED_WORDS, change_order, rung_word
from triagebot.results import (
    BASELINE,
    Effect,
    LadderPoint,
    ModelEffect,
    ModelResult,
    NightSummary,
    RungCoverage,
    Snapshot,
)

Pair = tuple[str, str]

# Effects whose pairs the rotation covers: the flag changed what Dynamo did with the model.
ROTATED = CHANGED | {Effect.crashes}


class Evidence(NamedTuple):
    """A rung's latest word on a pair, and the night it was measured on: its key, its torch
    build (`torch_version`), and its age in nightlies (0: the newest night read)."""

    word: str
    key: str
    build: str
    age: int
    graphs: int | None = None  # the pair's counting graphs that night

    @property
    def failed(self) -> bool:
        return self.word in FAILED_WORDS


Evidences = dict[Pair, dict[str, Evidence]]
"""(model, config) -> rung -> its latest evidence."""


def ladder_points(snapshot: Snapshot) -> dict[str, dict[str, LadderPoint]]:
    """config -> model -> what the night's ladder said of the pair (`LadderPoint`), for every pair
    it climbed."""
    points: dict[str, dict[str, LadderPoint]] = {}
    for result in snapshot.results:
        for config, climbed in result.ladder.items():
            reruns = result.ladder_confirmations.get(config, {})
            words = {rung: rung_word(outcome, reruns.get(rung, [])) for rung, outcome in climbed.items()}
            swept = result.outcomes.get(config)
            graphs = swept.graphs if swept is not None and swept.ran else None
            rungs = {rung: word for rung, word in words.items() if word is not None}
            if rungs:
                points.setdefault(config, {})[result.model] = LadderPoint(rungs=rungs, graphs=graphs)
    return points


def latest_evidence(nights: Sequence[Snapshot | NightSummary]) -> Evidences:
    """Each pair's latest evidence per rung over `nights` (oldest first): a newer night's word
    replaces an older one's."""
    evidence: Evidences = {}
    for age, night in zip(range(len(nights) - 1, -1, -1), nights, strict=True):
        points = night.ladder if isinstance(night, NightSummary) else ladder_points(night)
        build = night.environment.torch_version
        for config, models in points.items():
            for model, point in models.items():
                mine = evidence.setdefault((model, config), {})
                for rung, word in point.rungs.items():
                    mine[rung] = Evidence(word, night.key, build, age, point.graphs)
    return evidence


def rotation_pairs(results: Iterable[ModelResult], flags: Mapping[str, Any]) -> set[Pair]:
    """The pairs the rotation covers: every model a flag changes (`ROTATED`), under the flag
    and at baseline."""
    pairs: set[Pair] = set()
    for result in results:
        for flag in flags:
            row = model_effect(result, flag)
            if row is not None and row.effect in ROTATED:
                pairs.update({(result.model, BASELINE), (result.model, flag)})
    return pairs


def staleness(
    pair: Pair, rungs: Sequence[str], evidence: Evidences, graphs: int | None = None, build: str | None = None
) -> tuple[int, int, bool]:
    """A pair's sort key in tonight's rotation (smallest first): 0, a failure seen on a build
    other than `build` (tonight's; None: every stored night's build is older); 1, a rung of
    `rungs` never climbed; else 2; then the oldest evidence first; then, among equals, a pair
    whose counting graphs (tonight's: `graphs`) changed since."""
    mine = evidence.get(pair, {})
    seen = [mine[rung] for rung in rungs if rung in mine]
    oldest = max((each.age for each in seen), default=0)
    unchanged = all(each.graphs == graphs for each in seen)
    if any(each.failed and each.build != build for each in seen):
        return (0, -oldest, unchanged)
    if len(seen) < len(rungs):
        return (1, 0, False)
    return (2, -oldest, unchanged)


def by_staleness(
    evidence: Evidences, rungs: Sequence[str], build: str | None = None
) -> Callable[[ModelEffect], tuple[Any, ...]]:
    """The sort key of a changed model in tonight's rotation: the staler of its flag pair and
    its baseline pair (`staleness`, each against its graphs tonight), then the largest change."""

    def key(row: ModelEffect) -> tuple[Any, ...]:
        flag = staleness((row.model, row.flag), rungs, evidence, row.flag_graphs, build)
        base = staleness((row.model, BASELINE), rungs, evidence, row.baseline_graphs, build)
        return (min(flag, base), *change_order(row))

    return key


def coverage(
    flag: str, rows: Iterable[ModelEffect], evidence: Evidences, rungs: Sequence[str], window: int
) -> list[RungCoverage]:
    """Per rung of `rungs`, how much of what `flag` changes tonight (`CHANGED`) it has checked
    under the flag within the last `window` nightlies (`evidence`: read with tonight last, so
    that age 0 is tonight); nothing when the flag changes no model."""
    changed = [row.model for row in rows if row.flag == flag and row.effect in CHANGED]
    if not changed:
        return []
    found = []
    for rung in rungs:
        recent = {
            model: mine[rung]
            for model in changed
            if rung in (mine := evidence.get((model, flag), {})) and mine[rung].age < window
        }
        failing = [each for model, each in recent.items() if _flags_failure(evidence, model, rung, each)]
        oldest = max(recent.values(), key=lambda each: each.age, default=None)
        found.append(
            RungCoverage(
                rung=rung,
                window=window,
                changed=len(changed),
                checked=len(recent),
                failing=len(failing),
                failing_earlier=sum(each.age > 0 for each in failing),
                carried=sum(each.age > 0 for each in recent.values()),
                oldest=oldest.build if oldest is not None and oldest.age > 0 else None,
            )
        )
    return found


def _flags_failure(evidence: Evidences, model: str, rung: str, under_flag: Evidence) -> bool:
    """Whether the flag's evidence on a rung is a failure of the flag's: not one the model's
    baseline met on the same rung as well (like with like)."""
    baseline = evidence.get((model, BASELINE), {}).get(rung)
    return under_flag.failed and not (baseline is not None and baseline.failed)
