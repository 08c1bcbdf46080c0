"""The passes that shrink one config level, in order: `PASSES` is read top to bottom.

`shrink_level(config)` runs every pass over one config dict; the second pass runs it on each
nested sub-config first (text, vision, audio, ...), so every level is shrunk by the same rules.
Each pass is one small function `(config, level)` that edits the dict in place; `Level` carries
what the passes of one level share: the values before any pass ran, the layer count chosen, the
original head count and the stage widths the stem follows.

- Layer counts go to 2; per-layer lists (`layer_types`, hybrid patterns) keep one layer of
  each distinct type, in order, so that mixed sliding/full, linear/full or dense/MoE stacks
  survive, and the layer count follows the list.
- Widths go to `WIDTH`, heads to 4 (key/value heads to 2, or 1 when the family is MQA,
  or 4 when it is plain multi-head), so every divisibility constraint holds.
- Experts go to 4 with at most 2 routed per token.
- The relations a config states twice (splits of a width, stage chains, RoPE sections, SSM
  heads) are restored after the sizes change.
- The family fixes (`families.py`) come last.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from triagebot.corpus.shrink.families import BY_MODEL_TYPE, HARD_CODED_MROPE
from triagebot.corpus.shrink.rules import (
    FFN_KEYS,
    HEAD_KEYS,
    KV_HEAD_KEYS,
    LAYER_COUNT,
    LAYER_KINDS_KEY,
    NOT_LAYER_COUNT,
    PER_LAYER_KEY,
    PER_LAYER_STRING_KEY,
    SCALAR_RULES,
    STAGE_DEPTH_KEYS,
    STAGE_WIDTH_KEYS,
    STEM_WIDTH_KEYS,
)
from triagebot.corpus.shrink.sizes import EXPERTS, FFN, HEAD_DIM, HEADS, IMAGE, LAYERS, VOCAB, WIDTH

MAX_KINDS = 2 * LAYERS  # more distinct values than this is data, not a layer-kind list


@dataclass
class Level:
    """What the passes over one config level share."""

    before: dict[str, Any]  # the level's values before any pass ran (sub-configs shrink in place)
    layers: int = LAYERS  # the layer count chosen: more than LAYERS when a per-layer list needs it
    heads: int | None = None  # the original attention head count, where it was shrunk
    stem_widths: dict[int, int] = field(default_factory=dict)  # a stage list's first width -> scaled


Pass = Callable[[dict[str, Any], Level], None]


def shrink_level(config: dict[str, Any]) -> None:
    """Shrink one config dict in place: every pass, in order (sub-configs first, by the second)."""
    level = Level(before=dict(config))
    for step in PASSES:
        step(config, level)


def is_sub_config(value: Any) -> bool:
    return isinstance(value, dict) and "model_type" in value


def distinct_in_order(values: list[Any]) -> list[Any]:
    kept: list[Any] = []
    for value in values:
        if value not in kept:
            kept.append(value)
    return kept


# --- towers -----------------------------------------------------------------------------------


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
    resnet = ResNetConfig(**kwargs).to_dict()
    for key in ("transformers_version", "_name_or_path", "architectures", "id2label", "label2id"):
        resnet.pop(key, None)
    return resnet


def shrink_sub_configs(config: dict[str, Any], level: Level) -> None:
    """Nested sub-configs (text, vision, audio towers; lists of them) are shrunk first."""
    for value in config.values():
        if is_sub_config(value):
            shrink_level(value)
        elif isinstance(value, list):
            for item in value:
                if is_sub_config(item):
                    shrink_level(item)


# --- layers -----------------------------------------------------------------------------------


def shrink_layer_counts(config: dict[str, Any], level: Level) -> None:
    """Layer counts go to LAYERS, or to as many as a per-layer list needs to keep one layer of
    each kind; per-layer lists follow."""
    layer_keys = [
        k
        for k, v in config.items()
        if isinstance(v, int)
        and not isinstance(v, bool)
        and LAYER_COUNT.match(k)
        and not NOT_LAYER_COUNT.search(k)
    ]
    hierarchical = "depths" in config or "stage_names" in config
    if hierarchical:
        # Stage counts of a hierarchical backbone, tied to stage_names/out_features: kept.
        layer_keys = [k for k in layer_keys if k not in ("num_layers", "num_stages", "num_encoder_blocks")]
    originals = {k: config[k] for k in layer_keys}
    main = config.get("num_hidden_layers") or (
        0 if hierarchical else config.get("num_layers") or max(originals.values(), default=0)
    )
    if not main and not hierarchical:
        # No count: the list of layer kinds is the layer count (Nemotron-H lists all 52 layers).
        main = max(
            (len(v) for k, v in config.items() if LAYER_KINDS_KEY.match(k) and isinstance(v, list)), default=0
        )
    new_layers = LAYERS
    if isinstance(main, int) and main > LAYERS:
        for key, value in config.items():
            new_layers = max(new_layers, _layers_needed(key, value, main, LAYERS))
        for key, value in list(config.items()):
            config[key] = _shrink_per_layer(key, value, main, new_layers)
    for key, value in originals.items():
        if value > 0:
            config[key] = min(value, new_layers if value == main else LAYERS)
    if any(config[key] != value for key, value in originals.items()):
        # Backbone stage names are derived from the layer count: let the config derive them again.
        for key in ("stage_names", "out_features", "out_indices"):
            config.pop(key, None)
    level.layers = new_layers


def _per_layer_kinds(key: str, value: Any, original_layers: int) -> list[Any] | None:
    """The distinct kinds of a per-layer list/string (one entry per layer), or None if it is not one."""
    per_layer_key = PER_LAYER_STRING_KEY if isinstance(value, str) else PER_LAYER_KEY
    if not (isinstance(value, list | str) and per_layer_key.search(key) and len(value) == original_layers):
        return None
    items = list(value)
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in items):
        return None  # per-layer numbers (sizes, scales) are truncated, not sorted into kinds
    kinds = distinct_in_order(items)
    return kinds if len(kinds) <= MAX_KINDS else None


def _layers_needed(key: str, value: Any, original_layers: int, layers: int) -> int:
    """Layers a per-layer list needs to keep every kind; a shorter pattern the model cycles
    through (block types) needs its whole length when its first `layers` entries miss a kind."""
    kinds = _per_layer_kinds(key, value, original_layers)
    if kinds is not None:
        return max(layers, len(kinds))
    per_layer_key = PER_LAYER_STRING_KEY if isinstance(value, str) else PER_LAYER_KEY
    if isinstance(value, list | str) and per_layer_key.search(key) and layers < len(value) < original_layers:
        items = list(value)
        if len(distinct_in_order(items[:layers])) < len(distinct_in_order(items)) <= MAX_KINDS:
            return min(len(items), MAX_KINDS)
    return layers


def _shrink_per_layer(key: str, value: Any, original_layers: int, layers: int) -> Any:
    """A per-layer list/string cut to `layers` entries, one of each kind first, in order."""
    if not isinstance(value, list | str) or len(value) != original_layers or original_layers <= layers:
        return value
    kinds = _per_layer_kinds(key, value, original_layers)
    if kinds is None:
        per_layer_key = PER_LAYER_STRING_KEY if isinstance(value, str) else PER_LAYER_KEY
        numeric = isinstance(value, list) and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in value
        )
        if numeric and FFN_KEYS.match(key):  # per-layer feed-forward widths (Gemma 3n)
            return [min(v, FFN) for v in value[:layers]]
        return value[:layers] if per_layer_key.search(key) or numeric else value
    items = list(value)
    kept = (kinds + items[:layers])[:layers] if len(kinds) < layers else kinds[:layers]
    return "".join(kept) if isinstance(value, str) else kept


def clamp_layer_positions(config: dict[str, Any], level: Level) -> None:
    """Periods, offsets and layer ids that name a layer stay within the layers left."""
    new_layers = level.layers
    for key, value in list(config.items()):
        if not isinstance(value, int) or isinstance(value, bool) or "layer" not in key:
            continue
        if key.endswith("_period") and value > new_layers:
            config[key] = new_layers
        elif key.endswith("_offset") and value >= new_layers:
            config[key] = new_layers - 1
        elif key.endswith("_layer_id") and value >= new_layers:
            # The layer after which a tower merges its patches (MiniCPM-V's insert_layer_id, also
            # stated on the parent config, which copies it into the tower): the last one left.
            config[key] = new_layers - 1


def keep_an_attention_layer(config: dict[str, Any], level: Level) -> None:
    """Hybrid Mamba stacks keep one attention layer, the last."""
    new_layers = level.layers
    if "attn_layer_indices" in config and config["attn_layer_indices"] is None and "mamba_d_state" in config:
        # Hybrid Mamba stacks (Bamba) place attention only where a checkpoint says: without
        # one attention layer their cache has nothing to measure the sequence by.
        config["attn_layer_indices"] = [new_layers - 1]
    kinds = config.get("layer_types")
    if isinstance(kinds, list) and kinds and set(kinds) == {"linear_attention"} and "mamba_d_state" in config:
        # The same where a default lists Mamba layers only (Granite MoE hybrid).
        config["layer_types"] = [*kinds[:-1], "full_attention"]


def clamp_layer_indices(config: dict[str, Any], level: Level) -> None:
    """Lists of layer indices keep the layers that still exist, or the last one."""
    new_layers = level.layers
    for key, value in list(config.items()):
        if (
            # SAM-style towers name their global-attention layers `global_attn_indexes`.
            key.endswith(("_layer_indices", "_layers_idx", "_layer_ids", "_layers_indices", "_attn_indexes"))
            and isinstance(value, list)
            and value
            and all(isinstance(v, int) for v in value)
        ):
            kept = [v for v in value if 0 <= v < new_layers]
            config[key] = kept or [new_layers - 1]


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


def clamp_feature_layers(config: dict[str, Any], level: Level) -> None:
    """Which tower layers feed a projector (`vision_feature_layer(s)`, `select_layer`): indices
    into the tower's hidden states, which a shrunk tower has LAYERS + 1 of."""

    def clamp(index: int) -> int:
        return max(index, -(LAYERS + 1)) if index < 0 else min(index, LAYERS - 1)

    for key, value in list(config.items()):
        if not ("feature_layer" in key or key == "select_layer"):
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            config[key] = clamp(value)
        elif isinstance(value, list) and value and all(isinstance(v, int) for v in value):
            config[key] = distinct_in_order([clamp(v) for v in value])


