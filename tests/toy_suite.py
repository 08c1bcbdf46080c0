"""A toy suite, added the way a fourth suite is: this corpus module and one registry entry
(`SUITE`, registered by the tests rather than in the shipped registry). Its two models are sentinel-sized,
so that a sweep of them takes seconds.

Importing it registers nothing: a test registers `SUITE` for its own length only (`SUITES` is
patched, and so restored after it), and the sweep's warm parent is handed the driver's registry
(`triagebot.sweep.parent`), so that the children that build the toy models know the suite."""

from __future__ import annotations

import torch
from torch import nn

from triagebot.corpus.building import Built, InputSpec, ModelSpec, count_params, materialize_inputs
from triagebot.results import Suite

SUITE = Suite(source="toy", corpus="toys", module=__name__, library="pydantic")

_X = [1.0, -1.0, 2.0, -2.0]


class Tiny(nn.Module):
    """One graph under every config."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.linear(x))


class TinyItemBreak(nn.Module):
    """A graph break on `.item()` unless scalar outputs are captured."""

    def forward(self, x):
        return x * x.sum().item()


def specs() -> list[ModelSpec]:
    return [
        ModelSpec(
            model=cls.__name__,
            source=SUITE.source,
            class_path=f"{__name__}:{cls.__name__}",
            stratum="toy",
            modality="tensor",
            recipe="values",
            inputs=[InputSpec(name="x", shape=[len(_X)], dtype="float32", kind="values", values=_X)],
        )
        for cls in (Tiny, TinyItemBreak)
    ]


def build(spec: ModelSpec, device: str) -> Built:
    torch.manual_seed(spec.seed)
    model = globals()[spec.class_path.rpartition(":")[2]]().to(device).eval()
    params = count_params(model)
    return Built(
        model, materialize_inputs(spec.inputs, spec.seed, device), spec.model_copy(update={"params": params})
    )
