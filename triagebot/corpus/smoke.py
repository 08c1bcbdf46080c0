"""The `smoke` corpus: a few real models of each suite, transformers from every stratum, diffusers
and timm models of different kinds beside them, swept by `make run`.

The transformers models are chosen so that a sweep of the default flags shows every effect a
flag study reports; the other suites' show what a night of three suites looks like. The
effects noted below were measured with `triagebot sweep` (counting backend, fullgraph=False,
torch 2.13.0 CPU, transformers 5.23.0, 2026-11-22); a later nightly may change them, which is
what the sweep is for. The whole corpus sweeps (baseline + two flags) in a few minutes on two
CPU cores.
"""

from __future__ import annotations

from triagebot.errors import SelectionError
from triagebot.results import ModelSpec

MODELS: tuple[str, ...] = (
    # decoder_llm
    "LlamaForCausalLM",  # dense baseline: one graph everywhere
    "MixtralForCausalLM",  # mixture of experts
    "Qwen3NextForCausalLM",  # hybrid linear/full attention, MoE
    "JetMoeForCausalLM",  # capture_scalar_outputs reduces graphs (17 -> 1)
    # encoder_decoder
    "T5Model",
    "WhisperForConditionalGeneration",  # audio features in, text out
    # vl_multimodal
    "LlavaForConditionalGeneration",  # capture_scalar_outputs reduces graphs (4 -> 1)
    "Qwen2VLForConditionalGeneration",  # dynamic_output_shape_ops crashes; scalar_outputs 25 -> 11
    "Idefics3Model",  # both flags reduce graphs (9 -> 5 scalar outputs, 9 -> 7 dynamic shapes)
    "Qwen2AudioForConditionalGeneration",  # both flags reduce graphs (4 -> 3)
    "Mistral3ForConditionalGeneration",  # capture_scalar_outputs crashes (PendingUnbackedSymbolNotFound)
    "CLIPModel",  # dual encoder
    # vision_other
    "BertModel",
    "ViTModel",
    "Wav2Vec2Model",  # raw waveform
    "LongformerModel",  # capture_scalar_outputs reduces graphs (6 -> 5)
    "PatchTSTModel",  # time series
)

# The other suites' models, by the names their suites give them (`diffusers/...` and `timm/...` in
# a night), one of each kind.
OTHER_SUITES: dict[str, tuple[str, ...]] = {
    "diffusers": (
        "UNet2DConditionModel",  # Stable Diffusion's UNet: convolutions and cross-attention
        "AutoencoderKL",  # the image VAE
        "FluxTransformer2DModel",  # a flow-matching transformer: joint attention, rotary ids
        "ControlNetModel",  # a UNet encoder with a condition image
    ),
    "timm": (
        "test_resnet",  # a residual CNN
        "test_vit2",  # a vision transformer
        "test_efficientnet",  # depthwise convolutions, squeeze-and-excitation
        "test_maxvit",  # window and grid attention over convolution blocks
    ),
}


def specs() -> list[ModelSpec]:
    """Unresolved specs (`corpus.build` shrinks each config and picks its recipe), those of the
    other suites installed here (`other_suite_specs`), then the sentinels of the rest of the stack
    (`sentinels.STACK`): what no real model shows on torch 2.13 CPU, so that `make run` shows
    every section of a night (a wrong result, a nondeterministic model, a model that recompiles
    for every new shape, failures only under Inductor where the ladder climbs it)."""
    from triagebot.corpus import sentinels
    from triagebot.corpus.hf import spec_for

    stack = [spec for spec in sentinels.specs() if spec.model in sentinels.STACK]
    return [spec_for(name) for name in MODELS] + other_suite_specs() + stack


def other_suite_specs() -> list[ModelSpec]:
    """The specs `OTHER_SUITES` names, as their suites make them; a suite whose library is not
    installed here is left out, as a night of several suites leaves it out (`load_suites`)."""
    from triagebot.corpus import SuiteNotInstalled, _corpus_module

    chosen = []
    for suite, names in OTHER_SUITES.items():
        try:
            module = _corpus_module(suite)
        except SuiteNotInstalled:
            continue
        by_name = {spec.model: spec for spec in module.specs()}
        missing = [name for name in names if name not in by_name]
        if missing:
            said = ", ".join(missing)
            raise SelectionError(f"the smoke corpus names {suite} models its suite has not: {said}")
        chosen += [by_name[name] for name in names]
    return chosen
