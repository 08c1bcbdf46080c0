"""Tiny configs: rules that shrink any transformers config, then a short table of overrides.

The rules work on the config as a dict (the default config class's `to_dict()`), recursing
into nested sub-configs (text, vision, audio, ...), so a family added to transformers later
is shrunk without code changes. One width is used everywhere (`WIDTH`): projections between
towers (`out_hidden_size`, `projection_dim`, `encoder_hidden_size`, ...) then agree without
knowing which key feeds which.

- Layer counts go to 2; per-layer lists (`layer_types`, hybrid patterns) keep one layer of
  each distinct type, in order, so that mixed sliding/full, linear/full or dense/MoE stacks
  survive, and the layer count follows the list.
- Widths go to `WIDTH`, heads to 4 (key/value heads to 2, or 1 when the family is MQA,
  or 4 when it is plain multi-head), so every divisibility constraint holds.
- Experts go to 4 with at most 2 routed per token.
- Vocabularies go to `VOCAB`; special-token ids outside it are remapped to distinct ids at
  its top, and `text_token_limit` tells the recipes which ids are plain text.
"""

from __future__ import annotations

import copy
import re
from typing import Any

WIDTH = 64
HEADS = 4
HEAD_DIM = WIDTH // HEADS
FFN = 128
VOCAB = 512
LAYERS = 2
EXPERTS = 4
IMAGE = 32

_LAYER_COUNT = re.compile(
    r"^(num_)?((hidden|encoder|decoder|text|vision|audio|speech|backbone|transformer|mamba|attention|"
    r"cross_attention|global|local|prediction|predictor|thinker|talker|conformer|enc|dec|sub|"
    r"fusion|adapter|projector|qformer|perceiver|refiner|post|pre|t2u)_)*(hidden_)?(layers|blocks|layer)$|"
    r"^n_layers?$|^depth$|^num_.*_layers$|^.*_num_layers$|^.*_depth$|^max_window_layers$"
)
_NOT_LAYER_COUNT = re.compile(
    r"feature_layer|_layer_idx|layer_norm|select_layer|layer_type|layer_scale|feat_extract|conv"
)
_WIDTH_KEYS = re.compile(
    r"^(hidden_size|d_model|n_embd|embed_dim|dim|model_dim|hidden_dim|d_embed|word_embed_proj_dim|"
    r"embedding_size|embedding_dim|projection_dim|proj_dim|text_embed_dim|vision_embed_dim|"
    r"(encoder|decoder|text|vision|audio|out|output|projector|speech|mm|context|cross_attention)_"
    r"(hidden_size|dim|embed_dim)|hidden_size_per_head_unused|hidden_size_global|n_embed|emb_dim|d_hidden|width|"
    r"projection_size|proj_size|lru_width|.*_hidden_size|.*_embed_dim|.*_proj_dims?|condition_dim|"
    r"intra_bottleneck_size|adapter_(in|out)_dim|adapter_(input|output)_size|pooler_output_size)$"
)
_FFN_KEYS = re.compile(
    r"^(intermediate_size|ffn_dim|d_ff|n_inner|encoder_ffn_dim|decoder_ffn_dim|ffn_hidden_size|"
    r"mlp_dim|ff_dim|feed_forward_size|d_inner|projector_intermediate_size|.*_intermediate_size|"
    r"intermediate_dim|dim_feedforward|encoder_feedforward_dim|decoder_feedforward_dim|.*_ffn_dim)$"
)
_HEAD_KEYS = re.compile(
    r"^(num_attention_heads|num_heads|n_head|n_heads|encoder_attention_heads|decoder_attention_heads|"
    r"num_attention_heads_.*|.*_attention_heads|.*_num_heads|.*num_.*_heads|.*_n_heads)$"
)
_KV_HEAD_KEYS = re.compile(
    r"^(num_key_value_heads|n_kv_heads|num_kv_heads|multi_query_group_num|.*_kv_heads)$"
)
_HEAD_DIM_KEYS = re.compile(r"^(head_dim|attention_head_dim|d_kv|kv_channels|.*_head_dim|d_head)$")
_EXPERT_KEYS = re.compile(
    r"^(num_experts|num_local_experts|n_routed_experts|moe_num_experts|num_routed_experts)$"
)
_TOPK_KEYS = re.compile(
    r"^(num_experts_per_tok|num_experts_per_token|moe_topk|top_k|num_selected_experts|moe_k|router_topk|"
    r"moe_top_k)$"
)
_TOKEN_ID_KEYS = re.compile(r"(_token_id|_token_index|_token_ids|_id)$")
_STAGE_WIDTH_KEYS = re.compile(
    r"^(hidden_sizes|embed_dims|dims|embed_dim|num_channels_per_stage|widths|channels|"
    r"encoder_in_channels|embed_dim_per_stage|backbone_channel_list|downsample_channels)$"
)
# Scalars that feed a hierarchical tower's first stage (its stem, or the width the config
# repeats next to the stage list): they follow that stage's scaled width.
_STEM_WIDTH_KEYS = re.compile(r"^(hidden_size|embed_dim|stem_out_channels|stem_channels|embedding_size)$")

# Scalar rules, first match wins: (key pattern or key set, ceiling).
_SCALAR_RULES: list[tuple[re.Pattern[str] | tuple[str, ...], int]] = [
    (_WIDTH_KEYS, WIDTH),
    (_FFN_KEYS, FFN),
    (_HEAD_KEYS, HEADS),
    (_HEAD_DIM_KEYS, HEAD_DIM),
    (_EXPERT_KEYS, EXPERTS),
    (_TOPK_KEYS, 2),
    (re.compile(r".*vocab_size"), VOCAB),
    # Hashed n-gram embedding tables (BLT's byte groups): buckets, sized like a vocabulary.
    (re.compile(r".*_hash_.*vocab$"), VOCAB),
    # Placeholder tokens per image must not outnumber the tiny tower's patches.
    (("mm_tokens_per_image", "image_seq_length", "num_image_tokens"), 4),
    (("kv_lora_rank", "q_lora_rank"), 2 * HEAD_DIM),
    (("n_group", "num_expert_groups", "num_expert_group"), 2),
    (("topk_group", "n_shared_experts", "num_shared_experts"), 1),
    # Dense layers before the first MoE layer: one, so that two layers still reach an MoE one.
    (("first_k_dense_replace", "num_dense_layers"), 1),
    (("state_size", "ssm_state_size", "d_state", "mamba_d_state"), 16),
    (("max_position_embeddings", "max_source_positions", "n_positions"), 4096),
    # Audio codecs: residual quantizer codebooks dominate their size.
    (("codebook_size",), 64),
    # Detection heads rank this many queries among the tiny image's few positions.
    (("num_queries", "num_object_queries", "two_stage_num_proposals"), 16),
    # Grouped convolutions sized to the original width (codec upsamplers).
    (("upsample_groups",), WIDTH),
]

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

