"""Video recipes: clips of frames (batch, frames, C, H, W) or frames folded into the batch, alone, with
text, or behind video placeholder tokens."""

from __future__ import annotations

from triagebot.corpus.recipes.common import (
    Context,
    companions,
    decoder_ids,
    first_int,
    image_shape,
    image_token,
    planted,
    text_inputs,
    token_of,
)
from triagebot.results import InputSpec


def video(ctx: Context) -> list[InputSpec] | None:
    name = next((n for n in ("pixel_values", "pixel_values_videos") if n in ctx.params), None)
    if name is None:
        return None
    channels, size = image_shape(ctx)
    frames = first_int(ctx.get("num_frames", None, "vision_config"), 8)
    return [InputSpec(name=name, shape=[1, frames, channels, size, size], dtype="float32")]


def video_frames_batched(ctx: Context) -> list[InputSpec] | None:
    """Video frames folded into the batch (batch x frames, C, H, W), as X-CLIP's tower takes."""
    frames = first_int(ctx.get("num_frames", None, "vision_config"), 0)
    if "pixel_values" not in ctx.params or frames < 2:
        return None
    channels, size = image_shape(ctx)
    return [InputSpec(name="pixel_values", shape=[frames, channels, size, size], dtype="float32")]


def video_paired(ctx: Context) -> list[InputSpec] | None:
    """Text and a clip of frames (batch, frames, C, H, W), one of each, no placeholder tokens (a
    model with them is a video VLM): dual encoders (X-CLIP, VideoPrism's CLIP) and single-stream
    models that join both sequences (TVP)."""
    if "input_ids" not in ctx.params or token_of(ctx, "video_token_id", "video_token_index") is not None:
        return None
    inputs = video(ctx)
    if inputs is None or image_token(ctx) is not None:
        return None
    return [*text_inputs(ctx, batch=1), *inputs]


def video_text(ctx: Context) -> list[InputSpec] | None:
    """Text around video placeholder tokens (the count read back from the model) and a clip of
    frames (batch, frames, C, H, W), as video VLMs take them (InstructBLIP-Video, with its
    Q-Former's prompt)."""
    token = token_of(ctx, "video_token_id", "video_token_index")
    name = next((n for n in ("pixel_values_videos", "pixel_values") if n in ctx.params), None)
    if token is None or name is None or "input_ids" not in ctx.params:
        return None
    channels, size = image_shape(ctx)
    frames = first_int(ctx.get("num_frames", None, "vision_config"), 4)
    count = ctx.token_count
    queries = first_int(ctx.get("num_query_tokens", None), 0)
    if queries and count == 16:
        # A Q-Former's queries per frame fill the placeholders, which the model scatters without
        # counting them: as many as it has features.
        count = queries * frames
    return [
        *planted(ctx, token, count, None, None),
        InputSpec(name=name, shape=[1, frames, channels, size, size], dtype="float32"),
        *decoder_ids(ctx),
        *companions(ctx, 1, 0),
    ]
