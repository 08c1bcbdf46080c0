"""Image recipes: pixels in every layout a vision tower takes (square or not, stacked, tiled,
flattened into patches, packed, on a patch grid), with the placeholder text where the full model
takes text too."""

from __future__ import annotations

import inspect

from triagebot.corpus.recipes.common import (
    SEQ,
    Context,
    decoder_ids,
    first_int,
    given,
    image_chw,
    image_shape,
    image_token,
    ones,
    planted,
    text_inputs,
    text_limit,
    token_ids,
    token_of,
)
from triagebot.results import InputSpec


def image(ctx: Context) -> list[InputSpec] | None:
    if "pixel_values" not in ctx.params:
        return None
    # Image-to-text encoder-decoders (VisionEncoderDecoder) also take the decoder's ids.
    return [InputSpec(name="pixel_values", shape=[1, *image_chw(ctx)], dtype="float32"), *decoder_ids(ctx)]


def image_unnamed(ctx: Context) -> list[InputSpec] | None:
    """Image models whose forward() takes the pixels under another name, as its one required
    argument (PP-OCRv5's mobile detector: `hidden_states`), when it is annotated as a tensor (SAM 2
    Video's one required argument is its inference session)."""
    if "pixel_values" in ctx.params or ctx.spec.modality != "image" or len(ctx.required) != 1:
        return None
    name = ctx.required[0]
    forward = ctx.model_class.forward
    if "Tensor" not in str(inspect.signature(forward).parameters[name].annotation):
        return None
    return [InputSpec(name=name, shape=[1, *image_chw(ctx)], dtype="float32")]


def image_prompted(ctx: Context) -> list[InputSpec] | None:
    """An image with a prompt image and its mask, as SegGPT takes them: the model stacks prompt
    and image on height, so each is half the configured (height, width)."""
    if not {"pixel_values", "prompt_pixel_values", "prompt_masks"} <= ctx.params:
        return None
    channels, height, width = image_chw(ctx)
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
    length = first_int(ctx.get("task_seq_len", None), SEQ)
    return [
        InputSpec(name="pixel_values", shape=[1, *image_chw(ctx)], dtype="float32"),
        token_ids("task_inputs", [1, length], text_limit(ctx)),
    ]


def image_pair(ctx: Context) -> list[InputSpec] | None:
    """Two images to match, stacked as (batch, 2, C, H, W), as keypoint matchers (EfficientLoFTR)
    take them; after every other image recipe, since nothing in forward() tells a matcher apart."""
    if "pixel_values" not in ctx.params or "input_ids" in ctx.params or ctx.spec.modality != "image":
        return None
    return [InputSpec(name="pixel_values", shape=[1, 2, *image_chw(ctx)], dtype="float32")]


def image_tiles(ctx: Context) -> list[InputSpec] | None:
    """One image cut into the tower's tiles, with its aspect-ratio id and tile mask, as Mllama's
    vision tower takes (batch, images, tiles, C, H, W)."""
    if not {"pixel_values", "aspect_ratio_ids", "aspect_ratio_mask"} <= ctx.params:
        return None
    channels, size = image_shape(ctx)
    tiles = first_int(ctx.get("max_num_tiles", None, "vision_config"), 1)
    inputs = [
        InputSpec(name="pixel_values", shape=[1, 1, tiles, channels, size, size], dtype="float32"),
        given("aspect_ratio_ids", [[1]]),
        ones("aspect_ratio_mask", [1, 1, tiles]),
    ]
    token = image_token(ctx)
    if "input_ids" in ctx.params and token is not None:
        # The full model: one image token, and every text token attending to every tile.
        text = planted(ctx, token, 1, None, None)
        seq = text[0].shape[1]
        if "cross_attention_mask" in ctx.params:
            text.append(ones("cross_attention_mask", [1, seq, 1, tiles]))
        inputs = text + inputs
    return inputs


def image_patches(ctx: Context) -> list[InputSpec] | None:
    """Variable-resolution towers fed patches already flattened, with the text of a dual encoder
    (SigLIP 2) or the decoder ids of an image-to-text model (Pix2Struct) where forward() takes them."""
    inputs = _flat_patches(ctx)
    if inputs is None:
        return None
    text = text_inputs(ctx) if "input_ids" in ctx.params else []
    return [*text, *inputs, *decoder_ids(ctx)]


def _flat_patches(ctx: Context) -> list[InputSpec] | None:
    """SigLIP 2's patches (patches, mask and the patch grid's shape), Pix2Struct's (each patch led
    by its row and column index)."""
    patch = first_int(ctx.get("patch_size", None, "vision_config"), 16)
    channels, _ = image_shape(ctx)
    side = 4  # a 4 x 4 grid of patches
    if {"pixel_values", "spatial_shapes"} <= ctx.params:
        return [
            InputSpec(name="pixel_values", shape=[1, side * side, channels * patch * patch], dtype="float32"),
            ones("pixel_attention_mask", [1, side * side]),
            given("spatial_shapes", [[side, side]]),
        ]
    if {"pixel_values", "pixel_position_ids"} <= ctx.params:
        # Gemma 4: patches with their (x, y) positions.
        return positioned_patches(ctx, "pixel_position_ids", channels, patch)
    if "flattened_patches" in ctx.params:
        width = first_int(ctx.get("patch_embed_hidden_size", None, "vision_config"), 0) or (
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
            ones("attention_mask", [1, side * side], "float32"),
        ]
    return None