# Per-family corrections the rules cannot know: model_type -> {key: value} applied last
# (to the config whose model_type matches, nested or not).
OVERRIDES: dict[str, dict[str, Any]] = {
    # GPT-Neo repeats a (global, local) attention pair a number of times that must equal the
    # layer count: one pair for two layers.
    "gpt_neo": {"attention_types": [[["global", "local"], 1]]},
    # Aria maps the tower's patch count to a query count, for the original image sizes only:
    # the tiny tower sees 4 x 4 patches.
    "aria": {"projector_patch_to_query_dict": {16: 4}},
    # SAM 2's Hiera places global attention by block index, for the original stage depths: with
    # two blocks a stage, the second block of the third stage (a first block pools queries,
    # which a global block cannot).
    "sam2_hiera_det_model": {"global_attention_blocks": [4], "image_size": [64, 64]},
    # Its neck's feature-map sizes, for a 64-pixel image (strides 4, 8, 16), as the prompt
    # encoder's shrunk image size expects.
    "sam2_vision_model": {"backbone_feature_sizes": [[16, 16], [8, 8], [4, 4]]},
    # EfficientNet sizes its last stage from `width_coefficient` but its norm from `hidden_dim`:
    # a coefficient that makes the rounded 1280-channel head exactly WIDTH.
    "efficientnet": {"width_coefficient": WIDTH / 1280, "depth_coefficient": 1.0},
    # ALIGN's EfficientNet tower has no head: its image embeddings are its last stage (320
    # channels scaled by `width_coefficient`), which must be exactly the projection width.
    "align_vision_model": {"width_coefficient": WIDTH / 320, "depth_coefficient": 1.0},
    # TVP's frame prompts are parameters of (frames, 448 x 448) pixels: a two-frame, 64-pixel
    # clip whose prompt border leaves a 48-pixel centre.
    "tvp": {"max_img_size": 64, "visual_prompt_size": 8, "num_frames": 2},
    # LiLT's layout stream concatenates six box embeddings of width // 6 each, and narrows by
    # `channel_shrink_ratio` (4): a width that 6 and 4 x heads divide.
    "lilt": {"hidden_size": 48},
    # BROS projects relative box positions onto one attention head (its default, 64, is the
    # original 768 / 12 heads).
    "bros": {"dim_bbox_projection": HEAD_DIM},
    # LXMERT counts its language, cross-modal and object-relation layers under one-letter names.
    "lxmert": {"l_layers": LAYERS, "x_layers": LAYERS, "r_layers": LAYERS},
    # EnCodec's codebook vectors are its encoder's width (the config copies the default).
    "encodec": {"codebook_dim": WIDTH},
    # X-Codec's codebook vectors, and X-Codec 2's / NeuCodec's quantizer input, are the acoustic
    # and semantic widths concatenated (the configs state the checkpoints' sum).
    "xcodec": {"codebook_dim": 2 * WIDTH},
    "xcodec2": {"quantization_dim": 2 * WIDTH},
    "neucodec": {"quantization_dim": 2 * WIDTH},
    # Gemma 4's audio tower sizes its input projection for 128 mel bins without naming them:
    # stated here so that the recipes feed 128.
    "gemma4_audio": {"num_mel_bins": 128},
    # SAM's neck outputs image embeddings as wide as the mask decoder (the rules miss the key),
    # and its positional embedding's sine/cosine pairs fill that width.
    "sam_vision_model": {"output_channels": WIDTH, "num_pos_feats": WIDTH // 2},
    "sam_hq_vision_model": {"output_channels": WIDTH, "num_pos_feats": WIDTH // 2},
    # SAM-HQ's mask decoder also reads the tower's first global-attention layer: the tower's width.
    "sam_hq_mask_decoder": {"vit_dim": WIDTH},
    # MobileViT v2 unfolds 2 x 2 patches at stride 32: its last map needs 2 x 2 pixels.
    "mobilevitv2": {"image_size": 64},
    # PP-OCRv5 mobile's recogniser pools its last map with a 3-row kernel: text lines at least
    # 96 pixels high (the config names no size; stated for the recipes).
    "pp_ocrv5_mobile_rec": {"image_size": [96, 96]},
    # PP-OCR detectors: settings only the released checkpoints carry (neck blocks, upsampling
    # factors, head kernels; PP-OCRv6's detection backbone, whose stage widths the small
    # detector's neck takes as they are).
    "pp_ocrv5_server_det": _PP_OCR_LARGE_KERNEL_NECK,
    "pp_ocrv6_medium_det": {**_PP_OCR_LARGE_KERNEL_NECK, "backbone_config": _PP_LCNET_V4_DETECTION},
    "pp_ocrv6_small_det": {
        "backbone_config": _PP_LCNET_V4_DETECTION,
        "layer_list_out_channels": _PP_LCNET_V4_DETECTION["stage_out_channels"],
    },
    # UVDoc's head concatenates the maps of all six bridge stages (the default backbone returns
    # only the last, as no checkpoint does).
    "uvdoc": {
        "backbone_config": {
            "out_indices": [1, 2, 3, 4, 5, 6],
            "out_features": ["stage1", "stage2", "stage3", "stage4", "stage5", "stage6"],
        }
    },
    # PP-DocLayoutV3's mask branch takes the backbone's first-stage map: as wide as the tiny
    # HGNetV2's first stage (8 channels), not the original 128.
    "pp_doclayout_v3": {"x4_feat_dim": 8},
    # LW-DETR's projector scales are a checkpoint setting (none by default: no feature level
    # reaches the decoder); the counts derived from them are stated too, as the config dict
    # carries them. One P4-scale level, as the small checkpoints use.
    "lw_detr": {
        "projector_scale_factors": [1.0],
        "projector_in_channels": [WIDTH],
        "projector_out_channels": WIDTH,
        "num_feature_levels": 1,
    },
    # Its ViT interleaves windowed and global blocks and feeds several of them to the projector:
    # one of each, both fed.
    "lw_detr_vit": {"window_block_indices": [0], "out_indices": [1, 2]},
    # SegGPT sees the prompt and the input image stacked on height (896 x 448: two squares, a
    # pair the rules leave alone): two 64-pixel squares. Its layer indices are for 24 layers:
    # the prompt/input halves merge after the first layer, and the decoder reads both layers.
    "seggpt": {"image_size": [128, 64], "merge_index": 0, "intermediate_hidden_state_indices": [0, 1]},
    # Perceiver's latent array is sized by keys of its own (1280 wide, 26 self-attention layers).
    "perceiver": {"d_latents": WIDTH, "num_self_attends_per_block": LAYERS, "num_latents": 16},
    # EfficientLoFTR's RepVGG stages end at its width (16 to 64 channels here), and its config
    # dict carries the per-block lists it derives from them, stated to match. Its 2-D RoPE
    # (a partial factor of 4) fills half the width only with 8 heads.
    "efficientloftr": {
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
    # DepthPro crops patches the size of its (shrunk) patch tower's images from the image scaled
    # down to a quarter: the image is four patches wide.
    # Its hooks read two intermediate layers of the patch tower, deepest first.
    "depth_pro": {"patch_size": 56, "image_size": 224, "intermediate_hook_ids": [1, 0]},
    # Llama 4's vision adapter feeds the pixel-shuffled patches (width / ratio^2 = 4 x width)
    # to an MLP sized by `intermediate_size`; its projector dims are checkpoint widths.
    "llama4_vision_model": {
        "intermediate_size": 4 * WIDTH,
        "projector_input_dim": WIDTH,
        "projector_output_dim": WIDTH,
        "vision_output_dim": WIDTH,
    },
    # Settings these defaults leave to a checkpoint (None), which the modeling code reads as is:
    # Cohere Compass reads RoPE per layer type; Lfm2-MoE and DeepSeek-OCR 2 read per-layer kinds.
    "cohere_compass_text": {
        "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 10000.0}}
    },
    "lfm2_moe": {"layer_types": ["conv", "full_attention"]},
    "deepseek_ocr2_text": {"mlp_layer_types": ["dense", "sparse"]},
    "diffusion_gemma_text": {"num_experts": EXPERTS, "top_k_experts": 2, "moe_intermediate_size": FFN},
    # Attributes the modeling code reads and only checkpoints carry (the default configs lack them).
    "dbrx": {"attn_config": {"rope_theta": 10000.0, "clip_qkv": 8.0}},
    "pix2struct_text_model": {"initializer_range": 0.02},  # set by the parent config only
    # HRM runs its stack of layers H x (L + 1) times, one cache slot per run of a layer.
    "hrm_text": {
        "num_layers_per_stack": 1,
        "H_cycles": 1,
        "L_cycles": 1,
        "L_bp_cycles": [1],
        "num_hidden_layers": 2,
    },
    # Chameleon and Emu3 map VQ codes to text tokens through a vocabulary map that only a
    # checkpoint's tokenizer provides: a generated one for a 64-code codebook, below the specials.
    "chameleon": {
        "vq_config": {"num_embeddings": 64},
        "image_token_id": VOCAB - 65,
        "vocabulary_map": {
            "<image>": VOCAB - 65,
            **{
                f"IMGIMG{''.join(chr(ord('A') + int(d)) for d in str(i))}Z": VOCAB - 129 + i
                for i in range(64)
            },
        },
    },
    "emu3": {
        "image_token_id": VOCAB - 65,
        "vocabulary_map": {
            "<image>": VOCAB - 65,
            "<|extra_200|>": VOCAB - 66,
            **{f"<|visual token {i:06d}|>": VOCAB - 130 + i for i in range(64)},
        },
    },
    # Emu3's VQ attention blocks sit at the deepest stage and are `hidden_size` wide: that
    # stage's width (32 base channels x 4).
    "emu3_vqgan": {"hidden_size": 2 * WIDTH},
    # GLM-Image's VQ model quantizes the vision tower's features (its latent is the tower's
    # width) into codes that become text ids: a codebook below the tiny vocabulary.
    "glm_image_vqmodel": {"latent_channels": WIDTH, "num_embeddings": 256},
    # Mllama's text stack places cross-attention to the image by layer index (from layer 3 on):
    # the second of two layers. Its projector takes the tower's last state concatenated with
    # the one intermediate layer kept: twice the tower's width.
    "mllama_text_model": {"cross_attention_layers": [1]},
    "mllama_vision_model": {"vision_output_dim": 2 * WIDTH},
    # xLSTM's recurrent step allocates its state with the value head dim on both axes, which
    # matches its query/key head dim only when both factors agree.
    "xlstm": {"qk_dim_factor": 1.0},
    # BiT's group norms split its bottleneck channels, a quarter of the scaled stage widths.
    "bit": {"num_groups": 2},
    # Zamba ties the shared transformer of its first hybrid layer to the later ones: two of them.
    # Zamba's attention reads the hidden state concatenated with the embeddings: twice the width.
    "zamba": {
        "num_hidden_layers": 3,
        "layers_block_type": ["linear_attention", "hybrid", "hybrid"],
        "attention_hidden_size": 2 * WIDTH,
    },
    "zamba2": {"attention_hidden_size": 2 * WIDTH},
    "moonshine_streaming": {"num_key_value_heads": HEADS},
    "qwen3_omni_moe_talker_text": {"shared_expert_intermediate_size": FFN},
    # Its talker's checkpoint-only `spatial_merge_size` (see CLASS_OVERRIDES), where it is nested.
    "qwen3_omni_moe": {"talker_config": {"spatial_merge_size": 2}},
    # Dots 3 Note's sliding layers split their head into rotary and plain parts that must sum
    # to the head dim: 16 + 16.
    "dots3_note_text": {"head_dim": 2 * HEAD_DIM},
    # Fun-ASR-Nano's adaptor narrows to a quarter of the text width.
    "fun_asr_nano": {"adaptor_config": {"intermediate_size": WIDTH // 4}},
    # Qwen4-Exp's sparse-attention indexer: one KV head, a budget that its compress ratio divides,
    # an index head as wide as the attention head's rotary part.
    "qwen4_exp_text": {
        "indexer_n_heads": 2,
        "indexer_kv_heads": 1,
        "indexer_head_dim": HEAD_DIM,
        "indexer_budget": 8,
        "indexer_compress_ratio": 4,
    },
    # MuseGlimmer / MuseSpark's vision tower folds 2 x 2 patches into channels (pixel shuffle): the
    # adapter takes 4 x the tower's width, a key the rules shrink like any other width.
    "muse_glimmer": {"out_hidden_size": 4 * WIDTH},
    "muse_spark": {"out_hidden_size": 4 * WIDTH},
    # HunYuanVL's multimodal RoPE axes (position, width, height, image index) come only from a
    # checkpoint (HunyuanOCR: four equal sections of the half head); the code needs at least three.
    "hunyuan_vl_text": {
        "rope_parameters": {
            "rope_type": "default",
            "rope_theta": 10000.0,
            "mrope_section": [HEAD_DIM // 8] * 4,
        }
    },
    # Granite 4 Vision's projector settings come only from a checkpoint (None by default): which
    # tower layers feed which text layers, the Q-Former's query/key window sides (halving the
    # tiny tower's 4 x 4 patch grid), and the text layers of its four spatial groups.
    "granite4_vision": {
        "downsample_rate": "2/4",
        "deepstack_layer_map": [[-2, 1], [-1, 0]],
        "spatial_target_layers": [0, 1, 0, 1],
    },
    # Step 3.5 / 3.7's text model always builds a sliding-window mask, but its window (like its
    # mix of sliding and full layers) comes only from a checkpoint: one layer of each, window 8.
    "step3p5": {
        "sliding_window": 8,
        "layer_types": ["sliding_attention", "full_attention"],
        "rope_parameters": {
            kind: {"rope_type": "default", "rope_theta": 10000.0}
            for kind in ("sliding_attention", "full_attention")
        },
    },
    # BLT builds its cache from the top-level config, which has no `num_hidden_layers` (an upstream
    # bug in transformers 5.23, huggingface/transformers#47916): run without a cache.
    "blt": {"use_cache": False},
    # MusicGen's decoder reads one code stream per EnCodec codebook used at the codec's first
    # target bandwidth (checkpoints: 2.2 kbps of 2048-entry books at 50 Hz, 4 books); the tiny
    # 64-entry books at 75 Hz give the decoder's 4 books at 1.8 kbps.
    "musicgen": {"audio_encoder": {"target_bandwidths": [1.8]}},
    # CLAP's audio tower (a Swin) doubles its patch width per stage after the first and ends at
    # the `hidden_size` its projection takes, a relation its config states twice: two stages
    # end at 64 from 32.
    "clap_audio_model": {"patch_embeds_hidden_size": WIDTH // 2},
    # CLVP's speech encoder embeds the speech ids its decoder predicts: checkpoints give it the
    # decoder's vocabulary, the default config the text encoder's (256, below the decoder's).
    "clvp": {"speech_config": {"vocab_size": VOCAB}},
    # CLVP's encoders rotate max(projection_dim / (2 x heads), 32) dims of each head, at least 32
    # whatever the width: two heads of 32.
    "clvp_encoder": {"num_attention_heads": 2},
    # Dots 3 Note's audio stem width (downsample_hidden_size x ceil(mel bins / 8)) is derived once
    # and kept in the config dict at its original value (480 x 16): restated for the tiny width.
    "dots3_note_audio_encoder": {"conv_output_size": WIDTH * 16},
    # Phi-4-multimodal's Conformer convolutions run at the model width (1024 in checkpoints),
    # stated again under channel names of its own.
    "phi4_multimodal_audio": {
        "ext_pw_out_channel": WIDTH,
        "depthwise_separable_out_channel": WIDTH,
        "nemo_conv_channels": WIDTH,
    },
}

# The same, for config classes whose model type is empty (so OVERRIDES cannot name them):
# class name -> {key: value}, applied to the top-level tiny config.
CLASS_OVERRIDES: dict[str, dict[str, Any]] = {
    # Qwen3-Omni's talker reads `spatial_merge_size` (its 3D RoPE over vision tokens), which its
    # config class lacks and only checkpoints carry (the vision tower's value).
    "Qwen3OmniMoeTalkerConfig": {"spatial_merge_size": 2},
}

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


def _is_sub_config(value: Any) -> bool:
    return isinstance(value, dict) and "model_type" in value


def _distinct_in_order(values: list[Any]) -> list[Any]:
    kept: list[Any] = []
    for value in values:
        if value not in kept:
            kept.append(value)
    return kept


_PER_LAYER_KEY = re.compile(r"pattern|layer|block|types$")
_PER_LAYER_STRING_KEY = re.compile(r"pattern|layer")
MAX_KINDS = 2 * LAYERS  # more distinct values than this is data, not a layer-kind list


def _per_layer_kinds(key: str, value: Any, original_layers: int) -> list[Any] | None:
    """The distinct kinds of a per-layer list/string (one entry per layer), or None if it is not one."""
    per_layer_key = _PER_LAYER_STRING_KEY if isinstance(value, str) else _PER_LAYER_KEY
    if not (isinstance(value, list | str) and per_layer_key.search(key) and len(value) == original_layers):
        return None
    items = list(value)
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in items):
        return None  # per-layer numbers (sizes, scales) are truncated, not sorted into kinds
    kinds = _distinct_in_order(items)
    return kinds if len(kinds) <= MAX_KINDS else None


def _layers_needed(key: str, value: Any, original_layers: int, layers: int) -> int:
    """Layers a per-layer list needs to keep every kind; a shorter pattern the model cycles
    through (block types) needs its whole length when its first `layers` entries miss a kind."""
    kinds = _per_layer_kinds(key, value, original_layers)
    if kinds is not None:
        return max(layers, len(kinds))
    per_layer_key = _PER_LAYER_STRING_KEY if isinstance(value, str) else _PER_LAYER_KEY
    if isinstance(value, list | str) and per_layer_key.search(key) and layers < len(value) < original_layers:
        items = list(value)
        if len(_distinct_in_order(items[:layers])) < len(_distinct_in_order(items)) <= MAX_KINDS:
            return min(len(items), MAX_KINDS)
    return layers


def _shrink_per_layer(key: str, value: Any, original_layers: int, layers: int) -> Any:
    """A per-layer list/string cut to `layers` entries, one of each kind first, in order."""
    if not isinstance(value, list | str) or len(value) != original_layers or original_layers <= layers:
        return value
    kinds = _per_layer_kinds(key, value, original_layers)
    if kinds is None:
        per_layer_key = _PER_LAYER_STRING_KEY if isinstance(value, str) else _PER_LAYER_KEY
        numeric = isinstance(value, list) and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in value
        )
        if numeric and _FFN_KEYS.match(key):  # per-layer feed-forward widths (Gemma 3n)
            return [min(v, FFN) for v in value[:layers]]
        return value[:layers] if per_layer_key.search(key) or numeric else value
    items = list(value)
    kept = (kinds + items[:layers])[:layers] if len(kinds) < layers else kinds[:layers]
    return "".join(kept) if isinstance(value, str) else kept


def _scale_stage_widths(widths: list[int]) -> list[int]:
    top = max(widths) or 1
    return [max(8, round(w * WIDTH / top / 8) * 8) for w in widths]


def shrink_dict(config: dict[str, Any]) -> dict[str, Any]:
    """A tiny copy of a config dict (nested sub-configs included)."""
    config = copy.deepcopy(config)
    _shrink_in_place(config)
    _remap_special_tokens(config)
    return config


def _timm_backbone_as_resnet(backbone: dict[str, Any]) -> dict[str, Any]:
    """A timm backbone (DETR-style detectors default to timm's ResNet-50, and timm is optional)
    as the transformers ResNet those configs also accept: same input channels and feature
    stages (timm's and transformers' indices both count the stem as 0)."""
    from transformers import ResNetConfig

    kwargs = {"num_channels": backbone.get("num_channels") or 3}
    if isinstance(backbone.get("out_indices"), list):
        kwargs["out_indices"] = backbone["out_indices"]
    resnet = ResNetConfig(**kwargs).to_dict()
    for key in ("transformers_version", "_name_or_path", "architectures", "id2label", "label2id"):
        resnet.pop(key, None)
    return resnet


def _shrink_in_place(config: dict[str, Any]) -> None:
    for key, value in list(config.items()):
        if _is_sub_config(value) and value["model_type"] == "timm_backbone":
            config[key] = _timm_backbone_as_resnet(value)
    for value in config.values():
        if _is_sub_config(value):
            _shrink_in_place(value)
        elif isinstance(value, list):
            for item in value:
                if _is_sub_config(item):
                    _shrink_in_place(item)

    original_head_dim = _head_dim(config)
    original_width = config.get("hidden_size")
    original_split = {
        k: config.get(k) for k in ("head_dim", "qk_head_dim", "qk_nope_head_dim", "qk_rope_head_dim")
    }
    layer_keys = [
        k
        for k, v in config.items()
        if isinstance(v, int)
        and not isinstance(v, bool)
        and _LAYER_COUNT.match(k)
        and not _NOT_LAYER_COUNT.search(k)
    ]
    hierarchical = "depths" in config or "stage_names" in config
    if hierarchical:
        # Stage counts of a hierarchical backbone, tied to stage_names/out_features: kept.
        layer_keys = [k for k in layer_keys if k not in ("num_layers", "num_stages", "num_encoder_blocks")]
    originals = {k: config[k] for k in layer_keys}
    main = config.get("num_hidden_layers") or (
        0 if hierarchical else config.get("num_layers") or max(originals.values(), default=0)
    )
    new_layers = LAYERS
    if isinstance(main, int) and main > LAYERS:
        for key, value in config.items():
            new_layers = max(new_layers, _layers_needed(key, value, main, LAYERS))
        for key, value in list(config.items()):
            config[key] = _shrink_per_layer(key, value, main, new_layers)
    for key, value in originals.items():
        if value > 0:
            config[key] = min(value, new_layers if value == main else LAYERS)
    if any(config[key] != value for key, value in originals.items()):
        # Backbone stage names are derived from the layer count: let the config derive them again.
        for key in ("stage_names", "out_features", "out_indices"):
            config.pop(key, None)
    for key, value in list(config.items()):
        if not isinstance(value, int) or isinstance(value, bool) or "layer" not in key:
            continue
        if key.endswith("_period") and value > new_layers:
            config[key] = new_layers
        elif key.endswith("_offset") and value >= new_layers:
            config[key] = new_layers - 1
        elif key.endswith("_layer_id") and value >= new_layers:
            # The layer after which a tower merges its patches (MiniCPM-V's insert_layer_id, also
            # stated on the parent config, which copies it into the tower): the last one left.
            config[key] = new_layers - 1
    if "attn_layer_indices" in config and config["attn_layer_indices"] is None and "mamba_d_state" in config:
        # Hybrid Mamba stacks (Bamba) place attention only where a checkpoint says: without
        # one attention layer their cache has nothing to measure the sequence by.
        config["attn_layer_indices"] = [new_layers - 1]
    kinds = config.get("layer_types")
    if isinstance(kinds, list) and kinds and set(kinds) == {"linear_attention"} and "mamba_d_state" in config:
        # The same where a default lists Mamba layers only (Granite MoE hybrid).
        config["layer_types"] = [*kinds[:-1], "full_attention"]
    for key, value in list(config.items()):
        if (
            # SAM-style towers name their global-attention layers `global_attn_indexes`.
            key.endswith(("_layer_indices", "_layers_idx", "_layer_ids", "_layers_indices", "_attn_indexes"))
            and isinstance(value, list)
            and value
            and all(isinstance(v, int) for v in value)
        ):
            kept = [v for v in value if 0 <= v < new_layers]
            config[key] = kept or [new_layers - 1]
    for key, value in list(config.items()):
        if "layer" in key and _is_layer_indexed(value):
            config[key] = _shrink_layer_indexed(value, new_layers)
    _clamp_feature_layers(config)
    shared, types = config.get("num_kv_shared_layers"), config.get("layer_types")
    if isinstance(shared, int) and shared > 0 and isinstance(types, list) and types:
        # Layers reusing an earlier layer's KV cache: every layer type keeps a layer that makes one.
        config["num_kv_shared_layers"] = min(shared, len(types) - len(_distinct_in_order(types)))

    heads_original = None
    stem_widths: dict[int, int] = {}  # a stage list's original first width -> its scaled one
    originals_all = dict(config)
    for key, value in list(config.items()):
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int):
            if _HEAD_KEYS.match(key) and not _KV_HEAD_KEYS.match(key) and value > HEADS:
                heads_original = value
            if key == "embed_dim" and isinstance(config.get("depths"), list) and value > 16:
                # The first stage of a hierarchical tower: later stages double it.
                config[key] = 16
                continue
            if key == "window_size" and isinstance(config.get("depths"), list) and value > 2:
                # Windowed vision attention (Swin): windows must tile the tiny feature maps.
                config[key] = 2
                continue
            # LayoutLMv3 names its patch tower's image size `input_size`.
            image_key = key in ("image_size", "img_size") or (key == "input_size" and "patch_size" in config)
            if image_key and value > IMAGE:
                patch = config.get("patch_size")
                patch = patch[0] if isinstance(patch, list) else patch
                size = max(IMAGE, 4 * patch) if isinstance(patch, int) else IMAGE
                if isinstance(patch, int) and isinstance(config.get("depths"), list):
                    # Hierarchical towers halve the map per stage: the last stage keeps 2x2.
                    size = max(size, patch * 2 ** len(config["depths"]))
                config[key] = size
                if isinstance(patch, int) and isinstance(config.get("image_embedding_size"), int):
                    # The patch grid a prompt encoder (SAM) sizes its dense embeddings by.
                    config["image_embedding_size"] = size // patch
                continue
            if _KV_HEAD_KEYS.match(key):
                continue  # set below, against the original head count
            for rule, ceiling in _SCALAR_RULES:
                if (rule.match(key) if isinstance(rule, re.Pattern) else key in rule) and value > ceiling:
                    config[key] = ceiling
                    break
        elif (
            isinstance(value, list)
            and value
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        ):
            if key == "depths" or key.endswith("_depths") or key == "blocks_per_stage":
                config[key] = [min(v, LAYERS) for v in value]
            elif _STAGE_WIDTH_KEYS.match(key) and max(value) > WIDTH:
                config[key] = _scale_stage_widths(value)
                stem_widths[value[0]] = config[key][0]
            elif key in ("num_heads", "num_attention_heads", "heads") and max(value) > 2:
                config[key] = [min(v, 2) for v in value]

    for key, value in list(config.items()):
        if _KV_HEAD_KEYS.match(key) and isinstance(value, int) and not isinstance(value, bool):
            if heads_original and value >= heads_original:
                config[key] = HEADS
            elif value > 1:
                config[key] = min(2, HEADS)
        elif (
            re.search(r"key_value_heads|kv_heads", key)
            and isinstance(value, list)
            and value
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            and heads_original
        ):
            # Per-layer KV head counts (Sapiens 2): the same rule, layer by layer.
            config[key] = [HEADS if v >= heads_original else min(v, 2) for v in value]

    for key, value in originals_all.items():
        if stem_widths and _STEM_WIDTH_KEYS.match(key) and isinstance(value, int) and value in stem_widths:
            config[key] = stem_widths[value]

    _fill_missing_sizes(config)
    _keep_width_splits(config, original_width)
    _keep_head_split(config, original_split)
    _fit_image_tiles(config)
    _fit_feature_sizes(config)
    _narrow_conv_stacks(config)
    _narrow_stage_channels(config)
    _scale_rotary_sections(config, original_head_dim)
    _keep_ssm_heads_consistent(config)

    overrides = OVERRIDES.get(str(config.get("model_type", "")))
    for key, value in copy.deepcopy(overrides or {}).items():
        if isinstance(value, dict) and _is_sub_config(config.get(key)):
            config[key].update(value)  # into a sub-config that has no model type of its own
        else:
            config[key] = value


def _clamp_feature_layers(config: dict[str, Any]) -> None:
    """Which tower layers feed a projector (`vision_feature_layer(s)`, `select_layer`): indices
    into the tower's hidden states, which a shrunk tower has LAYERS + 1 of."""

    def clamp(index: int) -> int:
        return max(index, -(LAYERS + 1)) if index < 0 else min(index, LAYERS - 1)

    for key, value in list(config.items()):
        if not ("feature_layer" in key or key == "select_layer"):
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            config[key] = clamp(value)
        elif isinstance(value, list) and value and all(isinstance(v, int) for v in value):
            config[key] = _distinct_in_order([clamp(v) for v in value])


def _is_layer_indexed(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and bool(value)
        and all(isinstance(k, int) or (isinstance(k, str) and k.isdigit()) for k in value)
    )


def _shrink_layer_indexed(value: dict, layers: int) -> dict:
    """Per-layer settings keyed by layer index keep the layers that still exist; if none
    does, the first setting moves to the last layer so that the special layer still appears."""
    kept = {k: v for k, v in value.items() if int(k) < layers}
    if not kept:
        first = min(value, key=int)
        kept = {(str(layers - 1) if isinstance(first, str) else layers - 1): value[first]}
    for setting in kept.values():
        if isinstance(setting, dict):  # per-layer overrides of sizes (heads, ranks) shrink too
            _shrink_in_place(setting)
    return kept


def _fill_missing_sizes(config: dict[str, Any]) -> None:
    """Defaults that are None but required once a model is built (checkpoints normally set them)."""
    # watermarking_depth: SynthID's tournament layers, which its Bayesian detector scores.
    fills = {"vocab_size": VOCAB, "prediction_length": 8, "context_length": 32, "watermarking_depth": 4}
    for key, fill in fills.items():
        if key in config and config[key] is None:
            config[key] = fill
    heads = config.get("num_attention_heads")
    if isinstance(heads, int) and heads > 0:
        if "head_dim" in config and config["head_dim"] is None and isinstance(config.get("hidden_size"), int):
            config["head_dim"] = config["hidden_size"] // heads
        if "num_key_value_heads" in config and config["num_key_value_heads"] is None:
            config["num_key_value_heads"] = heads
    if isinstance(config.get("moe_intermediate_size"), int):
        # A mixture of experts whose expert counts come only from a checkpoint.
        for key, fill in (("n_routed_experts", EXPERTS), ("num_experts_per_tok", 2), ("n_shared_experts", 1)):
            if key in config and config[key] is None:
                config[key] = fill
    if any(isinstance(config.get(k), int) for k in ("n_routed_experts", "num_experts", "num_local_experts")):
        for key in ("num_experts_per_tok",):
            if key in config and config[key] is None:
                config[key] = 2
    for key in ("n_routed_experts", "num_experts"):
        if key in config and config[key] is None and config.get("num_experts_per_tok"):
            config[key] = EXPERTS
    if isinstance(config.get("rotary_dim"), int) and config["rotary_dim"] > HEAD_DIM:
        config["rotary_dim"] = HEAD_DIM


def _keep_width_splits(config: dict[str, Any], original_width: Any) -> None:
    """Per-part dims that split the width between them (Reformer's axial position embeddings)
    keep summing to it."""
    width = config.get("hidden_size")
    if not (isinstance(original_width, int) and isinstance(width, int) and width != original_width):
        return
    for key, value in list(config.items()):
        if (
            key.endswith(("_dim", "_dims"))
            and isinstance(value, list)
            and len(value) > 1
            and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)
            and sum(value) == original_width
        ):
            config[key] = _split_evenly(value, width)
    coordinate, shape = config.get("coordinate_size"), config.get("shape_size")
    split = isinstance(coordinate, int) and isinstance(shape, int)
    if split and 4 * coordinate + 2 * shape == original_width:
        # LayoutLM v2/v3 concatenate four coordinate and two shape embeddings to the width.
        config["shape_size"] = width // 8
        config["coordinate_size"] = (width - 2 * config["shape_size"]) // 4


def _keep_head_split(config: dict[str, Any], original: dict[str, Any]) -> None:
    """Latent attention (MLA) heads made of a plain and a rotary part: a head dim that was their
    sum stays their sum."""
    nope, rope = config.get("qk_nope_head_dim"), config.get("qk_rope_head_dim")
    if not (isinstance(nope, int) and isinstance(rope, int)):
        return
    for key in ("head_dim", "qk_head_dim"):
        if (
            isinstance(config.get(key), int)
            and original[key] == original["qk_nope_head_dim"] + original["qk_rope_head_dim"]
        ):
            config[key] = nope + rope


def _fit_image_tiles(config: dict[str, Any]) -> None:
    """Tilers (LLaVA-NeXT) pick a tile grid from `image_grid_pinpoints` in pixels of the
    original tower: the tiny tower gets one 1x1 tile grid of its own size."""
    vision = config.get("vision_config")
    if isinstance(config.get("image_grid_pinpoints"), list) and _is_sub_config(vision):
        size = vision.get("image_size")
        if isinstance(size, int):
            config["image_grid_pinpoints"] = [[size, size]]


def _fit_feature_sizes(config: dict[str, Any]) -> None:
    """Necks that state their feature maps' sizes (SAM 3: `backbone_feature_sizes`, the ViT's
    patch grid times each `scale_factors` entry) get the sizes of the shrunk image."""
    sizes, scales = config.get("backbone_feature_sizes"), config.get("scale_factors")
    backbone = config.get("backbone_config")
    if not (isinstance(sizes, list) and isinstance(scales, list) and _is_sub_config(backbone)):
        return
    image, patch = backbone.get("image_size"), backbone.get("patch_size")
    if isinstance(image, int) and isinstance(patch, int) and patch > 0 and len(scales) >= len(sizes):
        grid = image // patch
        config["backbone_feature_sizes"] = [[int(grid * s)] * 2 for s in scales[: len(sizes)]]


def _narrow_conv_stacks(config: dict[str, Any]) -> None:
    """Convolutional codecs and VQ autoencoders double their channels at every stage, from a
    base width: the base shrinks so that the last stage stays near `WIDTH`."""
    for ratios_key in ("downsampling_ratios", "upsampling_ratios", "ratios"):
        ratios = config.get(ratios_key)
        filters = config.get("num_filters")
        if isinstance(ratios, list) and isinstance(filters, int) and filters > 2:
            config["num_filters"] = max(2, min(filters, WIDTH >> len(ratios)))
            break
    ratios, base = config.get("downsampling_ratios"), config.get("encoder_hidden_size")
    if isinstance(ratios, list) and isinstance(base, int) and base > 2:
        # DAC and X-Codec 2 name their encoder's base width `encoder_hidden_size`.
        config["encoder_hidden_size"] = max(2, min(base, WIDTH >> len(ratios)))
    rates, initial = config.get("upsample_rates"), config.get("upsample_initial_channel")
    if isinstance(rates, list) and isinstance(initial, int):
        # HiFi-GAN-style vocoders halve their channels at every upsampling stage from the first:
        # WIDTH, or enough for two channels at the last stage.
        config["upsample_initial_channel"] = min(initial, max(WIDTH, 2 ** (len(rates) + 1)))
    multipliers = config.get("channel_multiplier") or config.get("channel_multipliers")
    if isinstance(multipliers, list) and multipliers and isinstance(config.get("base_channels"), int):
        # 32 at least: their GroupNorms use 32 groups.
        config["base_channels"] = max(32, min(config["base_channels"], WIDTH // max(multipliers)))
        if isinstance(config.get("latent_channels"), int):
            config["latent_channels"] = min(config["latent_channels"], 16)
        if isinstance(config.get("num_embeddings"), int):  # the VQ codebook
            config["num_embeddings"] = min(config["num_embeddings"], 256)


def _narrow_stage_channels(config: dict[str, Any]) -> None:
    """Stage channel lists that chain into each other (HGNetV2: a stage's input is the previous
    stage's output, the stem's output the first input) share one scale, so the chain holds."""
    out = config.get("stage_out_channels")
    if not (isinstance(out, list) and out and all(isinstance(v, int) for v in out)) or max(out) <= WIDTH:
        return
    scale = WIDTH / max(out)

    def narrow(width: int) -> int:
        return max(8, round(width * scale / 8) * 8)

    for key in ("stage_in_channels", "stage_mid_channels", "stage_out_channels"):
        value = config.get(key)
        if isinstance(value, list) and all(isinstance(v, int) for v in value):
            config[key] = [narrow(v) for v in value]
    stem = config.get("stem_channels")
    if isinstance(stem, list) and len(stem) > 1 and all(isinstance(v, int) for v in stem):
        config["stem_channels"] = [stem[0], *(narrow(v) for v in stem[1:])]  # the first: image channels
    blocks = config.get("block_configs")
    if isinstance(blocks, list) and all(isinstance(stage, list) for stage in blocks):
        # PP-LCNet's blocks, stage by stage: (kernel, in channels, out channels, stride, SE), the
        # source its stage_out_channels are derived from: the same scale.
        config["block_configs"] = [
            [
                [block[0], narrow(block[1]), narrow(block[2]), *block[3:]]
                if isinstance(block, list) and len(block) > 2 and all(isinstance(v, int) for v in block[1:3])
                else block
                for block in stage
            ]
            for stage in blocks
        ]


def _split_evenly(sections: list[int], total: int) -> list[int]:
    """Rescale `sections` to sum to `total`, keeping their proportions (largest remainder)."""
    whole = sum(sections) or 1
    exact = [s * total / whole for s in sections]
    result = [int(x) for x in exact]
    order = sorted(range(len(sections)), key=lambda i: -(exact[i] - result[i]))
    for i in order[: total - sum(result)]:
        result[i] += 1
    return result


def _head_dim(config: dict[str, Any]) -> int | None:
    head_dim = config.get("head_dim")
    if isinstance(head_dim, int) and not isinstance(head_dim, bool):
        return head_dim
    heads = config.get("num_attention_heads")
    width = config.get("hidden_size")
    if isinstance(width, int) and isinstance(heads, int) and heads > 0:
        return width // heads
    return None


def _scale_rotary_sections(config: dict[str, Any], original_head_dim: int | None) -> None:
    """Multimodal RoPE sections (`mrope_section`) keep their share of the (shrunk) head dim."""
    head_dim = _head_dim(config)
    if not head_dim or not original_head_dim:
        return
    for key in ("rope_parameters", "rope_scaling"):
        rope = config.get(key)
        if not isinstance(rope, dict):
            continue
        sections = rope.get("mrope_section")
        if not isinstance(sections, list):
            sections = HARD_CODED_MROPE.get(str(config.get("model_type", "")))
        if isinstance(sections, list) and head_dim != original_head_dim:
            # The sections split the rotary half of the head: head_dim x partial factor / 2.
            rotary = int(head_dim * float(rope.get("partial_rotary_factor") or 1.0))
            rope["mrope_section"] = _split_evenly(sections, max(len(sections), rotary // 2))


def _keep_ssm_heads_consistent(config: dict[str, Any]) -> None:
    """Mamba-2 blocks need heads x head dim == expand x hidden size, and groups dividing heads."""
    for heads_key, dim_key, expand_key, groups_key in (
        ("mamba_n_heads", "mamba_d_head", "mamba_expand", "mamba_n_groups"),
        ("num_heads", "head_dim", "expand", "n_groups"),
        ("n_mamba_heads", "mamba_headdim", "mamba_expand", "mamba_ngroups"),
    ):
        if not all(isinstance(config.get(k), int | float) for k in (heads_key, dim_key, expand_key)):
            continue
        width = config.get("hidden_size")
        if not isinstance(width, int):
            continue
        heads = min(int(config[heads_key]), HEADS)
        config[heads_key] = heads
        config[dim_key] = int(config[expand_key] * width) // heads
        if isinstance(config.get("mamba_d_ssm"), int):  # an explicit SSM width (Falcon-H1) follows
            config["mamba_d_ssm"] = heads * config[dim_key]
        if isinstance(config.get(groups_key), int):
            config[groups_key] = 1
    ssm_heads = next(
        (config[k] for k in ("mamba_num_heads", "mamba_n_heads") if isinstance(config.get(k), int)), 0
    )
    for key in ("n_groups", "mamba_n_groups"):
        if ssm_heads and isinstance(config.get(key), int) and ssm_heads % config[key]:
            config[key] = 1  # SSM groups divide the (shrunk) SSM heads


def _token_id_keys(config: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    found = []
    for key, value in config.items():
        if _is_sub_config(value):
            found.extend(_token_id_keys(value))
        elif (
            _TOKEN_ID_KEYS.search(key)
            and not key.endswith(("layer_id", "_group_id", "label_id"))
            and (
                (isinstance(value, int) and not isinstance(value, bool))
                or (isinstance(value, list) and value and all(isinstance(v, int) for v in value))
            )
        ):
            found.append((config, key))
    return found


def _vocab_of(config: dict[str, Any]) -> int | None:
    for key in ("vocab_size",):
        if isinstance(config.get(key), int):
            return config[key]
    text = config.get("text_config")
    if _is_sub_config(text):
        return _vocab_of(text)
    return None


def _remap_special_tokens(config: dict[str, Any]) -> None:
    """Special-token ids that fall outside the tiny vocabulary move to distinct ids at its top."""
    vocab = _vocab_of(config) or VOCAB
    mapping: dict[int, int] = {}
    assigned: list[int] = []  # ids handed out from the top of the vocabulary, in order

    def next_free() -> int:
        assigned.append(vocab - 1 - len(assigned))
        return assigned[-1]

    def remap(token: int) -> int:
        if token < vocab - 64 or token < 0:
            return token
        if token not in mapping:
            mapping[token] = next_free()
        return mapping[token]

    for owner, key in _token_id_keys(config):
        value = owner[key]
        owner[key] = [remap(v) for v in value] if isinstance(value, list) else remap(value)
    # Placeholder ids a processor normally sets (None in the defaults) get free ids too.
    for owner in _configs(config):
        for key in _PLACEHOLDER_KEYS:
            if key in owner and owner[key] is None:
                owner[key] = next_free()


_PLACEHOLDER_KEYS = (
    "image_token_id",
    "image_token_index",
    "video_token_id",
    "video_token_index",
    "audio_token_id",
    "audio_token_index",
)


def _configs(config: dict[str, Any]) -> list[dict[str, Any]]:
    found = [config]
    for value in config.values():
        if _is_sub_config(value):
            found.extend(_configs(value))
    return found


def text_token_limit(config: dict[str, Any]) -> int:
    """Ids below this are plain text: special tokens of a shrunk config sit at or above it."""
    vocab = _vocab_of(config) or VOCAB
    specials = [
        v
        for owner, key in _token_id_keys(config)
        for v in (owner[key] if isinstance(owner[key], list) else [owner[key]])
        if 3 <= v < vocab
    ]
    return max(4, min([vocab - 64, *specials]))


# What a config dict carries about the checkpoint it came from, not about the model.
_CHECKPOINT_KEYS = ("transformers_version", "_name_or_path", "architectures", "id2label", "label2id")


def _without_checkpoint_keys(config: dict[str, Any]) -> dict[str, Any]:
    for key in _CHECKPOINT_KEYS:
        config.pop(key, None)
    return config


def tiny_config(config_class: type) -> dict[str, Any]:
    """The shrunk config of `config_class` as a dict that `config_class.from_dict` accepts."""
    defaults = _without_checkpoint_keys(config_class().to_dict())
    _fill_optional_towers(config_class, defaults)
    tiny = shrink_dict(defaults)
    tiny.update(copy.deepcopy(CLASS_OVERRIDES.get(config_class.__name__, {})))
    return tiny


def _fill_optional_towers(config_class: type, defaults: dict[str, Any]) -> None:
    """Towers a multimodal config declares optional and leaves out by default (Gemma 4's vision
    and audio towers, None until a checkpoint sets them): their own defaults, so the model is
    built with the towers it is made for."""
    from transformers import AutoConfig

    for key, sub in (getattr(config_class, "sub_configs_defaults", None) or {}).items():
        if not (key in _TOWER_KEYS and defaults.get(key, 0) is None and getattr(sub, "optional", False)):
            continue
        kwargs = getattr(sub, "init_kwargs", None) or {}
        model_type = getattr(sub, "model_type", None)
        if model_type:  # the class may be AutoConfig (EmbeddingGemma 2): built from the type
            tower = AutoConfig.for_model(model_type, **kwargs)
        elif getattr(sub, "config_class", None) is not None:
            tower = sub.config_class(**kwargs)
        else:
            continue
        defaults[key] = _without_checkpoint_keys(tower.to_dict())


_TOWER_KEYS = ("vision_config", "audio_config", "video_config", "speech_config")
