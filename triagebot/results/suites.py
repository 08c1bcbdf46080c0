"""The suites, as data: one `Suite` per library whose models a night sweeps, in one registry.

Everything the rest of triagebot knows of a suite is read from its record here: the corpus name
`[sweep] corpus` calls it by, the `ModelSpec.source` its models carry, the module that lists
and builds them, the packages a bisection installs for its repros, whether the locks install
its library, how a repro builds its models, and the library whose version a night's
`Environment` records. Adding a suite is its corpus module and one entry in `SUITES`.

A night of several suites is named by their corpus names joined (`suites_name`): that string
is stored (`CorpusSelection.name`) and handed to a sweep job, so it is made and read here only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Suite:
    """One suite of models and everything the code that sweeps, keys, reproduces and bisects
    them needs to know of it."""

    source: str  # `ModelSpec.source` of its models, and the suite in a model's key (`model_key`)
    corpus: str  # its name in `[sweep] corpus` and `--corpus`
    # The module with `specs() -> list[ModelSpec]` and `build(spec, device) -> Built` (and
    # optionally `left_out()` or `LEFT_OUT`): how its models' configs and inputs are made.
    module: str
    library: str = ""  # the package whose version `Environment.library_versions` records
    packages: tuple[str, ...] = ()  # what a bisection installs for its repros, in order
    # Libraries its models run on whose versions a repro's lines depend on too (timm: torchvision,
    # the build made for the torch under test): recorded beside `library` where it is swept.
    companions: tuple[str, ...] = ()
    optional: bool = False  # the locks may not install its library: missing, it is one line
    bare_keys: bool = False  # its models are keyed by their bare names (see `model_key`)
    keyword_config: bool = False  # a repro builds its models from keyword arguments, not a config
    default: bool = False  # swept unless `[sweep] corpus` says otherwise

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> Suite:
        """The suite whose fields (`dataclasses.asdict`) JSON carried, its lists tuples again:
        how the sweep's warm parent learns the driver's registry (`triagebot.sweep.parent`)."""
        return cls(
            **{name: tuple(value) if isinstance(value, list) else value for name, value in fields.items()}
        )


SUITES: dict[str, Suite] = {
    suite.source: suite
    for suite in (
        # The test corpus of hand-written modules (its corpus is named in the plural, its
        # models' source in the singular: both are stored, so both stay).
        Suite(source="sentinel", corpus="sentinels", module="triagebot.corpus.sentinels", bare_keys=True),
        # Keyed by bare names: every key of a night stored before there were suites is one.
        Suite(
            source="transformers",
            corpus="transformers",
            module="triagebot.corpus.hf",
            library="transformers",
            bare_keys=True,
            default=True,
        ),
        Suite(
            source="diffusers",
            corpus="diffusers",
            module="triagebot.corpus.diffusion",
            library="diffusers",
            packages=("diffusers",),
            optional=True,
            keyword_config=True,
            default=True,
        ),
        # torchvision has no version to pin: the build made for the torch under test.
        Suite(
            source="timm",
            corpus="timm",
            module="triagebot.corpus.timm_models",
            library="timm",
            packages=("torchvision", "timm"),
            companions=("torchvision",),
            optional=True,
            keyword_config=True,
            default=True,
        ),
    )
}
"""Every suite by its source, in suite order (transformers before the others on every surface)."""

DEFAULT_SUITE = "transformers"
"""The suite of a record stored before there was more than one: a bare model key is its."""

TEST_CORPORA = ("smoke", "sentinels")
"""Corpora of test modules and a handful of models: their results are never published to a
repository unless `[tracker] publish_test_corpus` says so."""

MIXED_CORPORA = {"smoke": "triagebot.corpus.smoke"}
"""Corpora of models of several suites (corpus -> the module with its `specs()`)."""

SUITE_JOINER = "+"
"""Between the suites of a night of several (`CorpusSelection.name`: "transformers+timm")."""


def default_suites() -> list[str]:
    """The corpora a night sweeps unless `[sweep] corpus` says otherwise: HuggingFace's three suites."""
    return [suite.corpus for suite in SUITES.values() if suite.default]


def corpus_choices() -> str:
    """Every corpus name in words, the suites' first: "transformers, diffusers, timm, smoke or sentinels"."""
    names = [suite.corpus for suite in SUITES.values() if suite.corpus not in TEST_CORPORA]
    names += [name for name in TEST_CORPORA if name not in names]
    return f"{', '.join(names[:-1])} or {names[-1]}"


def suite_named(corpus: str) -> Suite | None:
    """The suite `[sweep] corpus` calls `corpus`, or None (a test corpus of mixed suites)."""
    return next((suite for suite in SUITES.values() if suite.corpus == corpus), None)


def corpora() -> dict[str, str]:
    """Every corpus name -> the module with its `specs()`: each suite's, then the mixed ones."""
    return {**{suite.corpus: suite.module for suite in SUITES.values()}, **MIXED_CORPORA}


def suites_name(suites: list[str]) -> str:
    """`CorpusSelection.name` of a night of `suites` (one suite: its own name, as before)."""
    return SUITE_JOINER.join(suites)


def named_suites(name: str) -> list[str]:
    """The corpora of a night named `name` (`suites_name` read back)."""
    return name.split(SUITE_JOINER)


def suite_order(source: str) -> tuple[int, str]:
    """Where the suite `source` stands among the suites: registry order, unknown ones last."""
    order = list(SUITES)
    return (order.index(source) if source in order else len(order), source)
