"""The backend ladder: after the counting sweep, a bounded set of (model, config) pairs climbs the
real compiler stack, one rung at a time (`climb` runs it).

PyTorch's troubleshooting guide localises a `torch.compile` failure by walking the backends: a
failure with the counting backend (which runs Dynamo's graphs as they are) is Dynamo's; one that
appears first under `aot_eager` is AOTAutograd's; first under `inductor`, Inductor's. The rungs,
in order:

1. `counting` (when the recompile check runs on the ladder's selection rather than on every run):
   the sweep's own backend again, with the compiled model called on a second input shape.
2. the backends (`[sweep] backends`; default `aot_eager` and `inductor` on CUDA, `aot_eager` on
   the CPU), each behind the graph counter, with outputs compared with eager's.

A pair climbs until a rung fails (a crash, a hang, a death, or outputs beyond tolerance) and no
further. Which pairs climb is the caller's choice (`Ladder.choose`, computed from the sweep's
results: see `triagebot.analysis.ladder_pairs`); the engine only runs them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from triagebot.results import BASELINE, COUNTING_BACKEND, ModelResult, Outcome, Status

DEFAULT_BACKENDS: dict[str, list[str]] = {"cuda": ["aot_eager", "inductor"], "cpu": ["aot_eager"]}

Pairs = list[tuple[str, str]]


def default_backends(device: str) -> list[str]:
    """The backends the ladder climbs when `[sweep] backends` is not set."""
    return list(DEFAULT_BACKENDS.get(device, DEFAULT_BACKENDS["cpu"]))


def bounded(pairs: Pairs, limit: int | None) -> Pairs:
    """The first `limit` of `pairs` (in priority order), never keeping a model's baseline pair
    at the end without the flag pair that follows it: the one is climbed to compare the other."""
    if limit is None or len(pairs) <= limit:
        return list(pairs)
    kept = list(pairs[:limit])
    (last_model, last_config), (next_model, next_config) = kept[-1], pairs[limit]
    if last_config == BASELINE and next_model == last_model and next_config != BASELINE:
        kept.pop()
    return kept


def failed(outcome: Outcome) -> bool:
    """A rung the pair does not climb past: no result, or outputs beyond tolerance."""
    return outcome.status != Status.ok or outcome.mismatched


@dataclass
class Ladder:
    """What the ladder stage of a sweep does.

    `backends`: the backends to climb, in order (None: `default_backends` of the sweep's device;
    empty: none). `recompiles`: climb the `counting` rung first, where the recompile check runs.
    `choose(results, flags)`: the (model, config) pairs to climb, from the counting sweep's
    results (the models of this shard only), at most `max_pairs` of them (said in the progress).
    """

    choose: Callable[[list[ModelResult], dict[str, dict[str, Any]]], Pairs]
    backends: list[str] | None = None
    recompiles: bool = False
    max_pairs: int | None = None

    def rungs(self, device: str) -> list[str]:
        backends = default_backends(device) if self.backends is None else list(self.backends)
        return [COUNTING_BACKEND] * self.recompiles + backends
