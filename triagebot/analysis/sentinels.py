"""Whether each sentinel of a night behaved as built (`behaved_as_built`).

A sentinel declares what it is built to do (`ModelSpec.built_to`: at baseline, its run's status
or its outputs' verdict; under a flag, the flag's effect), and the snapshot carries it, so this
is said torch-free. A sentinel that stops behaving as built is news: the bot's own machinery, or
torch, changed. An expectation the night could not judge (its config not run, or its outputs
not compared) is left out; a sentinel with none left is not counted.
"""

from __future__ import annotations

from collections.abc import Sequence

from triagebot.analysis.effects import NOT_JUDGED
from triagebot.results import (
    BASELINE,
    Effect,
    ModelEffect,
    ModelResult,
    Outcome,
    SentinelBehaviour,
    SentinelMiss,
)

# Outcomes only a comparison of outputs with eager's can show.
_COMPARED = frozenset({Effect.wrong_result.value, *NOT_JUDGED})


def baseline_outcome(run: Outcome) -> str:
    """What a baseline run did, in `ModelSpec.built_to`'s words: "wrong_result" or an accuracy
    verdict not judged ("nondeterministic"), else its status."""
    if run.mismatched:
        return Effect.wrong_result.value
    if run.accuracy is not None and run.accuracy.verdict in NOT_JUDGED:
        return run.accuracy.verdict.value
    return run.status.value


def _outcome(result: ModelResult, config: str, rows: dict[tuple[str, str], ModelEffect]) -> str | None:
    """What `result` did under `config` (None: not run tonight)."""
    if config == BASELINE:
        run = result.outcomes.get(BASELINE)
        return baseline_outcome(run) if run is not None else None
    row = rows.get((result.model, config))
    return row.effect.value if row is not None else None


def _judged(result: ModelResult, config: str, built: str) -> bool:
    """Whether the night can tell `built` under `config`: it ran it, and compared its outputs
    where only that shows it."""
    run = result.outcomes.get(config)
    return run is not None and (built not in _COMPARED or run.accuracy is not None)


def behaved_as_built(results: Sequence[ModelResult], rows: Sequence[ModelEffect]) -> SentinelBehaviour:
    """Of the sentinels among `results` whose `built_to` the night could judge, those that
    behaved as built, and every config where one did not (`rows`: the night's `classify`)."""
    by_pair = {(row.model, row.flag): row for row in rows}
    judged: list[str] = []
    misses: list[SentinelMiss] = []
    for result in results:
        if result.spec is None or not result.spec.sentinel:
            continue
        expected = {
            config: built for config, built in result.spec.built_to.items() if _judged(result, config, built)
        }
        if not expected:
            continue
        judged.append(result.model)
        for config, built in expected.items():
            got = _outcome(result, config, by_pair)
            if got != built:
                misses.append(SentinelMiss(model=result.model, config=config, built=built, got=got or "none"))
    return SentinelBehaviour(judged=judged, misses=misses)
