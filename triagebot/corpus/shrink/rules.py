"""The generic rules: which keys of any config are layer counts, widths, heads, experts, ... and
the ceiling each kind shrinks to. A family added to transformers later is shrunk by these alone
when its keys follow the usual names; the passes (`passes.py`) apply them.
"""

from __future__ import annotations

import re

from triagebot.corpus.shrink.sizes import EXPERTS, FFN, HEAD_DIM, HEADS, VOCAB, WIDTH

LAYER_COUNT = re.compile(
    r"^(num_)?((hidden|encoder|decoder|text|vision|audio|speech|backbone|transformer|mamba|attention|"
    r"cross_attention|global|local|prediction|predictor|thinker|talker|conformer|enc|dec|sub|"
    r"fusion|adapter|projector|qformer|perceiver|refiner|post|pre|t2u)_)*(hidden_)?(layers|blocks|layer)$|"
    r"^n_layers?$|^depth$|^num_.*_layers$|^.*_num_layers$|^.*_depth$|^max_window_layers$"
)
NOT_LAYER_COUNT = re.compile(
    r"feature_layer|_layer_idx|layer_norm|select_layer|layer_type|layer_scale|feat_extract|conv"
)
WIDTH_KEYS = re.compile(
    r"^(hidden_size|d_model|n_embd|embed_dim|dim|model_dim|hidden_dim|d_embed|word_embed_proj_dim|"
    r"embedding_size|embedding_dim|projection_dim|proj_dim|text_embed_dim|vision_embed_dim|"
    r"(encoder|decoder|text|vision|audio|out|output|projector|speech|mm|context|cross_attention)_"
    r"(hidden_size|dim|embed_dim)|hidden_size_per_head_unused|hidden_size_global|n_embed|emb_dim|d_hidden|width|"
    r"projection_size|proj_size|lru_width|.*_hidden_size|.*_embed_dim|.*_proj_dims?|condition_dim|"
    r"intra_bottleneck_size|adapter_(in|out)_dim|adapter_(input|output)_size|pooler_output_size)$"
)
FFN_KEYS = re.compile(
    r"^(intermediate_size|ffn_dim|d_ff|n_inner|encoder_ffn_dim|decoder_ffn_dim|ffn_hidden_size|"
    r"mlp_dim|ff_dim|feed_forward_size|d_inner|projector_intermediate_size|.*_intermediate_size|"
    r"intermediate_dim|dim_feedforward|encoder_feedforward_dim|decoder_feedforward_dim|.*_ffn_dim)$"
)
HEAD_KEYS = re.compile(
    r"^(num_attention_heads|num_heads|n_head|n_heads|encoder_attention_heads|decoder_attention_heads|"
    r"num_attention_heads_.*|.*_attention_heads|.*_num_heads|.*num_.*_heads|.*_n_heads)$"
)
KV_HEAD_KEYS = re.compile(
    r"^(num_key_value_heads|n_kv_heads|num_kv_heads|multi_query_group_num|.*_kv_heads)$"
)
HEAD_DIM_KEYS = re.compile(r"^(head_dim|attention_head_dim|d_kv|kv_channels|.*_head_dim|d_head)$")
EXPERT_KEYS = re.compile(
    r"^(num_experts|num_local_experts|n_routed_experts|moe_num_experts|num_routed_experts)$"
)
TOPK_KEYS = re.compile(
    r"^(num_experts_per_tok|num_experts_per_token|moe_topk|top_k|num_selected_experts|moe_k|router_topk|"
    r"moe_top_k)$"
)
TOKEN_ID_KEYS = re.compile(r"(_token_id|_token_index|_token_ids|_id)$")
STAGE_WIDTH_KEYS = re.compile(
    r"^(hidden_sizes|embed_dims|dims|embed_dim|num_channels_per_stage|widths|channels|"
    r"encoder_in_channels|embed_dim_per_stage|backbone_channel_list|downsample_channels)$"
)
# Scalars that feed a hierarchical tower's first stage (its stem, or the width the config
# repeats next to the stage list): they follow that stage's scaled width.
STEM_WIDTH_KEYS = re.compile(r"^(hidden_size|embed_dim|stem_out_channels|stem_channels|embedding_size)$")

# Scalar rules, first match wins: (key pattern or key set, ceiling).
SCALAR_RULES: list[tuple[re.Pattern[str] | tuple[str, ...], int]] = [
    (WIDTH_KEYS, WIDTH),
    (FFN_KEYS, FFN),
    (HEAD_KEYS, HEADS),
    (HEAD_DIM_KEYS, HEAD_DIM),
    (EXPERT_KEYS, EXPERTS),
    (TOPK_KEYS, 2),
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
    # VQ autoencoders stack this many residual blocks at every resolution (and twice in the
    # middle): one at each keeps every kind of block.
    (("num_res_blocks",), 1),
    # Sinkhorn normalisation of hyper-connection weights (DeepSeek V4, GLM-5 Next), a Python loop
    # Dynamo unrolls in every layer (20 iterations): one pass of the loop's body kept.
    (("hc_sinkhorn_iters",), 2),
    # A time series' history, which the recipe feeds whole: patch-wise models (TimesFM) loop
    # over its patches in Python, once per 32 steps (16384 steps: 512 iterations to trace).
    (("context_length",), 128),
]

# Per-stage counts of blocks or layers in hierarchical towers: at most LAYERS each, like depths.
STAGE_DEPTH_KEYS = re.compile(r"^(depths|.*_depths|blocks_per_stage|stage_num_blocks|stage_numb?_of_layers)$")

# Lists of one kind per layer that a config may give instead of a layer count.
LAYER_KINDS_KEY = re.compile(r"^(layer_types|layers_block_type|block_types)$")

# Per-layer lists and strings (one entry per layer): layer kinds, hybrid patterns, block types.
PER_LAYER_KEY = re.compile(r"pattern|layer|block|types$")
PER_LAYER_STRING_KEY = re.compile(r"pattern|layer")
