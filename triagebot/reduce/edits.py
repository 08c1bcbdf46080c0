"""The edits that make a spec smaller, each within its family's constraints.

An `Edit` is data: which field, from what to what. `candidate_edits(spec)` lists those that
apply to a spec, in the order of what they save (layers first: a compile traces every layer);
`apply_edits(spec, edits)` makes them. The shrinker's rules (`corpus.shrink.rules`) say which
keys are layer counts, stage depths, heads, experts and vocabularies, at every level of a nested
config, so a key the shrinker sizes can be reduced further and no other. The relations a config
states twice are kept by the shrinker's own passes: per-layer lists follow the layer count,
layer positions and indices stay within the layers left, key/value heads keep dividing the heads,
rotary sections and SSM heads follow the head size. A value its family fix pins
(`corpus.shrink.families`) is never edited. Inputs shrink too: a shorter sequence, a mask or
an id input left out. Whether an edited model still builds, runs eagerly and crashes as before
is for the probe to say, not for these rules.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from triagebot.corpus.shrink import text_token_limit
from triagebot.corpus.shrink.families import BY_MODEL_TYPE
from triagebot.corpus.shrink.passes import (
    Level,
    clamp_layer_indices,
    clamp_layer_positions,
    is_sub_config,
    keep_kv_sharing,
    keep_ssm_heads_consistent,
    scale_rotary_sections,
)
from triagebot.corpus.shrink.rules import (
    EXPERT_KEYS,
    HEAD_KEYS,
    KV_HEAD_KEYS,
    LAYER_COUNT,
    NOT_LAYER_COUNT,
    PER_LAYER_KEY,
    PER_LAYER_STRING_KEY,
    STAGE_DEPTH_KEYS,
    TOKEN_ID_KEYS,
    TOPK_KEYS,
)
from triagebot.results import InputSpec, ModelSpec

Kind = Literal["layers", "depths", "experts", "heads", "sequence", "input", "vocabulary"]
KINDS: tuple[Kind, ...] = ("layers", "depths", "experts", "heads", "sequence", "input", "vocabulary")
"""In the order candidates are tried: what saves the most compile time first."""

VOCABULARY_KEY = re.compile(r"^(.*_)?vocab_size$")
MIN_VOCABULARY = 16
MIN_SEQUENCE = 2
# Inputs a model usually runs without: masks and the id inputs it derives itself (not a
# multimodal model's `mm_token_type_ids`, which says where its images are).
OPTIONAL_INPUT = re.compile(r"_mask$|^token_type_ids$|^position_ids$|_positions$")
# Stage counts of a hierarchical backbone, tied to its stage names: the shrinker keeps them too.
_STAGE_COUNTS = ("num_layers", "num_stages", "num_encoder_blocks")


@dataclass(frozen=True)
class Edit:
    """One field made smaller: `path` leads through sub-configs to the level holding `key`
    (empty for the top level and for inputs); `new` None drops the input `key`. Values are
    hashable (a list of stage depths is a tuple), so that an edit can be remembered."""

    kind: Kind
    key: str
    old: Any
    new: Any
    path: tuple[str, ...] = ()

    @property
    def field(self) -> tuple[str, tuple[str, ...], str]:
        """What it edits, whatever the value: one edit per field is made at a time."""
        return self.kind, self.path, self.key

    @property
    def target(self) -> tuple[str, tuple[str, ...], str, Any]:
        """What it edits and to what, whatever the value was: a field refused a value once
        is not offered it again."""
        return (*self.field, self.new)

    def __str__(self) -> str:
        if self.kind == "input":
            return f"input {self.key} left out"
        if self.kind == "sequence":
            return f"sequence {self.old} -> {self.new}"
        old, new = (list(v) if isinstance(v, tuple) else v for v in (self.old, self.new))
        return f"{'.'.join((*self.path, self.key))} {old} -> {new}"


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def levels(
    config: dict[str, Any], path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    """The config and every sub-config nested in it (text, vision, audio towers), with their paths."""
    yield path, config
    for key, value in config.items():
        if is_sub_config(value):
            yield from levels(value, (*path, key))


def _level(config: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    for key in path:
        config = config[key]
    return config


def _pinned(level: dict[str, Any]) -> frozenset[str]:
    fix = BY_MODEL_TYPE.get(str(level.get("model_type", "")))
    return frozenset(fix.values) if fix else frozenset()


def _layer_count(level: dict[str, Any], key: str) -> bool:
    if not (LAYER_COUNT.match(key) and not NOT_LAYER_COUNT.search(key)):
        return False
    hierarchical = "depths" in level or "stage_names" in level
    return not (hierarchical and key in _STAGE_COUNTS)


def _targets(value: int, smallest: int) -> list[int]:
    """What a count may go to, in the order to try: its smallest, else half of it."""
    half = max(smallest, value // 2)
    return [target for target in dict.fromkeys((smallest, half)) if target < value]


def _level_edits(level: dict[str, Any], path: tuple[str, ...], spec: ModelSpec) -> Iterator[Edit]:
    pinned = _pinned(level)
    for key, value in level.items():
        if key in pinned:
            continue
        if _count(value) and value > 1 and _layer_count(level, key):
            yield from (Edit("layers", key, value, new, path) for new in _targets(value, 1))
        elif STAGE_DEPTH_KEYS.match(key) and isinstance(value, list) and value and all(map(_count, value)):
            if max(value) > 1:
                yield Edit("depths", key, tuple(value), tuple(min(v, 1) for v in value), path)
        elif _count(value) and value > 2 and EXPERT_KEYS.match(key):
            yield from (Edit("experts", key, value, new, path) for new in _targets(value, 2))
        elif _count(value) and value > 1 and HEAD_KEYS.match(key) and not KV_HEAD_KEYS.match(key):
            yield from (Edit("heads", key, value, new, path) for new in _targets(value, 1))
        elif _count(value) and VOCABULARY_KEY.match(key):
            smallest = max(MIN_VOCABULARY, _largest_token(spec) + 1)
            yield from (Edit("vocabulary", key, value, new, path) for new in _targets(value, smallest))


def candidate_edits(spec: ModelSpec) -> list[Edit]:
    """Every edit that makes `spec` smaller, in `KINDS` order; a field's edits in the order to
    try them (to its smallest value first, else to half of it: `Edit.field` tells them apart)."""
    found = [edit for path, level in levels(spec.config or {}) for edit in _level_edits(level, path, spec)]
    found += _input_edits(spec.inputs)
    return sorted(found, key=lambda edit: KINDS.index(edit.kind))


def apply_edits(spec: ModelSpec, edits: Sequence[Edit]) -> ModelSpec:
    """`spec` with `edits` made, in order, on a copy (its parameter count no longer known)."""
    config = copy.deepcopy(spec.config or {})
    inputs = [item.model_copy(deep=True) for item in spec.inputs]
    for edit in edits:
        if edit.kind in ("sequence", "input"):
            inputs = _edit_inputs(inputs, edit)
        else:
            _EDIT_LEVEL[edit.kind](_level(config, edit.path), edit)
            if edit.kind == "vocabulary":
                inputs = _within_vocabulary(inputs, config)
    return spec.model_copy(update={"config": config, "inputs": inputs, "params": None})


def within(edits: Sequence[Edit], key: str) -> list[Edit]:
    """`edits` as they apply to the sub-config `key` built alone: its own, one level up, and
    the inputs' edits; the others' are left out."""
    return [
        replace(edit, path=edit.path[1:]) if edit.path else edit
        for edit in edits
        if edit.path[:1] == (key,) or edit.kind in ("sequence", "input")
    ]


# --- config levels -------------------------------------------------------------------------------


def _fewer_layers(level: dict[str, Any], edit: Edit) -> None:
    """The count, then what follows it: per-layer lists made for it are cut to the new count,
    and layer positions, indices and KV sharing stay within the layers left."""
    before = dict(level)
    level[edit.key] = edit.new
    for key, value in before.items():
        per_layer = PER_LAYER_STRING_KEY if isinstance(value, str) else PER_LAYER_KEY
        if (
            key != edit.key
            and isinstance(value, list | str)
            and len(value) == edit.old
            and per_layer.search(key)
        ):
            level[key] = value[: edit.new]
    layers = max(v for k, v in level.items() if _count(v) and _layer_count(level, k))
    state = Level(before=before, layers=layers)
    for keep in (clamp_layer_positions, clamp_layer_indices, keep_kv_sharing):
        keep(level, state)


def _shallower_stages(level: dict[str, Any], edit: Edit) -> None:
    level[edit.key] = list(edit.new)


def _fewer_experts(level: dict[str, Any], edit: Edit) -> None:
    """The experts, and the experts routed per token no more than there are."""
    level[edit.key] = edit.new
    for key, value in list(level.items()):
        if TOPK_KEYS.match(key) and _count(value) and value > edit.new:
            level[key] = edit.new


def _fewer_heads(level: dict[str, Any], edit: Edit) -> None:
    """The heads; key/value heads as many where they were as many, else a divisor of the heads;
    rotary sections and SSM heads follow the head size (the shrinker's passes)."""
    before = dict(level)
    level[edit.key] = edit.new
    for key, value in before.items():
        if KV_HEAD_KEYS.match(key) and _count(value) and value > 0:
            level[key] = edit.new if value >= edit.old else math.gcd(value, edit.new)
    state = Level(before=before)
    scale_rotary_sections(level, state)
    keep_ssm_heads_consistent(level, state)


def _smaller_vocabulary(level: dict[str, Any], edit: Edit) -> None:
    level[edit.key] = edit.new


_EDIT_LEVEL = {
    "layers": _fewer_layers,
    "depths": _shallower_stages,
    "experts": _fewer_experts,
    "heads": _fewer_heads,
    "vocabulary": _smaller_vocabulary,
}


def _token_ids(config: dict[str, Any]) -> Iterator[int]:
    for _, level in levels(config):
        for key, value in level.items():
            if TOKEN_ID_KEYS.search(key):
                yield from (v for v in (value if isinstance(value, list) else [value]) if _count(v))


def _largest_token(spec: ModelSpec) -> int:
    """The largest token id the config names or a literal id input holds: a smaller vocabulary
    must still have it."""
    literal = [
        value
        for item in spec.inputs
        if item.kind == "values" and item.dtype.startswith("int") and item.name.endswith("_ids")
        for value in _flat(item.values)
    ]
    return max([0, *_token_ids(spec.config or {}), *literal])


def _flat(values: Any) -> Iterator[Any]:
    if isinstance(values, list):
        for value in values:
            yield from _flat(value)
    elif _count(values):
        yield values


def _within_vocabulary(inputs: list[InputSpec], config: dict[str, Any]) -> list[InputSpec]:
    """Random token ids drawn below the smaller vocabulary's plain-text limit."""
    limit = text_token_limit(config)
    return [
        item.model_copy(update={"high": limit})
        if item.kind == "randint" and item.high is not None and item.high > limit
        else item
        for item in inputs
    ]


# --- inputs --------------------------------------------------------------------------------------


def _sequence_inputs(inputs: Sequence[InputSpec]) -> tuple[int, list[str]] | None:
    """The text sequence length and the inputs that carry it, when all of them are drawn or
    filled (a literal sequence holds placeholders a tower's features must match: left as it is)."""
    ids = next((item for item in inputs if item.name == "input_ids" and len(item.shape) == 2), None)
    if ids is None:
        return None
    length = ids.shape[1]
    carrying = [item for item in inputs if len(item.shape) >= 2 and item.shape[1] == length]
    if length <= MIN_SEQUENCE or any(item.kind not in ("randint", "ones", "zeros") for item in carrying):
        return None
    return length, [item.name for item in carrying]


def _input_edits(inputs: Sequence[InputSpec]) -> list[Edit]:
    found = []
    sequence = _sequence_inputs(inputs)
    if sequence is not None:
        length, _ = sequence
        found += [Edit("sequence", "input_ids", length, new) for new in _targets(length, MIN_SEQUENCE)]
    if len(inputs) > 1:
        found += [
            Edit("input", item.name, item.name, None) for item in inputs if OPTIONAL_INPUT.search(item.name)
        ]
    return found


def _edit_inputs(inputs: list[InputSpec], edit: Edit) -> list[InputSpec]:
    if edit.kind == "input":
        return [item for item in inputs if item.name != edit.key]
    sequence = _sequence_inputs(inputs)
    if sequence is None or sequence[0] != edit.old:
        return inputs  # an earlier edit of this candidate changed it
    _, carrying = sequence
    return [
        item.model_copy(update={"shape": [item.shape[0], edit.new, *item.shape[2:]]})
        if item.name in carrying
        else item
        for item in inputs
    ]
