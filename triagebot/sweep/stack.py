"""A sweep's compiler-stack options from `[sweep]`: what every run checks, and the backend ladder.

Glue, like `command.py`: it reads the config and hands the ladder the analysis's choice of
pairs (`triagebot.analysis.ladder_pairs`), so that the engine itself stays free of both.

- `accuracy = true`: every compiled call's outputs are compared with eager's.
- `recompiles`: `"selection"` climbs a `counting` rung first on the ladder's pairs, where the
  compiled model is called again on a second input shape; `"all"` makes that second call in
  every run of the sweep; `"none"` nowhere.
- `backends` and `ladder_sample`: the ladder's backends (None: by device) and how many more
  models, a seeded stratified sample of the whole selection (every shard draws the same one),
  climb it at baseline beside those a flag changes; `ladder_max_pairs` bounds the pairs that
  climb, in `ladder_pairs`' order of priority.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from triagebot.analysis import ladder_pairs
from triagebot.config import SweepSettings
from triagebot.corpus.sampling import sample
from triagebot.results import ModelSpec
from triagebot.sweep.ladder import Ladder


def stack_options(settings: SweepSettings, specs: Sequence[ModelSpec], seed: int = 0) -> dict[str, Any]:
    """`run_sweep`'s `checks` and `ladder` for `settings`; `specs`: the whole selection, every
    shard of it (the ladder's sample is drawn from it); `seed`: the sample's seed."""
    checks = {"accuracy": settings.accuracy, "recompiles": settings.recompiles == "all"}
    climb_counting = settings.recompiles == "selection"
    if settings.backends == [] and not climb_counting:
        return {"checks": checks, "ladder": None}
    sampled: list[str] = []
    if settings.ladder_sample and specs:
        drawn, _ = sample(specs, settings.ladder_sample, seed=seed)
        sampled = [spec.model for spec in drawn]
    ladder = Ladder(
        choose=functools.partial(ladder_pairs, sample=tuple(sampled)),
        backends=settings.backends,
        recompiles=climb_counting,
        max_pairs=settings.ladder_max_pairs,
    )
    return {"checks": checks, "ladder": ladder}