def keep_kv_sharing(config: dict[str, Any], level: Level) -> None:
    """Layers reusing an earlier layer's KV cache: every layer type keeps a layer that makes one."""
    shared, types = config.get("num_kv_shared_layers"), config.get("layer_types")
    if isinstance(shared, int) and shared > 0 and isinstance(types, list) and types:
        config["num_kv_shared_layers"] = min(shared, len(types) - len(distinct_in_order(types)))


# --- sizes ------------------------------------------------------------------------------------


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


# --- relations a config states twice ---------------------------------------------------------


def keep_width_splits(config: dict[str, Any], level: Level) -> None:
    """Per-part dims that split the width between them (Reformer's axial position embeddings)
    keep summing to it."""
    original_width = level.before.get("hidden_size")
    width = config.get("hidden_size")
    if not (isinstance(original_width, int) and isinstance(width, int) and width != original_width):
        return
    for key, value in list(config.items()):
        if (
            key.endswith(("_dim", "_dims"))
            and isinstance(value, list)
            and len(value) > 1
            and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)
            and sum(value) == original_width
        ):
            config[key] = _split_evenly(value, width)
    coordinate, shape = config.get("coordinate_size"), config.get("shape_size")
    split = isinstance(coordinate, int) and isinstance(shape, int)
    if split and 4 * coordinate + 2 * shape == original_width:
        # LayoutLM v2/v3 concatenate four coordinate and two shape embeddings to the width.
        config["shape_size"] = width // 8
        config["coordinate_size"] = (width - 2 * config["shape_size"]) // 4


