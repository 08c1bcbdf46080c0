"""What every pass over one config level shares: the `Level` record, the `Pass` signature and
the small helpers the passes of several modules use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from triagebot.corpus.shrink.sizes import LAYERS


@dataclass
class Level:
    """What the passes over one config level share."""

    before: dict[str, Any]  # the level's values before any pass ran (sub-configs shrink in place)
    layers: int = LAYERS  # the layer count chosen: more than LAYERS when a per-layer list needs it
    heads: int | None = None  # the original attention head count, where it was shrunk
    stem_widths: dict[int, int] = field(default_factory=dict)  # a stage list's first width -> scaled


Pass = Callable[[dict[str, Any], Level], None]


def is_sub_config(value: Any) -> bool:
    return isinstance(value, dict) and "model_type" in value


def distinct_in_order(values: list[Any]) -> list[Any]:
    kept: list[Any] = []
    for value in values:
        if value not in kept:
            kept.append(value)
    return kept


# What a config dict carries about the checkpoint it came from, not about the model.
CHECKPOINT_KEYS = ("transformers_version", "_name_or_path", "architectures", "id2label", "label2id")


def without_checkpoint_keys(config: dict[str, Any]) -> dict[str, Any]:
    for key in CHECKPOINT_KEYS:
        config.pop(key, None)
    return config
