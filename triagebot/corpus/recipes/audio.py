"""Audio recipes: filterbank features in each layout encoders take, raw samples, spectrograms, codec
latents and codes, mel spectrograms for vocoders."""

from __future__ import annotations

from typing import Any

from triagebot.corpus.recipes.common import (
    SAMPLES,
    SEQ,
    WIDTH_GUESS,
    Context,
    decoder_ids,
    first_int,
    given,
    literal,
    ones,
    text_limit,
    token_ids,
)
from triagebot.results import InputSpec


def nested(config: Any, key: str, depth: int = 3) -> Any:
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


def mel_bins(ctx: Context) -> int:
    bins = first_int(
        ctx.get("num_mel_bins", None, "audio_config", "encoder_config", "asr_config"), 0
    ) or first_int(ctx.get("feature_size", None, "audio_config"), 0)
    bins = bins or first_int(nested(ctx.config, "num_mel_bins"), 80)
    # Low-frame-rate encoders (Fun-ASR) take consecutive frames stacked into one feature vector.
    return bins * first_int(ctx.get("num_stacked_frames", None, "audio_config"), 1)


def audio_frames(ctx: Context) -> int:
    positions = first_int(ctx.get("max_source_positions", None, "audio_config"), 0)
    # 400 frames: a multiple of every common encoder window and subsampling (4, 8, 16, 80, 100).
    return 2 * positions if 0 < positions <= 1500 else 400


def audio_masks(ctx: Context, frames: int) -> list[InputSpec]:
    masks = []
    for name in ("feature_attention_mask", "input_features_mask", "audio_attention_mask"):
        if name in ctx.params:
            masks.append(ones(name, [1, frames]))
    return masks


def audio_features(ctx: Context) -> list[InputSpec] | None:
    """Filterbank features as (batch, mel bins, frames), Whisper's layout."""
    if "input_features" not in ctx.params:
        return None
    frames = audio_frames(ctx)
    inputs = [InputSpec(name="input_features", shape=[1, mel_bins(ctx), frames], dtype="float32")]
    if "chunk_sample_lengths" in ctx.params:  # Dots 3 Note: the samples behind each clip's frames
        hop = first_int(ctx.get("hop_length", None, "audio_config"), 160)
        inputs.append(given("chunk_sample_lengths", [frames * hop]))
    return [*inputs, *audio_masks(ctx, frames), *decoder_ids(ctx)]


def audio_features_by_frame(ctx: Context) -> list[InputSpec] | None:
    """Filterbank features as (batch, frames, features), Speech2Text's layout."""
    if "input_features" not in ctx.params:
        return None
    frames = audio_frames(ctx)
    features = (
        first_int(ctx.get("input_feat_per_channel", None), 0) * first_int(ctx.get("input_channels", None), 1)
        # Stacked frames (w2v-BERT): the projection takes several mel frames at once.
        or first_int(ctx.get("feature_projection_input_dim", None), 0)
        or mel_bins(ctx)
    )
    inputs = [InputSpec(name="input_features", shape=[1, frames, features], dtype="float32")]
    return [*inputs, *audio_masks(ctx, frames), *decoder_ids(ctx)]


def audio_features_channel(ctx: Context) -> list[InputSpec] | None:
    """Filterbank features with a channel axis (batch, 1, frames, mel bins), as CLAP's tower takes."""
    if "input_features" not in ctx.params:
        return None
    frames = audio_frames(ctx)
    return [InputSpec(name="input_features", shape=[1, 1, frames, mel_bins(ctx)], dtype="float32")]


def audio_features_hidden(ctx: Context) -> list[InputSpec] | None:
    """Filterbank features (batch, frames, input_size) passed as `hidden_states`, with a mask of
    real frames, as Phi-4-multimodal's Conformer audio encoder takes them."""
    size = first_int(ctx.get("input_size", None), 0)
    if not size or ctx.required != ["hidden_states", "mask"]:
        return None
    frames = audio_frames(ctx)
    return [
        InputSpec(name="hidden_states", shape=[1, frames, size], dtype="float32"),
        ones("mask", [1, frames], "bool"),
    ]


def audio_features_embedded(ctx: Context) -> list[InputSpec] | None:
    """Spectrogram frames (batch, frames, width) taken as the encoder's input embeddings, as
    Pop2Piano takes them (its feature extractor makes as many mel bins as the model is wide)."""
    if not {"input_features", "inputs_embeds"} <= ctx.params:
        return None
    width = first_int(ctx.get("d_model", None), 0) or first_int(ctx.get("hidden_size", None), WIDTH_GUESS)
    frames = audio_frames(ctx)
    inputs = [InputSpec(name="input_features", shape=[1, frames, width], dtype="float32")]
    return [*inputs, *decoder_ids(ctx)]


