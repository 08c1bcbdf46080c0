"""The backend ladder: after the counting sweep, a bounded set of (model, config) pairs climbs the
real compiler stack, one rung at a time (`climb` runs it; this module decides what climbs).

PyTorch's troubleshooting guide localises a `torch.compile` failure by walking the backends: a
failure with the counting backend (which runs Dynamo's graphs as they are) is Dynamo's; one that
appears first under `aot_eager` is AOTAutograd's; first under `inductor`, Inductor's. The rungs,
in order:

1. `counting` (when the recompile check runs on the ladder's selection rather than on every run):
   the sweep's own backend again, with the compiled model called on a second input shape. A pair
   whose sweep run did not run (a crash) has no second call to make and starts above it.
2. the backends (`[sweep] backends`; by default `aot_eager` and `inductor` on CUDA; on the CPU
   `aot_eager`, and `inductor` when a C++ compiler is found for the failures' representatives
   (where each crash lives) and for the rotation's pairs, the models a flag changes
   (`Ladder.rotation`): Inductor compiles C++ there, too slow for every pair every night, so
   they take turns, oldest evidence first, within a window of nightlies), each behind the graph
   counter, with outputs compared with eager's and the compiled model's warm calls timed.
3. the backward rung (`aot_eager+backward`, last by default): the model in train mode, forward
   and `loss.backward()` under `aot_eager`, its gradients compared with eager's. A flag that
   breaks only the backward pass fails here, on the ladder's pairs and nowhere else.

A pair climbs until a rung fails (a crash, a hang, a death, or outputs beyond tolerance) and no
further, except a failure's representative (a pair whose sweep run crashed or gave a wrong
result), which climbs every rung: where it fails is what it climbs for. Which pairs climb is
the caller's choice (`Ladder.choose`, computed from the sweep's results, in order of priority:
see `triagebot.analysis.ladder_pairs`). Two bounds cut it, each per worker: `max_pairs` pairs,
and `max_seconds` of recorded run seconds, each rung's cost estimated from the model's recorded
seconds in the sweep (`Rung.cost`). Every pair a bound cuts is an `UnreachedPair`: the snapshot
says which were not checked.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from triagebot.results import (
    BACKWARD_RUNG,
    BASELINE,
    COUNTING_BACKEND,
    RUNGS,
    ModelResult,
    Outcome,
    RunRecord,
    Status,
    UnreachedPair,
    default_rungs,
    failures_only,
    rotated,
)

Pairs = list[tuple[str, str]]
Pair = tuple[str, str]


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


def is_failure(counted: Outcome | None) -> bool:
    """A pair whose run in the sweep crashed or gave a wrong result: a failure's representative
    when the ladder chose it."""
    return counted is not None and counted.suspect


@dataclass(frozen=True)
class Rungs:
    """The ladder's rungs in order (the stream header's `ladder`), those only the failures'
    representatives climb, and of those the ones the rotation's pairs climb too."""

    order: list[str]
    failures_only: frozenset[str] = frozenset()
    rotated: frozenset[str] = frozenset()

    def of(self, counted: Outcome | None, rotating: bool = False) -> list[str]:
        """The rungs a pair climbs, from its counting run in the sweep (None: none recorded);
        `rotating`: the pair is one of the rotation's (a model a flag changes)."""
        ran = counted is None or counted.ran
        failure = is_failure(counted)
        return [
            rung
            for rung in self.order
            if (rung != COUNTING_BACKEND or ran)
            and (rung not in self.failures_only or failure or (rotating and rung in self.rotated))
        ]


@dataclass
class Ladder:
    """What the ladder stage of a sweep does.

    `backends`: the backends to climb, in order (None: the defaults of the sweep's device; empty:
    none). `recompiles`: climb the `counting` rung first, where the recompile check runs.
    `choose(results, flags)`: the (model, config) pairs to climb, from the counting sweep's
    results (the models of this shard only), in order of priority; at most `max_pairs` of them
    and `max_seconds` of recorded run seconds, each per worker (`pairs`, `budget`), climb. `rotation(results,
    flags)`: the chosen pairs that climb the rungs kept for failures too (`Rungs.rotated`).
    """

    choose: Callable[[list[ModelResult], dict[str, dict[str, Any]]], Pairs]
    backends: list[str] | None = None
    recompiles: bool = False
    max_pairs: int | None = None
    max_seconds: float | None = None
    rotation: Callable[[list[ModelResult], dict[str, dict[str, Any]]], Collection[Pair]] | None = None

    def pairs(self, workers: int = 1) -> int | None:
        """The pairs that may climb with `workers` at once."""
        return None if self.max_pairs is None else self.max_pairs * max(1, workers)

    def budget(self, workers: int = 1) -> float | None:
        """The recorded run seconds the ladder may spend with `workers` at once: its wall stays
        the same on a runner of any size, and a bigger one climbs more pairs."""
        return None if self.max_seconds is None else self.max_seconds * max(1, workers)

    def rungs(self, device: str, compiler: bool = True) -> Rungs:
        """The rungs on `device`; `compiler`: whether a C++ compiler was found (Inductor's on the CPU)."""
        counting = [COUNTING_BACKEND] * self.recompiles
        if self.backends is not None:
            return Rungs(counting + list(self.backends))
        only = failures_only(device)
        order = [b for b in default_rungs() if b not in only or compiler]
        return Rungs(counting + order, only, rotated(device))


def estimate(seconds: float, rung: str, scale: Mapping[str, float] | None = None) -> float:
    """A rung's run seconds, from the model's longest run in the sweep; `scale`: what this night's
    rungs took over their estimates so far (`calibration`), by rung."""
    known = RUNGS.get(rung)  # a backend not in the table costs what the dearest rung does
    cost = known.cost if known else max(each.cost for each in RUNGS.values())
    return max(seconds * cost, known.floor if known else 0.0) * (scale or {}).get(rung, 1.0)


