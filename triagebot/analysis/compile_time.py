"""What a flag costs in compile time on one night, paired and honest about noise.

- `compile_ratios(snapshot, flag, rows)`: each model the flag could affect whose baseline and
  flag run both compiled, with the compile seconds of each (`Outcome.stage_seconds["compile"]`:
  Dynamo tracing with the counting backend and the first call, no Inductor compilation), from
  the same night, and those of the highest compiled rung of the backend ladder it climbed both
  under the flag (aot_eager or inductor: there, a backend's compilation too).
- `noise_floor(snapshot)`: the spread of the ratios of a fixed sample of baselines run twice the
  same night (`ModelResult.baseline_again`): the largest ratio, or its inverse, whichever is
  above 1. A flag's median ratio inside it is no measurable change. Sentinels are in neither
  the ratios nor the floor, unless no real model was timed (a night of sentinels alone): then
  both are theirs, and the figure says so (`CompileTime.sentinels_only`).
- `baseline_compile_seconds(snapshot)`: each real model's baseline compile seconds, kept in the
  compact history (`NightSummary.compile_seconds`), and `own_spread(seconds)`: a model's own
  noise from them, Tukey's fences on the interquartile range of its stored nightlies (the rule
  rustc-perf applies to its history, and PyTorch's HUD's multi-day baseline); a flag's compile
  seconds outside them is beyond the model's noise. Until a model has `HISTORY_NIGHTS` of them,
  it has no spread of its own, and the figures say how many.
- `compile_time(snapshot, flag, rows)`: the flag's `CompileTime`: the median ratio, the 10th to
  90th percentile, the models above the floor and those whose compile time rose most, and, with
  `history`, the models beyond their own spread.
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Mapping, Sequence

from triagebot.analysis.call_time import compiled_forward_rungs
from triagebot.results import (
    BASELINE,
    RATIO_EDGES,
    CompileRiser,
    CompileTime,
    Effect,
    ModelEffect,
    ModelResult,
    Outcome,
    Snapshot,
)

COMPILE_STAGE = "compile"
"""The stage whose seconds are a run's compile time: compiling and the first compiled call."""

RISERS = 5
"""How many of the largest rises a flag's figures name."""

_NOT_AFFECTABLE = (Effect.untestable, Effect.skipped)

HISTORY_NIGHTS = 5
"""The stored nightlies a model's baseline compile seconds need before their spread judges it:
fewer give no interquartile range worth the name."""

FENCE = 1.5
"""Tukey's fences: beyond the quartiles by this many interquartile ranges."""


def compile_seconds(outcome: Outcome | None) -> float | None:
    """A run's compile seconds, when it compiled and ran (None otherwise, or when not recorded)."""
    if outcome is None or not outcome.ran:
        return None
    seconds = outcome.stage_seconds.get(COMPILE_STAGE)
    return seconds if seconds else None


def compiled_rung_seconds(result: ModelResult, flag: str, rungs: Sequence[str]) -> dict[str, object]:
    """The highest of `rungs` (the ladder's compiled ones) that `result` compiled under `flag`,
    with its compile seconds there and at baseline (None where its baseline did not climb it),
    as `CompileRiser`'s fields; empty: it compiled none under the flag."""
    for rung in reversed(rungs):
        after = compile_seconds(result.ladder.get(flag, {}).get(rung))
        if after is not None:
            before = compile_seconds(result.ladder.get(BASELINE, {}).get(rung))
            return {"rung": rung, "rung_baseline_seconds": before, "rung_flag_seconds": after}
    return {}


def compile_ratios(
    snapshot: Snapshot, flag: str, rows: Sequence[ModelEffect], *, sentinels: bool = False
) -> list[CompileRiser]:
    """Each real model (the sentinels alone with `sentinels`) the flag could affect whose baseline
    and flag run both compiled, with both runs' compile seconds (and its highest compiled
    rung's), in the snapshot's order."""
    affectable = {row.model for row in rows if row.flag == flag and row.effect not in _NOT_AFFECTABLE}
    affectable = {model for model in affectable if (model in snapshot.sentinels) == sentinels}
    rungs = compiled_forward_rungs(snapshot.ladder)
    pairs = []
    for result in snapshot.results:
        if result.model not in affectable:
            continue
        before = compile_seconds(result.outcomes.get(BASELINE))
        after = compile_seconds(result.outcomes.get(flag))
        if before is not None and after is not None:
            rung = compiled_rung_seconds(result, flag, rungs)
            pairs.append(
                CompileRiser(model=result.model, baseline_seconds=before, flag_seconds=after, **rung)
            )
    return pairs


