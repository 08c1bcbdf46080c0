"""Recipes for everything else: time series, episodes, watermark scores, and the last resort that
guesses one tensor per required forward() argument from its name."""

from __future__ import annotations

from triagebot.corpus.recipes.common import (
    BATCH,
    SAMPLES,
    SEQ,
    WIDTH_GUESS,
    Context,
    first_int,
    given,
    image_chw,
    image_shape,
    ones,
    text_limit,
    token_ids,
)
from triagebot.results import InputSpec


def time_series(ctx: Context) -> list[InputSpec] | None:
    if "past_values" not in ctx.params:
        return None
    context = first_int(ctx.get("context_length", None), 32)
    lags = ctx.get("lags_sequence", None)
    history = context + (max(lags) if isinstance(lags, list) and lags else 0)
    channels = first_int(ctx.get("num_input_channels", None), 0) or first_int(ctx.get("input_size", None), 1)
    per_channel = channels > 1 or ctx.get("num_input_channels", None) is not None
    shape = [BATCH, history] + ([channels] if per_channel else [])
    inputs = [InputSpec(name="past_values", shape=shape, dtype="float32")]
    time_features = first_int(ctx.get("num_time_features", None), 0)
    if "past_time_features" in ctx.params:
        inputs.append(
            InputSpec(name="past_time_features", shape=[BATCH, history, time_features], dtype="float32")
        )
    if "past_observed_mask" in ctx.params:
        inputs.append(ones("past_observed_mask", shape, "bool"))
    if "past_values_padding" in ctx.params:  # TimesFM: which steps are padding (none)
        inputs.append(
            InputSpec(name="past_values_padding", shape=[BATCH, history], dtype="float32", kind="zeros")
        )
    if "freq" in ctx.params:
        inputs.append(InputSpec(name="freq", shape=[BATCH, 1], dtype="int64", kind="zeros"))
    prediction = first_int(ctx.get("prediction_length", None), 8)
    if "future_values" in ctx.params and "past_time_features" in ctx.params:
        future = [BATCH, prediction] + ([channels] if per_channel else [])
        inputs.append(InputSpec(name="future_values", shape=future, dtype="float32"))
        inputs.append(
            InputSpec(name="future_time_features", shape=[BATCH, prediction, time_features], dtype="float32")
        )
    return inputs


def trajectory(ctx: Context) -> list[InputSpec] | None:
    """An episode of states, actions, rewards, returns-to-go and timesteps, as Decision
    Transformer takes it (batch, steps, state_dim / act_dim / 1)."""
    if not {"states", "actions", "returns_to_go", "timesteps"} <= ctx.params:
        return None
    steps = 8
    state_dim = first_int(ctx.get("state_dim", None), 4)
    act_dim = first_int(ctx.get("act_dim", None), 2)
    inputs = [
        InputSpec(name="states", shape=[1, steps, state_dim], dtype="float32"),
        InputSpec(name="actions", shape=[1, steps, act_dim], dtype="float32"),
        InputSpec(name="rewards", shape=[1, steps, 1], dtype="float32"),
        InputSpec(name="returns_to_go", shape=[1, steps, 1], dtype="float32"),
        given("timesteps", [list(range(steps))]),
    ]
    if "attention_mask" in ctx.params:
        inputs.append(ones("attention_mask", [1, steps]))
    return [item for item in inputs if item.name in ctx.params]


def watermark_scores(ctx: Context) -> list[InputSpec] | None:
    """Per-token g-values of a watermarked text (0 or 1 for each tournament layer) and which
    tokens count, as SynthID's Bayesian detector takes them."""
    if not {"g_values", "mask"} <= ctx.params:
        return None
    depth = first_int(ctx.get("watermarking_depth", None), 4)
    return [
        InputSpec(name="g_values", shape=[BATCH, SEQ, depth], dtype="float32", kind="randint", low=0, high=2),
        ones("mask", [BATCH, SEQ], "float32"),
    ]


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
    width = first_int(ctx.get("hidden_size", None), 0) or first_int(ctx.get("d_model", None), WIDTH_GUESS)
    channels, size = image_shape(ctx)
    inputs = []
    for name in required:
        if name.endswith("_ids") or name == "input":
            inputs.append(token_ids(name, [1, SEQ], text_limit(ctx)))
        elif "pixel_values" in name or name == "prompt_masks":  # SegGPT's prompt image and mask
            inputs.append(InputSpec(name=name, shape=[1, *image_chw(ctx)], dtype="float32"))
        elif "mask" in name:
            inputs.append(ones(name, [1, SEQ]))
        elif name.startswith("pixel_values"):
            inputs.append(InputSpec(name=name, shape=[1, channels, size, size], dtype="float32"))
        elif name in _EMBEDDING_INPUTS or name.endswith("_embeds"):
            inputs.append(InputSpec(name=name, shape=[1, SEQ, width], dtype="float32"))
        elif name in ("input_values", "audio_values", "waveform"):
            inputs.append(InputSpec(name=name, shape=[1, SAMPLES], dtype="float32"))
        else:
            return None  # an argument we cannot guess: not applicable rather than wrong
    return inputs
