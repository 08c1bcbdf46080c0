"""The `smoke` corpus: a handful of real transformers models that `make run` sweeps in minutes."""

from __future__ import annotations

from triagebot.results import InputSpec, ModelSpec

_TEXT = [
    InputSpec(name="input_ids", shape=[2, 16], dtype="int64", kind="randint", low=0, high=96),
    InputSpec(name="attention_mask", shape=[2, 16], dtype="int64", kind="ones"),
]

_SMALL = {"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, "vocab_size": 128}


def specs() -> list[ModelSpec]:
    return [
        ModelSpec(
            model="LlamaForCausalLM",
            class_path="transformers:LlamaForCausalLM",
            config_class="LlamaConfig",
            model_type="llama",
            stratum="decoder_llm",
            config={**_SMALL, "num_hidden_layers": 2, "num_key_value_heads": 2},
            recipe="text",
            inputs=_TEXT,
        ),
        ModelSpec(
            model="BertModel",
            class_path="transformers:BertModel",
            config_class="BertConfig",
            model_type="bert",
            stratum="vision_other",
            config={**_SMALL, "num_hidden_layers": 2},
            recipe="text",
            inputs=_TEXT,
        ),
    ]
