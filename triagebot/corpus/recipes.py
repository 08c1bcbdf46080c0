"""Input recipes by modality, tried in order, each validated by an eager run.

A recipe turns a built model into a list of `InputSpec`s (random kinds only where InputSpec can
express them, so a repro rebuilds the same tensors from the spec alone). `resolve(spec)` picks
the tiny config when the spec has none, walks the ladder for the model's modality and returns
a `Built` whose spec carries the recipe that served, its inputs and the parameter count. A
multimodal model that only ran on a text recipe is marked `partial`.

Image+text models need as many image tokens in `input_ids` as the vision tower yields
features; that count is read back from the model's own mismatch error ("tokens: 3,
features: 16") and the recipe is retried with it, so no family needs its count hard-coded.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from triagebot.corpus import Built
from triagebot.corpus.hf import (
    MissingDependency,
    config_from_dict,
    count_params,
    import_object,
    instantiate,
)
from triagebot.corpus.inputs import materialize_inputs
from triagebot.corpus.shrink import text_token_limit, tiny_config
from triagebot.results import InputSpec, ModelSpec

log = logging.getLogger(__name__)
BATCH = 2
SEQ = 16
_FEATURES = re.compile(r"features:? (\d+)")


class NoRecipe(RuntimeError):
    """No recipe ran the model eagerly; the message carries each recipe's failure."""


class NotApplicable(Exception):
    """The recipe does not fit this model's forward() (it lacks the inputs the recipe makes)."""


WIDTH_GUESS = 64


@dataclass
class Context:
    spec: ModelSpec
    config: Any
    params: set[str]
    required: list[str] = field(default_factory=list)  # forward() arguments without a default
    token_count: int = 16

    def sub(self, *names: str) -> Any:
        for name in names:
            value = getattr(self.config, name, None)
            if value is not None:
                return value
        return self.config

    def get(self, key: str, default: Any = None, *where: str) -> Any:
        for owner in [self.sub(name) for name in where] + [self.config, self.sub("text_config")]:
            value = getattr(owner, key, None)
            if value is not None:
                return value
        return default


def _ids(name: str, shape: list[int], limit: int) -> InputSpec:
    return InputSpec(name=name, shape=shape, dtype="int64", kind="randint", low=4, high=max(5, limit))


def _ones(name: str, shape: list[int], dtype: str = "int64") -> InputSpec:
    return InputSpec(name=name, shape=shape, dtype=dtype, kind="ones")


def _values(name: str, values: list, dtype: str = "int64") -> InputSpec:
    tensor_shape = [len(values)] + ([len(values[0])] if values and isinstance(values[0], list) else [])
    return InputSpec(name=name, shape=tensor_shape, dtype=dtype, kind="values", values=values)


def _limit(ctx: Context) -> int:
    return text_token_limit(ctx.spec.config or {})


def _first_int(value: Any, default: int) -> int:
    if isinstance(value, list | tuple):
        value = value[0] if value else default
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _text_inputs(ctx: Context, seq: int = SEQ, batch: int = BATCH) -> list[InputSpec]:
    inputs = [_ids("input_ids", [batch, seq], _limit(ctx))]
    if "attention_mask" in ctx.params:
        inputs.append(_ones("attention_mask", [batch, seq]))
    return inputs + _companions(ctx, batch, seq)


def _companions(ctx: Context, batch: int, seq: int) -> list[InputSpec]:
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
        inputs.append(_ids("qformer_input_ids", [batch, 8], _limit(ctx)))
        if "qformer_attention_mask" in ctx.params:
            inputs.append(_ones("qformer_attention_mask", [batch, 8]))
    return inputs


def _normalized_boxes(ctx: Context) -> bool:
    """Whether layout boxes are fractions of the page (BROS: sinusoidal, no position table; UDOP:
    scaled to its cell table and its relative-position buckets) rather than indices into 2-D
    position tables (LayoutLM, LiLT)."""
    table = ctx.get("max_2d_position_embeddings", None)
    return table is None or ctx.get("relative_bias_args", None) is not None


def text(ctx: Context) -> list[InputSpec] | None:
    if "input_ids" not in ctx.params:
        return None
    return _text_inputs(ctx)