def audio_mel_ids(ctx: Context) -> list[InputSpec] | None:
    """Mel values quantized into `mel_vocab_size` levels and embedded like tokens, as
    (batch, frames, mel bins), as Inkling's audio tower takes `audio_input_ids`."""
    if "audio_input_ids" not in ctx.required:
        return None
    bins = first_int(ctx.get("n_mel_bins", None, "audio_config"), 0) or mel_bins(ctx)
    levels = first_int(ctx.get("mel_vocab_size", None, "audio_config"), 2)
    shape = [1, SEQ, bins]
    return [InputSpec(name="audio_input_ids", shape=shape, dtype="int64", kind="randint", low=0, high=levels)]


def audio_spectrogram(ctx: Context) -> list[InputSpec] | None:
    """A spectrogram passed as `input_values` (batch, frames, mel bins), as AST takes."""
    if "input_values" not in ctx.params:
        return None
    frames = first_int(ctx.get("max_length", None), 64)
    return [InputSpec(name="input_values", shape=[1, frames, mel_bins(ctx)], dtype="float32")]


def audio_waveform(ctx: Context) -> list[InputSpec] | None:
    """Raw mono samples (batch, samples), as wav2vec2-style encoders take."""
    if "input_values" not in ctx.params:
        return None
    return [InputSpec(name="input_values", shape=[1, SAMPLES], dtype="float32"), *decoder_ids(ctx)]


def audio_waveform_channels(ctx: Context) -> list[InputSpec] | None:
    """Raw samples with a channel axis (batch, channels, samples), as codecs (EnCodec, Mimi) take."""
    name = "input_values" if "input_values" in ctx.params else _unnamed_audio_input(ctx)
    if name is None:
        return None
    channels = first_int(ctx.get("audio_channels", None), 1)
    return [InputSpec(name=name, shape=[1, channels, SAMPLES], dtype="float32"), *decoder_ids(ctx)]


def _unnamed_audio_input(ctx: Context) -> str | None:
    """An audio model's one required argument when forward() calls it `hidden_states`: samples
    or latents, whichever runs (VibeVoice's acoustic tokenizer halves)."""
    return "hidden_states" if ctx.spec.modality == "audio" and ctx.required == ["hidden_states"] else None


def audio_waveform_features(ctx: Context) -> list[InputSpec] | None:
    """Codecs with an acoustic branch on raw samples and a semantic branch on filterbank
    features (X-Codec 2, NeuCodec): both, with one feature frame per acoustic frame."""
    if not {"input_values", "input_features"} <= set(ctx.required):
        return None
    semantic = ctx.sub("semantic_model_config")
    features = first_int(getattr(semantic, "feature_projection_input_dim", None), 0) or mel_bins(ctx)
    hop = 1
    for ratio in ctx.get("downsampling_ratios", None) or []:
        hop *= ratio
    frames = SAMPLES // hop if hop > 1 else audio_frames(ctx)
    return [
        InputSpec(name="input_values", shape=[1, 1, SAMPLES], dtype="float32"),
        InputSpec(name="input_features", shape=[1, frames, features], dtype="float32"),
    ]


def audio_latents(ctx: Context) -> list[InputSpec] | None:
    """Continuous latents (batch, width, frames), as codec decoders take them (Mimi's and
    Pocket TTS's `latents`, VibeVoice's acoustic decoder)."""
    name = "latents" if "latents" in ctx.required else _unnamed_audio_input(ctx)
    if name is None:
        return None
    width = first_int(ctx.get("hidden_size", None), WIDTH_GUESS)
    return [InputSpec(name=name, shape=[1, width, SEQ // 2], dtype="float32")]


def mel_spectrogram(ctx: Context) -> list[InputSpec] | None:
    """A mel spectrogram (batch, mel bins, frames), as vocoders take (Qwen2.5-Omni's BigVGAN)."""
    if "mel_spectrogram" not in ctx.required:
        return None
    bins = first_int(ctx.get("mel_dim", None), 0) or mel_bins(ctx)
    return [InputSpec(name="mel_spectrogram", shape=[1, bins, SEQ], dtype="float32")]


def codebook_ids(ctx: Context) -> list[InputSpec] | None:
    """Codes of every codebook (batch, frames, codebooks) and the index of the codebook to
    predict, as Bark's fine acoustics model takes: the last, which sums all the others."""
    codebooks = first_int(ctx.get("n_codes_total", None), 0)
    if "codebook_idx" not in ctx.required or not codebooks or "input_ids" not in ctx.params:
        return None
    return [
        literal("codebook_idx", codebooks - 1),
        token_ids("input_ids", [1, SEQ, codebooks], text_limit(ctx)),
    ]


def embedded_seq2seq(ctx: Context) -> list[InputSpec] | None:
    """The bare SpeechT5 transformer, built without its speech and text pre-nets: encoder and
    decoder each take a sequence already embedded at the model width (batch, steps, width), as a
    pre-net hands it on."""
    if not {"input_values", "decoder_input_values"} <= set(ctx.params):
        return None
    width = first_int(ctx.get("hidden_size", None), WIDTH_GUESS)
    return [
        InputSpec(name="input_values", shape=[1, SEQ, width], dtype="float32"),
        InputSpec(name="decoder_input_values", shape=[1, SEQ // 2, width], dtype="float32"),
    ]
