"""The `smoke` corpus: a few real transformers models from every stratum, swept by `make run`.

Chosen so that a sweep of the default flags shows every effect a flag study reports. The
effects noted below were measured with `triagebot sweep` (counting backend, fullgraph=False,
torch 2.13.0 CPU, transformers 5.23.0, 2026-11-22); a later nightly may change them, which is
what the sweep is for. The whole corpus sweeps (baseline + two flags) in a few minutes on two
CPU cores.
"""

from __future__ import annotations

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


def specs() -> list[ModelSpec]:
    """Unresolved specs (`corpus.build` shrinks each config and picks its recipe), then the
    sentinels of the rest of the stack (`sentinels.STACK`): what no real model shows on torch
    2.13 CPU, so that `make run` shows every section of a night (a wrong result, a
    nondeterministic model, a model that recompiles for every new shape, failures only under
    Inductor where the ladder climbs it)."""
    from triagebot.corpus import sentinels
    from triagebot.corpus.hf import spec_for

    stack = [spec for spec in sentinels.specs() if spec.model in sentinels.STACK]
    return [spec_for(name) for name in MODELS] + stack
