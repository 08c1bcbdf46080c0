"""Which snapshots belong together: the same night (one build, one selection), and nights that
can be compared (like with like).

The store keeps one snapshot per key (`[store] key`: the torch version, or torch and
transformers). A stored snapshot is replaced only by one of the same build (torch and
transformers) and the same selection (corpus, sample, seed, strata, models) whose flags
include every stored flag with the same patch: a sweep of the same night again, or that night
with a flag added. Anything else would lose a night and is refused (`replacement_problem`),
except a trial: a night of a selection other than the configured one (`--corpus smoke`, a
sample, the sentinels) is never the configured night of its build (`is_configured_night`), and
the first configured night of that build replaces it.

A diff compares a night with the newest earlier one of a comparable selection (`comparable`):
the same corpus drawn the same way (or, swept whole or by name, corpora with a suite in common:
a transformers night and the first night of the three suites beside it), and, for a corpus
swept whole or by name, at least half of the larger model list in common, so that a one-model
rerun is never the "previous night" of a whole-corpus sweep, while a corpus that gained a few
models with a new transformers still is.
A sample of the same seed and size compares when its strata drew as many models each, or when
they did not but at least half its models are in common: a stratum's share of a proportional
sample moves with the corpus (one model more in a stratum can move a model of the sample from
another), and that night is still the same sample.
"""

from __future__ import annotations

from triagebot.config import Config
from triagebot.results import CorpusSelection, Snapshot

_DRAWN = ("name", "seed", "sample", "strata", "only_breaking_in")
"""The fields of a `CorpusSelection` that say how its models were drawn (all but the list)."""
_STRATA = frozenset({"strata"})
_NAME = frozenset({"name"})


def describe(snapshot: Snapshot) -> str:
    """`snapshot` in a message: its key, build, corpus and how it was drawn, models and flags."""
    corpus = snapshot.corpus
    drawn = f", sample {corpus.sample} (seed {corpus.seed})" if corpus.sample is not None else ""
    if corpus.only_breaking_in:
        drawn += f" breaking in {corpus.only_breaking_in}"
    flags = ", ".join(snapshot.flags) or "none"
    environment = snapshot.environment
    build = environment.torch_git_version[:12] or "no git hash"
    if environment.transformers_version:
        build += f", transformers {environment.transformers_version}"
    return (
        f"{snapshot.key} ({build}): corpus {corpus.name!r}{drawn}, "
        f"{len(snapshot.results)} models, flags {flags}"
    )


def _drawn(selection: CorpusSelection, exclude: frozenset[str] = frozenset()) -> dict:
    return selection.model_dump(include=set(_DRAWN) - exclude)


def same_selection(a: CorpusSelection, b: CorpusSelection) -> bool:
    """The same corpus drawn the same way, with the same models."""
    return _drawn(a) == _drawn(b) and sorted(a.models) == sorted(b.models)


def comparable(a: CorpusSelection, b: CorpusSelection) -> bool:
    """Whether nights of `a` and `b` compare like with like (see the module docstring)."""
    if _drawn(a, exclude=_STRATA | _NAME) != _drawn(b, exclude=_STRATA | _NAME):
        return False
    if a.name != b.name and (a.sample is not None or not set(a.swept_suites()) & set(b.swept_suites())):
        return False  # another draw, or no suite in common
    if a.sample is not None and a.strata == b.strata:
        return True  # the same draw; its models move only with the corpus
    larger = max(len(set(a.models)), len(set(b.models)))
    return larger == 0 or len(set(a.models) & set(b.models)) * 2 >= larger


def is_configured_night(selection: CorpusSelection, config: Config) -> bool:
    """Whether a night of `selection` is the night `config` sweeps: the configured corpus, drawn
    as configured (whole, or sampled with its seed and, where `[corpus] sample` is set, that
    many models). A shard is not a selection of its own: the shards' merge is the whole. The one
    rule of `ask`, `run --check` and the store's replacement of a trial night."""
    settings = config.corpus
    sampled = settings.sample is not None or bool(settings.strata) or settings.only_breaking_in is not None
    if selection.suites() != config.sweep.corpus or (selection.sample is not None) != sampled:
        return False
    if not sampled:
        return True
    wanted = settings.sample if settings.sample is not None else selection.sample
    return selection.seed == settings.seed and selection.sample == wanted


def replacement_problem(stored: Snapshot, new: Snapshot, config: Config | None = None) -> str | None:
    """Why `new` may not replace `stored` (the snapshot under its key), or None when it may.
    With the `config` the night runs under, a trial of the same build (a night that is not the
    configured one) is replaced by the configured night."""
    if not new.environment.same_torch(stored.environment):
        return "it is of another build"
    if (
        config is not None
        and new.environment.same_transformers(stored.environment)
        and is_configured_night(new.corpus, config)
        and not is_configured_night(stored.corpus, config)
    ):
        return None
    if not new.environment.same_transformers(stored.environment):
        return (
            f"it is of transformers {new.environment.transformers_version}, the stored one of "
            f"transformers {stored.environment.transformers_version} (with [store] key = "
            '"torch+transformers" each has a key of its own)'
        )
    if not same_selection(stored.corpus, new.corpus):
        return "it sweeps another selection"
    dropped = [flag for flag in stored.flags if new.flags.get(flag) != stored.flags[flag]]
    if dropped:
        return f"it lacks flag {dropped[0]!r} as stored"
    return None
