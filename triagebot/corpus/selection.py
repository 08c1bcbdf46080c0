"""What is swept: the one function from triagebot.toml and the command line to a sweep's models.

`select` is used by every command that sweeps or shows what would be swept (`run`, `sweep`,
`corpus list`, `corpus check`, and `/rerun-sweep`, whose GPU job runs `triagebot sweep`):

1. the corpora (`[sweep] corpus` or `--corpus`: one, or suites side by side, each optional suite
   whose library is not installed recorded as skipped in `CorpusSelection.skipped`), narrowed
   to one stratum (`--stratum`);
2. named models (`--models`) are swept as named; otherwise the configured sample (`[corpus]
   sample`, `seed`, `strata`, `only_breaking_in`, or their options) is drawn, if any;
3. with `--shard i/n`, this job's share of them, split by recorded cost.

Shards are balanced by each model's recorded seconds in the newest stored snapshot
(`Snapshot.model_seconds()`): longest-processing-time first, models sorted by cost then name,
each given to the shard with the least work so far (the lowest-numbered on a tie); a model
without a recorded cost counts as the mean of those that have one (all count the same on a
first night, which deals them out by name). Every shard job computes the same split from the
same corpus, configuration and store, so the shards never overlap and together cover the
selection.

This module imports results and errors only (and the corpus it loads); it never imports sweep/.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

from triagebot.corpus import load_corpus, load_suites
from triagebot.corpus.sampling import sample
from triagebot.errors import SelectionError, StoreError, unknown
from triagebot.results import CorpusSelection, ModelSpec, Snapshot

if TYPE_CHECKING:
    from triagebot.config import Config


class SnapshotSource(Protocol):
    """Where stored snapshots come from (a `triagebot.store.Store`, or anything like it)."""

    def get(self, key: str) -> Snapshot: ...

    def latest(self) -> Snapshot | None: ...


@dataclass
class Selected:
    """What one sweep job sweeps, and what the whole sweep covers."""

    specs: list[ModelSpec]  # this job's models: the shard's share when sharded, in corpus order
    selection: CorpusSelection  # the whole sweep (every shard): corpus, sample, seed, strata, models
    shard: str | None = None  # "i/n"
    costs: dict[str, float] = field(default_factory=dict)  # model of `specs` -> estimated seconds
    costs_from: str | None = None  # the stored snapshot whose recorded seconds those are
    recorded: int = 0  # how many of the selection's models had a recorded cost
    # Every shard's models, in corpus order (what a draw over the whole sweep, such as the
    # backend ladder's sample, draws from, so that every shard draws the same).
    candidates: list[ModelSpec] = field(default_factory=list)


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """`"i/n"` (1 <= i <= n) as (i, n); None for None."""
    if text is None:
        return None
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise SelectionError(f"--shard {text!r}: expected i/n, e.g. 1/4") from None
    if not 1 <= index <= count:
        raise SelectionError(f"--shard {text!r}: need 1 <= i <= n")
    return index, count


def estimated_costs(models: Sequence[str], recorded: Mapping[str, float]) -> dict[str, float]:
    """Each model's recorded seconds, or the mean of the recorded ones (1.0 when none is)."""
    known = [recorded[model] for model in models if model in recorded]
    mean = sum(known) / len(known) if known else 1.0
    return {model: recorded.get(model, mean) for model in models}


