"""Which models exist and how to build them: the only place besides sweep/ that imports torch.

A corpus is a named list of `ModelSpec`s. `build(spec, device)` turns a spec into a module and
its inputs; the sweep calls it in each isolated child. Modules are imported lazily so that
listing corpus names stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, NamedTuple

from triagebot.errors import SelectionError, unknown
from triagebot.results import ModelSpec, model_key, split_key

if TYPE_CHECKING:
    import torch

# corpus name -> module with `specs() -> list[ModelSpec]`
CORPORA: dict[str, str] = {
    "sentinels": "triagebot.corpus.sentinels",
    "smoke": "triagebot.corpus.smoke",
    "transformers": "triagebot.corpus.hf",
    "diffusers": "triagebot.corpus.diffusion",
    "timm": "triagebot.corpus.timm_models",
}

# ModelSpec.source -> module with `build(spec, device) -> Built`
BUILDERS: dict[str, str] = {
    "sentinel": "triagebot.corpus.sentinels",
    "transformers": "triagebot.corpus.hf",
    "diffusers": "triagebot.corpus.diffusion",
    "timm": "triagebot.corpus.timm_models",
}


class UnknownCorpus(SelectionError):
    """A corpus name that no module provides."""


# Suites whose library the locks do not install yet: without it they are one line, not a traceback.
OPTIONAL_SUITES = frozenset({"diffusers", "timm"})


class SuiteNotInstalled(SelectionError):
    """An optional suite whose library is not installed here."""


def _suite_module(module: str, suite: str):
    """The module of a corpus or builder; a suite whose library is missing is one line, not a
    traceback (its own ModuleNotFoundError names the library)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name and suite in OPTIONAL_SUITES:
            raise SuiteNotInstalled(
                f"the {suite} corpus needs the {error.name} package, which is not installed here: "
                f"pip install {error.name}"
            ) from error
        raise


class Built(NamedTuple):
    """A model ready to run: `model(**inputs)`; `spec` is completed with what the build chose."""

    model: torch.nn.Module
    inputs: dict[str, Any]
    spec: ModelSpec


def corpus_names() -> list[str]:
    return sorted(CORPORA)


def check_corpus(name: str) -> None:
    """An unknown corpus name is an error with the nearest known one (cheap: nothing is loaded)."""
    if name not in CORPORA:
        raise UnknownCorpus(unknown("corpus", name, corpus_names()))


def _keyed(spec: ModelSpec) -> ModelSpec:
    """`spec` under its key in a night (`model_key`): its suite before the name of any suite but
    transformers, so that names stay unique across suites (a corpus module names its models as
    its library does)."""
    key = model_key(spec.source, spec.model)
    return spec if key == spec.model else spec.model_copy(update={"model": key})


def load_corpus(name: str) -> list[ModelSpec]:
    check_corpus(name)
    return [_keyed(spec) for spec in _suite_module(CORPORA[name], name).specs()]


def load_suites(names: list[str]) -> tuple[list[ModelSpec], dict[str, str]]:
    """The specs of the corpora `names`, in that order, and each optional suite whose library
    is not installed here -> the one line saying so. Every name is checked first; one corpus
    alone that is not installed is an error, as is a list of which none is."""
    for name in names:
        check_corpus(name)
    specs: list[ModelSpec] = []
    skipped: dict[str, str] = {}
    for name in names:
        try:
            specs += load_corpus(name)
        except SuiteNotInstalled as missing:
            if len(names) == 1:
                raise
            skipped[name] = str(missing)
    if len(skipped) == len(names):
        raise SuiteNotInstalled(
            f"none of the corpora {', '.join(names)} can be swept here: " + "; ".join(skipped.values())
        )
    return specs, skipped


def left_out(name: str) -> dict[str, str]:
    """The library's model classes a corpus does not sweep, each with why (its module's
    `left_out()`; none for a corpus that is not a whole library's)."""
    check_corpus(name)
    module = _suite_module(CORPORA[name], name)
    return module.left_out() if hasattr(module, "left_out") else {}


def build(spec: ModelSpec, device: str) -> Built:
    """`spec` built by its suite's builder, which knows the name its library gives the model."""
    builder = _suite_module(BUILDERS[spec.source], spec.source)
    name = split_key(spec.model)[1]
    if name == spec.model:  # a transformers model or a sentinel: its key is its name
        return builder.build(spec, device)
    built = builder.build(spec.model_copy(update={"model": name}), device)
    return built._replace(spec=_keyed(built.spec))
