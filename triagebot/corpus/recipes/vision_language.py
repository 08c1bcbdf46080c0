"""Vision-language recipes: text with image placeholder tokens (the count read back from the model)
and the image as the tower takes it; dual encoders; region features; Q-Formers; robot policies."""

from __future__ import annotations

from dataclasses import replace

from triagebot.corpus.recipes.common import (
    BATCH,
    SEQ,
    WIDTH_GUESS,
    Context,
    companions,
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
    token_of,
)
from triagebot.corpus.recipes.image import crop_patches, positioned_patches
from triagebot.results import InputSpec


def image_paired(ctx: Context) -> list[InputSpec] | None:
    """Dual encoders (CLIP-style): text and an image, no placeholder tokens; the decoder's ids of
    an encoder-decoder that reads both (UDOP)."""
    if not {"pixel_values", "input_ids"} <= ctx.params:
        return None
    channels, size = image_shape(ctx)
    return [
        *text_inputs(ctx),
        InputSpec(name="pixel_values", shape=[BATCH, channels, size, size], dtype="float32"),
        *decoder_ids(ctx, BATCH),
    ]


def image_text(ctx: Context) -> list[InputSpec] | None:
    token = image_token(ctx)
    if token is None or not {"pixel_values", "input_ids"} <= ctx.params:
        return None
    channels, size = image_shape(ctx)
    start = token_of(ctx, "boi_token_id", "boi_token_index", "image_start_token_id")
    end = token_of(ctx, "eoi_token_id", "eoi_token_index", "image_end_token_id")
    inputs = planted(ctx, token, ctx.token_count, start, end)
    inputs.append(InputSpec(name="pixel_values", shape=[1, channels, size, size], dtype="float32"))
    if "high_res_pixel_values" in ctx.params:  # hybrid towers: a second, high-resolution view
        high = first_int(getattr(ctx.sub("high_res_vision_config"), "image_size", None), 2 * size)
        inputs.append(
            InputSpec(name="high_res_pixel_values", shape=[1, channels, high, high], dtype="float32")
        )
    return inputs + decoder_ids(ctx) + companions(ctx, 1, 0)