def assign_shards(costs: Mapping[str, float], count: int) -> list[list[str]]:
    """`count` shards of the models in `costs`, balanced by cost (see the module docstring)."""
    shards: list[list[str]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for model in sorted(costs, key=lambda name: (-costs[name], name)):
        lightest = min(range(count), key=lambda index: (loads[index], index))
        shards[lightest].append(model)
        loads[lightest] += costs[model]
    return shards


T = TypeVar("T", bound=ModelSpec)


def select_shard(
    specs: Sequence[T], shard: tuple[int, int] | None, costs: Mapping[str, float] | None = None
) -> list[T]:
    """Shard i of n of `specs` (in their order), split by `costs` (`estimated_costs` of the
    recorded ones; all equal when None). All configs of a model stay in one shard, and the
    split does not depend on the order of `specs`."""
    if shard is None:
        return list(specs)
    index, count = shard
    models = sorted({spec.model for spec in specs})
    chosen = set(assign_shards(estimated_costs(models, costs or {}), count)[index - 1])
    return [spec for spec in specs if spec.model in chosen]


def narrow(
    specs: Sequence[T], corpus: str, stratum: str | None = None, models: Sequence[str] | None = None
) -> list[T]:
    """`specs` of one stratum and/or the named models (kept in the corpus's order); unknown
    names are one-line errors with the nearest known name."""
    specs = list(specs)
    if stratum is not None:
        known = {spec.stratum for spec in specs}
        if stratum not in known:
            raise SelectionError(unknown("stratum", stratum, known, where=f"in corpus {corpus!r}"))
        specs = [spec for spec in specs if spec.stratum == stratum]
    if models:
        names = {spec.model for spec in specs}
        for name in models:
            if name not in names:
                where = f"in stratum {stratum!r} of corpus {corpus!r}" if stratum else f"in corpus {corpus!r}"
                raise SelectionError(unknown("model", name, names, where=where))
        wanted = set(models)
        specs = [spec for spec in specs if spec.model in wanted]
    return specs


def load(corpus: str) -> list[ModelSpec]:
    """The specs of the corpus named `corpus`."""
    return load_corpus(corpus)


def _breaking_in(key: str, store: SnapshotSource | None, where: str) -> Snapshot:
    if store is None:
        raise SelectionError(f"{where} {key!r}: no store to read it from")
    try:
        return store.get(key)
    except StoreError as error:
        raise SelectionError(f"{where}: {error}") from None


def _previous(store: SnapshotSource | None, shard: str | None) -> Snapshot | None:
    """The newest stored snapshot, whose recorded seconds are the costs. Without it an unsharded
    sweep merely runs in another order; a shard must not guess, or the shards would disagree."""
    if store is None:
        return None
    try:
        return store.latest()
    except StoreError as error:
        if shard is None:
            return None
        raise SelectionError(
            f"--shard {shard}: the store's recorded costs split the shards, and it cannot be read: {error}"
        ) from None


def select(
    config: Config,
    *,
    models: Sequence[str] | None = None,
    stratum: str | None = None,
    shard: str | None = None,
    store: SnapshotSource | None = None,
    specs: Sequence[ModelSpec] | None = None,
) -> Selected:
    """What to sweep (see the module docstring). `config` is triagebot.toml with the command
    line's options applied (`--corpus`, `--sample`, `--seed`, `--only-breaking-in`); `models`,
    `stratum` and `shard` are the options that are not settings. `store` gives the costs and
    the `only_breaking_in` snapshot. `specs` stands in for the corpus (tests)."""
    name = config.sweep.corpus_name
    settings = config.corpus
    position = parse_shard(shard)
    skipped: dict[str, str] = {}
    if specs is None:
        specs, skipped = load_suites(config.sweep.corpus)
    candidates = narrow(specs, name, stratum, models)
    if not models and (settings.sample is not None or settings.strata or settings.only_breaking_in):
        reference = None
        if settings.only_breaking_in:
            where = config.where("corpus.only_breaking_in")
            reference = _breaking_in(settings.only_breaking_in, store, where)
        candidates, selection = sample(
            candidates,
            settings.sample or len(candidates),
            seed=settings.seed,
            strata=settings.strata,
            only_breaking_in=reference,
            corpus=name,
        )
    else:
        selection = CorpusSelection(name=name, models=[spec.model for spec in candidates])
    selection = selection.model_copy(update={"skipped": skipped})
    previous = _previous(store, shard)
    recorded = previous.model_seconds() if previous is not None else {}
    costs = estimated_costs(selection.models, recorded)
    chosen = select_shard(candidates, position, costs)
    return Selected(
        specs=chosen,
        selection=selection,
        shard=shard,
        costs={spec.model: costs[spec.model] for spec in chosen},
        costs_from=previous.key if previous is not None else None,
        recorded=sum(model in recorded for model in selection.models),
        candidates=list(candidates),
    )
