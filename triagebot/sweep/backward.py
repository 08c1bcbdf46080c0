"""The backward rung's child side: a model made ready to train, and a call that runs the
backward pass and returns what it computed (`gradient_call`), so that the accuracy machinery
(`judge`, `accuracy.compare`) compares gradients exactly as it compares outputs.

The model runs in train mode (as PyTorch's harness runs training) with every dropout probability
zeroed, so that train mode changes no value (tiny configs leave dropout at the library's
defaults); what is left random (a layer drop, a time mask) draws the same numbers in eager and
compiled calls, each reseeded, and two eager runs that differ make the model nondeterministic,
not judged, as for outputs. The loss is the sum of every floating output's `.sum()`.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from triagebot.sweep.accuracy import leaves
from triagebot.sweep.calls import Call


class NoGradient(Exception):
    """No floating output of the model depends on a parameter: it has no backward pass to run."""


def _zeroed(owner: Any) -> None:
    """Set every float attribute of `owner` named for dropout or layer drop to 0."""
    for name, value in list(vars(owner).items()):
        if isinstance(value, float) and ("dropout" in name or "layerdrop" in name):
            setattr(owner, name, 0.0)


def training(model: nn.Module) -> nn.Module:
    """`model` in train mode, every dropout probability zeroed (modules, their float settings
    and their configs'); returned for chaining."""
    model.train()
    for module in model.modules():
        if isinstance(module, nn.modules.dropout._DropoutNd):
            module.p = 0.0
        _zeroed(module)
        config = getattr(module, "config", None)
        if config is not None and hasattr(config, "__dict__"):
            _zeroed(config)
    return model


def training_loss(outputs: Any) -> torch.Tensor:
    """The sum of every floating output's `.sum()` that depends on a parameter."""
    floating = [
        value.sum()
        for _, value in leaves(outputs)
        if isinstance(value, torch.Tensor) and value.is_floating_point() and value.requires_grad
    ]
    if not floating:
        raise NoGradient("no floating output depends on a parameter: no backward pass to run")
    return torch.stack(floating).sum()


def gradient_call(call: Call) -> Call:
    """`call` (reseeded, fresh inputs) with the backward pass after it: returns the loss and the
    gradient of every parameter, by name, of the module called (a compiled module's original);
    each call starts from no gradients."""

    def run(model: Any, inputs: dict[str, Any]) -> dict[str, Any]:
        module = getattr(model, "_orig_mod", model)
        with torch.enable_grad():
            for parameter in module.parameters():
                parameter.grad = None
            loss = training_loss(call(model, inputs))
            loss.backward()
        gradients = {
            name: parameter.grad.detach().clone()
            for name, parameter in module.named_parameters()
            if parameter.grad is not None
        }
        return {"loss": loss.detach(), "gradients": gradients}

    return run