def positioned_patches(ctx: Context, positions_name: str, channels: int, patch: int) -> list[InputSpec]:
    """Flattened patches with their (x, y) positions (Gemma 4's towers): a square grid that the
    tower's pooling kernel tiles twice per side."""
    side = 2 * first_int(ctx.get("pooling_kernel_size", None, "vision_config"), 2)
    positions = [[x, y] for y in range(side) for x in range(side)]
    return [
        InputSpec(name="pixel_values", shape=[1, side * side, channels * patch * patch], dtype="float32"),
        InputSpec(
            name=positions_name, shape=[1, side * side, 2], dtype="int64", kind="values", values=[positions]
        ),
    ]


def image_crop_patches(ctx: Context) -> list[InputSpec] | None:
    """A vision tower fed one crop of flattened patches (see `crop_patches`)."""
    if "input_ids" in ctx.params or ctx.required != ["pixel_values"]:
        return None
    crop = crop_patches(ctx)
    return None if crop is None else [crop]


def crop_patches(ctx: Context) -> InputSpec | None:
    """One crop as the tower's whole sequence of flattened patches (crops, patches, C x patch x
    patch): towers with a fixed positional table, one entry a patch (Molmo 2)."""
    positions = first_int(ctx.get("num_position_embeddings", None, "vision_config"), 0)
    patch = first_int(ctx.get("patch_size", None, "vision_config"), 0)
    if not positions or not patch or "pixel_values" not in ctx.params:
        return None
    channels, _ = image_shape(ctx)
    return InputSpec(name="pixel_values", shape=[1, positions, channels * patch * patch], dtype="float32")


def image_patch_volumes(ctx: Context) -> list[InputSpec] | None:
    """Patches as channels-last space-time volumes (patches, temporal patch, patch, patch, C), one
    per placeholder token where forward() takes text, as Inkling's convolution-free tower folds them."""
    temporal = first_int(ctx.get("temporal_patch_size", None, "vision_config"), 0)
    patch = first_int(ctx.get("patch_size", None, "vision_config"), 0)
    if not temporal or not patch or "pixel_values" not in ctx.params:
        return None
    channels, _ = image_shape(ctx)
    count = 4
    shape = [count, temporal, patch, patch, channels]
    inputs = [InputSpec(name="pixel_values", shape=shape, dtype="float32")]
    if "input_ids" not in ctx.params:
        return inputs
    token = image_token(ctx)
    return None if token is None else [*planted(ctx, token, count, None, None), *inputs]


def image_packed(ctx: Context) -> list[InputSpec] | None:
    """NaViT-packed patches side by side in one strip (images, C, patch, patch x patches) with
    each image's patch grid (`target_sizes`), as MiniCPM-V takes them (behind placeholder tokens,
    the count read back from the model, where forward() takes text): a grid its window and merge
    kernels tile twice."""
    if not {"pixel_values", "target_sizes"} <= ctx.params:
        return None
    patch = first_int(ctx.get("patch_size", None, "vision_config"), 14)
    channels, _ = image_shape(ctx)
    window = first_int(ctx.get("window_kernel_size", None, "vision_config"), 1)
    merge = first_int(getattr(ctx.config, "merge_kernel_size", None), 1)
    side = 2 * window * merge ** first_int(getattr(ctx.config, "merger_times", None), 1)
    inputs = [
        InputSpec(name="pixel_values", shape=[1, channels, patch, patch * side * side], dtype="float32"),
        given("target_sizes", [[side, side]]),
    ]
    token = image_token(ctx)
    if "input_ids" in ctx.params and token is not None:
        inputs = planted(ctx, token, ctx.token_count, None, None) + inputs
    elif "input_ids" in ctx.params:
        return None
    return inputs


def _grid(ctx: Context) -> tuple[int, int, int, int]:
    vision = ctx.sub("vision_config")
    patch = first_int(getattr(vision, "patch_size", None), 14)
    # The same sizes under other families' names (MuseGlimmer: patch_temporal, merge_size).
    temporal = first_int(
        getattr(vision, "temporal_patch_size", None) or getattr(vision, "patch_temporal", None), 1
    )
    merge = first_int(getattr(vision, "spatial_merge_size", None) or getattr(vision, "merge_size", None), 2)
    channels = first_int(getattr(vision, "in_channels", None) or getattr(vision, "num_channels", None), 3)
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
        given(grid_name, [[1, side, side]]),
    ]
    for name in ("merge_sizes", "image_merge_sizes"):  # VideoLLaMA 3: each image's merge size
        if name in ctx.params:
            inputs.append(given(name, [merge]))
    if "images_per_sample" in ctx.params:
        # GLM-Image: a sample's grids end with the image it generates (no pixels): two in all.
        inputs[1] = given(grid_name, [[1, side, side], [1, side, side]])
        inputs.append(given("images_per_sample", [2]))
    token = image_token(ctx)
    if "input_ids" in ctx.params and token is not None:
        start = token_of(ctx, "vision_start_token_id", "image_start_token_id", "boi_token_id")
        end = token_of(ctx, "vision_end_token_id", "image_end_token_id", "eoi_token_id")
        count = ctx.token_count if ctx.token_count != 16 else patches // (merge * merge)
        inputs = planted(ctx, token, count, start, end) + inputs
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
        grid.name: given(grid.name, [tokens]),
        "pixel_values": InputSpec(name="pixel_values", shape=pixels, dtype="float32"),
    }
    return [replaced.get(item.name, item) for item in inputs]