def calibration(
    climbed: Mapping[tuple[str, str, str], RunRecord], seconds: Mapping[str, float]
) -> dict[str, float]:
    """Per rung, the seconds its runs that ran to the end took tonight over their estimates: the
    estimates are a cautious table for any machine, and a warm compiler cache or a fast one
    makes a rung cost a fraction of it (Inductor's C++ on the smoke night: 27 s of an estimated
    113). Bounded to [1/10, 10], so that one odd run cannot make a rung free or unaffordable."""
    spent: dict[str, list[float]] = {}
    for (model, _, rung), record in climbed.items():
        if record.outcome.status == Status.ok and model in seconds:
            totals = spent.setdefault(rung, [0.0, 0.0])
            totals[0] += record.outcome.seconds
            totals[1] += estimate(seconds[model], rung)
    return {rung: min(10.0, max(0.1, took / guessed)) for rung, (took, guessed) in spent.items() if guessed}


@dataclass
class Climbs:
    """What climbs: each admitted pair's rungs still to run (in priority order), the pairs that
    climb past a failure (the failures' representatives), and the pairs a bound cut."""

    todo: dict[Pair, list[str]] = field(default_factory=dict)
    through: set[Pair] = field(default_factory=set)
    unreached: list[UnreachedPair] = field(default_factory=list)

    @property
    def runs(self) -> int:
        return sum(len(rungs) for rungs in self.todo.values())


def to_climb(rungs: list[str], climbed: Mapping[str, RunRecord], through: bool = False) -> list[str]:
    """The rungs of `rungs` without a record in `climbed` (rung -> record); none past a failure,
    unless the pair climbs `through` them."""
    todo = []
    for rung in rungs:
        done = climbed.get(rung)
        if done is not None and failed(done.outcome) and not through:
            break
        if done is None:
            todo.append(rung)
    return todo


def plan_climbs(
    chosen: Pairs,
    ladder: Ladder,
    counted: Mapping[Pair, Outcome | None],
    rungs: Rungs,
    seconds: Mapping[str, float],
    climbed: Mapping[tuple[str, str, str], RunRecord],
    reserved: float = 0.0,
    scale: Mapping[str, float] | None = None,
    rotation: Collection[Pair] = (),
    workers: int = 1,
) -> Climbs:
    """Admit `chosen` pairs (priority order) within the ladder's bounds. `counted`: each pair's
    run in the sweep; `seconds`: each model's longest run in the sweep; `climbed`: the ladder's
    records already in the stream (model, config, rung), which are kept and whose seconds are
    spent, as are the `reserved` seconds (the confirmations its failures owe); `scale`: each
    rung's estimates scaled by what its runs took tonight (`calibration`); `rotation`: the
    pairs that climb the rotated rungs too; `workers`: the pool's (`Ladder.budget`). A model's
    consecutive pairs (its baseline pair and the flag pair it is compared
    with) are admitted together, or else a failure's representative alone (where it fails is
    worth more than the comparison), or not at all; either way without the backward rung when
    only that does not fit (`admissions`); a later, cheaper model may still fit."""
    pair_rungs = {pair: rungs.of(counted.get(pair), pair in rotation) for pair in chosen}
    climbs = Climbs(through={pair for pair in chosen if is_failure(counted.get(pair))})
    kept = bounded(chosen, ladder.pairs(workers))
    for model, config in chosen[len(kept) :]:
        climbs.unreached.append(_unreached(model, config, pair_rungs[(model, config)], "pairs"))
    budget = ladder.budget(workers)
    spent = reserved + sum(record.outcome.seconds for record in climbed.values())
    by_pair: dict[Pair, dict[str, RunRecord]] = {}
    for (model, config, rung), record in climbed.items():
        by_pair.setdefault((model, config), {})[rung] = record
    for model, unit in groupby(kept, key=lambda pair: pair[0]):
        todo = {
            pair: to_climb(pair_rungs[pair], by_pair.get(pair, {}), pair in climbs.through) for pair in unit
        }
        for admitted in admissions(todo, climbs.through):
            guess = seconds.get(model, 0.0)
            cost = sum(estimate(guess, rung, scale) for rungs in admitted.values() for rung in rungs)
            if admitted and (budget is None or spent + cost <= budget):
                spent += cost
                climbs.todo.update(admitted)
                break
        for (m, c), rungs in todo.items():
            left = [rung for rung in rungs if rung not in climbs.todo.get((m, c), ())]
            if left:
                climbs.unreached.append(_unreached(m, c, left, "seconds"))
    return climbs


def admissions(todo: Mapping[Pair, list[str]], through: set[Pair]) -> Iterator[dict[Pair, list[str]]]:
    """What of a model's pairs to admit, the most first: every pair with every rung; then without
    the backward rung, the ladder's last and costliest (its forward rungs say where a failure lives
    and whether outputs match: worth more than the training check); then the failures'
    representatives alone, with and without it."""
    left = {pair: rungs for pair, rungs in todo.items() if rungs}  # a pair climbed already is done
    for pairs in (left, {pair: rungs for pair, rungs in left.items() if pair in through}):
        yield pairs
        forward = {pair: [rung for rung in rungs if rung != BACKWARD_RUNG] for pair, rungs in pairs.items()}
        if forward != pairs:
            yield {pair: rungs for pair, rungs in forward.items() if rungs}


def _unreached(model: str, config: str, rungs: Iterable[str], bound: str) -> UnreachedPair:
    return UnreachedPair(model=model, config=config, rungs=list(rungs), bound=bound)
