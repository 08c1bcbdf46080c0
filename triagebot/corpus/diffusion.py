"""The diffusers corpus: every model class `diffusers.models` exports, tiny and offline.

Each class is built from its constructor's defaults shrunk by `diffusers_shrink.tiny` (never
from the hub), with seeded random weights. Its inputs are found the way the transformers corpus
finds a recipe: candidates of the right kinds (latents of the model's rank, a timestep, text
states as wide as the config's text width, pooled projections, position ids) are tried in
order, each validated by an eager run; the first that runs is recorded in the spec, so a flag
run and a repro rebuild the very same model and tensors. Pipelines and schedulers are not
models and are not listed; the exported classes that are not models to run alone are
`LEFT_OUT`, each with its reason (a test checks that each still exists), and so, where the
package is not installed, is a class whose forward needs one (`NEEDS_PACKAGE`).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterator
from typing import Any

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
from triagebot.corpus.diffusers_recipes import RECIPES
from triagebot.corpus.diffusers_shrink import SAMPLE_SIZE, defaults, tiny
from triagebot.corpus.encoding import decode, encode

# isort: split
import diffusers  # after the offline switches (`building` imports `hf`)
import diffusers.models

diffusers.utils.logging.set_verbosity_error()

SUITE = "diffusers"
TEXT_TOKENS = 8
FRAMES = 2

# Exported classes that are not a model to run alone, and why.
_WRAPPER = "a list of {}s given to its constructor, run one after another: {} is swept on its own"
LEFT_OUT: dict[str, str] = {
    "ModelMixin": "the base class of every diffusers model, with no forward of its own",
    "MotionAdapter": "motion modules that UNetMotionModel loads (swept there); its own forward does nothing",
    "ControlNetXSAdapter": (
        "the control half of UNetControlNetXSModel, which builds one beside its UNet (swept there); "
        "its own forward refuses to run alone"
    ),
    **{
        wrapper: _WRAPPER.format(single, single)
        for wrapper, single in (
            ("MultiAdapter", "T2IAdapter"),
            ("MultiControlNetModel", "ControlNetModel"),
            ("MultiControlNetUnionModel", "ControlNetUnionModel"),
            ("FluxMultiControlNetModel", "FluxControlNetModel"),
            ("SD3MultiControlNetModel", "SD3ControlNetModel"),
            ("HunyuanDiT2DMultiControlNetModel", "HunyuanDiT2DControlNetModel"),
            ("QwenImageMultiControlNetModel", "QwenImageControlNetModel"),
        )
    },
}

# Classes whose forward calls a package that diffusers imports only where it is installed (it
# checks with its own `is_<package>_available`): swept there, left out here otherwise.
NEEDS_PACKAGE: dict[str, str] = {
    "CosmosTransformer3DModel": "torchvision",  # resizes its padding mask with torchvision.transforms
    "CosmosControlNetModel": "torchvision",  # so does the Cosmos ControlNet, unconditionally
}

_TEXT_WIDTHS = (
    "cross_attention_dim",
    "joint_attention_dim",
    "text_dim",
    "caption_channels",
    "text_embed_dim",
    "text_hidden_dim",
    "encoder_hid_dim",
    "cross_attn_dim",
    "encoder_hidden_size",
)
_LATENTS = ("sample", "hidden_states", "x", "latents", "latent", "z")


def model_classes() -> dict[str, type]:
    """Every `torch.nn.Module` class `diffusers.models` exports, by name."""
    found = {}
    for name in sorted(getattr(diffusers.models, "__all__", None) or dir(diffusers.models)):
        if name.startswith("_"):
            continue
        value = getattr(diffusers.models, name, None)
        if inspect.isclass(value) and issubclass(value, torch.nn.Module):
            found[name] = value
    return found


def left_out() -> dict[str, str]:
    """The exported classes not swept here, each with why: `LEFT_OUT`, and those of
    `NEEDS_PACKAGE` whose package is not installed."""
    missing = {
        name: f"its forward needs {package}, which is not installed here"
        for name, package in NEEDS_PACKAGE.items()
        if not getattr(diffusers.utils, f"is_{package}_available")()
    }
    reasons = {**LEFT_OUT, **missing}
    return {name: reasons[name] for name in model_classes() if name in reasons}


def specs() -> list[ModelSpec]:
    """One unresolved spec per exported model class not left out here."""
    skipped = left_out()
    return [
        ModelSpec(model=name, source=SUITE, class_path=f"diffusers.models:{name}", stratum=_stratum(name))
        for name in model_classes()
        if name not in skipped
    ]


def _stratum(name: str) -> str:
    lowered = name.lower()
    for stratum in ("controlnet", "adapter", "autoencoder", "vae", "unet", "transformer"):
        if stratum in lowered:
            return "autoencoder" if stratum == "vae" else stratum
    return "other"


def tiny_config(name: str, model_class: type) -> dict[str, Any]:
    """The class's defaults shrunk by the rules, with its recipe's init arguments laid over them."""
    recipe = RECIPES.get(name)
    return {**tiny(defaults(model_class)), **(recipe.init if recipe else {})}


def instantiate(spec: ModelSpec, device: str | torch.device = "cpu") -> torch.nn.Module:
    model_class = import_object(spec.class_path)
    torch.manual_seed(spec.seed)
    try:
        model = model_class(**decode(dict(spec.config or {})))
    except ImportError as error:
        raise MissingDependency(describe_error(error)) from error
    for method in spec.after_init:
        getattr(model, method)()
    return model.eval().to(device)


def build(spec: ModelSpec, device: str = "cpu") -> Built:
    if spec.config is None:
        recipe = RECIPES.get(spec.model)
        spec = spec.model_copy(
            update={
                "config": encode(tiny_config(spec.model, import_object(spec.class_path))),
                "after_init": list(recipe.after_init) if recipe else [],
            }
        )
    model = instantiate(spec, device)
    if not spec.inputs:
        spec = _resolve(model, spec, device)
        model = instantiate(spec, device)  # fresh: the tries may have touched buffers
    return Built(model, materialize_inputs(spec.inputs, spec.seed, device), spec)


def _resolve(model: torch.nn.Module, spec: ModelSpec, device: str) -> ModelSpec:
    """`spec` with the first candidate inputs that `model` runs on eagerly."""
    failures: list[str] = []
    recipe = RECIPES.get(spec.model)
    generic = candidate_inputs(spec.model, decode(dict(spec.config or {})), _forward_parameters(model))
    for inputs in [recipe.inputs] if recipe and recipe.inputs else generic:
        try:
            eager_run(model, materialize_inputs(inputs, spec.seed, device))
        except Exception as error:
            failures.append(describe_error(error)[:200])
            continue
        return spec.model_copy(
            update={"inputs": inputs, "recipe": "diffusers", "params": count_params(model)}
        )
    distinct = list(dict.fromkeys(failures))
    raise NoRecipe("; ".join(distinct[:3]) or "no input of a known kind fits its forward()")


def _forward_parameters(model: torch.nn.Module) -> dict[str, inspect.Parameter]:
    parameters = inspect.signature(model.forward).parameters
    return {name: p for name, p in parameters.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


def _latent_shapes(name: str, channels: int, size: int) -> Iterator[list[int]]:
    """Latent shapes to try, the model's likeliest rank first (from its class name)."""
    video = any(word in name for word in ("3D", "Video", "Temporal", "Motion", "Wan", "Mochi", "Allegro"))
    audio = "1D" in name or "Audio" in name
    square = [1, channels, size, size]
    framed = [1, channels, FRAMES, size, size]
    line = [1, channels, size * 4]
    packed = [1, size * size // 4, channels]
    ordered = [line, square, framed] if audio else [framed, square] if video else [square, framed]
    yield from [*ordered, [1, FRAMES, channels, size, size], packed, line]


def candidate_inputs(
    name: str, config: dict[str, Any], parameters: dict[str, inspect.Parameter]
) -> Iterator[list[InputSpec]]:
    """Input lists of the right kinds for `forward(**parameters)`, likeliest first."""
    latent = next((p for p in parameters if p in _LATENTS), None)
    if latent is None:
        return
    channels = next(
        (config[k] for k in ("in_channels", "in_dim", "num_channels", "input_channels") if config.get(k)), 4
    )
    size = int(config.get("sample_size") or SAMPLE_SIZE) if isinstance(config.get("sample_size"), int) else 16
    width = next((config[k] for k in _TEXT_WIDTHS if isinstance(config.get(k), int)), 32)
    for shape in _latent_shapes(name, int(channels), size):
        for timestep_dtype, pixels in (("int64", True), ("float32", True), ("float32", False)):
            if not pixels and "controlnet_cond" not in parameters:
                continue
            inputs = [InputSpec(name=latent, shape=shape, dtype="float32")]
            inputs += _conditioning(parameters, config, width, shape, timestep_dtype, pixels)
            yield inputs


def _conditioning(
    parameters: dict[str, inspect.Parameter],
    config: dict[str, Any],
    width: int,
    latent: list[int],
    dtype: str,
    pixels: bool,
) -> list[InputSpec]:
    """The timestep, text states, pooled projections and position ids `forward` takes."""
    inputs = []
    for name in parameters:
        if name in _TIMESTEPS and (name in _FIRST_TIMESTEPS or _required(parameters[name])):
            inputs.append(InputSpec(name=name, shape=[1], dtype=dtype, kind="randint", low=1, high=999))
        elif name == "timestep_ratio":
            inputs.append(InputSpec(name=name, shape=[1], dtype="float32", kind="ones"))
        elif name == "fps":
            inputs.append(InputSpec(name=name, shape=[1], dtype="int64", kind="randint", low=1, high=30))
        elif name == "image_latents":
            inputs.append(InputSpec(name=name, shape=list(latent), dtype="float32"))
        elif name == "encoder_hidden_states":
            inputs.append(InputSpec(name=name, shape=[1, TEXT_TOKENS, width], dtype="float32"))
        elif name == "pooled_projections":
            pooled = config.get("pooled_projection_dim") or width
            inputs.append(InputSpec(name=name, shape=[1, int(pooled)], dtype="float32"))
        elif name == "img_ids":
            tokens = latent[1] if len(latent) == 3 else latent[-1] * latent[-2]
            inputs.append(
                InputSpec(name=name, shape=[tokens, _id_axes(config)], dtype="float32", kind="zeros")
            )
        elif name == "txt_ids":
            inputs.append(
                InputSpec(name=name, shape=[TEXT_TOKENS, _id_axes(config)], dtype="float32", kind="zeros")
            )
        elif name in _LATENT_SIZES and parameters[name].default is None:
            # The latents' own size, which some models take as numbers beside them (LTX).
            size = _latent_size(latent).get(name)
            if size is not None:
                inputs.append(InputSpec(name=name, shape=[], dtype="int64", kind="literal", values=size))
        elif name == "encoder_attention_mask":
            inputs.append(InputSpec(name=name, shape=[1, TEXT_TOKENS], dtype="int64", kind="ones"))
        elif name == "class_labels" and _classes(config, parameters[name]):
            high = _classes(config, parameters[name])
            inputs.append(InputSpec(name=name, shape=[1], dtype="int64", kind="randint", high=high))
        elif name == "controlnet_cond":
            inputs.append(
                InputSpec(name=name, shape=_condition_shape(config, latent, pixels), dtype="float32")
            )
    return inputs


_LATENT_SIZES = ("num_frames", "height", "width")
# The diffusion timestep, and the second one of the flow models that take the step's start and
# end (given only where forward requires it: where it is optional it switches to another mode).
_FIRST_TIMESTEPS = ("timestep", "timesteps", "t")
_TIMESTEPS = (*_FIRST_TIMESTEPS, "timestep_r", "r_timestep")


def _required(parameter: inspect.Parameter) -> bool:
    return parameter.default is inspect.Parameter.empty


def _latent_size(latent: list[int]) -> dict[str, int]:
    """Frames, height and width of latents shaped (batch, channels, [frames,] height, width), or
    packed as (batch, tokens, channels): one frame of a square of tokens."""
    if len(latent) == 3:
        side = math.isqrt(latent[1])
        return {"num_frames": 1, "height": side, "width": side} if side * side == latent[1] else {}
    if len(latent) < 4:
        return {}
    size = {"height": latent[-2], "width": latent[-1]}
    return {**size, "num_frames": latent[2]} if len(latent) == 5 else size


def _id_axes(config: dict[str, Any]) -> int:
    """How many position axes an image or text id has: one per rotary axis (Flux: 3)."""
    axes = config.get("axes_dims_rope")
    return len(axes) if isinstance(axes, list | tuple) else 3


def _classes(config: dict[str, Any], parameter: inspect.Parameter) -> int | None:
    """How many class labels a class-conditioned model embeds (None: it takes none)."""
    count = config.get("num_embeds_ada_norm") or config.get("num_class_embeds")
    if count:
        return int(count)
    return 10 if _required(parameter) else None


def _condition_shape(config: dict[str, Any], latent: list[int], pixels: bool) -> list[int]:
    """A ControlNet's condition: an image 8 times the latents' size (UNet ControlNets embed it
    down to them), or latents like the sample (the transformer ControlNets)."""
    if not pixels or len(latent) < 4:
        return list(latent)
    channels = int(config.get("conditioning_channels") or 3)
    return [latent[0], channels, *latent[2:-2], latent[-2] * 8, latent[-1] * 8]
