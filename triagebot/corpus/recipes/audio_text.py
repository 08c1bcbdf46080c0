"""Audio-and-text recipes: speech LLMs (placeholders per audio feature, per codec frame, per pooled
window, or text and audio added position by position), text-audio dual encoders, text to speech
or music codes."""

from __future__ import annotations

from triagebot.corpus.recipes.audio import (
    audio_features,
    audio_features_channel,
    audio_frames,
    audio_masks,
    mel_bins,
    nested,
)
from triagebot.corpus.recipes.common import (
    BATCH,
    SAMPLES,
    SEQ,
    WIDTH_GUESS,
    Context,
    RecipeFunction,
    decoder_ids,
    first_int,
    given,
    literal,
    ones,
    planted,
    text_inputs,
    text_limit,
    token_ids,
    token_of,
)
from triagebot.results import InputSpec


def audio_text(ctx: Context) -> list[InputSpec] | None:
    token = token_of(ctx, "audio_token_id", "audio_token_index")
    if token is None or not {"input_features", "input_ids"} <= ctx.params:
        return None
    frames = audio_frames(ctx)
    inputs = planted(ctx, token, ctx.token_count, None, None)
    inputs.append(InputSpec(name="input_features", shape=[1, mel_bins(ctx), frames], dtype="float32"))
    return inputs + audio_masks(ctx, frames) + decoder_ids(ctx)


def audio_text_by_frame(ctx: Context) -> list[InputSpec] | None:
    """audio_text with features as (batch, frames, mel bins)."""
    inputs = audio_text(ctx)
    if inputs is None:
        return None
    frames = audio_frames(ctx)
    return [
        InputSpec(name="input_features", shape=[1, frames, mel_bins(ctx)], dtype="float32")
        if item.name == "input_features"
        else item
        for item in inputs
    ]


