"""Which models exist and how to build them: the only place besides sweep/ that imports torch.

A corpus is a named list of `ModelSpec`s. `build(spec, device)` turns a spec into a module and
its inputs; the sweep calls it in each isolated child. Modules are imported lazily so that
listing corpus names stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, NamedTuple

from triagebot.errors import SelectionError, unknown
from triagebot.results import SUITES, ModelSpec, Suite, corpora, model_key, split_key, suite_named

if TYPE_CHECKING:
    import torch


class UnknownCorpus(SelectionError):
    """A corpus name that no module provides."""


class SuiteNotInstalled(SelectionError):
    """An optional suite whose library is not installed here."""


def _suite_module(module: str, suite: str):
    """The module of a corpus or builder; a suite whose library is missing is one line, not a
    traceback (its own ModuleNotFoundError names the library)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        named = suite_named(suite) or SUITES.get(suite)
        if error.name == "torchvision" or (error.name and named is not None and named.optional):
            raise SuiteNotInstalled(_missing_library(suite, error.name, named)) from error
        raise
    except RuntimeError as error:
        # A torchvision built for another torch fails as it registers its C++ operators
        # ("operator torchvision::nms does not exist").
        if "torchvision::" in str(error):
            raise SuiteNotInstalled(_missing_library(suite, "torchvision", mismatched=True)) from error
        raise


def _missing_library(suite: str, package: str, named: Suite | None = None, mismatched: bool = False) -> str:
    """Why `suite` cannot load, in one line that says what to install. torchvision is no plain
    `pip install`: it must be the build made for the installed torch, from the index that torch
    came from (PyPI's are CUDA builds of one release, so a CPU torch has none there)."""
    if package != "torchvision":
        beside = (
            ", beside a torchvision built for this torch"
            if named is not None and package == named.library and "torchvision" in named.packages
            else ""
        )
        return (
            f"the {suite} corpus needs the {package} package, which is not installed here: "
            f"pip install {package}{beside}"
        )
    import torch

    found = "a torchvision built for another torch is installed" if mismatched else "none is installed"
    return (
        f"the {suite} corpus needs a torchvision built for this torch ({torch.__version__}) and {found}: "
        "install torchvision from the index this torch came from (download.pytorch.org/whl/...); "
        "PyPI has none for CPU builds"
    )


class Built(NamedTuple):
    """A model ready to run: `model(**inputs)`; `spec` is completed with what the build chose."""

    model: torch.nn.Module
    inputs: dict[str, Any]
    spec: ModelSpec


def _corpus_module(name: str):
    """The module of the corpus `name`; an unknown name is an error with the nearest known one
    (a configuration's names were checked as it was read: `config.SweepSettings`)."""
    modules = corpora()
    if name not in modules:
        raise UnknownCorpus(unknown("corpus", name, sorted(modules)))
    return _suite_module(modules[name], name)


def _keyed(spec: ModelSpec) -> ModelSpec:
    """`spec` under its key in a night (`model_key`): its suite before the name of any suite but
    transformers, so that names stay unique across suites (a corpus module names its models as
    its library does)."""
    key = model_key(spec.source, spec.model)
    return spec if key == spec.model else spec.model_copy(update={"model": key})


def load_corpus(name: str) -> list[ModelSpec]:
    return [_keyed(spec) for spec in _corpus_module(name).specs()]


def load_suites(names: list[str]) -> tuple[list[ModelSpec], dict[str, str]]:
    """The specs of the corpora `names` (a configuration's, checked as it was read), in that
    order, and each optional suite whose library is not installed here -> the one line saying
    so. One corpus alone that is not installed is an error, as is a list of which none is."""
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
    """Every model of the corpus's library that it does not sweep (keyed as a night keys it),
    with why: the suite's own `left_out()` where it has one (timm: every variant but its
    family's smallest), else its `LEFT_OUT` table, else nothing."""
    module = _corpus_module(name)
    reasons = module.left_out() if hasattr(module, "left_out") else dict(getattr(module, "LEFT_OUT", {}))
    return {model_key(name, model): why for model, why in reasons.items()}  # as a night keys them


def build(spec: ModelSpec, device: str) -> Built:
    """`spec` built by its suite's builder, which knows the name its library gives the model."""
    builder = _suite_module(SUITES[spec.source].module, spec.source)
    name = split_key(spec.model)[1]
    if name == spec.model:  # a transformers model or a sentinel: its key is its name
        return builder.build(spec, device)
    built = builder.build(spec.model_copy(update={"model": name}), device)
    return built._replace(spec=_keyed(built.spec))
