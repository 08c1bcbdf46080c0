"""Size passes: widths, feed-forward sizes, heads, experts, vocabularies and image sizes by the
generic rules (`rules.SCALAR_RULES`), per-stage lists of hierarchical towers, key/value heads
against the original head count, stems that follow their first stage, and the sizes a built
model needs that a default leaves None."""

from __future__ import annotations

import re
from typing import Any

from triagebot.corpus.shrink.level import Level
from triagebot.corpus.shrink.rules import (
    HEAD_KEYS,
    KV_HEAD_KEYS,
    SCALAR_RULES,
    STAGE_DEPTH_KEYS,
    STAGE_WIDTH_KEYS,
    STEM_WIDTH_KEYS,
)
from triagebot.corpus.shrink.sizes import EXPERTS, HEAD_DIM, HEADS, IMAGE, LAYERS, VOCAB, WIDTH


def shrink_scalars(config: dict[str, Any], level: Level) -> None:
    """Widths, feed-forward sizes, heads, experts, vocabularies, image sizes: the generic rules
    (`rules.SCALAR_RULES`), first match wins; key/value heads wait for `shrink_kv_heads`."""
    for key, value in list(config.items()):
        if not isinstance(value, int) or isinstance(value, bool):
            continue
        if HEAD_KEYS.match(key) and not KV_HEAD_KEYS.match(key) and value > HEADS:
            level.heads = value
        if key == "embed_dim" and isinstance(config.get("depths"), list) and value > 16:
            # The first stage of a hierarchical tower: later stages double it.
            config[key] = 16
            continue
        if key == "window_size" and isinstance(config.get("depths"), list) and value > 2:
            # Windowed vision attention (Swin): windows must tile the tiny feature maps.
            config[key] = 2
            continue
        if _shrink_image_size(config, key, value):
            continue
        if KV_HEAD_KEYS.match(key):
            continue  # set by shrink_kv_heads, against the original head count
        for rule, ceiling in SCALAR_RULES:
            if (rule.match(key) if isinstance(rule, re.Pattern) else key in rule) and value > ceiling:
                config[key] = ceiling
                break


def _shrink_image_size(config: dict[str, Any], key: str, value: int) -> bool:
    """An image size above IMAGE shrinks to what the patch size and the stage count allow."""
    # LayoutLMv3 names its patch tower's image size `input_size`.
    image_key = key in ("image_size", "img_size") or (key == "input_size" and "patch_size" in config)
    if not (image_key and value > IMAGE):
        return False
    patch = config.get("patch_size")
    patch = patch[0] if isinstance(patch, list) else patch
    size = max(IMAGE, 4 * patch) if isinstance(patch, int) else IMAGE
    if isinstance(patch, int) and isinstance(config.get("depths"), list):
        # Hierarchical towers halve the map per stage: the last stage keeps 2x2.
        size = max(size, patch * 2 ** len(config["depths"]))
    config[key] = size
    if isinstance(patch, int) and isinstance(config.get("image_embedding_size"), int):
        # The patch grid a prompt encoder (SAM) sizes its dense embeddings by.
        config["image_embedding_size"] = size // patch
    return True


def shrink_stage_lists(config: dict[str, Any], level: Level) -> None:
    """Per-stage lists of hierarchical towers: depths and block counts, stage widths (scaled
    together), heads."""
    for key, value in list(config.items()):
        if not (
            isinstance(value, list)
            and value
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        ):
            continue
        if STAGE_DEPTH_KEYS.match(key):
            config[key] = [min(v, LAYERS) for v in value]
        elif STAGE_WIDTH_KEYS.match(key) and max(value) > WIDTH:
            config[key] = _scale_stage_widths(value)
            level.stem_widths[value[0]] = config[key][0]
        elif key in ("num_heads", "num_attention_heads", "heads") and max(value) > 2:
            config[key] = [min(v, 2) for v in value]


def _scale_stage_widths(widths: list[int]) -> list[int]:
    top = max(widths) or 1
    return [max(8, round(w * WIDTH / top / 8) * 8) for w in widths]


def shrink_kv_heads(config: dict[str, Any], level: Level) -> None:
    """Key/value heads: as many as heads where the family is plain multi-head, else 2 (1 stays 1)."""
    heads_original = level.heads
    for key, value in list(config.items()):
        if KV_HEAD_KEYS.match(key) and isinstance(value, int) and not isinstance(value, bool):
            if heads_original and value >= heads_original:
                config[key] = HEADS
            elif value > 1:
                config[key] = min(2, HEADS)
        elif (
            re.search(r"key_value_heads|kv_heads", key)
            and isinstance(value, list)
            and value
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            and heads_original
        ):
            # Per-layer KV head counts (Sapiens 2): the same rule, layer by layer.
            config[key] = [HEADS if v >= heads_original else min(v, 2) for v in value]


def follow_stem_widths(config: dict[str, Any], level: Level) -> None:
    """Scalars that feed a hierarchical tower's first stage (its stem, or the width the config
    repeats next to the stage list) follow that stage's scaled width."""
    for key, value in level.before.items():
        if (
            level.stem_widths
            and STEM_WIDTH_KEYS.match(key)
            and isinstance(value, int)
            and value in level.stem_widths
        ):
            config[key] = level.stem_widths[value]


def fill_missing_sizes(config: dict[str, Any], level: Level) -> None:
    """Defaults that are None but required once a model is built (checkpoints normally set them)."""
    # watermarking_depth: SynthID's tournament layers, which its Bayesian detector scores.
    fills = {"vocab_size": VOCAB, "prediction_length": 8, "context_length": 32, "watermarking_depth": 4}
    for key, fill in fills.items():
        if key in config and config[key] is None:
            config[key] = fill
    heads = config.get("num_attention_heads")
    if isinstance(heads, int) and heads > 0:
        if "head_dim" in config and config["head_dim"] is None and isinstance(config.get("hidden_size"), int):
            config["head_dim"] = config["hidden_size"] // heads
        if "num_key_value_heads" in config and config["num_key_value_heads"] is None:
            config["num_key_value_heads"] = heads
    if isinstance(config.get("moe_intermediate_size"), int):
        # A mixture of experts whose expert counts come only from a checkpoint.
        for key, fill in (("n_routed_experts", EXPERTS), ("num_experts_per_tok", 2), ("n_shared_experts", 1)):
            if key in config and config[key] is None:
                config[key] = fill
    if any(isinstance(config.get(k), int) for k in ("n_routed_experts", "num_experts", "num_local_experts")):
        for key in ("num_experts_per_tok",):
            if key in config and config[key] is None:
                config[key] = 2
    for key in ("n_routed_experts", "num_experts"):
        if key in config and config[key] is None and config.get("num_experts_per_tok"):
            config[key] = EXPERTS
    if isinstance(config.get("rotary_dim"), int) and config["rotary_dim"] > HEAD_DIM:
        config["rotary_dim"] = HEAD_DIM
