"""Tiny configs for diffusers models, from their constructors' own defaults (torch-free).

A diffusers model takes its config as keyword arguments of `__init__` (`register_to_config`),
so its defaults are the production model's. The rules below shrink them by argument name, the
way diffusers' own tests write their tiny configs: one layer per stage, two heads of 8
channels, 32-channel blocks (a multiple of the 8 norm groups), 32-wide text and pooled
projections; the rotary axes are cut to the new head width. Anything a rule does not name is
kept, so a model's own structure (block types, patch sizes, in/out channels) is untouched.
"""

from __future__ import annotations

import inspect
from typing import Any

HEADS = 2
HEAD_WIDTH = 8
BLOCK_CHANNELS = 32
NORM_GROUPS = 8
# Text, pooled, caption and feed-forward widths: a head's width times the heads, since many
# models project text straight into the attention's inner width.
WIDTH = HEADS * HEAD_WIDTH
SAMPLE_SIZE = 16

_LAYER_COUNTS = (
    "num_layers",
    "num_single_layers",
    "layers_per_block",
    "num_blocks",
    "depth",
    "transformer_layers_per_block",
    "num_refiner_layers",
    "num_encoder_layers",
    "num_decoder_layers",
)
_WIDTHS = (
    "cross_attention_dim",
    "joint_attention_dim",
    "pooled_projection_dim",
    "caption_channels",
    "caption_projection_dim",
    "text_dim",
    "text_embed_dim",
    "text_hidden_dim",
    "encoder_hid_dim",
    "ffn_dim",
    "hidden_size",
    "inner_dim",
    "time_embed_dim",
    "cross_attn_dim",
    "embedding_dim",
    "encoder_hidden_size",
)


def defaults(model_class: type) -> dict[str, Any]:
    """The keyword arguments of `model_class.__init__` that have defaults, with them."""
    parameters = inspect.signature(model_class.__init__).parameters.values()
    return {
        p.name: p.default
        for p in parameters
        if p.name != "self" and p.default is not inspect.Parameter.empty and p.kind == p.POSITIONAL_OR_KEYWORD
    }


def _smaller(value: Any, target: int) -> Any:
    """`value` (an int, or a tuple or list of them) with each int above `target` made `target`."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return min(value, target)
    if isinstance(value, tuple | list) and all(isinstance(item, int) for item in value):
        return type(value)(min(item, target) for item in value)
    return value


def _rotary_axes(axes: Any, width: int) -> Any:
    """Rotary axes (even widths summing to a head's width) cut to a head of `width` channels."""
    if not isinstance(axes, tuple | list) or not axes or not all(isinstance(a, int) for a in axes):
        return axes
    share = max(2, (width // len(axes)) // 2 * 2)
    cut = [share] * len(axes)
    cut[-1] = width - share * (len(axes) - 1)
    return type(axes)(cut) if cut[-1] > 0 else axes


def _counts_layers(name: str) -> bool:
    """`num_text_layers`, `n_refiner_layers`, `down_num_layers_per_block`: a count of layers or
    blocks of one stage (not `vace_layers`, which lists layer indices)."""
    counted = name.startswith(("num_", "n_")) or "num_layers" in name
    return counted and name.endswith(("_layers", "_blocks", "_layers_per_block"))


def tiny(config: dict[str, Any]) -> dict[str, Any]:
    """`config` (a model's defaults) shrunk by the module's rules."""
    small = dict(config)
    for name, value in config.items():
        if name in _LAYER_COUNTS or _counts_layers(name):
            small[name] = _smaller(value, 1)
        elif name.endswith("heads"):
            small[name] = _smaller(value, HEADS)
        elif name == "attention_head_dim" or name.endswith("head_dim"):
            small[name] = _smaller(value, HEAD_WIDTH)
        elif name in ("block_out_channels", "channels") and isinstance(value, tuple | list):
            small[name] = type(value)(BLOCK_CHANNELS for _ in value)
        elif name in ("norm_num_groups", "groups") or name.endswith("norm_groups"):
            small[name] = _smaller(value, NORM_GROUPS)
        elif name in _WIDTHS or name.endswith("intermediate_size"):
            small[name] = _smaller(value, WIDTH)
        elif name == "sample_size":
            small[name] = _smaller(value, SAMPLE_SIZE)
    width = small.get("attention_head_dim")
    for name, value in config.items():
        if "axes_dim" in name and isinstance(width, int):
            small[name] = _rotary_axes(value, width)
    return small
