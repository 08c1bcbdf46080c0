"""Which models exist and how to build them: the only place besides sweep/ that imports torch.

A corpus is a named list of `ModelSpec`s. `build(spec, device)` turns a spec into a module and
its inputs; the sweep calls it in each isolated child. Modules are imported lazily so that
listing corpus names stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, NamedTuple

from triagebot.errors import SelectionError, unknown
from triagebot.results import ModelSpec

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


def load_corpus(name: str) -> list[ModelSpec]:
    check_corpus(name)
    return _suite_module(CORPORA[name], name).specs()


def left_out(name: str) -> dict[str, str]:
    """The library's model classes a corpus does not sweep, each with why (its module's
    `left_out()`; none for a corpus that is not a whole library's)."""
    check_corpus(name)
    module = _suite_module(CORPORA[name], name)
    return module.left_out() if hasattr(module, "left_out") else {}


def build(spec: ModelSpec, device: str) -> Built:
    return _suite_module(BUILDERS[spec.source], spec.source).build(spec, device)