def image_text_with_sizes(ctx: Context) -> list[InputSpec] | None:
    """image_text plus `image_sizes`, as Pixtral-style towers (any resolution) take."""
    if "image_sizes" not in ctx.params:
        return None
    _, size = image_shape(ctx)
    if ctx.token_count == 16:
        # One token per merged patch: (size / (patch x merge))^2. Mistral 3's mismatch error
        # reports features times width, which the retry cannot read back.
        patch = first_int(ctx.get("patch_size", None, "vision_config"), 14)
        merge = first_int(ctx.get("spatial_merge_size", None), 1)
        ctx = replace(ctx, token_count=max(1, size // (patch * merge)) ** 2)
    inputs = image_text(ctx)
    if inputs is None:
        return None
    return [*inputs, given("image_sizes", [[size, size]])]


def image_text_sized(ctx: Context) -> list[InputSpec] | None:
    """image_text with tiles (base image + one tile) and `image_sizes`, as LLaVA-NeXT tilers take."""
    inputs = image_text(ctx) if "image_sizes" in ctx.params else None
    if inputs is None:
        return None
    channels, size = image_shape(ctx)
    inputs[-1] = InputSpec(name="pixel_values", shape=[1, 2, channels, size, size], dtype="float32")
    return [*inputs, given("image_sizes", [[size, size]])]


def image_text_stacked(ctx: Context) -> list[InputSpec] | None:
    """image_text with images stacked per sample (batch, images, C, H, W), as Idefics takes."""
    inputs = image_text(ctx)
    if inputs is None:
        return None
    channels, size = image_shape(ctx)
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


def image_text_masked(ctx: Context) -> list[InputSpec] | None:
    """Text with a run of positions that the image's latent queries fill, marked by a mask rather
    than by placeholder ids (Kosmos-2's `image_embeds_position_mask`)."""
    if not {"pixel_values", "input_ids", "image_embeds_position_mask"} <= ctx.params:
        return None
    count = first_int(ctx.get("latent_query_num", None), 0) or ctx.token_count
    limit = text_limit(ctx)
    row = [4 + (i * 7) % max(1, limit - 4) for i in range(count + 8)]
    mask = [0] * 4 + [1] * count + [0] * 4
    inputs = [given("input_ids", [row]), given("image_embeds_position_mask", [mask])]
    if "attention_mask" in ctx.params:
        inputs.append(ones("attention_mask", [1, len(row)]))
    return [*inputs, InputSpec(name="pixel_values", shape=[1, *image_chw(ctx)], dtype="float32")]


def image_text_cross(ctx: Context) -> list[InputSpec] | None:
    """Text cross-attending to images stacked per sample (batch, images, C, H, W), with the mask
    of which text tokens see which image (batch, tokens, images), as IDEFICS takes them."""
    if not {"pixel_values", "input_ids", "image_attention_mask"} <= ctx.params:
        return None
    return [
        *text_inputs(ctx, batch=1),
        InputSpec(name="pixel_values", shape=[1, 1, *image_chw(ctx)], dtype="float32"),
        ones("image_attention_mask", [1, SEQ, 1]),
    ]


def image_text_patches(ctx: Context) -> list[InputSpec] | None:
    """Flattened patches (patches, C x patch x patch), one per placeholder token and no grid, as
    NeoMME embeds them straight into its text stream."""
    token = image_token(ctx)
    patch = first_int(ctx.get("patch_size", None, "vision_config"), 0)
    if token is None or not patch or not {"pixel_values", "input_ids"} <= ctx.params:
        return None
    channels, _ = image_shape(ctx)
    return [
        *planted(ctx, token, ctx.token_count, None, None),
        InputSpec(name="pixel_values", shape=[ctx.token_count, channels * patch * patch], dtype="float32"),
    ]


def image_text_patch_grid(ctx: Context) -> list[InputSpec] | None:
    """SigLIP 2 (NaFlex) patches with their grid and mask, behind placeholder tokens (one per
    pooled patch, the count read back from the model), as LFM2-VL takes them."""
    token = image_token(ctx)
    if token is None or not {"pixel_values", "spatial_shapes", "input_ids"} <= ctx.params:
        return None
    patch = first_int(ctx.get("patch_size", None, "vision_config"), 16)
    channels, _ = image_shape(ctx)
    side = 4  # a 4 x 4 grid of patches
    inputs = [
        *planted(ctx, token, ctx.token_count, None, None),
        InputSpec(name="pixel_values", shape=[1, side * side, channels * patch * patch], dtype="float32"),
        given("spatial_shapes", [[side, side]]),
    ]
    if "pixel_attention_mask" in ctx.params:
        inputs.append(ones("pixel_attention_mask", [1, side * side]))
    return inputs


def image_text_positioned(ctx: Context) -> list[InputSpec] | None:
    """Flattened patches with their (x, y) positions (`image_position_ids`) behind placeholder
    tokens (the count read back from the model), as Gemma 4 takes them: a grid its pooling kernel
    tiles twice; Gemma 4 Unified's patches are already pooled (`model_patch_size` pixels wide)."""
    token = image_token(ctx)
    if token is None or not {"pixel_values", "image_position_ids", "input_ids"} <= ctx.params:
        return None
    patch = first_int(ctx.get("model_patch_size", None, "vision_config"), 0) or first_int(
        ctx.get("patch_size", None, "vision_config"), 16
    )
    channels, _ = image_shape(ctx)
    return [
        *planted(ctx, token, ctx.token_count, None, None),
        *positioned_patches(ctx, "image_position_ids", channels, patch),
    ]


def image_text_pooled(ctx: Context) -> list[InputSpec] | None:
    """One crop of flattened patches, pooled into placeholder tokens by index (`image_token_pooling`:
    each token's patches) over a token grid (`image_grids`: low-res rows and columns, then
    high-res ones), as Molmo 2 takes it: a 2 x 2 grid of tokens, four patches each."""
    token = image_token(ctx)
    crop = crop_patches(ctx)
    if token is None or crop is None or not {"input_ids", "image_token_pooling", "image_grids"} <= ctx.params:
        return None
    tokens, pooled = 4, 4
    return [
        *planted(ctx, token, tokens, None, None),
        crop,
        given("image_token_pooling", [[t * pooled + i for i in range(pooled)] for t in range(tokens)]),
        given("image_grids", [[2, 2, 0, 0]]),
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
        *text_inputs(ctx, batch=1),
        InputSpec(
            name="visual_feats",
            shape=[1, regions, first_int(ctx.get("visual_feat_dim", None), 2048)],
            dtype="float32",
        ),
        InputSpec(name="visual_pos", shape=[1, regions, 4], dtype="float32", kind="values", values=boxes),
    ]


def query_tokens(ctx: Context) -> list[InputSpec] | None:
    """A Q-Former alone (BLIP-2's): its learned queries as embeddings, cross-attending to the
    image features of a vision tower (patches x the tower's width)."""
    if not {"query_embeds", "encoder_hidden_states"} <= ctx.params:
        return None
    width = first_int(ctx.get("hidden_size", None), WIDTH_GUESS)
    vision = first_int(ctx.get("encoder_hidden_size", None), width)
    queries = first_int(ctx.get("num_query_tokens", None), 8)
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
    token = first_int(getattr(vlm, "image_token_id", None), -1)
    size = first_int(getattr(vision, "image_size", None), 64)
    patch = first_int(getattr(vision, "patch_size", None), 14)
    channels = first_int(getattr(vision, "num_channels", None), 3)
    chunk = first_int(getattr(ctx.config, "chunk_size", None), 8)
    if token < 0:
        return None
    # One placeholder per patch of each camera image: the model gathers features by placeholder
    # rank without counting them.
    inputs = [
        *planted(ctx, token, (size // patch) ** 2, None, None),
        InputSpec(name="pixel_values", shape=[1, 1, channels, size, size], dtype="float32"),
        ones("pixel_attention_mask", [1, 1], "bool"),
    ]
    if "state" in ctx.params:
        state = first_int(getattr(ctx.config, "max_state_dim", None), 32)
        actions = first_int(getattr(ctx.config, "max_action_dim", None), 32)
        return [
            *inputs,
            InputSpec(name="state", shape=[1, state], dtype="float32"),
            InputSpec(name="noise", shape=[1, chunk, actions], dtype="float32"),
            given("timestep", [0.5], "float32"),
        ]
    if "action_embeds" in ctx.params:
        # The state token, then the chunk of noisy actions, at the expert's width.
        width = first_int(getattr(expert, "hidden_size", None), WIDTH_GUESS)
        return [*inputs, InputSpec(name="action_embeds", shape=[1, chunk + 1, width], dtype="float32")]
    return None
