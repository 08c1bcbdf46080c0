"""Relation passes: what a config states twice is restored after the sizes change: splits of a
width or a head, tile grids and feature-map sizes in pixels, convolutional towers whose widths
chain from stage to stage (codecs, VQ autoencoders, HiFi-GAN vocoders, HGNetV2 and PP-LCNet
backbones: narrowed so that the chain holds and the last stage stays near `WIDTH`), RoPE
sections and SSM heads."""

from __future__ import annotations

from typing import Any

from triagebot.corpus.shrink.families import HARD_CODED_MROPE
from triagebot.corpus.shrink.level import Level, is_sub_config
from triagebot.corpus.shrink.sizes import HEADS, LAYERS, WIDTH


def keep_width_splits(config: dict[str, Any], level: Level) -> None:
    """Per-part dims that split the width between them (Reformer's axial position embeddings)
    keep summing to it."""
    original_width = level.before.get("hidden_size")
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


def keep_head_split(config: dict[str, Any], level: Level) -> None:
    """Latent attention (MLA) heads made of a plain and a rotary part: a head dim that was their
    sum stays their sum."""
    original = level.before
    nope, rope = config.get("qk_nope_head_dim"), config.get("qk_rope_head_dim")
    if not (isinstance(nope, int) and isinstance(rope, int)):
        return
    for key in ("head_dim", "qk_head_dim"):
        if isinstance(config.get(key), int) and original.get(key) == original.get(
            "qk_nope_head_dim"
        ) + original.get("qk_rope_head_dim"):
            config[key] = nope + rope


def fit_image_tiles(config: dict[str, Any], level: Level) -> None:
    """Tilers (LLaVA-NeXT) pick a tile grid from `image_grid_pinpoints` in pixels of the
    original tower: the tiny tower gets one 1x1 tile grid of its own size."""
    vision = config.get("vision_config")
    if isinstance(config.get("image_grid_pinpoints"), list) and is_sub_config(vision):
        size = vision.get("image_size")
        if isinstance(size, int):
            config["image_grid_pinpoints"] = [[size, size]]


def fit_feature_sizes(config: dict[str, Any], level: Level) -> None:
    """Necks that state their feature maps' sizes (SAM 3: `backbone_feature_sizes`, the ViT's
    patch grid times each `scale_factors` entry) get the sizes of the shrunk image."""
    sizes, scales = config.get("backbone_feature_sizes"), config.get("scale_factors")
    backbone = config.get("backbone_config")
    if not (isinstance(sizes, list) and isinstance(scales, list) and is_sub_config(backbone)):
        return
    image, patch = backbone.get("image_size"), backbone.get("patch_size")
    if isinstance(image, int) and isinstance(patch, int) and patch > 0 and len(scales) >= len(sizes):
        grid = image // patch
        config["backbone_feature_sizes"] = [[int(grid * s)] * 2 for s in scales[: len(sizes)]]


def keep_codec_streams(config: dict[str, Any], level: Level) -> None:
    """A model that reads one code stream per codebook (`num_codebooks`) from a nested codec keeps
    as many quantizers in that codec as it reads (CSM, Kyutai STT: 32 of Mimi's), whatever the
    codec's own shrink chose."""
    streams = config.get("num_codebooks")
    if not isinstance(streams, int):
        return
    for value in config.values():
        if is_sub_config(value) and isinstance(value.get("num_quantizers"), int):
            value["num_quantizers"] = streams


def shrink_vocoder_stages(config: dict[str, Any], level: Level) -> None:
    """HiFi-GAN-style vocoders (BigVGAN, VITS, the unit vocoders) run every resblock kernel, with
    its dilations, at every upsampling stage: LAYERS stages of one kernel each keep every kind of
    block (a third of the kernels and of the stages is most of their compile time)."""
    rates, kernels = config.get("upsample_rates"), config.get("upsample_kernel_sizes")
    blocks, dilations = config.get("resblock_kernel_sizes"), config.get("resblock_dilation_sizes")
    if not all(isinstance(value, list) for value in (rates, kernels, blocks, dilations)):
        return
    if len(rates) == len(kernels) > LAYERS:
        config["upsample_rates"], config["upsample_kernel_sizes"] = rates[:LAYERS], kernels[:LAYERS]
    if len(blocks) == len(dilations) > 1:
        config["resblock_kernel_sizes"], config["resblock_dilation_sizes"] = blocks[:1], dilations[:1]


def narrow_conv_stacks(config: dict[str, Any], level: Level) -> None:
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


def narrow_stage_channels(config: dict[str, Any], level: Level) -> None:
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


def scale_rotary_sections(config: dict[str, Any], level: Level) -> None:
    """Multimodal RoPE sections (`mrope_section`) keep their share of the (shrunk) head dim."""
    head_dim, original_head_dim = _head_dim(config), _head_dim(level.before)
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


def keep_ssm_heads_consistent(config: dict[str, Any], level: Level) -> None:
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
