"""What every recipe shares: the context it reads, the input kinds it makes, the sizes it uses.

A recipe turns a built model into a list of `InputSpec`s (random kinds only where `InputSpec` can
express them, so that a repro rebuilds the same tensors from the spec alone), or returns None
when the model's forward() does not take what it makes. It reads the model through a `Context`:
the built config, forward()'s arguments, and the placeholder count the builder read back from
the model's own mismatch error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from triagebot.corpus.encoding import decode
from triagebot.corpus.shrink import text_token_limit
from triagebot.results import InputSpec, ModelSpec

BATCH = 2  # samples of text-only and dual-encoder inputs
SEQ = 16  # tokens of a text input
WIDTH_GUESS = 64  # an embedding width when the config names none
# Raw audio samples: 7680 is a multiple of every common codec hop (320, 512, 960, 96).
SAMPLES = 7680


class NotApplicable(Exception):
    """The recipe does not fit this model's forward() (it lacks the inputs the recipe makes)."""


@dataclass
class Context:
    """What a recipe reads: the spec, the built model's config, forward()'s arguments."""

    spec: ModelSpec
    config: Any
    params: set[str]
    required: list[str] = field(default_factory=list)  # forward() arguments without a default
    token_count: int = 16  # image/audio placeholders to plant, as the model asked for
    model_class: type | None = None  # the class built, for what forward() annotates

    def sub(self, *names: str) -> Any:
        """The first of these sub-configs the config has, else the config itself."""
        for name in names:
            value = getattr(self.config, name, None)
            if value is not None:
                return value
        return self.config

    def get(self, key: str, default: Any = None, *where: str) -> Any:
        """`key` from the named sub-configs, then the config, then its text config."""
        for owner in [self.sub(name) for name in where] + [self.config, self.sub("text_config")]:
            value = getattr(owner, key, None)
            if value is not None:
                return value
        return default


def token_ids(name: str, shape: list[int], limit: int) -> InputSpec:
    return InputSpec(name=name, shape=shape, dtype="int64", kind="randint", low=4, high=max(5, limit))


def ones(name: str, shape: list[int], dtype: str = "int64") -> InputSpec:
    return InputSpec(name=name, shape=shape, dtype=dtype, kind="ones")


def given(name: str, values: list, dtype: str = "int64") -> InputSpec:
    tensor_shape = [len(values)] + ([len(values[0])] if values and isinstance(values[0], list) else [])
    return InputSpec(name=name, shape=tensor_shape, dtype=dtype, kind="values", values=values)


def literal(name: str, value: Any) -> InputSpec:
    """A plain value passed as it is (the dtype is not read)."""
    return InputSpec(name=name, shape=[], dtype="int64", kind="literal", values=value)


def text_limit(ctx: Context) -> int:
    """Ids below this are plain text (special tokens sit at or above it)."""
    return text_token_limit(decode(ctx.spec.config or {}))


def first_int(value: Any, default: int) -> int:
    if isinstance(value, list | tuple):
        value = value[0] if value else default
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def is_pair(value: Any) -> bool:
    return isinstance(value, list | tuple) and len(value) == 2 and all(isinstance(v, int) for v in value)


def token_of(ctx: Context, *names: str) -> int | None:
    for name in names:
        for owner in (ctx.config, ctx.sub("text_config")):
            value = getattr(owner, name, None)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
    return None


def image_token(ctx: Context) -> int | None:
    return token_of(ctx, "image_token_id", "image_token_index", "image_token")


def planted(ctx: Context, token: int, count: int, start: int | None, end: int | None) -> list[InputSpec]:
    """input_ids of text around `count` placeholder tokens (between start/end markers if any)."""
    limit = text_limit(ctx)
    row = [4 + (i * 7) % max(1, limit - 4) for i in range(4)]
    row += ([start] if start is not None else []) + [token] * count + ([end] if end is not None else [])
    row += [4 + (i * 5) % max(1, limit - 4) for i in range(4)]
    inputs = [given("input_ids", [row])]
    if "attention_mask" in ctx.params:
        inputs.append(ones("attention_mask", [1, len(row)]))
    if "mm_token_type_ids" in ctx.params:
        # 1 marks image placeholders, which multimodal RoPE needs to place the patches.
        inputs.append(given("mm_token_type_ids", [[int(t == token) for t in row]]))
    return inputs