def audio_text_windowed(ctx: Context) -> list[InputSpec] | None:
    """audio_text_by_frame for a projector that pools fixed windows of encoder frames (Granite
    Speech's windowed Q-Former): ceil(frames / window_size) * window_size / downsample_rate
    placeholders, and `input_features_mask` marks those projected features, not the frames."""
    window = first_int(ctx.get("window_size", None), 0)
    rate = first_int(ctx.get("downsample_rate", None), 0)
    token = token_of(ctx, "audio_token_id", "audio_token_index")
    if not window or not rate or token is None or not {"input_features", "input_ids"} <= ctx.params:
        return None
    frames = audio_frames(ctx)
    count = -(-frames // window) * window // rate
    inputs = [
        *planted(ctx, token, count, None, None),
        InputSpec(name="input_features", shape=[1, frames, mel_bins(ctx)], dtype="float32"),
    ]
    if "input_features_mask" in ctx.params:
        inputs.append(ones("input_features_mask", [1, count], "bool"))
    return inputs


def audio_text_streamed(ctx: Context) -> list[InputSpec] | None:
    """Mel features and one text token per audio embedding, the two streams added position by
    position rather than audio spliced in at placeholders (Voxtral Realtime): a Whisper-style stem
    (stride 2) then `downsample_factor` frames stacked per embedding."""
    factor = first_int(ctx.get("downsample_factor", None), 0)
    if not factor or token_of(ctx, "audio_token_id", "audio_token_index") is not None:
        return None
    if not {"input_features", "input_ids"} <= ctx.params:
        return None
    frames = audio_frames(ctx)
    inputs = [
        token_ids("input_ids", [1, frames // (2 * factor)], text_limit(ctx)),
        InputSpec(name="input_features", shape=[1, mel_bins(ctx), frames], dtype="float32"),
    ]
    delay = first_int(ctx.get("default_num_delay_tokens", None), -1)
    if "num_delay_tokens" in ctx.params and delay >= 0:  # how far the text lags the audio
        inputs.append(literal("num_delay_tokens", delay))
    return inputs


def _samples_per_token(ctx: Context) -> int:
    """Samples behind one audio placeholder: the audio tokenizer's hop, or its sampling rate over
    its frame rate (Mimi)."""
    hop = first_int(nested(ctx.config, "hop_length"), 0)
    rate, frame_rate = nested(ctx.config, "sampling_rate"), nested(ctx.config, "frame_rate")
    if not hop and isinstance(rate, int | float) and isinstance(frame_rate, int | float) and frame_rate > 0:
        hop = round(rate / frame_rate)
    return hop


def audio_waveform_text(ctx: Context) -> list[InputSpec] | None:
    """Raw samples and text with one placeholder per audio-tokenizer frame (between the audio
    start and end markers), as speech LLMs over a codec or acoustic tokenizer take them: samples
    as (batch, channels, samples), with a padding mask (VibeVoice-ASR) or cut into clips by
    `input_values_cutoffs` (CSM)."""
    token = token_of(ctx, "audio_token_id", "audio_token_index")
    hop = _samples_per_token(ctx)
    if token is None or not hop or not {"input_values", "input_ids"} <= ctx.params:
        return None
    start = token_of(ctx, "audio_bos_token_id", "audio_start_token_id")
    end = token_of(ctx, "audio_eos_token_id", "audio_end_token_id")
    count = -(-SAMPLES // hop)
    samples = count * hop  # whole frames, as processors pad the audio
    inputs = planted(ctx, token, count, start, end)
    inputs.append(InputSpec(name="input_values", shape=[1, 1, samples], dtype="float32"))
    if "input_values_cutoffs" in ctx.params:  # where each clip ends in its row of samples
        inputs.append(given("input_values_cutoffs", [[samples]]))
    if "padding_mask" in ctx.params:  # every sample is real
        inputs.append(ones("padding_mask", [1, samples], "bool"))
    if "sample" in ctx.params:  # the latents as encoded, without the sampled VAE noise
        inputs.append(literal("sample", False))
    return inputs


def audio_paired(ctx: Context) -> list[InputSpec] | None:
    """Text and raw samples (batch, channels, samples), no placeholders: dual encoders (PE Audio)
    and text-to-music models prompted with audio they encode into codes (MusicGen)."""
    if not {"input_values", "input_ids"} <= ctx.params:
        return None
    if token_of(ctx, "audio_token_id", "audio_token_index") is not None:
        return None  # placeholders to plant: audio_waveform_text
    channels = first_int(nested(ctx.config, "audio_channels"), 1)
    return [
        *text_inputs(ctx),
        InputSpec(name="input_values", shape=[BATCH, channels, SAMPLES], dtype="float32"),
    ]


def _paired_features(ctx: Context, audio: RecipeFunction) -> list[InputSpec] | None:
    """Text and one clip's filterbank features as `audio` lays them out, no placeholders."""
    if "input_ids" not in ctx.params or token_of(ctx, "audio_token_id", "audio_token_index") is not None:
        return None
    inputs = audio(ctx)
    return None if inputs is None else [*text_inputs(ctx, batch=1), *inputs]


def audio_paired_features(ctx: Context) -> list[InputSpec] | None:
    """Text and features as (batch, mel bins, frames): CLVP (its conditioning encoder reads both)."""
    return _paired_features(ctx, audio_features)


def audio_paired_features_channel(ctx: Context) -> list[InputSpec] | None:
    """Text and features as (batch, 1, frames, mel bins): CLAP's dual encoder."""
    return _paired_features(ctx, audio_features_channel)


def chroma_text_to_codes(ctx: Context) -> list[InputSpec] | None:
    """Text, a chromagram (batch, frames, num_chroma) of the melody to follow, and audio codes
    with one row per codebook (batch x codebooks, steps), as MusicGen Melody's decoder takes them."""
    chroma = first_int(ctx.get("num_chroma", None), 0)
    if not chroma or not {"input_ids", "input_features", "decoder_input_ids"} <= ctx.params:
        return None
    decoder = ctx.sub("decoder")
    codebooks = first_int(getattr(decoder, "num_codebooks", None), 1)
    frames = min(first_int(ctx.get("chroma_length", None), SEQ), SEQ)
    return [
        *text_inputs(ctx, batch=1),
        InputSpec(name="input_features", shape=[1, frames, chroma], dtype="float32"),
        token_ids("decoder_input_ids", [codebooks, SEQ // 2], text_limit(ctx)),
    ]


def text_to_audio_codes(ctx: Context) -> list[InputSpec] | None:
    """Text-to-speech encoder-decoders (Dia): text ids into the encoder, audio codes with a
    codebook axis (batch, frames, codebooks) into the decoder."""
    decoder = ctx.sub("decoder_config")
    codebooks = first_int(getattr(decoder, "num_channels", None), 0)
    if not codebooks or decoder is ctx.config or not {"input_ids", "decoder_input_ids"} <= ctx.params:
        return None
    text_vocab = first_int(getattr(ctx.sub("encoder_config"), "vocab_size", None), text_limit(ctx))
    inputs = [token_ids("input_ids", [1, SEQ], min(text_vocab, text_limit(ctx)))]
    if "attention_mask" in ctx.params:
        inputs.append(ones("attention_mask", [1, SEQ]))
    return [*inputs, token_ids("decoder_input_ids", [1, SEQ // 2, codebooks], text_limit(ctx))]


def speech_codes_to_mel(ctx: Context) -> list[InputSpec] | None:
    """Speech codes to a mel spectrogram by flow matching (Qwen2.5-Omni's Token2Wav): codes, a
    reference mel and a speaker vector; its DiT alone also takes the noisy mel and the time step.
    The whole model integrates over `num_steps` DiT calls: two."""
    dit = ctx.sub("dit_config")
    bins = first_int(getattr(dit, "mel_dim", None), 80)
    speaker = first_int(getattr(dit, "enc_emb_dim", None), WIDTH_GUESS)
    codes = SEQ // 2
    code_ids = InputSpec(
        name="code",
        shape=[1, codes],
        dtype="int64",
        kind="randint",
        low=0,
        high=first_int(getattr(dit, "num_embeds", None), 2),
    )
    reference = InputSpec(name="reference_mel", shape=[1, SEQ, bins], dtype="float32")
    if {"code", "conditioning", "reference_mel"} <= set(ctx.required):
        return [
            code_ids,
            InputSpec(name="conditioning", shape=[1, speaker], dtype="float32"),
            reference,
            literal("num_steps", 2),
        ]
    if {"hidden_states", "quantized_code", "condition_vector", "speaker_embedding", "time_step"} <= set(
        ctx.required
    ):
        frames = codes * first_int(getattr(dit, "repeats", None), 1)
        return [
            InputSpec(name="hidden_states", shape=[1, frames, bins], dtype="float32"),
            reference.model_copy(update={"name": "condition_vector"}),
            InputSpec(name="speaker_embedding", shape=[1, frames, speaker], dtype="float32"),
            code_ids.model_copy(update={"name": "quantized_code"}),
            InputSpec(name="time_step", shape=[1], dtype="float32", kind="values", values=[0.5]),
        ]
    return None
