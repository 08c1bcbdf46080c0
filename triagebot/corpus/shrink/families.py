"""Family fixes: what the generic rules cannot know about one family, as data with a reason each.

A `FamilyFix` names a model type, the values its tiny config takes (applied last, to every config
of that model type, nested or not) and one line saying why; where a family stays in the sweep's
slow tail once shrunk (`sweep.summary.slow_tail`: the 40 slowest models of the whole corpus on a
2-core CPU), `slow` says why in one line, with or without values: what no size removes without
changing the model's graphs or break reasons. A `ClassFix` does the same for a config class whose
model type is empty.
`HARD_CODED_MROPE` lists the families whose modeling code falls back to multimodal RoPE sections
of its own (see the rotary pass), and `ONE_LAYER` the model types (multimodal towers, mostly)
that shrink to one layer (see the layer pass).

The tables are checked when this module is loaded (one fix per family, a one-line reason, values
given), and `stale_fixes()` names the entries whose family the installed transformers no longer
has, which `triagebot corpus check` reports, so that the tables shrink as transformers changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from triagebot.corpus.shrink.sizes import EXPERTS, FFN, HEAD_DIM, HEADS, LAYERS, VOCAB, WIDTH


@dataclass(frozen=True)
class FamilyFix:
    """Values for every config of `model_type` and why the generic rules cannot find them, or why
    the family's compile stays slow whatever its size (`slow`)."""

    model_type: str
    values: Mapping[str, Any] = field(default_factory=dict)
    reason: str = ""
    slow: str = ""  # why it stays in the slow tail once shrunk: what no size removes


@dataclass(frozen=True)
class ClassFix:
    """Values for the top-level tiny config of `config_class` (one with no model type)."""

    config_class: str
    values: Mapping[str, Any]
    reason: str


# PP-OCR detectors' large-kernel neck blocks, as the released checkpoints configure them (the
# default configs leave them None): (kernel, stride, padding) per convolution.
_PP_OCR_INTRACLASS_BLOCK = {
    "reduce_channel": [1, 1, 0],
    "return_channel": [1, 1, 0],
    "vertical_long_to_small_conv_longratio": [[7, 1], [1, 1], [3, 0]],
    "vertical_long_to_small_conv_midratio": [[5, 1], [1, 1], [2, 0]],
    "vertical_long_to_small_conv_shortratio": [[3, 1], [1, 1], [1, 0]],
    "horizontal_small_to_long_conv_longratio": [[1, 7], [1, 1], [0, 3]],
    "horizontal_small_to_long_conv_midratio": [[1, 5], [1, 1], [0, 2]],
    "horizontal_small_to_long_conv_shortratio": [[1, 3], [1, 1], [0, 1]],
    "symmetric_conv_long_longratio": [[7, 7], [1, 1], [3, 3]],
    "symmetric_conv_long_midratio": [[5, 5], [1, 1], [2, 2]],
    "symmetric_conv_long_shortratio": [[3, 3], [1, 1], [1, 1]],
}
# The PP-LCNetV4 default is a text-line recogniser's (stride 2 x 1, one feature map); the
# PP-OCRv6 detectors' checkpoints use its detection layout: stride 2 per stage from the second,
# four feature maps. Here at the tiny widths (8 to 64 channels).
_PP_LCNET_V4_DETECTION = {
    "stem_channels": [3, 8, 8],
    "block_configs": [
        [[3, 8, 8, 1, True]],
        [[3, 8, 16, 2, False]],
        [[3, 16, 32, 2, False], [3, 32, 32, 1, True]],
        [[3, 32, 64, 2, False]],
    ],
    "stage_out_channels": [8, 16, 32, 64],
    "out_indices": [1, 2, 3, 4],
    "out_features": ["stage1", "stage2", "stage3", "stage4"],
}
_PP_OCR_LARGE_KERNEL_NECK = {
    "intraclass_block_config": _PP_OCR_INTRACLASS_BLOCK,
    "scale_factor_list": [1, 2, 4, 8],
    "kernel_list": [3, 2, 2],
    "neck_out_channels": WIDTH,
}
# RT-DETR-style detectors (D-FINE, DEIMv2) with an HGNetV2 backbone: the backbone, the hybrid
# encoder's CSP blocks and the decoder are traced again from each frame down to the deformable
# attention's graph break, so the tail's shrink keeps one of each (measured on torch 2.13 CPU:
# the same 9 graphs and break, 40% less compile): two pyramid levels instead of three (from the
# backbone's last two stages), one CSP block (`round(3 * depth_mult)`), one layer and block per
# backbone stage, one decoder layer.
_HYBRID_ENCODER_TWO_LEVELS = {
    "depth_mult": 1 / 3,
    "decoder_layers": 1,
    "encoder_in_channels": [32, 64],
    "feat_strides": [16, 32],
    "num_feature_levels": 2,
    "decoder_in_channels": [256, 256],
    "encode_proj_layers": [1],
    "backbone_config": {
        "stage_numb_of_layers": [1, 1, 1, 1],
        "stage_num_blocks": [1, 1, 1, 1],
        "out_indices": [3, 4],
        "out_features": ["stage3", "stage4"],
    },
}
# Grounding DINO's image-text fusion: everything before its decoder's graph break (the Swin
# backbone, the BERT text backbone, the fusion encoder) is traced again from each frame down, so
# the tail's shrink keeps one layer of each (the same 13 graphs and break, measured).
_ONE_FUSION_LAYER_EACH = {"encoder_layers": 1, "decoder_layers": 1, "text_config": {"num_hidden_layers": 1}}
# Chameleon and Emu3 map VQ codes to text tokens through a vocabulary map that only a
# checkpoint's tokenizer provides: a generated one for a 64-code codebook, below the specials.
_CHAMELEON_VOCABULARY = {
    "<image>": VOCAB - 65,
    **{f"IMGIMG{''.join(chr(ord('A') + int(d)) for d in str(i))}Z": VOCAB - 129 + i for i in range(64)},
}
_EMU3_VOCABULARY = {
    "<image>": VOCAB - 65,
    "<|extra_200|>": VOCAB - 66,
    **{f"<|visual token {i:06d}|>": VOCAB - 130 + i for i in range(64)},
}


