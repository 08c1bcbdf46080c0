"""The timm corpus: the smallest variant of every architecture family in timm's registry.

A family is the registry module a model is defined in and the leading word of its name
(`resnet` and `seresnet` in `timm.models.resnet`, `efficientnet` and `mixnet` in
`timm.models.efficientnet`). Of each family the smallest variant is taken by its name: one of
timm's own `test_*` models where the family has one (built for timm's tests), else the lowest
size word (atto < femto < pico < nano < tiny < small ...), then the lowest number (resnet10t
before resnet18). Every other name is left out as data (`left_out`), with the variant that
stands for its family, and `LEFT_OUT` names the families not swept at all, with why.

A model is built by calling its registered entry point with `pretrained=False` (never the
hub) and, where the entry point takes it, a small `img_size`; the spec records the entry point
and those keyword arguments, so a flag run and a repro rebuild the same model. Its input is one
random image batch at the smallest resolution of a short list that the model runs on eagerly.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import torch

from triagebot.corpus import Built
from triagebot.corpus.hf import (
    MissingDependency,
    NoRecipe,
    count_params,
    describe_error,
    eager_run,
    import_object,
)
from triagebot.corpus.inputs import materialize_inputs
from triagebot.results import InputSpec, ModelSpec

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import timm  # after the offline switch
from timm.models import _registry

SUITE = "timm"
RESOLUTIONS = (64, 96, 128, 224)
# Size words, smallest first, as timm names its variants.
_SIZES = ("atto", "femto", "pico", "nano", "micro", "xxs", "tiny", "xs", "mini", "small", "s", "lite")
_PREFIXES = re.compile(r"^(test_|tf_)")

# Families left out of the sweep, each with why (a test checks each is still in the registry).
LEFT_OUT: dict[str, str] = {}


def family_of(name: str) -> str:
    """`module/word`: the registry module and the leading word of the name without a port prefix."""
    module = _registry._model_to_module.get(name, "unknown")
    word = re.match(r"[a-z]+", _PREFIXES.sub("", name))
    return f"{module}/{word.group(0) if word else name}"


def _smallness(name: str) -> tuple:
    """Sorts a family's variants smallest first, by their names alone."""
    words = re.split(r"[_\d]+", name)
    size = min((_SIZES.index(word) for word in words if word in _SIZES), default=len(_SIZES))
    numbers = [int(n) for n in re.findall(r"\d+", name)]
    return (not name.startswith("test_"), size, numbers[:1] or [10**6], len(name), name)


def families() -> dict[str, list[str]]:
    """Every family of the registry, its variants smallest first."""
    grouped: dict[str, list[str]] = {}
    for name in timm.list_models():
        grouped.setdefault(family_of(name), []).append(name)
    return {family: sorted(names, key=_smallness) for family, names in sorted(grouped.items())}


def left_out() -> dict[str, str]:
    """Every registry model name not swept, with why."""
    reasons = {}
    for family, names in families().items():
        if family in LEFT_OUT:
            reasons.update(dict.fromkeys(names, LEFT_OUT[family]))
            continue
        reasons.update(
            {name: f"family {family} is swept as its smallest variant, {names[0]}" for name in names[1:]}
        )
    return reasons


def specs() -> list[ModelSpec]:
    """The smallest variant of each family not `LEFT_OUT`, unresolved."""
    return [
        ModelSpec(
            model=names[0],
            source=SUITE,
            class_path=f"{_registry._model_entrypoints[names[0]].__module__}:{names[0]}",
            stratum=family.partition("/")[0],
            modality="image",
        )
        for family, names in families().items()
        if family not in LEFT_OUT
    ]


def instantiate(spec: ModelSpec, device: str | torch.device = "cpu") -> torch.nn.Module:
    entry_point = import_object(spec.class_path)
    torch.manual_seed(spec.seed)
    try:
        model = entry_point(**dict(spec.config or {}))
    except ImportError as error:
        raise MissingDependency(describe_error(error)) from error
    return model.eval().to(device)


def build(spec: ModelSpec, device: str = "cpu") -> Built:
    if not spec.inputs:
        spec = _resolve(spec, device)
    model = instantiate(spec, device)
    return Built(model, materialize_inputs(spec.inputs, spec.seed, device), spec)


def _attempts(spec: ModelSpec) -> Iterator[tuple[dict, int]]:
    """(keyword arguments, resolution) to try: a model shrunk to the image, then at its own size."""
    native = timm.get_pretrained_cfg(spec.model)
    channels_size = getattr(native, "input_size", None) or (3, 224, 224)
    # A transformer's depth goes through its entry point's keyword arguments (timm merges them
    # over the variant's own), so a base-sized family runs as two blocks.
    yield {"pretrained": False, "img_size": RESOLUTIONS[0], "depth": 2}, RESOLUTIONS[0]
    for resolution in RESOLUTIONS:
        yield {"pretrained": False, "img_size": resolution}, resolution
    for resolution in sorted({*RESOLUTIONS, channels_size[-1]}):
        yield {"pretrained": False}, resolution


def _resolve(spec: ModelSpec, device: str) -> ModelSpec:
    """`spec` with the first arguments and resolution the model runs on eagerly."""
    failures: list[str] = []
    native = timm.get_pretrained_cfg(spec.model)
    channels = (getattr(native, "input_size", None) or (3,))[0]
    for config, resolution in _attempts(spec):
        attempt = spec.model_copy(update={"config": config})
        inputs = [InputSpec(name="x", shape=[1, channels, resolution, resolution], dtype="float32")]
        try:
            model = instantiate(attempt, device)
            eager_run(model, materialize_inputs(inputs, spec.seed, device))
        except MissingDependency:
            raise
        except Exception as error:
            failures.append(describe_error(error)[:200])
            continue
        return attempt.model_copy(update={"inputs": inputs, "recipe": "image", "params": count_params(model)})
    raise NoRecipe("; ".join(list(dict.fromkeys(failures))[:3]))