def keep_head_split(config: dict[str, Any], level: Level) -> None:
    """Latent attention (MLA) heads made of a plain and a rotary part: a head dim that was their
    sum stays their sum."""
    original = level.before
    nope, rope = config.get("qk_nope_head_dim"), config.get("qk_rope_head_dim")
    if not (isinstance(nope, int) and isinstance(rope, int)):
        return
    for key in ("head_dim", "qk_head_dim"):
        if isinstance(config.get(key), int) and original.get(key) == original.get(
            "qk_nope_head_dim"
        ) + original.get("qk_rope_head_dim"):
            config[key] = nope + rope


def fit_image_tiles(config: dict[str, Any], level: Level) -> None:
    """Tilers (LLaVA-NeXT) pick a tile grid from `image_grid_pinpoints` in pixels of the
    original tower: the tiny tower gets one 1x1 tile grid of its own size."""
    vision = config.get("vision_config")
    if isinstance(config.get("image_grid_pinpoints"), list) and is_sub_config(vision):
        size = vision.get("image_size")
        if isinstance(size, int):
            config["image_grid_pinpoints"] = [[size, size]]


def fit_feature_sizes(config: dict[str, Any], level: Level) -> None:
    """Necks that state their feature maps' sizes (SAM 3: `backbone_feature_sizes`, the ViT's
    patch grid times each `scale_factors` entry) get the sizes of the shrunk image."""
    sizes, scales = config.get("backbone_feature_sizes"), config.get("scale_factors")
    backbone = config.get("backbone_config")
    if not (isinstance(sizes, list) and isinstance(scales, list) and is_sub_config(backbone)):
        return
    image, patch = backbone.get("image_size"), backbone.get("patch_size")
    if isinstance(image, int) and isinstance(patch, int) and patch > 0 and len(scales) >= len(sizes):
        grid = image // patch
        config["backbone_feature_sizes"] = [[int(grid * s)] * 2 for s in scales[: len(sizes)]]