def baseline_compile_seconds(snapshot: Snapshot) -> dict[str, float]:
    """Each real model's baseline compile seconds on `snapshot` (those that compiled)."""
    found = {}
    for result in snapshot.results:
        seconds = compile_seconds(result.outcomes.get(BASELINE))
        if seconds is not None and result.model not in snapshot.sentinels:
            found[result.model] = round(seconds, 4)
    return found


def own_spread(seconds: Sequence[float]) -> tuple[float, float] | None:
    """A model's own noise from its baseline compile seconds over the stored nightlies: the
    seconds below and above which a compile is beyond it (Tukey's fences); None before
    `HISTORY_NIGHTS` of them."""
    if len(seconds) < HISTORY_NIGHTS:
        return None
    ordered = sorted(seconds)
    low, high = _percentile(ordered, 0.25), _percentile(ordered, 0.75)
    return low - FENCE * (high - low), high + FENCE * (high - low)


def noise_floor(snapshot: Snapshot, *, sentinels: bool = False) -> tuple[float | None, int]:
    """The night's noise floor and the models it was measured on: over the baselines run twice,
    the largest of each second-to-first compile ratio and its inverse; over the real models
    alone (a sentinel compiles in a tenth of a real model's seconds, its ratios the widest), or
    the sentinels alone with `sentinels`. None: none ran twice."""
    spreads = []
    for result in snapshot.results:
        if (result.model in snapshot.sentinels) != sentinels:
            continue
        first = compile_seconds(result.outcomes.get(BASELINE))
        again = compile_seconds(result.baseline_again)
        if first is not None and again is not None:
            ratio = again / first
            spreads.append(max(ratio, 1 / ratio))
    return (round(max(spreads), 3) if spreads else None), len(spreads)


def _percentile(ordered: Sequence[float], fraction: float) -> float:
    """The `fraction` quantile of sorted values, interpolated between the nearest two."""
    position = fraction * (len(ordered) - 1)
    below = int(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def ratio_bins(ratios: Sequence[float]) -> list[int]:
    """How many ratios fall in each bin of `RATIO_EDGES` (the distribution a flag's page charts)."""
    bins = [0] * (len(RATIO_EDGES) + 1)
    for ratio in ratios:
        bins[bisect.bisect_right(RATIO_EDGES, ratio)] += 1
    return bins


def compile_time(
    snapshot: Snapshot,
    flag: str,
    rows: Sequence[ModelEffect],
    *,
    blocks_above: float | None = None,
    history: Mapping[str, Sequence[float]] | None = None,
) -> CompileTime:
    """The flag's compile-time figures tonight; `blocks_above`: the median ratio beyond which
    (and beyond the noise floor) the flag is not ready ([tracker] compile_time_blocks);
    `history`: each model's baseline compile seconds over the stored nightlies."""
    pairs, sentinels_only = compile_ratios(snapshot, flag, rows), False
    if not pairs:  # a night of sentinels alone (their corpus): a figure of theirs, marked so
        sentinels_only = bool(pairs := compile_ratios(snapshot, flag, rows, sentinels=True))
    floor, sampled = noise_floor(snapshot, sentinels=sentinels_only)
    if not pairs:
        return CompileTime(models=0, noise_floor=floor, noise_models=sampled, blocks_above=blocks_above)
    ratios = sorted(pair.ratio for pair in pairs)
    judged = _against_history(pairs, history or {})
    rising = sorted((pair for pair in pairs if pair.ratio > 1), key=lambda pair: -pair.ratio)
    beyond = [pair for pair in rising if floor is not None and pair.ratio > floor]
    faster = [pair for pair in pairs if floor is not None and pair.ratio < 1 / floor]
    return CompileTime(
        models=len(pairs),
        median=round(statistics.median(ratios), 3),
        low=round(_percentile(ratios, 0.1), 3),
        high=round(_percentile(ratios, 0.9), 3),
        noise_floor=floor,
        noise_models=sampled,
        rose=len(beyond),
        fell=len(faster),
        risers=rising[:RISERS],
        bins=ratio_bins(ratios),
        blocks_above=blocks_above,
        sentinels_only=sentinels_only,
        **judged,
    )


def _against_history(pairs: Sequence[CompileRiser], history: Mapping[str, Sequence[float]]) -> dict[str, int]:
    """`CompileTime`'s history fields: each pair's flag compile seconds against its model's own
    spread (`own_spread`)."""
    spreads = {pair.model: own_spread(history.get(pair.model, ())) for pair in pairs}
    fenced = [(pair, fence) for pair in pairs if (fence := spreads[pair.model]) is not None]
    return {
        "history_models": len(fenced),
        "history_rose": sum(pair.flag_seconds > high for pair, (_, high) in fenced),
        "history_fell": sum(pair.flag_seconds < low for pair, (low, _) in fenced),
        "no_history": len(pairs) - len(fenced),
        "history_nights": HISTORY_NIGHTS,
    }
