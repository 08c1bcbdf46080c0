"""Every recipe, in the order they are tried, each with a model it serves.

`REGISTRY` is the fallback order, read top to bottom. For a model of modality M (the catalog's
guess from forward()'s arguments) the builder tries, and the first whose inputs run the model
eagerly serves:

1. M's own recipes, `FIRST[M]`, in their order (text models: the text recipes too);
2. every other recipe of `REGISTRY`, top to bottom, but the text-only ones and the last;
3. the text-only recipes (a multimodal model they serve is `partial`);
4. the last entry, `by_signature`: inputs guessed from forward()'s signature, after text
   because a text model fed embeddings is not a full-modality run.

`example` names a model of the installed transformers that the recipe serves: the registry test
runs every recipe on its example, so a recipe cannot be added without one.
"""

from __future__ import annotations

from dataclasses import dataclass

from triagebot.corpus.recipes import audio, audio_text, image, structured, text, video, vision_language
from triagebot.corpus.recipes.common import RecipeFunction


@dataclass(frozen=True)
class Recipe:
    make: RecipeFunction
    example: str  # a model class of the installed transformers that this recipe serves
    text_only: bool = False  # feeds text alone: a multimodal model it serves is `partial`

    @property
    def name(self) -> str:
        return self.make.__name__


REGISTRY: tuple[Recipe, ...] = (
    Recipe(text.text, "LlamaForCausalLM", text_only=True),
    Recipe(text.encoder_decoder, "T5Model", text_only=True),
    Recipe(image.image, "ViTModel"),
    Recipe(image.image_unnamed, "PPOCRV5MobileDetModel"),
    Recipe(image.image_prompted, "SegGptModel"),
    Recipe(image.image_task, "OneFormerModel"),
    Recipe(vision_language.image_text, "LlavaForConditionalGeneration"),
    Recipe(vision_language.image_text_with_sizes, "Mistral3ForConditionalGeneration"),
    Recipe(vision_language.image_text_masked, "Kosmos2Model"),
    Recipe(vision_language.image_text_cross, "IdeficsModel"),
    Recipe(vision_language.image_text_sized, "LlavaNextModel"),
    Recipe(vision_language.image_text_stacked, "Idefics3Model"),
    Recipe(image.image_grid, "Qwen2VLForConditionalGeneration"),
    Recipe(image.image_grid_patches, "PaddleOCRVLForConditionalGeneration"),
    Recipe(image.image_grid_patches_unbatched, "Kimi_K25VisionModel"),
    Recipe(image.image_grid_merged, "Inkling2Model"),
    Recipe(vision_language.image_paired, "SiglipModel"),
    Recipe(audio.audio_features, "WhisperForConditionalGeneration"),
    Recipe(audio.audio_features_by_frame, "Wav2Vec2BertModel"),
    Recipe(audio.audio_waveform, "Wav2Vec2Model"),
    Recipe(audio.audio_waveform_channels, "EncodecModel"),
    Recipe(audio.audio_spectrogram, "ASTModel"),
    Recipe(audio_text.audio_paired, "PeAudioModel"),
    Recipe(audio_text.audio_paired_features, "ClvpModelForConditionalGeneration"),
    Recipe(audio_text.audio_paired_features_channel, "ClapModel"),
    Recipe(audio_text.audio_text, "Qwen2AudioModel"),
    Recipe(audio_text.audio_text_by_frame, "FunAsrNanoModel"),
    Recipe(audio_text.audio_waveform_text, "CsmForConditionalGeneration"),
    Recipe(audio_text.audio_text_streamed, "VoxtralRealtimeModel"),
    Recipe(audio_text.audio_text_windowed, "GraniteSpeechModel"),
    Recipe(video.video, "VideoMAEModel"),
    Recipe(video.video_frames_batched, "XCLIPVisionModel"),
    Recipe(video.video_paired, "XCLIPModel"),
    Recipe(video.video_text, "InstructBlipVideoModel"),
    Recipe(image.image_patches, "Siglip2VisionModel"),
    Recipe(image.image_tiles, "MllamaForConditionalGeneration"),
    Recipe(audio.audio_features_channel, "ClapAudioModel"),
    Recipe(audio.audio_features_hidden, "Phi4MultimodalAudioModel"),
    Recipe(audio.audio_mel_ids, "InklingAudioModel"),
    Recipe(audio.embedded_seq2seq, "SpeechT5Model"),
    Recipe(audio.audio_features_embedded, "Pop2PianoForConditionalGeneration"),
    Recipe(audio_text.chroma_text_to_codes, "MusicgenMelodyForConditionalGeneration"),
    Recipe(vision_language.image_text_patches, "NeoMMEModel"),
    Recipe(vision_language.image_text_patch_grid, "Lfm2VlModel"),
    Recipe(vision_language.image_text_positioned, "Gemma4UnifiedModel"),
    Recipe(image.image_packed, "MiniCPMV4_7Model"),
    Recipe(image.image_crop_patches, "Molmo2VisionModel"),
    Recipe(vision_language.image_text_pooled, "Molmo2Model"),
    Recipe(image.image_patch_volumes, "InklingVisionModel"),
    Recipe(vision_language.image_text_tile_mask, "GraniteDoclingModel"),
    Recipe(structured.time_series, "PatchTSTModel"),
    Recipe(structured.trajectory, "DecisionTransformerModel"),
    Recipe(structured.watermark_scores, "BayesianDetectorModel"),
    Recipe(text.retrieved_context, "RagModel"),
    Recipe(vision_language.robot_actions, "PI0Model"),
    Recipe(vision_language.region_features, "LxmertModel"),
    Recipe(vision_language.query_tokens, "Blip2QFormerModel"),
    Recipe(audio.audio_latents, "MimiDecoderModel"),
    Recipe(audio.audio_waveform_features, "Xcodec2Model"),
    Recipe(audio.mel_spectrogram, "Qwen2_5OmniToken2WavBigVGANModel"),
    Recipe(audio_text.speech_codes_to_mel, "Qwen2_5OmniToken2WavDiTModel"),
    Recipe(audio_text.text_to_audio_codes, "DiaModel"),
    Recipe(audio.codebook_ids, "BarkFineModel"),
    Recipe(text.draft_block, "MuseGlimmerAssistantModel"),
    # After every other image recipe: nothing in forward() tells a matcher apart.
    Recipe(image.image_pair, "EfficientLoFTRModel"),
    # The last resort, after the text-only recipes (see the module's docstring).
    Recipe(structured.by_signature, "FlavaMultimodalModel"),
)