def image_shape(ctx: Context) -> tuple[int, int]:
    size = first_int(ctx.get("image_size", None, "vision_config", "backbone_config"), 0)
    # The size under other names: TVP's frame prompts (max_img_size), LayoutLMv3's patch tower.
    size = size or first_int(ctx.get("max_img_size", None), 0)
    if not size and ctx.get("patch_size", None) is not None:
        size = first_int(ctx.get("input_size", None), 0)
    size = size or 64
    channels = first_int(ctx.get("num_channels", None, "vision_config"), 3)
    return channels, size


def image_chw(ctx: Context) -> list[int]:
    channels, size = image_shape(ctx)
    sizes = ctx.get("image_size", None, "vision_config")
    # Towers for non-square inputs (text-line recognisers, SegGPT) state (height, width).
    return [channels, *sizes] if is_pair(sizes) else [channels, size, size]


def decoder_ids(ctx: Context, batch: int = 1) -> list[InputSpec]:
    if "decoder_input_ids" in ctx.params:
        return [token_ids("decoder_input_ids", [batch, SEQ // 2], text_limit(ctx))]
    return []


def text_inputs(ctx: Context, seq: int = SEQ, batch: int = BATCH) -> list[InputSpec]:
    inputs = [token_ids("input_ids", [batch, seq], text_limit(ctx))]
    if "attention_mask" in ctx.params:
        inputs.append(ones("attention_mask", [batch, seq]))
    return inputs + companions(ctx, batch, seq)


def companions(ctx: Context, batch: int, seq: int) -> list[InputSpec]:
    """Required side inputs some text towers take next to their ids: layout boxes, language
    ids, the Q-Former's own prompt."""
    inputs = []
    if "bbox" in ctx.params and _normalized_boxes(ctx):
        # Boxes as fractions of the page, (x0, y0, x1, y1) with x0 <= x1 and y0 <= y1.
        boxes = [[[0.1, 0.2, 0.4, 0.5]] * seq] * batch
        inputs.append(
            InputSpec(name="bbox", shape=[batch, seq, 4], dtype="float32", kind="values", values=boxes)
        )
    elif "bbox" in ctx.params:
        # Boxes as (x0, y0, x1, y1) with x0 <= x1: ones then the page corner, i.e. [1, 1, 2, 2].
        boxes = [[[1, 1, 2, 2]] * seq] * batch
        inputs.append(
            InputSpec(name="bbox", shape=[batch, seq, 4], dtype="int64", kind="values", values=boxes)
        )
    if "lang_ids" in ctx.params:
        inputs.append(InputSpec(name="lang_ids", shape=[batch], dtype="int64", kind="zeros"))
    if "qformer_input_ids" in ctx.params:
        inputs.append(token_ids("qformer_input_ids", [batch, 8], text_limit(ctx)))
        if "qformer_attention_mask" in ctx.params:
            inputs.append(ones("qformer_attention_mask", [batch, 8]))
    return inputs


def _normalized_boxes(ctx: Context) -> bool:
    """Whether layout boxes are fractions of the page (BROS: sinusoidal, no position table; UDOP:
    scaled to its cell table and its relative-position buckets) rather than indices into 2-D
    position tables (LayoutLM, LiLT)."""
    table = ctx.get("max_2d_position_embeddings", None)
    return table is None or ctx.get("relative_bias_args", None) is not None


RecipeFunction = Callable[[Context], list[InputSpec] | None]
"""A recipe: the inputs it makes for the model of `Context`, or None where it does not apply."""
