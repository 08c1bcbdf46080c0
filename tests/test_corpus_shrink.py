"""The tiny-config shrinker: its rules on plain dicts, then on real transformers config families."""

from __future__ import annotations

import pytest

from triagebot.corpus.shrink import HEAD_DIM, HEADS, LAYERS, VOCAB, WIDTH, shrink_dict, text_token_limit

transformers = pytest.importorskip("transformers")

from triagebot.corpus.coverage import render, summarize  # noqa: E402
from triagebot.corpus.shrink import FAMILY_FIXES, FamilyFix, families, layers, stale_fixes, tiny_config  # noqa: E402
from triagebot.corpus.shrink.passes import PASSES  # noqa: E402

pytestmark = pytest.mark.torch


def test_mixed_layer_types_keep_one_layer_of_each_kind():
    config = {
        "model_type": "x",
        "num_hidden_layers": 26,
        "layer_types": ["sliding_attention"] * 5 + ["full_attention"] + ["sliding_attention"] * 20,
        "hybrid_override_pattern": "M-M-M*" + "-" * 20,
        "attention_type": "block_sparse" + "x" * 14,  # a 26-character string that is not per-layer
    }
    tiny = shrink_dict(config)
    # Three kinds in the hybrid pattern: three layers, and every per-layer list follows.
    assert tiny["num_hidden_layers"] == 3
    assert tiny["layer_types"] == ["sliding_attention", "full_attention", "sliding_attention"]
    assert sorted(tiny["hybrid_override_pattern"]) == ["*", "-", "M"]
    assert tiny["attention_type"] == config["attention_type"]
    del config["hybrid_override_pattern"]
    tiny = shrink_dict(config)
    assert tiny["layer_types"] == ["sliding_attention", "full_attention"]
    assert tiny["num_hidden_layers"] == 2


def test_a_cycled_block_pattern_is_kept_whole_when_two_layers_would_lose_a_kind():
    tiny = shrink_dict({"model_type": "x", "num_hidden_layers": 26, "block_types": ["rec", "rec", "attn"]})
    assert tiny["block_types"] == ["rec", "rec", "attn"]
    assert tiny["num_hidden_layers"] == 3


def test_widths_heads_and_experts_keep_divisibility():
    tiny = shrink_dict(
        {
            "model_type": "x",
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "head_dim": 128,
            "num_local_experts": 8,
            "num_experts_per_tok": 2,
            "num_hidden_layers": 32,
        }
    )
    assert tiny["hidden_size"] == WIDTH and tiny["head_dim"] == HEAD_DIM
    assert tiny["num_attention_heads"] == HEADS and HEADS % tiny["num_key_value_heads"] == 0
    assert tiny["num_key_value_heads"] < HEADS  # grouped-query attention stays grouped
    assert (tiny["num_local_experts"], tiny["num_experts_per_tok"]) == (4, 2)
    assert tiny["num_hidden_layers"] == LAYERS


def test_special_tokens_outside_the_tiny_vocabulary_move_inside_it():
    tiny = shrink_dict(
        {
            "model_type": "vlm",
            "image_token_index": 262144,
            "boi_token_index": 255999,
            "text_config": {
                "model_type": "t",
                "vocab_size": 262208,
                "pad_token_id": 0,
                "eos_token_id": [1, 106],
            },
        }
    )
    assert tiny["text_config"]["vocab_size"] == VOCAB
    ids = {tiny["image_token_index"], tiny["boi_token_index"]}
    assert len(ids) == 2 and all(VOCAB - 64 <= i < VOCAB for i in ids)
    assert tiny["text_config"]["eos_token_id"] == [1, 106]  # ids already inside stay
    assert text_token_limit(tiny) <= min(ids)


def test_decoder_family():
    tiny = tiny_config(transformers.LlamaConfig)
    config = transformers.LlamaConfig.from_dict(tiny)
    assert (config.num_hidden_layers, config.hidden_size, config.vocab_size) == (2, WIDTH, VOCAB)
    assert config.num_attention_heads * config.head_dim == WIDTH


def test_encoder_decoder_family():
    tiny = tiny_config(transformers.BartConfig)
    assert (tiny["encoder_layers"], tiny["decoder_layers"], tiny["d_model"]) == (2, 2, WIDTH)
    assert tiny["decoder_start_token_id"] < tiny["vocab_size"]
    assert tiny["d_model"] % tiny["encoder_attention_heads"] == 0


def test_moe_family_keeps_linear_and_full_attention_layers():
    tiny = tiny_config(transformers.Qwen3NextConfig)
    assert sorted(set(tiny["layer_types"])) == ["full_attention", "linear_attention"]
    assert tiny["num_hidden_layers"] == len(tiny["layer_types"])
    assert tiny["num_experts"] == 4 and tiny["num_experts_per_tok"] <= 2


