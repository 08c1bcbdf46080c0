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

import copy
import re
from collections.abc import Iterator

import torch

from triagebot.corpus.building import (
    Built,
    InputSpec,
    MissingDependency,
    ModelSpec,
    NoRecipe,
    count_params,
    describe_error,
    eager_run,
    import_object,
    materialize_inputs,
)

# isort: split
import timm  # after the offline switches (`building` imports `hf`)
from timm.models import _registry
from timm.models._efficientnet_builder import decode_arch_def

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
    try:  # a copy: timm's block builders pop keys from the `block_args` they are given
        model = entry_point(**copy.deepcopy(spec.config or {}))
    except ImportError as error:
        raise MissingDependency(describe_error(error)) from error
    return model.eval().to(device)


def build(spec: ModelSpec, device: str = "cpu") -> Built:
    if not spec.inputs:
        spec = _resolve(spec, device)
    model = instantiate(spec, device)
    return Built(model, materialize_inputs(spec.inputs, spec.seed, device), spec)


# Depth through the entry point's keyword arguments, which timm merges over the variant's own:
# a transformer's blocks (`depth`), a hierarchical model's blocks per stage (`depths`: ConvNeXt,
# Swin, ...), a ResNet's (`layers`) and a DenseNet's (`block_config`), so that a base-sized family
# builds and runs in about a second. An argument the model does not take fails at once in its
# constructor (TypeError) and the next is tried; the model at its own size comes last.
SHRINKS: tuple[dict, ...] = (
    {"depth": 2},
    {"depths": [1, 1, 1, 1]},
    {"layers": [1, 1, 1, 1]},
    {"block_config": [1, 1, 1, 1]},
    {"depths": [1, 1, 1]},
    {},
)


# Models none of SHRINKS reaches (their entry points take none of those arguments), shrunk
# through the arguments their own entry point takes; tried before SHRINKS.
MODEL_SHRINKS: dict[str, dict] = {
    # 294M parameters as registered: 84 blocks. One block of each kind per stage (a stage ends on
    # an inverted residual, where timm taps its features), at a quarter of the widths.
    "mobilenetv5_300m": {
        "block_args": decode_arch_def(
            [
                ["er_r1_k3_s2_e4_c128"],
                ["uir_r1_a3_k5_s2_e6_c256"],
                ["uir_r1_a5_k5_s2_e6_c640", "mqa_r1_k3_h12_v2_s1_d64_c640", "uir_r1_a0_k0_s1_e2_c640"],
                ["uir_r1_a5_k5_s2_e6_c1280", "mqa_r1_k3_h16_s1_d96_c1280", "uir_r1_a0_k0_s1_e2_c1280"],
            ]
        ),
        "channel_multiplier": 0.25,
        "num_features": 256,
    },
    # 133M parameters as registered, 119M of them in the classifier's 7x7 convolution to 4096
    # channels and its 1000 classes; the convolutions' widths are fixed by the variant's name.
    "vgg11": {"mlp_ratio": 1 / 64, "num_classes": 10},
}


def _configurations(model: str) -> Iterator[dict]:
    """Constructor arguments to try for `model`, smallest first: each shrink (its own first) at
    each image size, then as is."""
    own = MODEL_SHRINKS.get(model)
    for shrink in ([own] if own else []) + list(SHRINKS):
        for resolution in RESOLUTIONS:
            yield {"pretrained": False, "img_size": resolution, **shrink}
        yield {"pretrained": False, **shrink}


def _resolutions(config: dict, native: int) -> list[int]:
    """The input sizes to run a model built with `config` on: the one it was built for, if any."""
    if "img_size" in config:
        return [config["img_size"]]
    return sorted({*RESOLUTIONS, native})


def _resolve(spec: ModelSpec, device: str) -> ModelSpec:
    """`spec` with the first arguments and resolution the model runs on eagerly; each model is
    built once per set of arguments and run at each resolution it may take."""
    failures: list[str] = []
    native = getattr(timm.get_pretrained_cfg(spec.model), "input_size", None) or (3, 224, 224)
    for config in _configurations(spec.model):
        attempt = spec.model_copy(update={"config": config})
        try:
            model = instantiate(attempt, device)
        except MissingDependency:
            raise
        except Exception as error:
            failures.append(describe_error(error)[:200])
            continue
        for resolution in _resolutions(config, native[-1]):
            inputs = [InputSpec(name="x", shape=[1, native[0], resolution, resolution], dtype="float32")]
            try:
                eager_run(model, materialize_inputs(inputs, spec.seed, device))
            except Exception as error:
                failures.append(describe_error(error)[:200])
                continue
            found = {"inputs": inputs, "recipe": "image", "params": count_params(model)}
            return attempt.model_copy(update=found)
    raise NoRecipe("; ".join(list(dict.fromkeys(failures))[:3]))