def _rope(**extra: Any) -> dict[str, Any]:
    """Default RoPE settings, a fresh dict each time (so no two keys share one)."""
    return {"rope_type": "default", "rope_theta": 10000.0, **extra}


FAMILY_FIXES: tuple[FamilyFix, ...] = (
    FamilyFix(
        "gpt_neo",
        {"attention_types": [[["global", "local"], 1]]},
        "repeats a (global, local) attention pair as many times as it has layers: one pair for two",
    ),
    FamilyFix(
        "aria",
        {"projector_patch_to_query_dict": {16: 4}},
        "maps the tower's patch count to a query count for the original sizes only: 4 x 4 patches here",
    ),
    FamilyFix(
        "sam2_hiera_det_model",
        {"global_attention_blocks": [4], "image_size": [64, 64]},
        "Hiera places global attention by block index for the original depths: the second block of "
        "the third stage (a first block pools queries, which a global block cannot)",
    ),
    FamilyFix(
        "sam2_vision_model",
        {"backbone_feature_sizes": [[16, 16], [8, 8], [4, 4]]},
        "the neck's feature-map sizes for a 64-pixel image (strides 4, 8, 16), as the prompt "
        "encoder's shrunk image size expects",
    ),
    FamilyFix(
        "efficientnet",
        {"width_coefficient": WIDTH / 1280, "depth_coefficient": 1.0},
        "sizes its last stage from `width_coefficient` but its norm from `hidden_dim`: a coefficient "
        "that makes the rounded 1280-channel head exactly WIDTH",
    ),
    FamilyFix(
        "align_vision_model",
        {"width_coefficient": WIDTH / 320, "depth_coefficient": 1.0},
        "its EfficientNet has no head: the image embeddings are the last stage (320 channels scaled "
        "by `width_coefficient`), which must be exactly the projection width",
    ),
    FamilyFix(
        "tvp",
        {"max_img_size": 64, "visual_prompt_size": 8, "num_frames": 2},
        "frame prompts are parameters of (frames, 448 x 448) pixels: a two-frame, 64-pixel clip whose "
        "prompt border leaves a 48-pixel centre",
    ),
    FamilyFix(
        "lilt",
        {"hidden_size": 48},
        "its layout stream concatenates six box embeddings of width // 6 and narrows by 4: a width "
        "that 6 and 4 x heads divide",
    ),
    FamilyFix(
        "bros",
        {"dim_bbox_projection": HEAD_DIM},
        "projects relative box positions onto one attention head (the default is the original 768 / 12)",
    ),
    FamilyFix(
        "lxmert",
        {"l_layers": LAYERS, "x_layers": LAYERS, "r_layers": LAYERS},
        "counts its language, cross-modal and object-relation layers under one-letter names",
    ),
    FamilyFix(
        "encodec",
        {"codebook_dim": WIDTH},
        "its codebook vectors are the encoder's width (the config copies the default)",
    ),
    FamilyFix(
        "wavtokenizer",
        {"codebook_dim": WIDTH},
        "no projection around its quantizer: the codebook vectors are the hidden width",
    ),
    FamilyFix(
        "wavtokenizer_encoder",
        {"codebook_dim": WIDTH},
        "no projection around its quantizer: the codebook vectors are the hidden width",
    ),
    FamilyFix(
        "dory",
        {
            "num_hidden_layers": 6,
            "n_input_layers": 2,
            "n_recurrent_layers": 2,
            "n_output_layers": 2,
            "layer_types": ["sliding_attention", "mlp", "sliding_attention", "mlp", "full_attention", "mlp"],
        },
        "its dict lists attention and MLP as separate blocks, every count doubled; here three layers"
        " (input, recurrent, output), which must add up to num_hidden_layers",
    ),
    FamilyFix(
        "xcodec",
        {"codebook_dim": 2 * WIDTH},
        "codebook vectors are the acoustic and semantic widths concatenated (the config states the sum)",
    ),
    FamilyFix(
        "xcodec2",
        {"quantization_dim": 2 * WIDTH},
        "the quantizer input is the acoustic and semantic widths concatenated (the config states the sum)",
    ),
    FamilyFix(
        "neucodec",
        {"quantization_dim": 2 * WIDTH},
        "the quantizer input is the acoustic and semantic widths concatenated (the config states the sum)",
    ),
    FamilyFix(
        "gemma4_audio",
        {"num_mel_bins": 128},
        "the input projection is sized for 128 mel bins without naming them: stated for the recipes",
    ),
    FamilyFix(
        "sam_vision_model",
        {"output_channels": WIDTH, "num_pos_feats": WIDTH // 2},
        "the neck's image embeddings are as wide as the mask decoder (a key the rules miss), and the "
        "positional embedding's sine/cosine pairs fill that width",
    ),
    FamilyFix(
        "sam_hq_vision_model",
        {"output_channels": WIDTH, "num_pos_feats": WIDTH // 2},
        "as SAM's: the neck is as wide as the mask decoder, the sine/cosine pairs fill that width",
    ),
    FamilyFix(
        "sam_hq_mask_decoder",
        {"vit_dim": WIDTH},
        "the mask decoder also reads the tower's first global-attention layer: the tower's width",
    ),
    FamilyFix(
        "mobilevitv2",
        {"image_size": 64},
        "unfolds 2 x 2 patches at stride 32: its last map needs 2 x 2 pixels",
    ),
    FamilyFix(
        "pp_ocrv5_mobile_rec",
        {"image_size": [96, 96]},
        "pools its last map with a 3-row kernel: text lines at least 96 pixels high (the config names "
        "no size; stated for the recipes)",
    ),
    FamilyFix(
        "pp_ocrv5_server_det",
        _PP_OCR_LARGE_KERNEL_NECK,
        "neck blocks, upsampling factors and head kernels only the released checkpoints carry",
    ),
    FamilyFix(
        "pp_ocrv6_medium_det",
        {**_PP_OCR_LARGE_KERNEL_NECK, "backbone_config": _PP_LCNET_V4_DETECTION},
        "the checkpoints' neck settings and PP-LCNetV4's detection layout (the default is a recogniser's)",
    ),
    FamilyFix(
        "pp_ocrv6_small_det",
        {
            "backbone_config": _PP_LCNET_V4_DETECTION,
            "layer_list_out_channels": _PP_LCNET_V4_DETECTION["stage_out_channels"],
        },
        "PP-LCNetV4's detection layout, whose stage widths the small detector's neck takes as they are",
    ),
    FamilyFix(
        "uvdoc",
        {
            "backbone_config": {
                "out_indices": [1, 2, 3, 4, 5, 6],
                "out_features": ["stage1", "stage2", "stage3", "stage4", "stage5", "stage6"],
            }
        },
        "the head concatenates the maps of all six bridge stages (the default backbone returns only "
        "the last, as no checkpoint does)",
    ),
    FamilyFix(
        "pp_doclayout_v3",
        {"x4_feat_dim": 8},
        "the mask branch takes the backbone's first-stage map: as wide as the tiny HGNetV2's first "
        "stage (8 channels), not the original 128",
    ),
    FamilyFix(
        "lw_detr",
        {
            "projector_scale_factors": [1.0],
            "projector_in_channels": [WIDTH],
            "projector_out_channels": WIDTH,
            "num_feature_levels": 1,
        },
        "projector scales are a checkpoint setting (without one no feature level reaches the decoder): "
        "one P4-scale level as the small checkpoints use, with the counts the config dict derives",
    ),
    FamilyFix(
        "lw_detr_vit",
        {"window_block_indices": [0], "out_indices": [1, 2]},
        "its ViT interleaves windowed and global blocks and feeds several to the projector: one of "
        "each, both fed",
    ),
    FamilyFix(
        "seggpt",
        {"image_size": [128, 64], "merge_index": 0, "intermediate_hidden_state_indices": [0, 1]},
        "prompt and input are stacked on height (two squares, a pair the rules leave alone): two "
        "64-pixel squares; its layer indices are for 24 layers",
    ),
    FamilyFix(
        "perceiver",
        {"d_latents": WIDTH, "num_self_attends_per_block": LAYERS, "num_latents": 16},
        "the latent array is sized by keys of its own (1280 wide, 26 self-attention layers)",
    ),
    FamilyFix(
        "efficientloftr",
        {
            "out_features": [16, 16, 32, 64],
            "stage_num_blocks": [1, 2, 2, 2],
            "stage_in_channels": [1, 16, 16, 32],
            "stage_block_stride": [[2], [1, 1], [2, 1], [2, 1]],
            "stage_block_out_channels": [[16], [16, 16], [32, 32], [64, 64]],
            "stage_block_in_channels": [[1], [16, 16], [16, 32], [32, 64]],
            "fine_fusion_dims": [64, 32, 16],
            "num_attention_layers": LAYERS,
            "num_attention_heads": 8,
            "num_key_value_heads": 8,
        },
        "RepVGG stages that end at its width, with the per-block lists its config dict derives; its "
        "2-D RoPE (partial factor 4) fills half the width only with 8 heads",
    ),
    FamilyFix(
        "depth_pro",
        {"patch_size": 56, "image_size": 224, "intermediate_hook_ids": [1, 0]},
        "crops patches the size of its patch tower's images from the image scaled to a quarter (four "
        "patches wide); its hooks read two patch-tower layers, deepest first",
    ),
    FamilyFix(
        "llama4_vision_model",
        {
            "intermediate_size": 4 * WIDTH,
            "projector_input_dim": WIDTH,
            "projector_output_dim": WIDTH,
            "vision_output_dim": WIDTH,
        },
        "the adapter's MLP takes the pixel-shuffled patches (4 x width) and its projector dims are "
        "checkpoint widths",
    ),
    FamilyFix(
        "cohere_compass_text",
        {"rope_parameters": {"full_attention": _rope()}},
        "reads RoPE per layer type, which only a checkpoint sets (None by default)",
    ),
    FamilyFix(
        "lfm2_moe",
        {"layer_types": ["conv", "full_attention"]},
        "reads per-layer kinds, which only a checkpoint sets (None by default)",
    ),
    FamilyFix(
        "deepseek_ocr2_text",
        {"mlp_layer_types": ["dense", "sparse"]},
        "reads per-layer MLP kinds, which only a checkpoint sets (None by default)",
    ),
    FamilyFix(
        "diffusion_gemma_text",
        {"num_experts": EXPERTS, "top_k_experts": 2, "moe_intermediate_size": FFN},
        "expert counts and sizes only a checkpoint sets (None by default)",
    ),
    FamilyFix(
        "dbrx",
        {"attn_config": {"rope_theta": 10000.0, "clip_qkv": 8.0}},
        "attention settings the modeling code reads and only checkpoints carry",
    ),
    FamilyFix(
        "pix2struct_text_model",
        {"initializer_range": 0.02},
        "read by the modeling code, set by the parent config only",
    ),
    FamilyFix(
        "hrm_text",
        {"num_layers_per_stack": 1, "H_cycles": 1, "L_cycles": 1, "L_bp_cycles": [1], "num_hidden_layers": 2},
        "runs its stack of layers H x (L + 1) times, one cache slot per run of a layer",
    ),
    FamilyFix(
        "chameleon",
        {
            "vq_config": {"num_embeddings": 64},
            "image_token_id": VOCAB - 65,
            "vocabulary_map": _CHAMELEON_VOCABULARY,
        },
        "maps VQ codes to text tokens through a vocabulary map only a tokenizer provides: one for a "
        "64-code codebook, below the specials",
    ),
    FamilyFix(
        "emu3",
        {"image_token_id": VOCAB - 65, "vocabulary_map": _EMU3_VOCABULARY},
        "maps VQ codes to text tokens through a vocabulary map only a tokenizer provides: one for a "
        "64-code codebook, below the specials",
        slow="the VQ tokenizer's `.item()` image sizes, an index into its BPE mapping moved to the CPU "
        "and `torch_compilable_check`: 6 and 7 graphs, the VQ-VAE traced again from each frame down",
    ),
    FamilyFix(
        "emu3_vqgan",
        {"hidden_size": 2 * WIDTH, "channel_multiplier": [1, 4], "attn_resolutions": [1]},
        "the VQ attention blocks sit at the deepest stage and are `hidden_size` wide: that stage's "
        "width (32 base channels x 4); two resolutions, the first and the deepest, since the encoder "
        "is traced again from each frame down to the graph break after it",
    ),
    FamilyFix(
        "chameleon_vqgan",
        {"channel_multiplier": [1, 4]},
        "two resolutions of five, the first and the deepest: the VQ encoder is traced again from "
        "each frame down to the graph break after it",
    ),
    FamilyFix(
        "glm_image_vqmodel",
        {"latent_channels": WIDTH, "num_embeddings": 256},
        "quantizes the vision tower's features (its latent is the tower's width) into codes that "
        "become text ids: a codebook below the tiny vocabulary",
    ),
    FamilyFix(
        "mllama_text_model",
        {"cross_attention_layers": [1]},
        "places cross-attention to the image by layer index (from layer 3 on): the second of two",
    ),
    FamilyFix(
        "mllama_vision_model",
        {"vision_output_dim": 2 * WIDTH},
        "the projector takes the last state concatenated with the one intermediate layer kept: twice "
        "the tower's width",
    ),
    FamilyFix(
        "xlstm",
        {"qk_dim_factor": 1.0},
        "the recurrent step allocates its state with the value head dim on both axes, which matches "
        "the query/key head dim only when both factors agree",
    ),
    FamilyFix(
        "bit",
        {"num_groups": 2},
        "group norms split the bottleneck channels, a quarter of the scaled stage widths",
    ),
    FamilyFix(
        "zamba",
        {
            "num_hidden_layers": 3,
            "layers_block_type": ["linear_attention", "hybrid", "hybrid"],
            "attention_hidden_size": 2 * WIDTH,
            "n_mamba_heads": 1,
        },
        "ties the shared transformer of its first hybrid layer to the later ones (two of them), its "
        "attention reads the hidden state concatenated with the embeddings (twice the width), and its "
        "Mamba mixer runs one associative scan per SSM head in a Python loop (compile time): one head",
    ),
    FamilyFix(
        "zamba2",
        {"attention_hidden_size": 2 * WIDTH},
        "its attention reads the hidden state concatenated with the embeddings: twice the width",
    ),
    FamilyFix(
        "moonshine_streaming",
        {"num_key_value_heads": HEADS},
        "plain multi-head attention: as many key/value heads as heads",
    ),
    FamilyFix(
        "qwen3_omni_moe_talker_text",
        {"shared_expert_intermediate_size": FFN},
        "its shared expert's width, a key the rules miss",
    ),
    FamilyFix(
        "qwen3_omni_moe",
        {"talker_config": {"spatial_merge_size": 2}},
        "its talker's checkpoint-only `spatial_merge_size` (see the class fix), where it is nested",
    ),
    FamilyFix(
        "qwen2_5_omni_dit",
        {"enc_channels": [256, 256, 256], "enc_kernel_sizes": [5, 3, 1], "enc_dilations": [1, 2, 1]},
        "its speaker encoder (ECAPA-TDNN: a TDNN, a Res2Net block per middle entry, the aggregation of "
        "their outputs) runs in each of the 4 DiT calls of a Runge-Kutta step: one Res2Net block",
    ),
    FamilyFix(
        "dots3_note_text",
        {"head_dim": 2 * HEAD_DIM},
        "sliding layers split the head into rotary and plain parts that must sum to the head dim: 16 + 16",
    ),
    FamilyFix(
        "fun_asr_nano",
        {"adaptor_config": {"intermediate_size": WIDTH // 4}},
        "the adaptor narrows to a quarter of the text width",
    ),
    FamilyFix(
        "qwen4_exp_text",
        {
            "indexer_n_heads": 2,
            "indexer_kv_heads": 1,
            "indexer_head_dim": HEAD_DIM,
            "indexer_budget": 8,
            "indexer_compress_ratio": 4,
        },
        "the sparse-attention indexer: one KV head, a budget its compress ratio divides, an index "
        "head as wide as the attention head's rotary part",
        slow="a `nonzero` of the visible positions in its sparse attention's indexer "
        "(`local_visible_indices`): 15 and 16 graphs",
    ),
    FamilyFix(
        "muse_glimmer",
        {"out_hidden_size": 4 * WIDTH},
        "the tower folds 2 x 2 patches into channels (pixel shuffle): the adapter takes 4 x its width",
        slow="as Muse Spark's: the vision tower's `grid_thw.tolist()` position ids, `repeat_interleave` "
        "sequence lengths and per-image attention splits and interpolation indices: 26 and 27 "
        "graphs",
    ),
    FamilyFix(
        "muse_spark",
        {"out_hidden_size": 4 * WIDTH},
        "the tower folds 2 x 2 patches into channels (pixel shuffle): the adapter takes 4 x its width",
        slow="its vision tower's `grid_thw.tolist()` position ids, `repeat_interleave` sequence lengths "
        "and per-image attention splits, its interpolation indices (`repeat_interleave`) and the "
        "image split: 26 and 27 graphs",
    ),
    FamilyFix(
        "hunyuan_vl_text",
        {"rope_parameters": _rope(mrope_section=[HEAD_DIM // 8] * 4)},
        "multimodal RoPE axes come only from a checkpoint (four equal sections of the half head); the "
        "code needs at least three",
    ),
    FamilyFix(
        "granite4_vision",
        {
            "downsample_rate": "2/4",
            "deepstack_layer_map": [[-2, 1], [-1, 0]],
            "spatial_target_layers": [0, 1, 0, 1],
        },
        "projector settings only a checkpoint sets: tower-to-text layer map, Q-Former windows halving "
        "the 4 x 4 patch grid, the text layers of its four spatial groups",
        slow="`image_size.tolist()` for each image's patches, the output-capturing hooks' lock and "
        "`torch_compilable_check`'s `.item()`: 14 and 15 graphs",
    ),
    FamilyFix(
        "step3p5",
        {
            "sliding_window": 8,
            "layer_types": ["sliding_attention", "full_attention"],
            "rope_parameters": {kind: _rope() for kind in ("sliding_attention", "full_attention")},
        },
        "always builds a sliding-window mask, but the window and the mix of sliding and full layers "
        "come only from a checkpoint: one layer of each, window 8",
    ),
    FamilyFix(
        "blt",
        {"use_cache": False, "encoder_hash_byte_group_size": [3, 4]},
        "builds its cache from the top-level config, which has no `num_hidden_layers` (an upstream "
        "bug in transformers 5.23, huggingface/transformers#47916): run without a cache; two hashed "
        "byte-group sizes of six, each a lookup traced again down to the patcher's graph break",
    ),
    FamilyFix(
        "mimi",
        {"num_quantizers": 8},
        "its residual quantizer runs every codebook in a Python loop Dynamo unrolls (32 by default, "
        "before and after the graph breaks): 8, the semantic one among them",
        slow="a padding computed from data before each of its streaming convolutions (`_pad1d`): 24 graphs",
    ),
    FamilyFix(
        "longcat_flash",
        {"zero_expert_num": 4},
        "its router spans the routed experts and as many zero-computation experts (256 by default): "
        "as many as the routed ones",
    ),
    FamilyFix(
        "musicgen",
        {"audio_encoder": {"target_bandwidths": [1.8]}},
        "the decoder reads one code stream per codebook used at the codec's first bandwidth: the tiny "
        "64-entry books at 75 Hz give its 4 books at 1.8 kbps",
    ),
    FamilyFix(
        "clap_audio_model",
        {"patch_embeds_hidden_size": WIDTH // 2},
        "its Swin doubles the patch width per stage after the first and ends at the projection's "
        "`hidden_size`, stated twice: two stages end at 64 from 32",
    ),
    FamilyFix(
        "clvp",
        {"speech_config": {"vocab_size": VOCAB}},
        "the speech encoder embeds the ids its decoder predicts: the decoder's vocabulary, not the "
        "text encoder's (256) as the default says",
    ),
    FamilyFix(
        "clvp_encoder",
        {"num_attention_heads": 2},
        "rotates max(projection_dim / (2 x heads), 32) dims of each head, at least 32 whatever the "
        "width: two heads of 32",
    ),
    FamilyFix(
        "dots3_note_audio_encoder",
        {"conv_output_size": WIDTH * 16},
        "the stem width (downsample_hidden_size x ceil(mel bins / 8)) is kept in the config dict at "
        "its original value: restated for the tiny width",
    ),
    FamilyFix(
        "phi4_multimodal_audio",
        {"ext_pw_out_channel": WIDTH, "depthwise_separable_out_channel": WIDTH, "nemo_conv_channels": WIDTH},
        "Conformer convolutions run at the model width, stated again under channel names of its own",
    ),
    FamilyFix(
        "florence_vision",
        {"depths": [1, 1, 1, 1]},
        "one DaViT block per stage: the model's `.item()` graph break comes after the vision tower, "
        "which is traced again from each frame down to it",
    ),
    FamilyFix(
        "vibevoice_acoustic_tokenizer_encoder",
        {"depths": [1, 1, 1, 1, 1, 1, 1]},
        "one convolution block per stage (one stage more than `downsampling_ratios`): the ASR model's "
        "`nonzero` graph break comes after both tokenizers, traced again from each frame down to it",
    ),
    # Families in the slow tail once shrunk (the 40 slowest models of a whole-corpus sweep on a
    # 2-core CPU, about 10 s or more over their runs, and the next 30 for a margin): what costs the
    # time is Dynamo tracing the model again from each nested frame down to each of its graph
    # breaks, which is what the sweep measures, not the model's size. Each says where its breaks
    # are and how many graphs its classes make at baseline on torch 2.13 CPU.
    FamilyFix(
        "d_fine",
        _HYBRID_ENCODER_TWO_LEVELS,
        "its hybrid encoder's pyramid, CSP blocks and decoder layers are sized by keys of its own",
        slow="a graph break on the `.item()` of its deformable attention's shape check, deep in nested "
        "frames, makes Dynamo trace the backbone and encoder again from each frame down (9 graphs); "
        "two levels, one CSP block and one decoder layer are the least",
    ),
    FamilyFix(
        "deimv2",
        _HYBRID_ENCODER_TWO_LEVELS,
        "as D-FINE's: its hybrid encoder's pyramid, CSP blocks and decoder layers have keys of their own",
        slow="as D-FINE's: the deformable attention's `.item()` graph break is traced again from each "
        "nested frame down (9 graphs), with two levels, one CSP block and one decoder layer",
    ),
    FamilyFix(
        "rt_detr_v2",
        slow="the deformable attention's `.item()` graph break is traced again from each nested frame "
        "down (6 graphs), with two decoder layers",
    ),
    FamilyFix(
        "grounding-dino",
        _ONE_FUSION_LAYER_EACH,
        "its encoder and decoder layers have keys of their own; its text backbone is a BERT",
        slow="the deformable attention's `.item()` graph break is traced again from each nested frame "
        "down (13 graphs), with one encoder, one decoder and one text layer",
    ),
    FamilyFix(
        "mm-grounding-dino",
        _ONE_FUSION_LAYER_EACH,
        "as Grounding DINO's: encoder and decoder layers under keys of their own, a BERT text backbone",
        slow="as Grounding DINO's: the deformable attention's `.item()` graph break is traced again from "
        "each nested frame down (13 graphs)",
    ),
    FamilyFix(
        "oneformer",
        {"backbone_config": {"depths": [1, 1, 1, 1]}},
        "one Swin block per stage: its graph breaks are in the pixel and transformer decoders, not the "
        "backbone, which the nested frames trace again down to each break",
        slow="graph breaks on `nonzero` and `.item()` split it into 15 graphs, each traced again from its "
        "nested frame down",
    ),
    FamilyFix(
        "glm5_next",
        slow="data-dependent ops (`nonzero`, `repeat_interleave`, `.item()`) split it into 31 graphs, "
        "each traced again from its nested frame down, with two layers",
    ),
    FamilyFix(
        "switch_transformers",
        slow="a `nonzero` of the experts hit (`expert_hit`) in each sparse layer, the experts then "
        "looped over: 10 to 22 graphs, each traced again from its nested frame down",
    ),
    FamilyFix(
        "step3p7",
        slow="the vision tower's `grid_thw.tolist()` position ids, `repeat_interleave` sequence lengths "
        "and per-image attention splits, `torch_compilable_check`'s `.item()` and a `nonzero` of "
        "the experts hit in its MoE layer: 23 and 24 graphs",
    ),
    FamilyFix(
        "gemma4",
        slow="the vision pooler's boolean mask (`hidden_states[pooler_mask]`), the image features split "
        "by `.tolist()` sizes and the image-token mask: 7 and 8 graphs, behind vision and audio "
        "towers of one layer",
    ),
    FamilyFix(
        "embedding_gemma2",
        slow="as Gemma 4's: the vision pooler's boolean mask, the image split by `.tolist()` sizes and "
        "the image-token mask: 7 graphs, behind towers of one layer",
    ),
    FamilyFix(
        "sam3",
        slow="a `torch.arange` over a data-dependent size in the box coordinates (`_get_coords`): 10 "
        "graphs, each traced again from its nested frame down",
    ),
    FamilyFix(
        "sam3_lite_text",
        slow="as SAM 3's: a `torch.arange` over a data-dependent size in the box coordinates: 10 graphs",
    ),
    FamilyFix(
        "minicpmv4_6",
        slow="its vision tower's `.tolist()` position and window indices and attention splits, in every "
        "layer (one layer fewer removes 7 of 23 graphs), `.item()` patch slices and the image-token "
        "mask",
    ),
    FamilyFix(
        "minicpmv4_7",
        slow="as MiniCPM-V 4.6's: the vision tower's `.tolist()` indices and attention splits in every "
        "layer, `.item()` patch slices, the image-token mask and the rope index: 26 and 27 graphs",
    ),
    FamilyFix(
        "idefics2",
        slow="the real images' boolean selection (`pixel_values[real_images_inds]`), the image split and "
        "`torch_compilable_check`'s `.item()`: 9 and 10 graphs; `capture_dynamic_output_shape_ops` "
        "carries the data-dependent shapes through the text model",
    ),
    FamilyFix(
        "idefics3",
        slow="as Idefics 2's: the real images' boolean selection and the image split: 9 and 10 graphs",
    ),
    FamilyFix(
        "smolvlm",
        slow="as Idefics 2's: the real images' boolean selection and the image split: 8 and 9 graphs",
    ),
    FamilyFix(
        "qwen4_exp",
        slow="its vision tower's `grid_thw.tolist()` position ids, `repeat_interleave` sequence lengths "
        "and per-image attention splits, its interpolation indices (`repeat_interleave`) and the "
        "rope index: 37 and 43 graphs; a vision tower of one layer saves nothing",
    ),
    FamilyFix(
        "mistral_large4",
        slow="Pixtral's `.item()` patch slices, the image features split by `.tolist()` sizes and the "
        "output-capturing hooks' context variable: 16 and 17 graphs",
    ),
    FamilyFix(
        "mistral3",
        slow="as Mistral Large 4's: Pixtral's `.item()` patch slices, the image split by `.tolist()` "
        "sizes and the output-capturing hooks: 16 and 17 graphs",
    ),
    FamilyFix(
        "molmo2",
        slow="the pooled features' boolean mask, the image split sizes, a `masked_scatter` Dynamo skips "
        "and `torch_compilable_check`: 10 and 11 graphs",
    ),
    FamilyFix(
        "qwen2_5_vl",
        slow="its vision tower's `grid_thw.tolist()` position ids, `repeat_interleave` sequence lengths "
        "and per-image attention splits, `.item()` grid sizes and the rope index: 26 and 27 graphs",
    ),
    FamilyFix(
        "exaone4_5",
        slow="as Qwen2.5-VL's: the vision tower's `grid_thw.tolist()` position ids, `repeat_interleave` "
        "sequence lengths and per-image attention splits: 21 and 22 graphs",
    ),
    FamilyFix(
        "hyperclovax_vision_v2",
        slow="as Qwen2.5-VL's: the vision tower's `grid_thw.tolist()` position ids, `repeat_interleave` "
        "sequence lengths and per-image attention splits: 20 and 21 graphs",
    ),
    FamilyFix(
        "lfm3_vl",
        slow="as Qwen2.5-VL's: the vision tower's `grid_thw.tolist()` position ids, `repeat_interleave` "
        "sequence lengths and per-image attention splits: 18 and 19 graphs",
    ),
    FamilyFix(
        "minimax_m3_vl",
        slow="as Qwen2.5-VL's: the vision tower's `grid_thw.tolist()` position ids, `repeat_interleave` "
        "sequence lengths and per-image attention splits and the image-token mask: 15 and 16 graphs",
    ),
    FamilyFix(
        "cohere_compass",
        slow="as Qwen 4 Exp's: the vision tower's `grid_thw.tolist()` position ids, `repeat_interleave` "
        "sequence lengths and per-image attention splits, interpolation indices and the rope index: "
        "29 and 30 graphs",
    ),
    FamilyFix(
        "paddleocr_vl",
        slow="as Qwen 4 Exp's: the vision tower's `grid_thw.tolist()` position ids, `repeat_interleave` "
        "sequence lengths and per-image attention splits, interpolation indices and the image "
        "split: 31 and 32 graphs",
    ),
    FamilyFix(
        "kimi_k25",
        slow="as Qwen 4 Exp's: the vision tower's `grid_thw.tolist()` position ids, `repeat_interleave` "
        "sequence lengths and per-image attention splits, interpolation indices and `int()` of its "
        "temporal merge sizes: 29 and 30 graphs",
    ),
    FamilyFix(
        "musicflamingo",
        slow="`torch.where` over its audio timestamps, the valid frames' mask and the audio-token mask: "
        "10 and 11 graphs, behind an audio encoder of one layer",
    ),
    FamilyFix(
        "vits",
        slow="its spline flows' boolean masks, WaveNet's `.item()` channel split, the duration "
        "predictor's `np.random` and the lengths' `arange`: 23 graphs",
    ),
    FamilyFix(
        "csm",
        slow="its input merge's boolean masks and `arange` over the audio cutoffs, and the Mimi codec's "
        "data-dependent padding: 1 and 25 graphs",
    ),
    FamilyFix(
        "minicpm_ocr",
        slow="as MiniCPM-V 4.6's: the vision tower's `.tolist()` position indices and attention splits, "
        "and the image-token mask: 17 and 18 graphs",
    ),
    FamilyFix(
        "inkling2_loop",
        slow="a `repeat_interleave` patch index per image, the vision tower's interpolation indices "
        "(`repeat_interleave`), `grid_thw.tolist()` position ids, sequence lengths and per-image "
        "attention splits: 25 and 26 graphs",
    ),
    FamilyFix(
        "inkling2",
        slow="as Inkling 2 Loop's: a `repeat_interleave` patch index per image, the vision tower's "
        "interpolation indices (`repeat_interleave`), `grid_thw.tolist()` position ids, sequence "
        "lengths and per-image attention splits: 25 and 26 graphs",
    ),
    FamilyFix(
        "florence2",
        slow="`torch_compilable_check`'s `.item()` after the vision tower (one DaViT block per stage), "
        "which is traced again from each frame down to it: 3 and 4 graphs",
    ),
    FamilyFix(
        "fastspeech2_conformer",
        slow="its length regulator's branch on `duration_labels.sum()` and a `torch.zeros` of a "
        "data-dependent size: 4 graphs, the Conformer encoder traced again down to each",
    ),
    FamilyFix(
        "qwen3_vl",
        slow="its vision tower's interpolation indices (`repeat_interleave`), `grid_thw.tolist()` "
        "position ids, sequence lengths and per-image attention splits, and the rope index: 29 and "
        "30 graphs",
    ),
    FamilyFix(
        "qwen3_vl_moe",
        slow="as Qwen3-VL's: the vision tower's interpolation indices (`repeat_interleave`), "
        "`grid_thw.tolist()` position ids, sequence lengths and per-image attention splits, and the "
        "rope index: 29 and 30 graphs",
    ),
    FamilyFix(
        "cosmos3_omni",
        slow="as Qwen3-VL's: the vision tower's interpolation indices (`repeat_interleave`), "
        "`grid_thw.tolist()` position ids, sequence lengths and per-image attention splits, and the "
        "rope index: 29 and 30 graphs",
    ),
    FamilyFix(
        "vibevoice_asr",
        slow="a boolean mask over the padded audio features (`combined_features[padding_mask]`) after "
        "two tokenizer encoders (one block per stage) traced again down to it: 3 and 4 graphs",
    ),
    FamilyFix(
        "glm4v_moe",
        slow="as Qwen2.5-VL's: the vision tower's `grid_thw.tolist()` position ids, `repeat_interleave` "
        "sequence lengths and per-image attention splits, and the rope index: 26 and 27 graphs",
    ),
    FamilyFix(
        "lfm2_vl",
        slow="`torch_compilable_check`'s `.item()`, a boolean mask over the image features and their "
        "split by `.tolist()` sizes: 13 and 14 graphs",
    ),
    FamilyFix(
        "ernie4_5_vl_moe",
        slow="as Qwen2.5-VL's: the vision tower's `grid_thw.tolist()` position ids, `repeat_interleave` "
        "sequence lengths and per-image attention splits, and a `range` over a traced temporal "
        "size: 24 and 25 graphs",
    ),
    FamilyFix(
        "lighton_ocr",
        slow="as Mistral 3's: Pixtral's `.item()` patch slices and the image features split by "
        "`.tolist()` sizes: 12 and 13 graphs",
    ),
    FamilyFix(
        "hy_v4_vl",
        slow="`int()` of the image size in its position interpolation, the vision tower's sequence "
        "lengths and attention splits, and the rope index: 22 and 23 graphs",
    ),
)

CLASS_FIXES: tuple[ClassFix, ...] = (
    ClassFix(
        "Qwen3OmniMoeTalkerConfig",
        {"spatial_merge_size": 2},
        "the talker reads `spatial_merge_size` (its 3D RoPE over vision tokens), which its config "
        "class lacks and only checkpoints carry (the vision tower's value)",
    ),
)

# Model types whose layers are all alike and whose compile is mostly that stack traced again
# from each frame down to a graph break after it (a multimodal model's vision or audio tower,
# BLT's entropy patcher): one layer instead of LAYERS, per-layer kinds still kept (see the layer
# pass). Each was swept with one layer on torch 2.13 CPU and kept its model's graph counts and
# break reasons under the baseline and both flags (`bench/corpus_specs.py side-by-side`).
ONE_LAYER: frozenset[str] = frozenset(
    {
        "audioflamingo3_encoder",
        "blt_global_transformer",
        "blt_local_decoder",
        "blt_patcher",
        "clip_vision_model",
        "cohere_compass_vision",
        "cosmos3_edge_vision",
        "deepseek_ocr2_encoder",
        "dots3_note_audio_encoder",
        "ernie4_5_vl_moe_vision",
        "fun_asr_nano_encoder",
        "gemma4_audio",
        "gemma4_vision",
        "glm4v_moe_vision",
        "glm4v_vision",
        "glm5_next_vision",
        "glm_image_vision",
        "glm_ocr_vision",
        "glmasr_encoder",
        "got_ocr2_vision",
        "granite_speech_encoder",
        "idefics3_vision",
        "inkling2_vision",
        "internvl_vision",
        "janus_vision_model",
        "kimi_k25_vision",
        "minimax_m3_vl_vision",
        "molmo2_vision",
        "nemotron3_5_transcribe_asr_audio",
        "nemotron3_5_transcribe_word_timestamp",
        "nemotron3_diarization_audio",
        "pixtral",
        "qwen2_vl_vision",
        "qwen3_vl_vision",
        "siglip2_vision_model",
        "siglip_vision_model",
    }
)

# Families whose modeling code falls back to hard-coded multimodal RoPE sections when the
# config has none (`rope_parameters.get("mrope_section", [16, 24, 24])`): sized for the
# original head dim (128), they break any smaller head. Their tiny config states the sections,
# scaled to the tiny head dim. model_type -> the code's default sections.
HARD_CODED_MROPE: dict[str, list[int]] = {
    "qwen2_vl_text": [16, 24, 24],
    "qwen2_5_vl_text": [16, 24, 24],
    "qwen2_5_omni_text": [16, 24, 24],
    "qwen2_5_omni_talker": [16, 24, 24],
    "paddleocr_vl_text": [16, 24, 24],
    "qwen3_vl_text": [24, 20, 20],
    "qwen3_vl_moe_text": [24, 20, 20],
    "qwen3_omni_moe_text": [24, 20, 20],
    "qwen3_omni_moe_talker_text": [24, 20, 20],
    "glm4v_text": [8, 12, 12],
    "glm4v_moe_text": [8, 12, 12],
    "glm_image_text": [8, 12, 12],
    "glm_ocr_text": [8, 12, 12],
    "qwen3_5_moe_text": [11, 11, 10],
    "qwen4_exp_text": [11, 11, 10],
    "ernie4_5_vl_moe_text": [22, 22, 20],
}


def by_family(fixes: tuple[Any, ...], key: str) -> dict[str, Any]:
    """The fixes by family, refusing a table a reader could misread: a family named twice, values
    without a one-line reason, an entry that neither gives values nor says why it stays slow."""
    by_name: dict[str, Any] = {}
    for fix in fixes:
        name = getattr(fix, key)
        if not name or name in by_name:
            raise ValueError(f"family fixes: {key} {name!r} is empty or named twice")
        if not all(isinstance(k, str) for k in fix.values):
            raise ValueError(f"family fixes: {name!r} gives a key that is not a string")
        slow = getattr(fix, "slow", "")
        if not fix.values and not slow:
            raise ValueError(f"family fixes: {name!r} gives no values and does not say why it stays slow")
        for text in (fix.reason if fix.values else "x", slow or "x"):
            if not text.strip() or "\n" in text:
                raise ValueError(f"family fixes: {name!r} needs a one-line reason")
        by_name[name] = fix
    return by_name


BY_MODEL_TYPE: dict[str, FamilyFix] = by_family(FAMILY_FIXES, "model_type")
BY_CONFIG_CLASS: dict[str, ClassFix] = by_family(CLASS_FIXES, "config_class")


def why_slow(model_type: str | None) -> str:
    """Why the family's compile stays slow once shrunk, as its entry says ("" where it says nothing)."""
    fix = BY_MODEL_TYPE.get(model_type or "")
    return fix.slow if fix else ""


@dataclass(frozen=True)
class StaleFix:
    """A fix whose family the installed transformers no longer has."""

    table: str  # "family fix", "class fix", "rotary sections" or "one layer"
    name: str  # the model type or config class it names
    reason: str

    def describe(self) -> str:
        return f"{self.table} {self.name!r}: no such {self._kind} in this transformers ({self.reason})"

    @property
    def _kind(self) -> str:
        return "config class" if self.table == "class fix" else "model type"


def stale_fixes() -> list[StaleFix]:
    """The fixes naming a model type or config class the installed transformers does not have."""
    import transformers
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    types = set(CONFIG_MAPPING_NAMES)
    stale = [
        StaleFix("family fix", fix.model_type, fix.reason)
        for fix in FAMILY_FIXES
        if fix.model_type not in types
    ]
    stale += [
        StaleFix("class fix", fix.config_class, fix.reason)
        for fix in CLASS_FIXES
        if not hasattr(transformers, fix.config_class)
    ]
    stale += [
        StaleFix("rotary sections", name, "the modeling code's default multimodal RoPE sections")
        for name in HARD_CODED_MROPE
        if name not in types
    ]
    stale += [
        StaleFix("one layer", name, "layers all alike, traced again down to a graph break")
        for name in sorted(ONE_LAYER)
        if name not in types
    ]
    return stale