def test_vlm_nested_configs_are_shrunk_and_their_tokens_planted_inside():
    tiny = tiny_config(transformers.Gemma3Config)
    text, vision = tiny["text_config"], tiny["vision_config"]
    assert text["hidden_size"] == vision["hidden_size"] == WIDTH
    assert text["num_hidden_layers"] == 2
    assert vision["num_hidden_layers"] == 1  # SigLIP is one of the one-layer towers
    assert sorted(set(text["layer_types"])) == ["full_attention", "sliding_attention"]
    assert tiny["image_token_index"] < text["vocab_size"]
    patches = (vision["image_size"] // vision["patch_size"]) ** 2
    assert tiny["mm_tokens_per_image"] <= patches


def test_hard_coded_rotary_sections_are_scaled_to_the_tiny_head():
    tiny = tiny_config(transformers.Qwen2VLConfig)
    text = tiny["text_config"]
    sections = text["rope_parameters"]["mrope_section"]
    assert len(sections) == 3
    assert 2 * sum(sections) == text["hidden_size"] // text["num_attention_heads"]


def test_audio_family():
    tiny = tiny_config(transformers.WhisperConfig)
    assert (tiny["encoder_layers"], tiny["decoder_layers"], tiny["d_model"]) == (2, 2, WIDTH)
    assert tiny["num_mel_bins"] == 80  # the feature layout is an input contract, kept
    tiny = tiny_config(transformers.Wav2Vec2Config)
    assert len(tiny["conv_dim"]) == len(tiny["conv_kernel"]) == len(tiny["conv_stride"])
    assert tiny["num_hidden_layers"] == 2
    # A codec encoder's channels double at every stage, a vocoder's halve: both stay near WIDTH.
    tiny = tiny_config(transformers.DacConfig)
    assert tiny["encoder_hidden_size"] * 2 ** len(tiny["downsampling_ratios"]) <= WIDTH
    tiny = tiny_config(transformers.SeamlessM4TConfig)
    assert tiny["upsample_initial_channel"] <= WIDTH
    assert (tiny["t2u_encoder_layers"], tiny["t2u_encoder_ffn_dim"]) == (LAYERS, 128)


def test_hierarchical_backbones_keep_their_stages():
    tiny = tiny_config(transformers.SwinConfig)
    assert len(tiny["depths"]) == 4 and max(tiny["depths"]) <= LAYERS
    config = transformers.SwinConfig.from_dict(tiny)
    assert config.out_features == [config.stage_names[-1]]


def test_every_family_fix_names_a_family_of_the_installed_transformers():
    assert stale_fixes() == []
    assert len(FAMILY_FIXES) == len({fix.model_type for fix in FAMILY_FIXES})


def test_a_fix_whose_family_is_gone_is_reported_with_its_reason(monkeypatch):
    gone = FamilyFix("gone_since_5_0", {"hidden_size": 48}, "a width its heads divide")
    monkeypatch.setattr(families, "FAMILY_FIXES", (*families.FAMILY_FIXES, gone))
    (stale,) = stale_fixes()
    assert (stale.table, stale.name) == ("family fix", "gone_since_5_0")
    assert "gone_since_5_0" in stale.describe() and "a width its heads divide" in stale.describe()
    summary = summarize([], [], [stale.describe()])
    assert stale.describe() in render(summary)


def test_a_fix_table_a_reader_could_misread_is_refused():
    fix = FamilyFix("llama", {"hidden_size": 48}, "why")
    with pytest.raises(ValueError, match="named twice"):
        families.by_family((fix, fix), "model_type")
    with pytest.raises(ValueError, match="one-line reason"):
        families.by_family((FamilyFix("llama", {"hidden_size": 48}, "why\nand more"),), "model_type")
    with pytest.raises(ValueError, match="no values"):
        families.by_family((FamilyFix("llama", {}, "why"),), "model_type")


def test_a_family_fix_comes_last_and_reaches_its_family_where_it_is_nested(monkeypatch):
    fix = FamilyFix("tower_x", {"hidden_size": 48, "extra": {"a": 1}}, "why")
    monkeypatch.setitem(families.BY_MODEL_TYPE, "tower_x", fix)
    tiny = shrink_dict(
        {
            "model_type": "parent",
            "hidden_size": 4096,
            "vision_config": {
                "model_type": "tower_x",
                "hidden_size": 1024,
                "extra": {"model_type": "", "b": 2},
            },
        }
    )
    assert tiny["hidden_size"] == WIDTH  # the rules, where no fix applies
    assert tiny["vision_config"]["hidden_size"] == 48  # the fix, over the rules
    assert tiny["vision_config"]["extra"] == {"model_type": "", "b": 2, "a": 1}  # merged into a sub-config


def test_the_passes_run_in_their_stated_order_sub_configs_first_fixes_last():
    names = [step.__name__ for step in PASSES]
    assert names[:2] == ["timm_backbones_as_resnet", "shrink_sub_configs"]
    assert names[-1] == "apply_family_fixes"
    assert names.index("shrink_scalars") < names.index("shrink_kv_heads") < names.index("follow_stem_widths")


def test_time_series_histories_and_vq_residual_stacks_shrink():
    tiny = shrink_dict({"model_type": "ts", "context_length": 16384, "patch_length": 32})
    assert tiny["context_length"] == 128  # four 32-step patches, not 512 loop iterations
    assert shrink_dict({"model_type": "vq", "num_res_blocks": 2})["num_res_blocks"] == 1


def test_per_stage_block_and_layer_counts_shrink_like_depths():
    tiny = shrink_dict(
        {"model_type": "hgnet_v2", "stage_num_blocks": [1, 1, 3, 1], "stage_numb_of_layers": [6, 6, 6, 6]}
    )
    assert tiny["stage_num_blocks"] == [1, 1, 2, 1]
    assert tiny["stage_numb_of_layers"] == [2, 2, 2, 2]


def test_a_list_of_layer_kinds_without_a_layer_count_is_the_layer_count():
    kinds = ["mamba", "moe", "mamba", "attention"] * 13
    tiny = shrink_dict({"model_type": "hybrid", "layers_block_type": kinds, "num_nextn_predict_layers": 0})
    assert tiny["layers_block_type"] == ["mamba", "moe", "attention"]


def test_vocoders_keep_two_upsampling_stages_of_one_resblock_kernel():
    tiny = shrink_dict(
        {
            "model_type": "hifigan",
            "upsample_rates": [5, 3, 2, 2, 2, 2],
            "upsample_kernel_sizes": [11, 7, 4, 4, 4, 4],
            "resblock_kernel_sizes": [3, 7, 11],
            "resblock_dilation_sizes": [[1, 3, 5]] * 3,
            "upsample_initial_channel": 1536,
        }
    )
    assert (tiny["upsample_rates"], tiny["upsample_kernel_sizes"]) == ([5, 3], [11, 7])
    assert (tiny["resblock_kernel_sizes"], tiny["resblock_dilation_sizes"]) == ([3], [[1, 3, 5]])
    # A vocoder whose kernels are one per stage (UnivNet: no upsample_rates) keeps them.
    univnet = {
        "model_type": "univnet",
        "resblock_kernel_sizes": [3, 3, 3],
        "resblock_dilation_sizes": [[1]] * 3,
    }
    assert shrink_dict(univnet)["resblock_kernel_sizes"] == [3, 3, 3]


def test_a_one_layer_tower_keeps_its_kinds_and_its_projector_reads_layers_it_has(monkeypatch):
    monkeypatch.setattr(layers, "ONE_LAYER", frozenset({"tower_x"}))
    plain = {"model_type": "tower_x", "num_hidden_layers": 27, "depth": 27}
    mixed = {**plain, "layer_types": ["conv", "attention"] * 13 + ["conv"]}
    vlm = shrink_dict(
        {
            "model_type": "vlm",
            "vision_config": plain,
            "text_config": {"model_type": "t", "num_hidden_layers": 24},
            "vision_feature_layer": [-2, -5, -8, 6],
        }
    )
    assert (vlm["vision_config"]["num_hidden_layers"], vlm["vision_config"]["depth"]) == (1, 1)
    assert vlm["text_config"]["num_hidden_layers"] == LAYERS  # only the listed model types
    assert vlm["vision_feature_layer"] == [-2, 0]  # a one-layer tower has two hidden states
    tiny = shrink_dict(mixed)
    assert tiny["layer_types"] == ["conv", "attention"] and tiny["num_hidden_layers"] == 2


def test_loops_the_tail_unrolls_shrink_and_detector_pyramids_stay_whole():
    assert shrink_dict({"model_type": "x", "hc_sinkhorn_iters": 20})["hc_sinkhorn_iters"] == 2
    for config_class in (transformers.DFineConfig, transformers.Deimv2Config):
        tiny = tiny_config(config_class)
        levels = tiny["num_feature_levels"]
        backbone = tiny["backbone_config"]
        assert levels == len(tiny["encoder_in_channels"]) == len(tiny["feat_strides"]) == 2
        assert len(tiny["decoder_in_channels"]) == len(backbone["out_indices"]) == levels
        assert tiny["encode_proj_layers"] == [levels - 1]
        config = config_class.from_dict(tiny)
        assert config.backbone_config.out_features == ["stage3", "stage4"]
        assert round(3 * config.depth_mult) == 1  # one CSP block per pyramid block


def test_a_codec_keeps_the_code_streams_its_model_reads():
    assert tiny_config(transformers.MimiConfig)["num_quantizers"] == 8  # the codec alone: fewer
    for config_class in (transformers.CsmConfig, transformers.KyutaiSpeechToTextConfig):
        tiny = tiny_config(config_class)
        assert tiny["codec_config"]["num_quantizers"] == tiny["num_codebooks"] == 32


def test_a_family_that_stays_slow_says_why_and_changes_nothing(monkeypatch):
    fix = FamilyFix("slow_x", slow="graph breaks it retraces")
    families.by_family((fix,), "model_type")  # accepted: no values, a reason to stay slow
    monkeypatch.setitem(families.BY_MODEL_TYPE, "slow_x", fix)
    assert shrink_dict({"model_type": "slow_x", "hidden_size": 32}) == {
        "model_type": "slow_x",
        "hidden_size": 32,
    }
    assert all(fix.reason or fix.slow for fix in FAMILY_FIXES)