def encoder_decoder(ctx: Context) -> list[InputSpec] | None:
    if "input_ids" not in ctx.params or "decoder_input_ids" not in ctx.params:
        return None
    return [*_text_inputs(ctx), _ids("decoder_input_ids", [BATCH, SEQ // 2], _limit(ctx))]


def _image_shape(ctx: Context) -> tuple[int, int]:
    size = _first_int(ctx.get("image_size", None, "vision_config", "backbone_config"), 0)
    # The size under other names: TVP's frame prompts (max_img_size), LayoutLMv3's patch tower.
    size = size or _first_int(ctx.get("max_img_size", None), 0)
    if not size and ctx.get("patch_size", None) is not None:
        size = _first_int(ctx.get("input_size", None), 0)
    size = size or 64
    channels = _first_int(ctx.get("num_channels", None, "vision_config"), 3)
    return channels, size


def image(ctx: Context) -> list[InputSpec] | None:
    if "pixel_values" not in ctx.params:
        return None
    # Image-to-text encoder-decoders (VisionEncoderDecoder) also take the decoder's ids.
    return [InputSpec(name="pixel_values", shape=[1, *_image_chw(ctx)], dtype="float32"), *_decoder_ids(ctx)]


def image_unnamed(ctx: Context) -> list[InputSpec] | None:
    """Image models whose forward() takes the pixels under another name, as its one required
    argument (PP-OCRv5's mobile detector: `hidden_states`), when it is annotated as a tensor (SAM 2
    Video's one required argument is its inference session)."""
    if "pixel_values" in ctx.params or ctx.spec.modality != "image" or len(ctx.required) != 1:
        return None
    name = ctx.required[0]
    forward = import_object(ctx.spec.class_path).forward
    if "Tensor" not in str(inspect.signature(forward).parameters[name].annotation):
        return None
    return [InputSpec(name=name, shape=[1, *_image_chw(ctx)], dtype="float32")]


def image_prompted(ctx: Context) -> list[InputSpec] | None:
    """An image with a prompt image and its mask, as SegGPT takes them: the model stacks prompt
    and image on height, so each is half the configured (height, width)."""
    if not {"pixel_values", "prompt_pixel_values", "prompt_masks"} <= ctx.params:
        return None
    channels, height, width = _image_chw(ctx)
    shape = [1, channels, height // 2, width]
    return [
        InputSpec(name=name, shape=shape, dtype="float32")
        for name in ("pixel_values", "prompt_pixel_values", "prompt_masks")
    ]


def image_task(ctx: Context) -> list[InputSpec] | None:
    """An image with its task prompt's token ids ("the task is semantic"), as OneFormer takes
    them: `task_seq_len` ids."""
    if not {"pixel_values", "task_inputs"} <= ctx.params:
        return None
    length = _first_int(ctx.get("task_seq_len", None), SEQ)
    return [
        InputSpec(name="pixel_values", shape=[1, *_image_chw(ctx)], dtype="float32"),
        _ids("task_inputs", [1, length], _limit(ctx)),
    ]


def _image_chw(ctx: Context) -> list[int]:
    channels, size = _image_shape(ctx)
    sizes = ctx.get("image_size", None, "vision_config")
    # Towers for non-square inputs (text-line recognisers, SegGPT) state (height, width).
    return [channels, *sizes] if _is_pair(sizes) else [channels, size, size]


def _is_pair(value: Any) -> bool:
    return isinstance(value, list | tuple) and len(value) == 2 and all(isinstance(v, int) for v in value)


def image_paired(ctx: Context) -> list[InputSpec] | None:
    """Dual encoders (CLIP-style): text and an image, no placeholder tokens; the decoder's ids of
    an encoder-decoder that reads both (UDOP)."""
    if not {"pixel_values", "input_ids"} <= ctx.params:
        return None
    channels, size = _image_shape(ctx)
    return [
        *_text_inputs(ctx),
        InputSpec(name="pixel_values", shape=[BATCH, channels, size, size], dtype="float32"),
        *_decoder_ids(ctx, BATCH),
    ]


def _token(ctx: Context, *names: str) -> int | None:
    for name in names:
        for owner in (ctx.config, ctx.sub("text_config")):
            value = getattr(owner, name, None)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
    return None


def _planted(ctx: Context, token: int, count: int, start: int | None, end: int | None) -> list[InputSpec]:
    """input_ids of text around `count` placeholder tokens (between start/end markers if any)."""
    limit = _limit(ctx)
    row = [4 + (i * 7) % max(1, limit - 4) for i in range(4)]
    row += ([start] if start is not None else []) + [token] * count + ([end] if end is not None else [])
    row += [4 + (i * 5) % max(1, limit - 4) for i in range(4)]
    inputs = [_values("input_ids", [row])]
    if "attention_mask" in ctx.params:
        inputs.append(_ones("attention_mask", [1, len(row)]))
    if "mm_token_type_ids" in ctx.params:
        # 1 marks image placeholders, which multimodal RoPE needs to place the patches.
        inputs.append(_values("mm_token_type_ids", [[int(t == token) for t in row]]))
    return inputs


def _image_token(ctx: Context) -> int | None:
    return _token(ctx, "image_token_id", "image_token_index", "image_token")


def image_text(ctx: Context) -> list[InputSpec] | None:
    token = _image_token(ctx)
    if token is None or not {"pixel_values", "input_ids"} <= ctx.params:
        return None
    channels, size = _image_shape(ctx)
    start = _token(ctx, "boi_token_id", "boi_token_index", "image_start_token_id")
    end = _token(ctx, "eoi_token_id", "eoi_token_index", "image_end_token_id")
    inputs = _planted(ctx, token, ctx.token_count, start, end)
    inputs.append(InputSpec(name="pixel_values", shape=[1, channels, size, size], dtype="float32"))
    if "high_res_pixel_values" in ctx.params:  # hybrid towers: a second, high-resolution view
        high = _first_int(getattr(ctx.sub("high_res_vision_config"), "image_size", None), 2 * size)
        inputs.append(
            InputSpec(name="high_res_pixel_values", shape=[1, channels, high, high], dtype="float32")
        )
    return inputs + _decoder_ids(ctx) + _companions(ctx, 1, 0)


def image_text_masked(ctx: Context) -> list[InputSpec] | None:
    """Text with a run of positions that the image's latent queries fill, marked by a mask rather
    than by placeholder ids (Kosmos-2's `image_embeds_position_mask`)."""
    if not {"pixel_values", "input_ids", "image_embeds_position_mask"} <= ctx.params:
        return None
    count = _first_int(ctx.get("latent_query_num", None), 0) or ctx.token_count
    limit = _limit(ctx)
    row = [4 + (i * 7) % max(1, limit - 4) for i in range(count + 8)]
    mask = [0] * 4 + [1] * count + [0] * 4
    inputs = [_values("input_ids", [row]), _values("image_embeds_position_mask", [mask])]
    if "attention_mask" in ctx.params:
        inputs.append(_ones("attention_mask", [1, len(row)]))
    return [*inputs, InputSpec(name="pixel_values", shape=[1, *_image_chw(ctx)], dtype="float32")]


def image_text_cross(ctx: Context) -> list[InputSpec] | None:
    """Text cross-attending to images stacked per sample (batch, images, C, H, W), with the mask
    of which text tokens see which image (batch, tokens, images), as IDEFICS takes them."""
    if not {"pixel_values", "input_ids", "image_attention_mask"} <= ctx.params:
        return None
    return [
        *_text_inputs(ctx, batch=1),
        InputSpec(name="pixel_values", shape=[1, 1, *_image_chw(ctx)], dtype="float32"),
        _ones("image_attention_mask", [1, SEQ, 1]),
    ]


def image_text_with_sizes(ctx: Context) -> list[InputSpec] | None:
    """image_text plus `image_sizes`, as Pixtral-style towers (any resolution) take."""
    if "image_sizes" not in ctx.params:
        return None
    _, size = _image_shape(ctx)
    if ctx.token_count == 16:
        # One token per merged patch: (size / (patch x merge))^2. Mistral 3's mismatch error
        # reports features times width, which the retry cannot read back.
        patch = _first_int(ctx.get("patch_size", None, "vision_config"), 14)
        merge = _first_int(ctx.get("spatial_merge_size", None), 1)
        ctx = replace(ctx, token_count=max(1, size // (patch * merge)) ** 2)
    inputs = image_text(ctx)
    if inputs is None:
        return None
    return [*inputs, _values("image_sizes", [[size, size]])]


def image_text_sized(ctx: Context) -> list[InputSpec] | None:
    """image_text with tiles (base image + one tile) and `image_sizes`, as LLaVA-NeXT tilers take."""
    inputs = image_text(ctx) if "image_sizes" in ctx.params else None
    if inputs is None:
        return None
    channels, size = _image_shape(ctx)
    inputs[-1] = InputSpec(name="pixel_values", shape=[1, 2, channels, size, size], dtype="float32")
    return [*inputs, _values("image_sizes", [[size, size]])]


def image_text_stacked(ctx: Context) -> list[InputSpec] | None:
    """image_text with images stacked per sample (batch, images, C, H, W), as Idefics takes."""
    inputs = image_text(ctx)
    if inputs is None:
        return None
    channels, size = _image_shape(ctx)
    inputs = [
        InputSpec(name="pixel_values", shape=[1, 1, channels, size, size], dtype="float32")
        if item.name == "pixel_values"
        else item
        for item in inputs
    ]
    if "pixel_attention_mask" in ctx.params:  # every pixel is real: no padding
        inputs.append(
            InputSpec(name="pixel_attention_mask", shape=[1, 1, size, size], dtype="bool", kind="ones")
        )
    return inputs


def _grid(ctx: Context) -> tuple[int, int, int, int]:
    vision = ctx.sub("vision_config")
    patch = _first_int(getattr(vision, "patch_size", None), 14)
    # The same sizes under other families' names (MuseGlimmer: patch_temporal, merge_size).
    temporal = _first_int(
        getattr(vision, "temporal_patch_size", None) or getattr(vision, "patch_temporal", None), 1
    )
    merge = _first_int(getattr(vision, "spatial_merge_size", None) or getattr(vision, "merge_size", None), 2)
    channels = _first_int(getattr(vision, "in_channels", None) or getattr(vision, "num_channels", None), 3)
    return patch, temporal, merge, channels


def image_grid(ctx: Context) -> list[InputSpec] | None:
    """Qwen2-VL-style flattened patches with an `image_grid_thw`."""
    grid_name = (
        "image_grid_thw"
        if "image_grid_thw" in ctx.params
        else "grid_thw"
        if "grid_thw" in ctx.params
        else None
    )
    if grid_name is None:
        return None
    patch, temporal, merge, channels = _grid(ctx)
    side = 2 * merge
    patches = side * side
    pixel_name = "pixel_values" if "pixel_values" in ctx.params else "hidden_states"
    inputs = [
        InputSpec(name=pixel_name, shape=[patches, channels * temporal * patch * patch], dtype="float32"),
        _values(grid_name, [[1, side, side]]),
    ]
    for name in ("merge_sizes", "image_merge_sizes"):  # VideoLLaMA 3: each image's merge size
        if name in ctx.params:
            inputs.append(_values(name, [merge]))
    if "images_per_sample" in ctx.params:
        # GLM-Image: a sample's grids end with the image it generates (no pixels): two in all.
        inputs[1] = _values(grid_name, [[1, side, side], [1, side, side]])
        inputs.append(_values("images_per_sample", [2]))
    token = _image_token(ctx)
    if "input_ids" in ctx.params and token is not None:
        start = _token(ctx, "vision_start_token_id", "image_start_token_id", "boi_token_id")
        end = _token(ctx, "vision_end_token_id", "image_end_token_id", "eoi_token_id")
        count = ctx.token_count if ctx.token_count != 16 else patches // (merge * merge)
        inputs = _planted(ctx, token, count, start, end) + inputs
    return inputs


def image_grid_patches(ctx: Context) -> list[InputSpec] | None:
    """image_grid with each patch kept as a small image (patches, C, patch, patch), as
    PaddleOCR-VL's tower embeds them with a convolution; the tower alone takes them batched."""
    inputs = image_grid(ctx)
    if inputs is None:
        return None
    patch, _, _, channels = _grid(ctx)
    batch = [] if "input_ids" in ctx.params else [1]
    return [
        InputSpec(name=item.name, shape=[*batch, item.shape[0], channels, patch, patch], dtype="float32")
        if item.name == "pixel_values"
        else item
        for item in inputs
    ]


def image_grid_patches_unbatched(ctx: Context) -> list[InputSpec] | None:
    """image_grid_patches for a tower alone that takes the patches unbatched, as its parent passes
    them (Kimi K2.5's tower: patches, C, patch, patch)."""
    inputs = image_grid_patches(ctx) if "input_ids" not in ctx.params else None
    if inputs is None:
        return None
    return [
        item.model_copy(update={"shape": item.shape[1:]}) if item.name == "pixel_values" else item
        for item in inputs
    ]


def image_grid_merged(ctx: Context) -> list[InputSpec] | None:
    """image_grid with the grid counted in placeholder tokens, each token's merge x merge patches
    one small channels-last image (tokens, merge x patch, merge x patch, C), as Inkling 2 takes them."""
    inputs = image_grid(ctx)
    if inputs is None:
        return None
    patch, _, merge, channels = _grid(ctx)
    grid = next(item for item in inputs if item.name in ("image_grid_thw", "grid_thw"))
    _, height, width = grid.values[0]
    tokens = [1, height // merge, width // merge]
    pixels = [tokens[1] * tokens[2], merge * patch, merge * patch, channels]
    replaced = {
        grid.name: _values(grid.name, [tokens]),
        "pixel_values": InputSpec(name="pixel_values", shape=pixels, dtype="float32"),
    }
    return [replaced.get(item.name, item) for item in inputs]


def image_text_patches(ctx: Context) -> list[InputSpec] | None:
    """Flattened patches (patches, C x patch x patch), one per placeholder token and no grid, as
    NeoMME embeds them straight into its text stream."""
    token = _image_token(ctx)
    patch = _first_int(ctx.get("patch_size", None, "vision_config"), 0)
    if token is None or not patch or not {"pixel_values", "input_ids"} <= ctx.params:
        return None
    channels, _ = _image_shape(ctx)
    return [
        *_planted(ctx, token, ctx.token_count, None, None),
        InputSpec(name="pixel_values", shape=[ctx.token_count, channels * patch * patch], dtype="float32"),
    ]


def image_text_tile_mask(ctx: Context) -> list[InputSpec] | None:
    """image_text_stacked with a mask of real tiles (batch, tiles) rather than of real pixels, as
    Granite Docling takes."""
    inputs = image_text_stacked(ctx) if "pixel_attention_mask" in ctx.params else None
    if inputs is None:
        return None
    return [
        InputSpec(name=item.name, shape=[1, 1], dtype="bool", kind="ones")
        if item.name == "pixel_attention_mask"
        else item
        for item in inputs
    ]


def image_text_patch_grid(ctx: Context) -> list[InputSpec] | None:
    """SigLIP 2 (NaFlex) patches with their grid and mask, behind placeholder tokens (one per
    pooled patch, the count read back from the model), as LFM2-VL takes them."""
    token = _image_token(ctx)
    if token is None or not {"pixel_values", "spatial_shapes", "input_ids"} <= ctx.params:
        return None
    patch = _first_int(ctx.get("patch_size", None, "vision_config"), 16)
    channels, _ = _image_shape(ctx)
    side = 4  # a 4 x 4 grid of patches
    inputs = [
        *_planted(ctx, token, ctx.token_count, None, None),
        InputSpec(name="pixel_values", shape=[1, side * side, channels * patch * patch], dtype="float32"),
        _values("spatial_shapes", [[side, side]]),
    ]
    if "pixel_attention_mask" in ctx.params:
        inputs.append(_ones("pixel_attention_mask", [1, side * side]))
    return inputs


def _positioned_patches(ctx: Context, positions_name: str, channels: int, patch: int) -> list[InputSpec]:
    """Flattened patches with their (x, y) positions (Gemma 4's towers): a square grid that the
    tower's pooling kernel tiles twice per side."""
    side = 2 * _first_int(ctx.get("pooling_kernel_size", None, "vision_config"), 2)
    positions = [[x, y] for y in range(side) for x in range(side)]
    return [
        InputSpec(name="pixel_values", shape=[1, side * side, channels * patch * patch], dtype="float32"),
        InputSpec(
            name=positions_name, shape=[1, side * side, 2], dtype="int64", kind="values", values=[positions]
        ),
    ]


def image_text_positioned(ctx: Context) -> list[InputSpec] | None:
    """Flattened patches with their (x, y) positions (`image_position_ids`) behind placeholder
    tokens (the count read back from the model), as Gemma 4 takes them: a grid its pooling kernel
    tiles twice; Gemma 4 Unified's patches are already pooled (`model_patch_size` pixels wide)."""
    token = _image_token(ctx)
    if token is None or not {"pixel_values", "image_position_ids", "input_ids"} <= ctx.params:
        return None
    patch = _first_int(ctx.get("model_patch_size", None, "vision_config"), 0) or _first_int(
        ctx.get("patch_size", None, "vision_config"), 16
    )
    channels, _ = _image_shape(ctx)
    return [
        *_planted(ctx, token, ctx.token_count, None, None),
        *_positioned_patches(ctx, "image_position_ids", channels, patch),
    ]


def _nested(config: Any, key: str, depth: int = 3) -> Any:
    """`key` from the shallowest sub-config that has it (breadth first through nested configs),
    for towers nested twice (Nemotron 3.5 Transcribe: audio_config.asr_config)."""
    level = [config]
    for _ in range(depth):
        for owner in level:
            value = getattr(owner, key, None)
            if value is not None:
                return value
        level = [
            value
            for owner in level
            for value in vars(owner).values()
            if hasattr(value, "to_dict") and hasattr(value, "model_type")
        ]
    return None


def image_packed(ctx: Context) -> list[InputSpec] | None:
    """NaViT-packed patches side by side in one strip (images, C, patch, patch x patches) with
    each image's patch grid (`target_sizes`), as MiniCPM-V takes them (behind placeholder tokens,
    the count read back from the model, where forward() takes text): a grid its window and merge
    kernels tile twice."""
    if not {"pixel_values", "target_sizes"} <= ctx.params:
        return None
    patch = _first_int(ctx.get("patch_size", None, "vision_config"), 14)
    channels, _ = _image_shape(ctx)
    window = _first_int(ctx.get("window_kernel_size", None, "vision_config"), 1)
    merge = _first_int(getattr(ctx.config, "merge_kernel_size", None), 1)
    side = 2 * window * merge ** _first_int(getattr(ctx.config, "merger_times", None), 1)
    inputs = [
        InputSpec(name="pixel_values", shape=[1, channels, patch, patch * side * side], dtype="float32"),
        _values("target_sizes", [[side, side]]),
    ]
    token = _image_token(ctx)
    if "input_ids" in ctx.params and token is not None:
        inputs = _planted(ctx, token, ctx.token_count, None, None) + inputs
    elif "input_ids" in ctx.params:
        return None
    return inputs


def _crop_patches(ctx: Context) -> InputSpec | None:
    """One crop as the tower's whole sequence of flattened patches (crops, patches, C x patch x
    patch): towers with a fixed positional table, one entry a patch (Molmo 2)."""
    positions = _first_int(ctx.get("num_position_embeddings", None, "vision_config"), 0)
    patch = _first_int(ctx.get("patch_size", None, "vision_config"), 0)
    if not positions or not patch or "pixel_values" not in ctx.params:
        return None
    channels, _ = _image_shape(ctx)
    return InputSpec(name="pixel_values", shape=[1, positions, channels * patch * patch], dtype="float32")


def image_crop_patches(ctx: Context) -> list[InputSpec] | None:
    """A vision tower fed one crop of flattened patches (see `_crop_patches`)."""
    if "input_ids" in ctx.params or ctx.required != ["pixel_values"]:
        return None
    crop = _crop_patches(ctx)
    return None if crop is None else [crop]


def image_text_pooled(ctx: Context) -> list[InputSpec] | None:
    """One crop of flattened patches, pooled into placeholder tokens by index (`image_token_pooling`:
    each token's patches) over a token grid (`image_grids`: low-res rows and columns, then
    high-res ones), as Molmo 2 takes it: a 2 x 2 grid of tokens, four patches each."""
    token = _image_token(ctx)
    crop = _crop_patches(ctx)
    if token is None or crop is None or not {"input_ids", "image_token_pooling", "image_grids"} <= ctx.params:
        return None
    tokens, pooled = 4, 4
    return [
        *_planted(ctx, token, tokens, None, None),
        crop,
        _values("image_token_pooling", [[t * pooled + i for i in range(pooled)] for t in range(tokens)]),
        _values("image_grids", [[2, 2, 0, 0]]),
    ]


def image_patch_volumes(ctx: Context) -> list[InputSpec] | None:
    """Patches as channels-last space-time volumes (patches, temporal patch, patch, patch, C), one
    per placeholder token where forward() takes text, as Inkling's convolution-free tower folds them."""
    temporal = _first_int(ctx.get("temporal_patch_size", None, "vision_config"), 0)
    patch = _first_int(ctx.get("patch_size", None, "vision_config"), 0)
    if not temporal or not patch or "pixel_values" not in ctx.params:
        return None
    channels, _ = _image_shape(ctx)
    count = 4
    shape = [count, temporal, patch, patch, channels]
    inputs = [InputSpec(name="pixel_values", shape=shape, dtype="float32")]
    if "input_ids" not in ctx.params:
        return inputs
    token = _image_token(ctx)
    return None if token is None else [*_planted(ctx, token, count, None, None), *inputs]


def _mel_bins(ctx: Context) -> int:
    bins = _first_int(
        ctx.get("num_mel_bins", None, "audio_config", "encoder_config", "asr_config"), 0
    ) or _first_int(ctx.get("feature_size", None, "audio_config"), 0)
    bins = bins or _first_int(_nested(ctx.config, "num_mel_bins"), 80)
    # Low-frame-rate encoders (Fun-ASR) take consecutive frames stacked into one feature vector.
    return bins * _first_int(ctx.get("num_stacked_frames", None, "audio_config"), 1)


def _audio_frames(ctx: Context) -> int:
    positions = _first_int(ctx.get("max_source_positions", None, "audio_config"), 0)
    # 400 frames: a multiple of every common encoder window and subsampling (4, 8, 16, 80, 100).
    return 2 * positions if 0 < positions <= 1500 else 400


def _audio_masks(ctx: Context, frames: int) -> list[InputSpec]:
    masks = []
    for name in ("feature_attention_mask", "input_features_mask", "audio_attention_mask"):
        if name in ctx.params:
            masks.append(_ones(name, [1, frames]))
    return masks


def audio_features(ctx: Context) -> list[InputSpec] | None:
    """Filterbank features as (batch, mel bins, frames), Whisper's layout."""
    if "input_features" not in ctx.params:
        return None
    frames = _audio_frames(ctx)
    inputs = [InputSpec(name="input_features", shape=[1, _mel_bins(ctx), frames], dtype="float32")]
    if "chunk_sample_lengths" in ctx.params:  # Dots 3 Note: the samples behind each clip's frames
        hop = _first_int(ctx.get("hop_length", None, "audio_config"), 160)
        inputs.append(_values("chunk_sample_lengths", [frames * hop]))
    return [*inputs, *_audio_masks(ctx, frames), *_decoder_ids(ctx)]


def audio_features_by_frame(ctx: Context) -> list[InputSpec] | None:
    """Filterbank features as (batch, frames, features), Speech2Text's layout."""
    if "input_features" not in ctx.params:
        return None
    frames = _audio_frames(ctx)
    features = (
        _first_int(ctx.get("input_feat_per_channel", None), 0)
        * _first_int(ctx.get("input_channels", None), 1)
        # Stacked frames (w2v-BERT): the projection takes several mel frames at once.
        or _first_int(ctx.get("feature_projection_input_dim", None), 0)
        or _mel_bins(ctx)
    )
    inputs = [InputSpec(name="input_features", shape=[1, frames, features], dtype="float32")]
    return [*inputs, *_audio_masks(ctx, frames), *_decoder_ids(ctx)]


# Raw audio samples: 7680 is a multiple of every common codec hop (320, 512, 960, 96).
SAMPLES = 7680


def audio_waveform(ctx: Context) -> list[InputSpec] | None:
    """Raw mono samples (batch, samples), as wav2vec2-style encoders take."""
    if "input_values" not in ctx.params:
        return None
    return [InputSpec(name="input_values", shape=[1, SAMPLES], dtype="float32"), *_decoder_ids(ctx)]


def audio_waveform_channels(ctx: Context) -> list[InputSpec] | None:
    """Raw samples with a channel axis (batch, channels, samples), as codecs (EnCodec, Mimi) take."""
    name = "input_values" if "input_values" in ctx.params else _unnamed_audio_input(ctx)
    if name is None:
        return None
    channels = _first_int(ctx.get("audio_channels", None), 1)
    return [InputSpec(name=name, shape=[1, channels, SAMPLES], dtype="float32"), *_decoder_ids(ctx)]


def _unnamed_audio_input(ctx: Context) -> str | None:
    """An audio model's one required argument when forward() calls it `hidden_states`: samples
    or latents, whichever runs (VibeVoice's acoustic tokenizer halves)."""
    return "hidden_states" if ctx.spec.modality == "audio" and ctx.required == ["hidden_states"] else None


def audio_paired(ctx: Context) -> list[InputSpec] | None:
    """Text and raw samples (batch, channels, samples), no placeholders: dual encoders (PE Audio)
    and text-to-music models prompted with audio they encode into codes (MusicGen)."""
    if not {"input_values", "input_ids"} <= ctx.params:
        return None
    if _token(ctx, "audio_token_id", "audio_token_index") is not None:
        return None  # placeholders to plant: audio_waveform_text
    channels = _first_int(_nested(ctx.config, "audio_channels"), 1)
    return [
        *_text_inputs(ctx),
        InputSpec(name="input_values", shape=[BATCH, channels, SAMPLES], dtype="float32"),
    ]


def _literal(name: str, value: Any) -> InputSpec:
    """A plain value passed as it is (the dtype is not read)."""
    return InputSpec(name=name, shape=[], dtype="int64", kind="literal", values=value)


def _samples_per_token(ctx: Context) -> int:
    """Samples behind one audio placeholder: the audio tokenizer's hop, or its sampling rate over
    its frame rate (Mimi)."""
    hop = _first_int(_nested(ctx.config, "hop_length"), 0)
    rate, frame_rate = _nested(ctx.config, "sampling_rate"), _nested(ctx.config, "frame_rate")
    if not hop and isinstance(rate, int | float) and isinstance(frame_rate, int | float) and frame_rate > 0:
        hop = round(rate / frame_rate)
    return hop


def audio_waveform_text(ctx: Context) -> list[InputSpec] | None:
    """Raw samples and text with one placeholder per audio-tokenizer frame (between the audio
    start and end markers), as speech LLMs over a codec or acoustic tokenizer take them: samples
    as (batch, channels, samples), with a padding mask (VibeVoice-ASR) or cut into clips by
    `input_values_cutoffs` (CSM)."""
    token = _token(ctx, "audio_token_id", "audio_token_index")
    hop = _samples_per_token(ctx)
    if token is None or not hop or not {"input_values", "input_ids"} <= ctx.params:
        return None
    start = _token(ctx, "audio_bos_token_id", "audio_start_token_id")
    end = _token(ctx, "audio_eos_token_id", "audio_end_token_id")
    count = -(-SAMPLES // hop)
    samples = count * hop  # whole frames, as processors pad the audio
    inputs = _planted(ctx, token, count, start, end)
    inputs.append(InputSpec(name="input_values", shape=[1, 1, samples], dtype="float32"))
    if "input_values_cutoffs" in ctx.params:  # where each clip ends in its row of samples
        inputs.append(_values("input_values_cutoffs", [[samples]]))
    if "padding_mask" in ctx.params:  # every sample is real
        inputs.append(_ones("padding_mask", [1, samples], "bool"))
    if "sample" in ctx.params:  # the latents as encoded, without the sampled VAE noise
        inputs.append(_literal("sample", False))
    return inputs


def _paired_features(ctx: Context, audio: Recipe) -> list[InputSpec] | None:
    """Text and one clip's filterbank features as `audio` lays them out, no placeholders."""
    if "input_ids" not in ctx.params or _token(ctx, "audio_token_id", "audio_token_index") is not None:
        return None
    inputs = audio(ctx)
    return None if inputs is None else [*_text_inputs(ctx, batch=1), *inputs]


def audio_paired_features(ctx: Context) -> list[InputSpec] | None:
    """Text and features as (batch, mel bins, frames): CLVP (its conditioning encoder reads both)."""
    return _paired_features(ctx, audio_features)


def audio_paired_features_channel(ctx: Context) -> list[InputSpec] | None:
    """Text and features as (batch, 1, frames, mel bins): CLAP's dual encoder."""
    return _paired_features(ctx, audio_features_channel)


def audio_spectrogram(ctx: Context) -> list[InputSpec] | None:
    """A spectrogram passed as `input_values` (batch, frames, mel bins), as AST takes."""
    if "input_values" not in ctx.params:
        return None
    frames = _first_int(ctx.get("max_length", None), 64)
    return [InputSpec(name="input_values", shape=[1, frames, _mel_bins(ctx)], dtype="float32")]


def _decoder_ids(ctx: Context, batch: int = 1) -> list[InputSpec]:
    if "decoder_input_ids" in ctx.params:
        return [_ids("decoder_input_ids", [batch, SEQ // 2], _limit(ctx))]
    return []


def audio_text(ctx: Context) -> list[InputSpec] | None:
    token = _token(ctx, "audio_token_id", "audio_token_index")
    if token is None or not {"input_features", "input_ids"} <= ctx.params:
        return None
    frames = _audio_frames(ctx)
    inputs = _planted(ctx, token, ctx.token_count, None, None)
    inputs.append(InputSpec(name="input_features", shape=[1, _mel_bins(ctx), frames], dtype="float32"))
    return inputs + _audio_masks(ctx, frames) + _decoder_ids(ctx)


def audio_text_by_frame(ctx: Context) -> list[InputSpec] | None:
    """audio_text with features as (batch, frames, mel bins)."""
    inputs = audio_text(ctx)
    if inputs is None:
        return None
    frames = _audio_frames(ctx)
    return [
        InputSpec(name="input_features", shape=[1, frames, _mel_bins(ctx)], dtype="float32")
        if item.name == "input_features"
        else item
        for item in inputs
    ]


def audio_text_streamed(ctx: Context) -> list[InputSpec] | None:
    """Mel features and one text token per audio embedding, the two streams added position by
    position rather than audio spliced in at placeholders (Voxtral Realtime): a Whisper-style stem
    (stride 2) then `downsample_factor` frames stacked per embedding."""
    factor = _first_int(ctx.get("downsample_factor", None), 0)
    if not factor or _token(ctx, "audio_token_id", "audio_token_index") is not None:
        return None
    if not {"input_features", "input_ids"} <= ctx.params:
        return None
    frames = _audio_frames(ctx)
    inputs = [
        _ids("input_ids", [1, frames // (2 * factor)], _limit(ctx)),
        InputSpec(name="input_features", shape=[1, _mel_bins(ctx), frames], dtype="float32"),
    ]
    delay = _first_int(ctx.get("default_num_delay_tokens", None), -1)
    if "num_delay_tokens" in ctx.params and delay >= 0:  # how far the text lags the audio
        inputs.append(_literal("num_delay_tokens", delay))
    return inputs


def audio_text_windowed(ctx: Context) -> list[InputSpec] | None:
    """audio_text_by_frame for a projector that pools fixed windows of encoder frames (Granite
    Speech's windowed Q-Former): ceil(frames / window_size) * window_size / downsample_rate
    placeholders, and `input_features_mask` marks those projected features, not the frames."""
    window = _first_int(ctx.get("window_size", None), 0)
    rate = _first_int(ctx.get("downsample_rate", None), 0)
    token = _token(ctx, "audio_token_id", "audio_token_index")
    if not window or not rate or token is None or not {"input_features", "input_ids"} <= ctx.params:
        return None
    frames = _audio_frames(ctx)
    count = -(-frames // window) * window // rate
    inputs = [
        *_planted(ctx, token, count, None, None),
        InputSpec(name="input_features", shape=[1, frames, _mel_bins(ctx)], dtype="float32"),
    ]
    if "input_features_mask" in ctx.params:
        inputs.append(_ones("input_features_mask", [1, count], "bool"))
    return inputs


def video(ctx: Context) -> list[InputSpec] | None:
    name = next((n for n in ("pixel_values", "pixel_values_videos") if n in ctx.params), None)
    if name is None:
        return None
    channels, size = _image_shape(ctx)
    frames = _first_int(ctx.get("num_frames", None, "vision_config"), 8)
    return [InputSpec(name=name, shape=[1, frames, channels, size, size], dtype="float32")]


def video_text(ctx: Context) -> list[InputSpec] | None:
    """Text around video placeholder tokens (the count read back from the model) and a clip of
    frames (batch, frames, C, H, W), as video VLMs take them (InstructBLIP-Video, with its
    Q-Former's prompt)."""
    token = _token(ctx, "video_token_id", "video_token_index")
    name = next((n for n in ("pixel_values_videos", "pixel_values") if n in ctx.params), None)
    if token is None or name is None or "input_ids" not in ctx.params:
        return None
    channels, size = _image_shape(ctx)
    frames = _first_int(ctx.get("num_frames", None, "vision_config"), 4)
    count = ctx.token_count
    queries = _first_int(ctx.get("num_query_tokens", None), 0)
    if queries and count == 16:
        # A Q-Former's queries per frame fill the placeholders, which the model scatters without
        # counting them: as many as it has features.
        count = queries * frames
    return [
        *_planted(ctx, token, count, None, None),
        InputSpec(name=name, shape=[1, frames, channels, size, size], dtype="float32"),
        *_decoder_ids(ctx),
        *_companions(ctx, 1, 0),
    ]


def video_paired(ctx: Context) -> list[InputSpec] | None:
    """Text and a clip of frames (batch, frames, C, H, W), one of each, no placeholder tokens (a
    model with them is a video VLM): dual encoders (X-CLIP, VideoPrism's CLIP) and single-stream
    models that join both sequences (TVP)."""
    if "input_ids" not in ctx.params or _token(ctx, "video_token_id", "video_token_index") is not None:
        return None
    inputs = video(ctx)
    if inputs is None or _image_token(ctx) is not None:
        return None
    return [*_text_inputs(ctx, batch=1), *inputs]


def image_patches(ctx: Context) -> list[InputSpec] | None:
    """Variable-resolution towers fed patches already flattened, with the text of a dual encoder
    (SigLIP 2) or the decoder ids of an image-to-text model (Pix2Struct) where forward() takes them."""
    inputs = _flat_patches(ctx)
    if inputs is None:
        return None
    text_inputs = _text_inputs(ctx) if "input_ids" in ctx.params else []
    return [*text_inputs, *inputs, *_decoder_ids(ctx)]


def _flat_patches(ctx: Context) -> list[InputSpec] | None:
    """SigLIP 2's patches (patches, mask and the patch grid's shape), Pix2Struct's (each patch led
    by its row and column index)."""
    patch = _first_int(ctx.get("patch_size", None, "vision_config"), 16)
    channels, _ = _image_shape(ctx)
    side = 4  # a 4 x 4 grid of patches
    if {"pixel_values", "spatial_shapes"} <= ctx.params:
        return [
            InputSpec(name="pixel_values", shape=[1, side * side, channels * patch * patch], dtype="float32"),
            _ones("pixel_attention_mask", [1, side * side]),
            _values("spatial_shapes", [[side, side]]),
        ]
    if {"pixel_values", "pixel_position_ids"} <= ctx.params:
        # Gemma 4: patches with their (x, y) positions.
        return _positioned_patches(ctx, "pixel_position_ids", channels, patch)
    if "flattened_patches" in ctx.params:
        width = _first_int(ctx.get("patch_embed_hidden_size", None, "vision_config"), 0) or (
            channels * patch * patch
        )
        # Indices are read back from the floats, so the tensor is literal: 1-based row and column
        # (0 marks padding), then pixels in [-1, 1).
        rows = [
            [float(1 + i // side), float(1 + i % side)] + [((i * 7 + j) % 20) / 10 - 1 for j in range(width)]
            for i in range(side * side)
        ]
        return [
            InputSpec(
                name="flattened_patches",
                shape=[1, side * side, 2 + width],
                dtype="float32",
                kind="values",
                values=[rows],
            ),
            _ones("attention_mask", [1, side * side], "float32"),
        ]
    return None


def image_tiles(ctx: Context) -> list[InputSpec] | None:
    """One image cut into the tower's tiles, with its aspect-ratio id and tile mask, as Mllama's
    vision tower takes (batch, images, tiles, C, H, W)."""
    if not {"pixel_values", "aspect_ratio_ids", "aspect_ratio_mask"} <= ctx.params:
        return None
    channels, size = _image_shape(ctx)
    tiles = _first_int(ctx.get("max_num_tiles", None, "vision_config"), 1)
    inputs = [
        InputSpec(name="pixel_values", shape=[1, 1, tiles, channels, size, size], dtype="float32"),
        _values("aspect_ratio_ids", [[1]]),
        _ones("aspect_ratio_mask", [1, 1, tiles]),
    ]
    token = _image_token(ctx)
    if "input_ids" in ctx.params and token is not None:
        # The full model: one image token, and every text token attending to every tile.
        text = _planted(ctx, token, 1, None, None)
        seq = text[0].shape[1]
        if "cross_attention_mask" in ctx.params:
            text.append(_ones("cross_attention_mask", [1, seq, 1, tiles]))
        inputs = text + inputs
    return inputs


def video_frames_batched(ctx: Context) -> list[InputSpec] | None:
    """Video frames folded into the batch (batch x frames, C, H, W), as X-CLIP's tower takes."""
    frames = _first_int(ctx.get("num_frames", None, "vision_config"), 0)
    if "pixel_values" not in ctx.params or frames < 2:
        return None
    channels, size = _image_shape(ctx)
    return [InputSpec(name="pixel_values", shape=[frames, channels, size, size], dtype="float32")]


def audio_features_channel(ctx: Context) -> list[InputSpec] | None:
    """Filterbank features with a channel axis (batch, 1, frames, mel bins), as CLAP's tower takes."""
    if "input_features" not in ctx.params:
        return None
    frames = _audio_frames(ctx)
    return [InputSpec(name="input_features", shape=[1, 1, frames, _mel_bins(ctx)], dtype="float32")]


def audio_features_hidden(ctx: Context) -> list[InputSpec] | None:
    """Filterbank features (batch, frames, input_size) passed as `hidden_states`, with a mask of
    real frames, as Phi-4-multimodal's Conformer audio encoder takes them."""
    size = _first_int(ctx.get("input_size", None), 0)
    if not size or ctx.required != ["hidden_states", "mask"]:
        return None
    frames = _audio_frames(ctx)
    return [
        InputSpec(name="hidden_states", shape=[1, frames, size], dtype="float32"),
        _ones("mask", [1, frames], "bool"),
    ]


def audio_mel_ids(ctx: Context) -> list[InputSpec] | None:
    """Mel values quantized into `mel_vocab_size` levels and embedded like tokens, as
    (batch, frames, mel bins), as Inkling's audio tower takes `audio_input_ids`."""
    if "audio_input_ids" not in ctx.required:
        return None
    bins = _first_int(ctx.get("n_mel_bins", None, "audio_config"), 0) or _mel_bins(ctx)
    levels = _first_int(ctx.get("mel_vocab_size", None, "audio_config"), 2)
    shape = [1, SEQ, bins]
    return [InputSpec(name="audio_input_ids", shape=shape, dtype="int64", kind="randint", low=0, high=levels)]


def audio_features_embedded(ctx: Context) -> list[InputSpec] | None:
    """Spectrogram frames (batch, frames, width) taken as the encoder's input embeddings, as
    Pop2Piano takes them (its feature extractor makes as many mel bins as the model is wide)."""
    if not {"input_features", "inputs_embeds"} <= ctx.params:
        return None
    width = _first_int(ctx.get("d_model", None), 0) or _first_int(ctx.get("hidden_size", None), WIDTH_GUESS)
    frames = _audio_frames(ctx)
    inputs = [InputSpec(name="input_features", shape=[1, frames, width], dtype="float32")]
    return [*inputs, *_decoder_ids(ctx)]


def chroma_text_to_codes(ctx: Context) -> list[InputSpec] | None:
    """Text, a chromagram (batch, frames, num_chroma) of the melody to follow, and audio codes
    with one row per codebook (batch x codebooks, steps), as MusicGen Melody's decoder takes them."""
    chroma = _first_int(ctx.get("num_chroma", None), 0)
    if not chroma or not {"input_ids", "input_features", "decoder_input_ids"} <= ctx.params:
        return None
    decoder = ctx.sub("decoder")
    codebooks = _first_int(getattr(decoder, "num_codebooks", None), 1)
    frames = min(_first_int(ctx.get("chroma_length", None), SEQ), SEQ)
    return [
        *_text_inputs(ctx, batch=1),
        InputSpec(name="input_features", shape=[1, frames, chroma], dtype="float32"),
        _ids("decoder_input_ids", [codebooks, SEQ // 2], _limit(ctx)),
    ]


def embedded_seq2seq(ctx: Context) -> list[InputSpec] | None:
    """The bare SpeechT5 transformer, built without its speech and text pre-nets: encoder and
    decoder each take a sequence already embedded at the model width (batch, steps, width), as a
    pre-net hands it on."""
    if not {"input_values", "decoder_input_values"} <= set(ctx.params):
        return None
    width = _first_int(ctx.get("hidden_size", None), WIDTH_GUESS)
    return [
        InputSpec(name="input_values", shape=[1, SEQ, width], dtype="float32"),
        InputSpec(name="decoder_input_values", shape=[1, SEQ // 2, width], dtype="float32"),
    ]


def region_features(ctx: Context) -> list[InputSpec] | None:
    """Text with an image given as detected regions (LXMERT): one feature vector per region, as an
    object detector's pooled features, and its box as page fractions (x0, y0, x1, y1)."""
    if not {"input_ids", "visual_feats", "visual_pos"} <= ctx.params:
        return None
    regions = 8
    corners = [(0.1 * (i % 4), 0.1 * (i // 4)) for i in range(regions)]
    boxes = [[[x, y, x + 0.5, y + 0.5] for x, y in corners]]
    return [
        *_text_inputs(ctx, batch=1),
        InputSpec(
            name="visual_feats",
            shape=[1, regions, _first_int(ctx.get("visual_feat_dim", None), 2048)],
            dtype="float32",
        ),
        InputSpec(name="visual_pos", shape=[1, regions, 4], dtype="float32", kind="values", values=boxes),
    ]


def query_tokens(ctx: Context) -> list[InputSpec] | None:
    """A Q-Former alone (BLIP-2's): its learned queries as embeddings, cross-attending to the
    image features of a vision tower (patches x the tower's width)."""
    if not {"query_embeds", "encoder_hidden_states"} <= ctx.params:
        return None
    width = _first_int(ctx.get("hidden_size", None), WIDTH_GUESS)
    vision = _first_int(ctx.get("encoder_hidden_size", None), width)
    queries = _first_int(ctx.get("num_query_tokens", None), 8)
    return [
        InputSpec(name="query_embeds", shape=[1, queries, width], dtype="float32"),
        InputSpec(name="encoder_hidden_states", shape=[1, SEQ + 1, vision], dtype="float32"),
    ]


def robot_actions(ctx: Context) -> list[InputSpec] | None:
    """Vision-language-action models (PI0): camera images behind their placeholder tokens, which
    cameras are present, and the action expert's input: the robot's state, the noisy action chunk
    and the flow-matching timestep, or (the bare model) their embeddings."""
    vlm = getattr(ctx.config, "vlm_config", None)
    expert = getattr(ctx.config, "dit_config", None)
    needed = {"input_ids", "pixel_values", "pixel_attention_mask"}
    if vlm is None or expert is None or not needed <= ctx.params:
        return None
    vision = getattr(vlm, "vision_config", vlm)
    token = _first_int(getattr(vlm, "image_token_id", None), -1)
    size = _first_int(getattr(vision, "image_size", None), 64)
    patch = _first_int(getattr(vision, "patch_size", None), 14)
    channels = _first_int(getattr(vision, "num_channels", None), 3)
    chunk = _first_int(getattr(ctx.config, "chunk_size", None), 8)
    if token < 0:
        return None
    # One placeholder per patch of each camera image: the model gathers features by placeholder
    # rank without counting them.
    inputs = [
        *_planted(ctx, token, (size // patch) ** 2, None, None),
        InputSpec(name="pixel_values", shape=[1, 1, channels, size, size], dtype="float32"),
        _ones("pixel_attention_mask", [1, 1], "bool"),
    ]
    if "state" in ctx.params:
        state = _first_int(getattr(ctx.config, "max_state_dim", None), 32)
        actions = _first_int(getattr(ctx.config, "max_action_dim", None), 32)
        return [
            *inputs,
            InputSpec(name="state", shape=[1, state], dtype="float32"),
            InputSpec(name="noise", shape=[1, chunk, actions], dtype="float32"),
            _values("timestep", [0.5], "float32"),
        ]
    if "action_embeds" in ctx.params:
        # The state token, then the chunk of noisy actions, at the expert's width.
        width = _first_int(getattr(expert, "hidden_size", None), WIDTH_GUESS)
        return [*inputs, InputSpec(name="action_embeds", shape=[1, chunk + 1, width], dtype="float32")]
    return None


def retrieved_context(ctx: Context) -> list[InputSpec] | None:
    """A question with the documents a retriever returned for it, as RAG takes them when it has no
    retriever object: n_docs tokenised contexts, their scores, and the answer's decoder ids."""
    if not {"context_input_ids", "context_attention_mask", "doc_scores"} <= ctx.params:
        return None
    docs = _first_int(ctx.get("n_docs", None), 5)
    return [
        *_text_inputs(ctx, batch=1),
        _ids("context_input_ids", [docs, SEQ], _limit(ctx)),
        _ones("context_attention_mask", [docs, SEQ]),
        InputSpec(name="doc_scores", shape=[1, docs], dtype="float32"),
        *_decoder_ids(ctx),
    ]


def trajectory(ctx: Context) -> list[InputSpec] | None:
    """An episode of states, actions, rewards, returns-to-go and timesteps, as Decision
    Transformer takes it (batch, steps, state_dim / act_dim / 1)."""
    if not {"states", "actions", "returns_to_go", "timesteps"} <= ctx.params:
        return None
    steps = 8
    state_dim = _first_int(ctx.get("state_dim", None), 4)
    act_dim = _first_int(ctx.get("act_dim", None), 2)
    inputs = [
        InputSpec(name="states", shape=[1, steps, state_dim], dtype="float32"),
        InputSpec(name="actions", shape=[1, steps, act_dim], dtype="float32"),
        InputSpec(name="rewards", shape=[1, steps, 1], dtype="float32"),
        InputSpec(name="returns_to_go", shape=[1, steps, 1], dtype="float32"),
        _values("timesteps", [list(range(steps))]),
    ]
    if "attention_mask" in ctx.params:
        inputs.append(_ones("attention_mask", [1, steps]))
    return [item for item in inputs if item.name in ctx.params]


def watermark_scores(ctx: Context) -> list[InputSpec] | None:
    """Per-token g-values of a watermarked text (0 or 1 for each tournament layer) and which
    tokens count, as SynthID's Bayesian detector takes them."""
    if not {"g_values", "mask"} <= ctx.params:
        return None
    depth = _first_int(ctx.get("watermarking_depth", None), 4)
    return [
        InputSpec(name="g_values", shape=[BATCH, SEQ, depth], dtype="float32", kind="randint", low=0, high=2),
        _ones("mask", [BATCH, SEQ], "float32"),
    ]


def time_series(ctx: Context) -> list[InputSpec] | None:
    if "past_values" not in ctx.params:
        return None
    context = _first_int(ctx.get("context_length", None), 32)
    lags = ctx.get("lags_sequence", None)
    history = context + (max(lags) if isinstance(lags, list) and lags else 0)
    channels = _first_int(ctx.get("num_input_channels", None), 0) or _first_int(
        ctx.get("input_size", None), 1
    )
    per_channel = channels > 1 or ctx.get("num_input_channels", None) is not None
    shape = [BATCH, history] + ([channels] if per_channel else [])
    inputs = [InputSpec(name="past_values", shape=shape, dtype="float32")]
    time_features = _first_int(ctx.get("num_time_features", None), 0)
    if "past_time_features" in ctx.params:
        inputs.append(
            InputSpec(name="past_time_features", shape=[BATCH, history, time_features], dtype="float32")
        )
    if "past_observed_mask" in ctx.params:
        inputs.append(_ones("past_observed_mask", shape, "bool"))
    if "past_values_padding" in ctx.params:  # TimesFM: which steps are padding (none)
        inputs.append(
            InputSpec(name="past_values_padding", shape=[BATCH, history], dtype="float32", kind="zeros")
        )
    if "freq" in ctx.params:
        inputs.append(InputSpec(name="freq", shape=[BATCH, 1], dtype="int64", kind="zeros"))
    prediction = _first_int(ctx.get("prediction_length", None), 8)
    if "future_values" in ctx.params and "past_time_features" in ctx.params:
        future = [BATCH, prediction] + ([channels] if per_channel else [])
        inputs.append(InputSpec(name="future_values", shape=future, dtype="float32"))
        inputs.append(
            InputSpec(name="future_time_features", shape=[BATCH, prediction, time_features], dtype="float32")
        )
    return inputs


def audio_latents(ctx: Context) -> list[InputSpec] | None:
    """Continuous latents (batch, width, frames), as codec decoders take them (Mimi's and
    Pocket TTS's `latents`, VibeVoice's acoustic decoder)."""
    name = "latents" if "latents" in ctx.required else _unnamed_audio_input(ctx)
    if name is None:
        return None
    width = _first_int(ctx.get("hidden_size", None), WIDTH_GUESS)
    return [InputSpec(name=name, shape=[1, width, SEQ // 2], dtype="float32")]


def audio_waveform_features(ctx: Context) -> list[InputSpec] | None:
    """Codecs with an acoustic branch on raw samples and a semantic branch on filterbank
    features (X-Codec 2, NeuCodec): both, with one feature frame per acoustic frame."""
    if not {"input_values", "input_features"} <= set(ctx.required):
        return None
    semantic = ctx.sub("semantic_model_config")
    features = _first_int(getattr(semantic, "feature_projection_input_dim", None), 0) or _mel_bins(ctx)
    hop = 1
    for ratio in ctx.get("downsampling_ratios", None) or []:
        hop *= ratio
    frames = SAMPLES // hop if hop > 1 else _audio_frames(ctx)
    return [
        InputSpec(name="input_values", shape=[1, 1, SAMPLES], dtype="float32"),
        InputSpec(name="input_features", shape=[1, frames, features], dtype="float32"),
    ]


def mel_spectrogram(ctx: Context) -> list[InputSpec] | None:
    """A mel spectrogram (batch, mel bins, frames), as vocoders take (Qwen2.5-Omni's BigVGAN)."""
    if "mel_spectrogram" not in ctx.required:
        return None
    bins = _first_int(ctx.get("mel_dim", None), 0) or _mel_bins(ctx)
    return [InputSpec(name="mel_spectrogram", shape=[1, bins, SEQ], dtype="float32")]


def speech_codes_to_mel(ctx: Context) -> list[InputSpec] | None:
    """Speech codes to a mel spectrogram by flow matching (Qwen2.5-Omni's Token2Wav): codes, a
    reference mel and a speaker vector; its DiT alone also takes the noisy mel and the time step.
    The whole model integrates over `num_steps` DiT calls: two."""
    dit = ctx.sub("dit_config")
    bins = _first_int(getattr(dit, "mel_dim", None), 80)
    speaker = _first_int(getattr(dit, "enc_emb_dim", None), WIDTH_GUESS)
    codes = SEQ // 2
    code_ids = InputSpec(
        name="code",
        shape=[1, codes],
        dtype="int64",
        kind="randint",
        low=0,
        high=_first_int(getattr(dit, "num_embeds", None), 2),
    )
    reference = InputSpec(name="reference_mel", shape=[1, SEQ, bins], dtype="float32")
    if {"code", "conditioning", "reference_mel"} <= set(ctx.required):
        return [
            code_ids,
            InputSpec(name="conditioning", shape=[1, speaker], dtype="float32"),
            reference,
            _literal("num_steps", 2),
        ]
    if {"hidden_states", "quantized_code", "condition_vector", "speaker_embedding", "time_step"} <= set(
        ctx.required
    ):
        frames = codes * _first_int(getattr(dit, "repeats", None), 1)
        return [
            InputSpec(name="hidden_states", shape=[1, frames, bins], dtype="float32"),
            reference.model_copy(update={"name": "condition_vector"}),
            InputSpec(name="speaker_embedding", shape=[1, frames, speaker], dtype="float32"),
            code_ids.model_copy(update={"name": "quantized_code"}),
            InputSpec(name="time_step", shape=[1], dtype="float32", kind="values", values=[0.5]),
        ]
    return None


def text_to_audio_codes(ctx: Context) -> list[InputSpec] | None:
    """Text-to-speech encoder-decoders (Dia): text ids into the encoder, audio codes with a
    codebook axis (batch, frames, codebooks) into the decoder."""
    decoder = ctx.sub("decoder_config")
    codebooks = _first_int(getattr(decoder, "num_channels", None), 0)
    if not codebooks or decoder is ctx.config or not {"input_ids", "decoder_input_ids"} <= ctx.params:
        return None
    text_vocab = _first_int(getattr(ctx.sub("encoder_config"), "vocab_size", None), _limit(ctx))
    inputs = [_ids("input_ids", [1, SEQ], min(text_vocab, _limit(ctx)))]
    if "attention_mask" in ctx.params:
        inputs.append(_ones("attention_mask", [1, SEQ]))
    return [*inputs, _ids("decoder_input_ids", [1, SEQ // 2, codebooks], _limit(ctx))]


def codebook_ids(ctx: Context) -> list[InputSpec] | None:
    """Codes of every codebook (batch, frames, codebooks) and the index of the codebook to
    predict, as Bark's fine acoustics model takes: the last, which sums all the others."""
    codebooks = _first_int(ctx.get("n_codes_total", None), 0)
    if "codebook_idx" not in ctx.required or not codebooks or "input_ids" not in ctx.params:
        return None
    return [
        _literal("codebook_idx", codebooks - 1),
        _ids("input_ids", [1, SEQ, codebooks], _limit(ctx)),
    ]


def draft_block(ctx: Context) -> list[InputSpec] | None:
    """Block-diffusion drafters (MuseGlimmer's assistant, DFlash-style): embeddings of the block to
    denoise, next to the target model's hidden states of the accepted context, the states of each
    target layer it reads concatenated."""
    if not {"noise_embeds", "context_hidden_states"} <= set(ctx.required):
        return None
    width = _first_int(ctx.get("hidden_size", None), WIDTH_GUESS)
    block = _first_int(ctx.get("block_size", None), SEQ)
    layers = ctx.get("target_layer_ids", None)
    read = len(layers) if isinstance(layers, list) and layers else 1
    return [
        InputSpec(name="noise_embeds", shape=[1, block, width], dtype="float32"),
        InputSpec(name="context_hidden_states", shape=[1, SEQ // 2, width * read], dtype="float32"),
    ]


def image_pair(ctx: Context) -> list[InputSpec] | None:
    """Two images to match, stacked as (batch, 2, C, H, W), as keypoint matchers (EfficientLoFTR)
    take them; after every other image recipe, since nothing in forward() tells a matcher apart."""
    if "pixel_values" not in ctx.params or "input_ids" in ctx.params or ctx.spec.modality != "image":
        return None
    return [InputSpec(name="pixel_values", shape=[1, 2, *_image_chw(ctx)], dtype="float32")]


# `inputs`: Perceiver's arrays, already embedded to `d_model` when no preprocessor is attached.
_EMBEDDING_INPUTS = (
    "hidden_states",
    "inputs_embeds",
    "encoder_hidden_states",
    "query_embeds",
    "states",
    "inputs",
)


def by_signature(ctx: Context) -> list[InputSpec] | None:
    """Last resort for towers and blocks with unusual inputs: one tensor per required forward()
    argument, guessed from its name (ids, masks, pixels, embeddings of the model's width)."""
    required = [name for name in ctx.required if name not in ("self",)]
    if not required and "inputs_embeds" in ctx.params:
        required = ["inputs_embeds"]
        if "decoder_input_ids" in ctx.params:  # encoder-decoders fed embeddings (SeamlessM4T's units)
            required.append("decoder_input_ids")
    if not required:
        return None
    width = _first_int(ctx.get("hidden_size", None), 0) or _first_int(ctx.get("d_model", None), WIDTH_GUESS)
    channels, size = _image_shape(ctx)
    inputs = []
    for name in required:
        if name.endswith("_ids") or name == "input":
            inputs.append(_ids(name, [1, SEQ], _limit(ctx)))
        elif "pixel_values" in name or name == "prompt_masks":  # SegGPT's prompt image and mask
            inputs.append(InputSpec(name=name, shape=[1, *_image_chw(ctx)], dtype="float32"))
        elif "mask" in name:
            inputs.append(_ones(name, [1, SEQ]))
        elif name.startswith("pixel_values"):
            inputs.append(InputSpec(name=name, shape=[1, channels, size, size], dtype="float32"))
        elif name in _EMBEDDING_INPUTS or name.endswith("_embeds"):
            inputs.append(InputSpec(name=name, shape=[1, SEQ, width], dtype="float32"))
        elif name in ("input_values", "audio_values", "waveform"):
            inputs.append(InputSpec(name=name, shape=[1, SAMPLES], dtype="float32"))
        else:
            return None  # an argument we cannot guess: not applicable rather than wrong
    return inputs


Recipe = Callable[[Context], list[InputSpec] | None]

RECIPES: dict[str, Recipe] = {
    "text": text,
    "encoder_decoder": encoder_decoder,
    "image": image,
    "image_unnamed": image_unnamed,
    "image_prompted": image_prompted,
    "image_task": image_task,
    "image_text": image_text,
    "image_text_with_sizes": image_text_with_sizes,
    "image_text_masked": image_text_masked,
    "image_text_cross": image_text_cross,
    "image_text_sized": image_text_sized,
    "image_text_stacked": image_text_stacked,
    "image_grid": image_grid,
    "image_grid_patches": image_grid_patches,
    "image_grid_patches_unbatched": image_grid_patches_unbatched,
    "image_grid_merged": image_grid_merged,
    "image_paired": image_paired,
    "audio_features": audio_features,
    "audio_features_by_frame": audio_features_by_frame,
    "audio_waveform": audio_waveform,
    "audio_waveform_channels": audio_waveform_channels,
    "audio_spectrogram": audio_spectrogram,
    "audio_paired": audio_paired,
    "audio_paired_features": audio_paired_features,
    "audio_paired_features_channel": audio_paired_features_channel,
    "audio_text": audio_text,
    "audio_text_by_frame": audio_text_by_frame,
    "audio_waveform_text": audio_waveform_text,
    "audio_text_streamed": audio_text_streamed,
    "audio_text_windowed": audio_text_windowed,
    "video": video,
    "video_frames_batched": video_frames_batched,
    "video_paired": video_paired,
    "video_text": video_text,
    "image_patches": image_patches,
    "image_tiles": image_tiles,
    "audio_features_channel": audio_features_channel,
    "audio_features_hidden": audio_features_hidden,
    "audio_mel_ids": audio_mel_ids,
    "embedded_seq2seq": embedded_seq2seq,
    "audio_features_embedded": audio_features_embedded,
    "chroma_text_to_codes": chroma_text_to_codes,
    "image_text_patches": image_text_patches,
    "image_text_patch_grid": image_text_patch_grid,
    "image_text_positioned": image_text_positioned,
    "image_packed": image_packed,
    "image_crop_patches": image_crop_patches,
    "image_text_pooled": image_text_pooled,
    "image_patch_volumes": image_patch_volumes,
    "image_text_tile_mask": image_text_tile_mask,
    "time_series": time_series,
    "trajectory": trajectory,
    "watermark_scores": watermark_scores,
    "retrieved_context": retrieved_context,
    "robot_actions": robot_actions,
    "region_features": region_features,
    "query_tokens": query_tokens,
    "audio_latents": audio_latents,
    "audio_waveform_features": audio_waveform_features,
    "mel_spectrogram": mel_spectrogram,
    "speech_codes_to_mel": speech_codes_to_mel,
    "text_to_audio_codes": text_to_audio_codes,
    "codebook_ids": codebook_ids,
    "draft_block": draft_block,
    "image_pair": image_pair,
    "by_signature": by_signature,
}
TEXT_ONLY = {"text", "encoder_decoder"}
LAST_RESORT = "by_signature"  # after text: a text model fed embeddings is not a full-modality run

# The ladder per modality (catalog.modality_of): full-modality recipes first, text last.
LADDERS: dict[str, list[str]] = {
    "text": ["encoder_decoder", "text"],
    "image": ["image", "image_grid", "video", "image_paired"],
    "image_text": [
        "image_text",
        "image_text_with_sizes",
        "image_text_sized",
        "image_text_stacked",
        "image_grid",
        "image_paired",
        "image",
        "encoder_decoder",
        "text",
    ],
    "video": ["video", "image"],
    "video_text": [
        "image_grid",
        "image_text",
        "image_text_with_sizes",
        "image_text_sized",
        "image_text_stacked",
        "image_paired",
        "video",
        "encoder_decoder",
        "text",
    ],
    "audio": [
        "audio_features",
        "audio_features_by_frame",
        "audio_waveform",
        "audio_waveform_channels",
        "audio_spectrogram",
    ],
    "audio_text": [
        "audio_text",
        "audio_text_by_frame",
        "audio_text_windowed",
        "audio_text_streamed",
        "audio_waveform_text",
        "audio_features",
        "audio_features_by_frame",
        "audio_waveform",
        "text",
    ],
    "time_series": ["time_series"],
}


def ladder_for(modality: str) -> list[str]:
    """The recipes to try, in order: the modality's own, then every other full-modality recipe
    (the catalog's modality is a guess from forward()'s arguments), then text-only ones, then
    inputs guessed from forward()'s signature (towers that take embeddings)."""
    ladder = LADDERS.get(modality, LADDERS["text"])
    others = [
        name for name in RECIPES if name not in ladder and name not in TEXT_ONLY and name != LAST_RESORT
    ]
    if modality == "text":
        return [*ladder, *others, LAST_RESORT]
    full = [name for name in ladder if name not in TEXT_ONLY]
    text_only = [name for name in ladder if name in TEXT_ONLY] or ["encoder_decoder", "text"]
    return [*full, *others, *text_only, LAST_RESORT]


def _required_params(model: torch.nn.Module) -> list[str]:
    try:
        parameters = inspect.signature(model.forward).parameters.values()
    except (TypeError, ValueError):
        return []
    return [
        p.name
        for p in parameters
        if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def _forward_params(model: torch.nn.Module) -> set[str]:
    try:
        return set(inspect.signature(model.forward).parameters)
    except (TypeError, ValueError):
        return set()


def eager_run(model: torch.nn.Module, inputs: dict[str, Any]) -> Any:
    with torch.no_grad():
        return model(**inputs)


def _attempt(model, ctx: Context, recipe: Recipe, device: str) -> list[InputSpec]:
    """Run `recipe` eagerly; retry with the placeholder count the model asked for."""
    for _ in range(3):
        inputs = recipe(ctx)
        if inputs is None:
            raise NotApplicable(recipe.__name__)
        try:
            eager_run(model, materialize_inputs(inputs, ctx.spec.seed, device))
            return inputs
        except Exception as error:
            wanted = _FEATURES.search(str(error))
            if not wanted:
                raise
            count = int(wanted.group(1))
            if count == ctx.token_count:
                # "tokens: N, features: N" and still a mismatch: the model (Mistral 3, Emu3)
                # counted features times the text width.
                width = _first_int(ctx.get("hidden_size", None, "text_config"), 0)
                if not width or count % width or count == width:
                    raise
                count //= width
            ctx.token_count = count
    raise RuntimeError("placeholder count did not settle")


def _describe(error: BaseException) -> str:
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {message}"[:300]


def complete_spec(spec: ModelSpec) -> ModelSpec:
    """Fill in what the catalog knows (config class, type, stratum, modality) and the tiny config."""
    from triagebot.corpus.catalog import entry

    update: dict[str, Any] = {}
    name = spec.class_path.partition(":")[2] or spec.model
    known = None
    if not spec.config_class:  # the catalog imports every model module: only when needed
        try:
            known = entry(name)
        except KeyError:
            known = None
    if known is not None:
        update.update(
            config_class=known.config_class,
            model_type=known.model_type,
            stratum=known.stratum,
            modality=known.modality,
        )
    if not spec.class_path:
        update["class_path"] = f"transformers:{name}"
    if spec.config is None:
        model_class = import_object(update.get("class_path", spec.class_path))
        config = tiny_config(model_class.config_class)
        if model_class.__name__.endswith("EncoderModel") and config.get("is_encoder_decoder"):
            # The encoder alone of an encoder-decoder family: T5Gemma's refuses a config that
            # says encoder-decoder (T5's turns the flag off itself).
            config["is_encoder_decoder"] = False
        update["config"] = config
    return spec.model_copy(update=update) if update else spec


def resolve(spec: ModelSpec, device: str = "cpu") -> Built:
    """Build the model of `spec` and find inputs it runs on; the completed spec is in `Built.spec`."""
    spec = complete_spec(spec)
    model = instantiate(spec, device)
    if type(model).forward is torch.nn.Module.forward:
        # Omni wrappers and abstract bases: no recipe can feed a forward() that only raises.
        raise NoRecipe(f"{type(model).__name__} has no forward() but nn.Module's unimplemented one")
    ctx = Context(
        spec=spec, config=model.config, params=_forward_params(model), required=_required_params(model)
    )
    failures = []
    for name in ladder_for(spec.modality):
        ctx.token_count = 16
        try:
            inputs = _attempt(model, ctx, RECIPES[name], device)
        except NotApplicable:
            continue
        except ImportError as error:
            raise MissingDependency(_describe(error)) from error
        except Exception as error:
            failures.append(f"{name}: {_describe(error)}")
            log.debug("%s: recipe %s failed: %s", spec.model, name, _describe(error))
            continue
        resolved = spec.model_copy(
            update={
                "recipe": name,
                "inputs": inputs,
                "partial": name in TEXT_ONLY and spec.modality != "text",
                "params": count_params(model),
            }
        )
        # A fresh model: the ladder's runs may have touched buffers (caches, running stats).
        model = instantiate(resolved, device)
        return Built(model, materialize_inputs(inputs, resolved.seed, device), resolved)
    raise NoRecipe("; ".join(failures) or f"no recipe applies to forward({', '.join(sorted(ctx.params))})")


def config_round_trips(spec: ModelSpec) -> bool:
    """Whether the spec's config dict rebuilds a config with the same dict."""
    model_class = import_object(spec.class_path)
    config = config_from_dict(model_class, spec.config)
    return config_from_dict(model_class, config.to_dict()).to_dict() == config.to_dict()
