"""A backend the tests put on the ladder by its `module:function` name: it refuses any graph with an
unbacked size, as Inductor's lowering did for `ItemMatmul` under `capture_scalar_outputs`, at a
fraction of Inductor's compile time."""

from __future__ import annotations

import torch
from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols


def refuses_unbacked(gm: torch.fx.GraphModule, example_inputs):
    for node in gm.graph.nodes:
        value = node.meta.get("example_value")
        if value is not None and free_unbacked_symbols(value):
            raise RuntimeError(f"unbacked size in {node.name}: this backend cannot lower it")
    return gm.forward