def shrink_vocoder_stages(config: dict[str, Any], level: Level) -> None:
    """HiFi-GAN-style vocoders (BigVGAN, VITS, the unit vocoders) run every resblock kernel, with
    its dilations, at every upsampling stage: LAYERS stages of one kernel each keep every kind of
    block (a third of the kernels and of the stages is most of their compile time)."""
    rates, kernels = config.get("upsample_rates"), config.get("upsample_kernel_sizes")
    blocks, dilations = config.get("resblock_kernel_sizes"), config.get("resblock_dilation_sizes")
    if not all(isinstance(value, list) for value in (rates, kernels, blocks, dilations)):
        return
    if len(rates) == len(kernels) > LAYERS:
        config["upsample_rates"], config["upsample_kernel_sizes"] = rates[:LAYERS], kernels[:LAYERS]
    if len(blocks) == len(dilations) > 1:
        config["resblock_kernel_sizes"], config["resblock_dilation_sizes"] = blocks[:1], dilations[:1]


def narrow_conv_stacks(config: dict[str, Any], level: Level) -> None:
    """Convolutional codecs and VQ autoencoders double their channels at every stage, from a
    base width: the base shrinks so that the last stage stays near `WIDTH`."""
    for ratios_key in ("downsampling_ratios", "upsampling_ratios", "ratios"):
        ratios = config.get(ratios_key)
        filters = config.get("num_filters")
        if isinstance(ratios, list) and isinstance(filters, int) and filters > 2:
            config["num_filters"] = max(2, min(filters, WIDTH >> len(ratios)))
            break
    ratios, base = config.get("downsampling_ratios"), config.get("encoder_hidden_size")
    if isinstance(ratios, list) and isinstance(base, int) and base > 2:
        # DAC and X-Codec 2 name their encoder's base width `encoder_hidden_size`.
        config["encoder_hidden_size"] = max(2, min(base, WIDTH >> len(ratios)))
    rates, initial = config.get("upsample_rates"), config.get("upsample_initial_channel")
    if isinstance(rates, list) and isinstance(initial, int):
        # HiFi-GAN-style vocoders halve their channels at every upsampling stage from the first:
        # WIDTH, or enough for two channels at the last stage.
        config["upsample_initial_channel"] = min(initial, max(WIDTH, 2 ** (len(rates) + 1)))
    multipliers = config.get("channel_multiplier") or config.get("channel_multipliers")
    if isinstance(multipliers, list) and multipliers and isinstance(config.get("base_channels"), int):
        # 32 at least: their GroupNorms use 32 groups.
        config["base_channels"] = max(32, min(config["base_channels"], WIDTH // max(multipliers)))
        if isinstance(config.get("latent_channels"), int):
            config["latent_channels"] = min(config["latent_channels"], 16)
        if isinstance(config.get("num_embeddings"), int):  # the VQ codebook
            config["num_embeddings"] = min(config["num_embeddings"], 256)


def narrow_stage_channels(config: dict[str, Any], level: Level) -> None:
    """Stage channel lists that chain into each other (HGNetV2: a stage's input is the previous
    stage's output, the stem's output the first input) share one scale, so the chain holds."""
    out = config.get("stage_out_channels")
    if not (isinstance(out, list) and out and all(isinstance(v, int) for v in out)) or max(out) <= WIDTH:
        return
    scale = WIDTH / max(out)

    def narrow(width: int) -> int:
        return max(8, round(width * scale / 8) * 8)

    for key in ("stage_in_channels", "stage_mid_channels", "stage_out_channels"):
        value = config.get(key)
        if isinstance(value, list) and all(isinstance(v, int) for v in value):
            config[key] = [narrow(v) for v in value]
    stem = config.get("stem_channels")
    if isinstance(stem, list) and len(stem) > 1 and all(isinstance(v, int) for v in stem):
        config["stem_channels"] = [stem[0], *(narrow(v) for v in stem[1:])]  # the first: image channels
    blocks = config.get("block_configs")
    if isinstance(blocks, list) and all(isinstance(stage, list) for stage in blocks):
        # PP-LCNet's blocks, stage by stage: (kernel, in channels, out channels, stride, SE), the
        # source its stage_out_channels are derived from: the same scale.
        config["block_configs"] = [
            [
                [block[0], narrow(block[1]), narrow(block[2]), *block[3:]]
                if isinstance(block, list) and len(block) > 2 and all(isinstance(v, int) for v in block[1:3])
                else block
                for block in stage
            ]
            for stage in blocks
        ]


def _split_evenly(sections: list[int], total: int) -> list[int]:
    """Rescale `sections` to sum to `total`, keeping their proportions (largest remainder)."""
    whole = sum(sections) or 1
    exact = [s * total / whole for s in sections]
    result = [int(x) for x in exact]
    order = sorted(range(len(sections)), key=lambda i: -(exact[i] - result[i]))
    for i in order[: total - sum(result)]:
        result[i] += 1
    return result


def _head_dim(config: dict[str, Any]) -> int | None:
    head_dim = config.get("head_dim")
    if isinstance(head_dim, int) and not isinstance(head_dim, bool):
        return head_dim
    heads = config.get("num_attention_heads")
    width = config.get("hidden_size")
    if isinstance(width, int) and isinstance(heads, int) and heads > 0:
        return width // heads
    return None


def scale_rotary_sections(config: dict[str, Any], level: Level) -> None:
    """Multimodal RoPE sections (`mrope_section`) keep their share of the (shrunk) head dim."""
    head_dim, original_head_dim = _head_dim(config), _head_dim(level.before)
    if not head_dim or not original_head_dim:
        return
    for key in ("rope_parameters", "rope_scaling"):
        rope = config.get(key)
        if not isinstance(rope, dict):
            continue
        sections = rope.get("mrope_section")
        if not isinstance(sections, list):
            sections = HARD_CODED_MROPE.get(str(config.get("model_type", "")))
        if isinstance(sections, list) and head_dim != original_head_dim:
            # The sections split the rotary half of the head: head_dim x partial factor / 2.
            rotary = int(head_dim * float(rope.get("partial_rotary_factor") or 1.0))
            rope["mrope_section"] = _split_evenly(sections, max(len(sections), rotary // 2))


def keep_ssm_heads_consistent(config: dict[str, Any], level: Level) -> None:
    """Mamba-2 blocks need heads x head dim == expand x hidden size, and groups dividing heads."""
    for heads_key, dim_key, expand_key, groups_key in (
        ("mamba_n_heads", "mamba_d_head", "mamba_expand", "mamba_n_groups"),
        ("num_heads", "head_dim", "expand", "n_groups"),
        ("n_mamba_heads", "mamba_headdim", "mamba_expand", "mamba_ngroups"),
    ):
        if not all(isinstance(config.get(k), int | float) for k in (heads_key, dim_key, expand_key)):
            continue
        width = config.get("hidden_size")
        if not isinstance(width, int):
            continue
        heads = min(int(config[heads_key]), HEADS)
        config[heads_key] = heads
        config[dim_key] = int(config[expand_key] * width) // heads
        if isinstance(config.get("mamba_d_ssm"), int):  # an explicit SSM width (Falcon-H1) follows
            config["mamba_d_ssm"] = heads * config[dim_key]
        if isinstance(config.get(groups_key), int):
            config[groups_key] = 1
    ssm_heads = next(
        (config[k] for k in ("mamba_num_heads", "mamba_n_heads") if isinstance(config.get(k), int)), 0
    )
    for key in ("n_groups", "mamba_n_groups"):
        if ssm_heads and isinstance(config.get(key), int) and ssm_heads % config[key]:
            config[key] = 1  # SSM groups divide the (shrunk) SSM heads


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
    shrink_vocoder_stages,  # before narrow_conv_stacks, which sizes channels by the stage count
    narrow_conv_stacks,
    narrow_stage_channels,
    scale_rotary_sections,
    keep_ssm_heads_consistent,
    apply_family_fixes,  # last: a fix states the value the model needs, whatever the rules did
)
