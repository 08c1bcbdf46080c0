"""What a flag does to the compiled model's time per call, on the ladder's compiled rungs.

The sweep's own runs time nothing per call (the counting backend runs Dynamo's graphs as they
are, and the hot path stays as it was); the ladder's forward rungs (`aot_eager`, `inductor`)
time a few warm calls of each pair that climbed (`Outcome.call_seconds`). `call_time(snapshot,
flag, rows)` pairs them: each model that ran a compiled forward rung at baseline and under the
flag, on the highest such rung both ran, and the flag's ratio to the baseline's.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from triagebot.results import (
    BASELINE,
    COUNTING_BACKEND,
    CallPair,
    CallTime,
    Effect,
    ModelEffect,
    ModelResult,
    Snapshot,
    rung_backend,
)


def compiled_forward_rungs(order: Sequence[str]) -> list[str]:
    """The ladder's rungs that compile a forward pass and time its calls: not the counting
    rung (the sweep's backend), not a backward rung."""
    return [rung for rung in order if rung != COUNTING_BACKEND and not rung_backend(rung)[1]]


def call_pair(result: ModelResult, flag: str, rungs: Sequence[str], effect: ModelEffect) -> CallPair | None:
    """`result`'s seconds per call at baseline and under `flag` on the highest of `rungs` both
    timed; None when no rung timed both."""
    for rung in reversed(rungs):
        base = result.ladder.get(BASELINE, {}).get(rung)
        flagged = result.ladder.get(flag, {}).get(rung)
        if base is None or flagged is None or not base.call_seconds or not flagged.call_seconds:
            continue
        return CallPair(
            model=result.model,
            rung=rung,
            helped=effect.effect == Effect.reduces_graphs,
            baseline_graphs=base.graphs,
            flag_graphs=flagged.graphs,
            baseline_seconds=base.call_seconds,
            flag_seconds=flagged.call_seconds,
        )
    return None


def timed_calls(snapshot: Snapshot) -> bool:
    """Whether any rung of the night's ladder timed its calls (a night older than the field did not)."""
    return any(
        outcome.call_seconds is not None
        for result in snapshot.results
        for rungs in result.ladder.values()
        for outcome in rungs.values()
    )


def call_time(snapshot: Snapshot, flag: str, rows: Sequence[ModelEffect]) -> CallTime | None:
    """The flag's time-per-call figures tonight (see `CallTime`); None for a night whose ladder
    timed no call (none, or one older than the figures): nothing to say, rather than "none"."""
    if not timed_calls(snapshot):
        return None
    rungs = compiled_forward_rungs(snapshot.ladder)
    effects = {row.model: row for row in rows if row.flag == flag}
    pairs = [
        pair
        for result in snapshot.results
        if result.model in effects and flag in result.ladder and result.model not in snapshot.sentinels
        if (pair := call_pair(result, flag, rungs, effects[result.model])) is not None
    ]
    pairs.sort(key=lambda pair: (-pair.ratio, pair.model))
    helped = [pair for pair in pairs if pair.helped]
    return CallTime(
        models=len(pairs),
        median=round(statistics.median(pair.ratio for pair in pairs), 3) if pairs else None,
        faster=sum(pair.change == "faster" for pair in pairs),
        slower=sum(pair.change == "slower" for pair in pairs),
        helped=len(helped),
        helped_faster=sum(pair.change == "faster" for pair in helped),
        helped_slower=sum(pair.change == "slower" for pair in helped),
        pairs=pairs,
    )
