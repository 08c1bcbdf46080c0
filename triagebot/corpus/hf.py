"""Build transformers models from a `ModelSpec` alone: config class + tiny config dict, no hub.

`build(spec, device)` is what the sweep calls in every isolated child, so it is deterministic
(weights from `torch.manual_seed(spec.seed)`, inputs drawn in order from the same seed) and
cheap once a spec is resolved: a spec that already carries its recipe and inputs is built
directly; one without inputs is resolved first (the recipe ladder in `recipes.py`) and the
completed spec is returned in `Built.spec`.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import torch

from triagebot.corpus import Built
from triagebot.corpus.inputs import materialize_inputs
from triagebot.results import ModelSpec

# The corpus never reaches the hub: models come from config classes only.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import transformers  # after the offline switches, which it reads at import

# Default configs of tiny models warn by the hundred (token ids outside a shrunk vocabulary,
# unused RoPE settings); none of it is actionable for a corpus of random-weight models.
transformers.logging.set_verbosity_error()


class MissingDependency(ImportError):
    """The model needs an optional package that is not installed (timm, PIL, torchvision, ...)."""


def import_object(path: str) -> Any:
    """`"transformers:LlamaForCausalLM"` -> the class."""
    module_name, _, name = path.partition(":")
    if not name:
        raise ValueError(f"class path {path!r} is not of the form 'module:Class'")
    return getattr(importlib.import_module(module_name), name)


def config_from_dict(model_class: type, config: dict[str, Any] | None) -> Any:
    config_class = model_class.config_class
    return config_class.from_dict(dict(config or {}))


def instantiate(spec: ModelSpec, device: str | torch.device = "cpu") -> torch.nn.Module:
    """The model of `spec` with seeded random weights, in eval mode, on `device`."""
    model_class = import_object(spec.class_path)
    config = config_from_dict(model_class, spec.config)
    torch.manual_seed(spec.seed)
    try:
        model = model_class(config)
    except ImportError as error:
        raise MissingDependency(str(error).strip().splitlines()[0]) from error
    return model.eval().to(device)


def count_params(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def build(spec: ModelSpec, device: str = "cpu") -> Built:
    if not spec.inputs:
        from triagebot.corpus.recipes import resolve

        return resolve(spec, device)
    model = instantiate(spec, device)
    if spec.params is None:
        spec = spec.model_copy(update={"params": count_params(model)})
    return Built(model, materialize_inputs(spec.inputs, spec.seed, device), spec)


def specs() -> list[ModelSpec]:
    """The whole population (see catalog.py), unresolved: `build` shrinks each config and picks
    its recipe, in the worker, and returns the completed spec."""
    from triagebot.corpus.catalog import population

    return [spec_for(entry.model) for entry in population()]


def spec_for(name: str, seed: int = 0) -> ModelSpec:
    """The unresolved spec of one catalog model: class, stratum, modality; no config or inputs yet."""
    from triagebot.corpus.catalog import entry as catalog_entry

    known = catalog_entry(name)
    return ModelSpec(
        model=known.model,
        class_path=known.class_path,
        config_class=known.config_class,
        model_type=known.model_type,
        stratum=known.stratum,
        modality=known.modality,
        seed=seed,
    )
