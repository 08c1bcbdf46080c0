"""Layer passes: layer counts go to LAYERS (more where a per-layer list needs one layer of each
kind), per-layer lists follow, and everything that names a layer (periods, offsets, indices,
the tower layers a projector reads, KV sharing) stays within the layers left."""

from __future__ import annotations

from typing import Any

from triagebot.corpus.shrink.families import ONE_LAYER
from triagebot.corpus.shrink.level import Level, distinct_in_order
from triagebot.corpus.shrink.rules import (
    FFN_KEYS,
    LAYER_COUNT,
    LAYER_KINDS_KEY,
    NOT_LAYER_COUNT,
    PER_LAYER_KEY,
    PER_LAYER_STRING_KEY,
)
from triagebot.corpus.shrink.sizes import FFN, LAYERS

MAX_KINDS = 2 * LAYERS  # more distinct values than this is data, not a layer-kind list


def shrink_layer_counts(config: dict[str, Any], level: Level) -> None:
    """Layer counts go to LAYERS (one for the model types in `ONE_LAYER`), or to as many as a
    per-layer list needs to keep one layer of each kind; per-layer lists follow."""
    floor = 1 if config.get("model_type") in ONE_LAYER else LAYERS
    hierarchical = "depths" in config or "stage_names" in config
    originals = _layer_counts(config, hierarchical)
    main = _main_layer_count(config, originals, hierarchical)
    new_layers = floor
    if isinstance(main, int) and main > floor:
        for key, value in config.items():
            new_layers = max(new_layers, _layers_needed(key, value, main, floor))
        for key, value in list(config.items()):
            config[key] = _shrink_per_layer(key, value, main, new_layers)
    for key, value in originals.items():
        if value > 0:
            config[key] = min(value, new_layers if value == main else floor)
    if any(config[key] != value for key, value in originals.items()):
        # Backbone stage names are derived from the layer count: let the config derive them again.
        for key in ("stage_names", "out_features", "out_indices"):
            config.pop(key, None)
    level.layers = new_layers


def _layer_counts(config: dict[str, Any], hierarchical: bool) -> dict[str, int]:
    """The level's layer counts by key (a hierarchical backbone's stage counts left out)."""
    counts = {
        k: v
        for k, v in config.items()
        if isinstance(v, int)
        and not isinstance(v, bool)
        and LAYER_COUNT.match(k)
        and not NOT_LAYER_COUNT.search(k)
    }
    if hierarchical:
        # Stage counts of a hierarchical backbone, tied to stage_names/out_features: kept.
        for key in ("num_layers", "num_stages", "num_encoder_blocks"):
            counts.pop(key, None)
    return counts


def _main_layer_count(config: dict[str, Any], counts: dict[str, int], hierarchical: bool) -> int:
    """The count per-layer lists are as long as: `num_hidden_layers`, else `num_layers` or the
    largest count; without any, the longest list of layer kinds (Nemotron-H lists all 52)."""
    main = config.get("num_hidden_layers") or (
        0 if hierarchical else config.get("num_layers") or max(counts.values(), default=0)
    )
    if not main and not hierarchical:
        main = max(
            (len(v) for k, v in config.items() if LAYER_KINDS_KEY.match(k) and isinstance(v, list)), default=0
        )
    return main


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


def clamp_feature_layers(config: dict[str, Any], level: Level) -> None:
    """Which tower layers feed a projector (`vision_feature_layer(s)`, `select_layer`): indices
    into the tower's hidden states, which a shrunk tower has one more of than it has layers (its
    vision sub-config's, shrunk before this level; LAYERS where the level has none)."""
    layers = _vision_tower_layers(config)

    def clamp(index: int) -> int:
        return max(index, -(layers + 1)) if index < 0 else min(index, layers - 1)

    # The projector may have a sub-config of its own beside the tower (Molmo 2's
    # `adapter_config.vision_feature_layer`), which reads the same tower's hidden states.
    projectors = [sub for key, sub in config.items() if isinstance(sub, dict) and key != "vision_config"]
    for owner in (config, *projectors):
        for key, value in list(owner.items()):
            if not isinstance(key, str) or not ("feature_layer" in key or key == "select_layer"):
                continue
            if isinstance(value, int) and not isinstance(value, bool):
                owner[key] = clamp(value)
            elif isinstance(value, list) and value and all(isinstance(v, int) for v in value):
                owner[key] = distinct_in_order([clamp(v) for v in value])


def _vision_tower_layers(config: dict[str, Any]) -> int:
    tower = config.get("vision_config")
    if isinstance(tower, dict):
        for key in ("num_hidden_layers", "num_layers", "depth"):
            if isinstance(tower.get(key), int) and tower[key] > 0:
                return min(tower[key], LAYERS)
    return LAYERS


def keep_kv_sharing(config: dict[str, Any], level: Level) -> None:
    """Layers reusing an earlier layer's KV cache: every layer type keeps a layer that makes one."""
    shared, types = config.get("num_kv_shared_layers"), config.get("layer_types")
    if isinstance(shared, int) and shared > 0 and isinstance(types, list) and types:
        config["num_kv_shared_layers"] = min(shared, len(types) - len(distinct_in_order(types)))
