"""The passes that shrink one config level, in order: `PASSES` is read top to bottom.

`shrink_level(config)` runs every pass over one config dict; the second pass runs it on each
nested sub-config first (text, vision, audio, ...), so every level is shrunk by the same rules.
Each pass is one small function `(config, level)` that edits the dict in place; `Level`
(`level.py`) carries what the passes of one level share: the values before any pass ran, the
layer count chosen, the original head count and the stage widths the stem follows.

- Towers and nested settings (here): timm backbones become transformers ResNets, sub-configs
  and per-layer overrides are shrunk as levels of their own.
- Layers (`layers.py`): counts go to 2; per-layer lists (`layer_types`, hybrid patterns) keep
  one layer of each distinct type, in order, so that mixed sliding/full, linear/full or
  dense/MoE stacks survive, and the layer count follows the list.
- Sizes (`scalars.py`): widths go to `WIDTH`, heads to 4 (key/value heads to 2, or 1 when the
  family is MQA, or 4 when it is plain multi-head), so every divisibility constraint holds;
  experts go to 4 with at most 2 routed per token.
- Relations (`relations.py`): what a config states twice (splits of a width, stage chains,
  RoPE sections, SSM heads) is restored after the sizes change.
- The family fixes (`families.py`) come last (here).
"""

from __future__ import annotations

import copy
from typing import Any

from triagebot.corpus.shrink.families import BY_MODEL_TYPE
from triagebot.corpus.shrink.layers import (
    clamp_feature_layers,
    clamp_layer_indices,
    clamp_layer_positions,
    keep_an_attention_layer,
    keep_kv_sharing,
    shrink_layer_counts,
)
from triagebot.corpus.shrink.level import Level, Pass, is_sub_config, without_checkpoint_keys
from triagebot.corpus.shrink.relations import (
    fit_feature_sizes,
    fit_image_tiles,
    keep_codec_streams,
    keep_head_split,
    keep_ssm_heads_consistent,
    keep_width_splits,
    narrow_conv_stacks,
    narrow_stage_channels,
    scale_rotary_sections,
    shrink_vocoder_stages,
)
from triagebot.corpus.shrink.scalars import (
    fill_missing_sizes,
    follow_stem_widths,
    shrink_kv_heads,
    shrink_scalars,
    shrink_stage_lists,
)


def shrink_level(config: dict[str, Any]) -> None:
    """Shrink one config dict in place: every pass, in order (sub-configs first, by the second)."""
    level = Level(before=dict(config))
    for step in PASSES:
        step(config, level)


# --- towers and nested settings ---------------------------------------------------------------


def timm_backbones_as_resnet(config: dict[str, Any], level: Level) -> None:
    """A timm backbone (DETR-style detectors default to timm's ResNet-50, and timm is optional)
    as the transformers ResNet those configs also accept: same input channels and feature
    stages (timm's and transformers' indices both count the stem as 0)."""
    for key, value in list(config.items()):
        if is_sub_config(value) and value["model_type"] == "timm_backbone":
            config[key] = _timm_backbone_as_resnet(value)


def _timm_backbone_as_resnet(backbone: dict[str, Any]) -> dict[str, Any]:
    from transformers import ResNetConfig

    kwargs = {"num_channels": backbone.get("num_channels") or 3}
    if isinstance(backbone.get("out_indices"), list):
        kwargs["out_indices"] = backbone["out_indices"]
    return without_checkpoint_keys(ResNetConfig(**kwargs).to_dict())


def shrink_sub_configs(config: dict[str, Any], level: Level) -> None:
    """Nested sub-configs (text, vision, audio towers; lists of them) are shrunk first."""
    for value in config.values():
        if is_sub_config(value):
            shrink_level(value)
        elif isinstance(value, list):
            for item in value:
                if is_sub_config(item):
                    shrink_level(item)


def shrink_layer_indexed(config: dict[str, Any], level: Level) -> None:
    """Per-layer settings keyed by layer index (see `_shrink_layer_indexed`)."""
    for key, value in list(config.items()):
        if "layer" in key and _is_layer_indexed(value):
            config[key] = _shrink_layer_indexed(value, level.layers)


def _is_layer_indexed(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and bool(value)
        and all(isinstance(k, int) or (isinstance(k, str) and k.isdigit()) for k in value)
    )


def _shrink_layer_indexed(value: dict, layers: int) -> dict:
    """Per-layer settings keyed by layer index keep the layers that still exist; if none
    does, the first setting moves to the last layer so that the special layer still appears."""
    kept = {k: v for k, v in value.items() if int(k) < layers}
    if not kept:
        first = min(value, key=int)
        kept = {(str(layers - 1) if isinstance(first, str) else layers - 1): value[first]}
    for setting in kept.values():
        if isinstance(setting, dict):  # per-layer overrides of sizes (heads, ranks) shrink too
            shrink_level(setting)
    return kept


# --- family fixes -----------------------------------------------------------------------------


def apply_family_fixes(config: dict[str, Any], level: Level) -> None:
    """The family's fix (`families.py`), last: a dict value goes into a sub-config that has no
    model type of its own, any other value replaces the key's."""
    fix = BY_MODEL_TYPE.get(str(config.get("model_type", "")))
    for key, value in copy.deepcopy(dict(fix.values) if fix else {}).items():
        if isinstance(value, dict) and is_sub_config(config.get(key)):
            config[key].update(value)  # into a sub-config that has no model type of its own
        else:
            config[key] = value


PASSES: tuple[Pass, ...] = (
    timm_backbones_as_resnet,  # first: the ResNet that replaces it is shrunk like any tower
    shrink_sub_configs,
    shrink_layer_counts,
    clamp_layer_positions,
    keep_an_attention_layer,
    clamp_layer_indices,
    shrink_layer_indexed,
    clamp_feature_layers,
    keep_kv_sharing,
    shrink_scalars,
    shrink_stage_lists,
    shrink_kv_heads,
    follow_stem_widths,
    fill_missing_sizes,
    keep_width_splits,
    keep_head_split,
    fit_image_tiles,
    fit_feature_sizes,
    keep_codec_streams,
    shrink_vocoder_stages,  # before narrow_conv_stacks, which sizes channels by the stage count
    narrow_conv_stacks,
    narrow_stage_channels,
    scale_rotary_sections,
    keep_ssm_heads_consistent,
    apply_family_fixes,  # last: a fix states the value the model needs, whatever the rules did
)