# Each modality's own recipes, tried first, in this order (full-modality recipes before text).
FIRST: dict[str, tuple[str, ...]] = {
    "text": ("encoder_decoder", "text"),
    "image": ("image", "image_grid", "video", "image_paired"),
    "image_text": (
        "image_text",
        "image_text_with_sizes",
        "image_text_sized",
        "image_text_stacked",
        "image_grid",
        "image_paired",
        "image",
        "encoder_decoder",
        "text",
    ),
    "video": ("video", "image"),
    "video_text": (
        "image_grid",
        "image_text",
        "image_text_with_sizes",
        "image_text_sized",
        "image_text_stacked",
        "image_paired",
        "video",
        "encoder_decoder",
        "text",
    ),
    "audio": (
        "audio_features",
        "audio_features_by_frame",
        "audio_waveform",
        "audio_waveform_channels",
        "audio_spectrogram",
    ),
    "audio_text": (
        "audio_text",
        "audio_text_by_frame",
        "audio_text_windowed",
        "audio_text_streamed",
        "audio_waveform_text",
        "audio_features",
        "audio_features_by_frame",
        "audio_waveform",
        "text",
    ),
    "time_series": ("time_series",),
}

BY_NAME: dict[str, Recipe] = {recipe.name: recipe for recipe in REGISTRY}
LAST_RESORT = REGISTRY[-1].name
TEXT_ONLY = frozenset(recipe.name for recipe in REGISTRY if recipe.text_only)


def ladder_for(modality: str) -> list[str]:
    """The recipes to try for a model of `modality`, in order (see the module's docstring)."""
    first = FIRST.get(modality, FIRST["text"])
    others = [
        recipe.name
        for recipe in REGISTRY
        if recipe.name not in first and not recipe.text_only and recipe.name != LAST_RESORT
    ]
    if modality == "text":
        return [*first, *others, LAST_RESORT]
    full = [name for name in first if name not in TEXT_ONLY]
    text_only = [name for name in first if name in TEXT_ONLY] or ["encoder_decoder", "text"]
    return [*full, *others, *text_only, LAST_RESORT]
