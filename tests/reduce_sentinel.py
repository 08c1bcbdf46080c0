"""A layered sentinel for the reduction's tests: a config class and a model built from it, in the
shape a transformers model has (`config_class.from_dict`, `Model(config)`), so that a repro
script rebuilds it by class path when this folder is on the child's PYTHONPATH.

Its crash lives after every layer: under `capture_dynamic_output_shape_ops` a branch on the
size of `nonzero`'s output guards on an unbacked symbol (GuardOnDataDependentSymNode), with one
layer as with four. It needs two attention heads or more (fewer refuse to build), so a
reduction must stop its heads at two.
"""

from __future__ import annotations

import torch
from torch import nn


class LayeredConfig:
    model_type = "layered_sentinel"

    def __init__(self, num_hidden_layers=4, num_attention_heads=4, hidden_size=16, vocab_size=64, **extra):
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.hidden_size = hidden_size
        self.vocab_size = vocab_size

    @classmethod
    def from_dict(cls, config):
        return cls(**config)


class LayeredNonzeroGuard(nn.Module):
    config_class = LayeredConfig

    def __init__(self, config):
        super().__init__()
        if config.num_attention_heads < 2:
            raise ValueError("a layered sentinel needs two heads or more")
        self.embed = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(
            nn.Linear(config.hidden_size, config.hidden_size) for _ in range(config.num_hidden_layers)
        )

    def forward(self, input_ids, attention_mask=None):
        hidden = self.embed(input_ids)
        for layer in self.layers:
            hidden = torch.tanh(layer(hidden))
        if attention_mask is not None:
            hidden = hidden * attention_mask[..., None]
        idx = torch.nonzero(hidden > 0)
        if idx.numel():
            return hidden.new_zeros(idx.numel(), 2)
        return hidden
