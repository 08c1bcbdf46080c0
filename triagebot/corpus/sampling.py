"""Stratified random samples of the corpus: same seed, same sample, always.

Stratum sizes are proportional to the strata's shares of the candidates (largest remainder,
ties broken by stratum name), unless configured per stratum. Each stratum keeps its k models
of smallest rank, a model's rank being a hash of (seed, stratum, model name) (bottom-k, or
consistent, sampling). A model's rank depends on nothing but its own name, so the sample does
not depend on the order the catalog lists models in, nor on which other strata exist, and a
corpus that gains or loses one model (a new transformers release) changes at most one member
of that model's stratum, besides the stratum's size moving by one under proportional
allocation: nights of the same sample on neighbouring releases sweep the same models.

Samples drawn before bottom-k ranks (each stratum shuffled by its own `random.Random`) differ
from today's for the same seed. A stored snapshot keeps its drawn model list, so its nights
still load and compare; only a new draw of an old seed picks other models.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from triagebot.errors import SelectionError
from triagebot.results import BASELINE, CorpusSelection, ModelSpec, Snapshot


class SamplingError(SelectionError):
    """A sample that cannot be drawn (too few models, an unknown stratum)."""


def breaking_models(snapshot: Snapshot) -> set[str]:
    """Models whose baseline ran and graph-broke: more than one graph, or break reasons."""
    breaking = set()
    for result in snapshot.results:
        baseline = result.outcomes.get(BASELINE)
        if baseline is not None and baseline.ran and ((baseline.graphs or 0) > 1 or baseline.break_reasons):
            breaking.add(result.model)
    return breaking


def allocate(sizes: Mapping[str, int], total: int) -> dict[str, int]:
    """Split `total` over strata in proportion to `sizes` (largest remainder)."""
    population = sum(sizes.values())
    if population == 0:
        return dict.fromkeys(sizes, 0)
    total = min(total, population)
    exact = {stratum: total * size / population for stratum, size in sizes.items()}
    counts = {stratum: int(share) for stratum, share in exact.items()}
    left = total - sum(counts.values())
    by_remainder = sorted(exact, key=lambda s: (-(exact[s] - counts[s]), s))
    for stratum in by_remainder[:left]:
        counts[stratum] += 1
    return counts


def rank(seed: int, stratum: str, model: str) -> bytes:
    """Where `model` stands in its stratum's draw: the smallest ranks are sampled."""
    return hashlib.sha256(f"{seed}:{stratum}:{model}".encode()).digest()


def bottom_k(members: Iterable[ModelSpec], k: int, seed: int, stratum: str) -> list[ModelSpec]:
    """The `k` members of `stratum` of smallest rank."""
    return sorted(members, key=lambda spec: rank(seed, stratum, spec.model))[:k]


def sample(
    specs: Iterable[ModelSpec],
    n: int,
    seed: int = 0,
    strata: Mapping[str, int] | None = None,
    only_breaking_in: Snapshot | None = None,
    corpus: str = "transformers",
) -> tuple[list[ModelSpec], CorpusSelection]:
    """Draw `n` specs (or `strata`'s sizes), stratified; returns them and the selection record."""
    if n < 1 and not strata:
        raise SamplingError(f"sample size must be at least 1, got {n}")
    candidates = sorted(specs, key=lambda spec: spec.model)
    if only_breaking_in is not None:
        breaking = breaking_models(only_breaking_in)
        candidates = [spec for spec in candidates if spec.model in breaking]
    by_stratum: dict[str, list[ModelSpec]] = {}
    for spec in candidates:
        by_stratum.setdefault(spec.stratum, []).append(spec)
    if strata:
        unknown = sorted(set(strata) - set(by_stratum))
        if unknown:
            raise SamplingError(
                f"stratum {unknown[0]!r} has no candidates (known: {', '.join(sorted(by_stratum))})"
            )
        counts = {stratum: min(size, len(by_stratum[stratum])) for stratum, size in strata.items()}
    else:
        counts = allocate({stratum: len(members) for stratum, members in by_stratum.items()}, n)
    chosen: list[ModelSpec] = []
    for stratum in sorted(counts):
        chosen.extend(bottom_k(by_stratum[stratum], counts[stratum], seed, stratum))
    chosen.sort(key=lambda spec: (spec.stratum, spec.model))
    selection = CorpusSelection(
        name=corpus,
        seed=seed,
        sample=sum(counts.values()),
        strata={stratum: count for stratum, count in sorted(counts.items()) if count},
        models=[spec.model for spec in chosen],
        only_breaking_in=only_breaking_in.key if only_breaking_in is not None else None,
    )
    return chosen, selection
