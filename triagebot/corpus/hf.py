"""The transformers corpus and its one builder: a `ModelSpec` in, a model and its inputs out.

`build(spec, device)` is what the sweep calls in every isolated child, so it is deterministic
(weights from `torch.manual_seed(spec.seed)`, inputs drawn in order from the same seed) and
cheap once a spec is resolved: a spec that already carries its recipe and inputs is built
directly; one without inputs is resolved first: its tiny config is made (`shrink/`), then the
recipes of its modality are tried in the registry's order (`recipes/`), each validated by an
eager run, and the completed spec is returned in `Built.spec`. A multimodal model that only ran
on a text recipe is marked `partial`.

Image+text models need as many image tokens in `input_ids` as the vision tower yields
features; that count is read back from the model's own mismatch error ("tokens: 3,
features: 16") and the recipe is retried with it, so no family needs its count hard-coded.

Recipes and shrink rules import nothing from here: this module is the only one that builds.
"""

from __future__ import annotations

import inspect
import logging
import os
import re
from typing import Any

import torch

from triagebot.corpus import Built
from triagebot.corpus.encoding import decode, encode, first_difference
from triagebot.corpus.inputs import import_object, materialize_inputs
from triagebot.corpus.recipes import BY_NAME, TEXT_ONLY, Context, NotApplicable, RecipeFunction, ladder_for
from triagebot.corpus.recipes.common import first_int
from triagebot.corpus.shrink import tiny_config
from triagebot.results import InputSpec, ModelSpec

# The corpus never reaches the hub: models come from config classes only.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import transformers  # after the offline switches, which it reads at import

# Default configs of tiny models warn by the hundred (token ids outside a shrunk vocabulary,
# unused RoPE settings); none of it is actionable for a corpus of random-weight models.
transformers.logging.set_verbosity_error()

log = logging.getLogger(__name__)
_FEATURES = re.compile(r"features:? (\d+)")


class MissingDependency(ImportError):
    """The model needs an optional package that is not installed (timm, PIL, torchvision, ...)."""


class NoRecipe(RuntimeError):
    """No recipe ran the model eagerly; the message carries each recipe's failure."""


class SpecNotRecordable(RuntimeError):
    """The recorded spec would rebuild another config than the one built: flag runs and repros,
    which rebuild the model from the record, would test another model (or none)."""


# --- the population ---------------------------------------------------------------------------


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


# --- building a model from a spec -------------------------------------------------------------


def config_from_dict(model_class: type, config: dict[str, Any] | None) -> Any:
    """The config of a spec's (encoded, see encoding.py) config dict."""
    config_class = model_class.config_class
    return config_class.from_dict(decode(dict(config or {})))


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
        return resolve(spec, device)
    model = instantiate(spec, device)
    if spec.params is None:
        spec = spec.model_copy(update={"params": count_params(model)})
    return Built(model, materialize_inputs(spec.inputs, spec.seed, device), spec)


# --- resolving a spec: its tiny config, then the recipe ladder --------------------------------


def complete_spec(spec: ModelSpec) -> ModelSpec:
    """Fill in what the catalog knows (config class, type, stratum, modality) and the tiny config."""
    from triagebot.corpus.catalog import entry

    update: dict[str, Any] = {}
    name = spec.class_path.partition(":")[2] or spec.model
    known = None
    if not spec.config_class:  # the catalog imports every model module: only when needed
        try:
            known = entry(name)
        except KeyError:
            known = None
    if known is not None:
        update.update(
            config_class=known.config_class,
            model_type=known.model_type,
            stratum=known.stratum,
            modality=known.modality,
        )
    if not spec.class_path:
        update["class_path"] = f"transformers:{name}"
    if spec.config is None:
        model_class = import_object(update.get("class_path", spec.class_path))
        config = tiny_config(model_class.config_class)
        if model_class.__name__.endswith("EncoderModel") and config.get("is_encoder_decoder"):
            # The encoder alone of an encoder-decoder family: T5Gemma's refuses a config that
            # says encoder-decoder (T5's turns the flag off itself).
            config["is_encoder_decoder"] = False
        update["config"] = encode(config)  # standard JSON that rebuilds this very config
    return spec.model_copy(update=update) if update else spec


def resolve(spec: ModelSpec, device: str = "cpu") -> Built:
    """Build the model of `spec` and find inputs it runs on; the completed spec is in `Built.spec`."""
    spec = complete_spec(spec)
    model = instantiate(spec, device)
    difference = round_trip_difference(spec)
    if difference:
        raise SpecNotRecordable(f"the recorded spec rebuilds another config: {difference}")
    if type(model).forward is torch.nn.Module.forward:
        # Omni wrappers and abstract bases: no recipe can feed a forward() that only raises.
        raise NoRecipe(f"{type(model).__name__} has no forward() but nn.Module's unimplemented one")
    ctx = Context(
        spec=spec,
        config=model.config,
        params=_forward_params(model),
        required=_required_params(model),
        model_class=type(model),
    )
    failures = []
    for name in ladder_for(spec.modality):
        ctx.token_count = 16
        try:
            inputs = _attempt(model, ctx, BY_NAME[name].make, device)
        except NotApplicable:
            continue
        except ImportError as error:
            raise MissingDependency(describe_error(error)) from error
        except Exception as error:
            failures.append(f"{name}: {describe_error(error)}")
            log.debug("%s: recipe %s failed: %s", spec.model, name, describe_error(error))
            continue
        resolved = spec.model_copy(
            update={
                "recipe": name,
                "inputs": inputs,
                "partial": name in TEXT_ONLY and spec.modality != "text",
                "params": count_params(model),
            }
        )
        # A fresh model: the ladder's runs may have touched buffers (caches, running stats).
        model = instantiate(resolved, device)
        return Built(model, materialize_inputs(inputs, resolved.seed, device), resolved)
    raise NoRecipe("; ".join(failures) or f"no recipe applies to forward({', '.join(sorted(ctx.params))})")


def _required_params(model: torch.nn.Module) -> list[str]:
    try:
        parameters = inspect.signature(model.forward).parameters.values()
    except (TypeError, ValueError):
        return []
    return [
        p.name
        for p in parameters
        if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def _forward_params(model: torch.nn.Module) -> set[str]:
    try:
        return set(inspect.signature(model.forward).parameters)
    except (TypeError, ValueError):
        return set()


def eager_run(model: torch.nn.Module, inputs: dict[str, Any]) -> Any:
    with torch.no_grad():
        return model(**inputs)


def _attempt(model: torch.nn.Module, ctx: Context, recipe: RecipeFunction, device: str) -> list[InputSpec]:
    """Run `recipe` eagerly; retry with the placeholder count the model asked for."""
    for _ in range(3):
        inputs = recipe(ctx)
        if inputs is None:
            raise NotApplicable(recipe.__name__)
        try:
            eager_run(model, materialize_inputs(inputs, ctx.spec.seed, device))
            return inputs
        except Exception as error:
            wanted = _FEATURES.search(str(error))
            if not wanted:
                raise
            count = int(wanted.group(1))
            if count == ctx.token_count:
                # "tokens: N, features: N" and still a mismatch: the model (Mistral 3, Emu3)
                # counted features times the text width.
                width = first_int(ctx.get("hidden_size", None, "text_config"), 0)
                if not width or count % width or count == width:
                    raise
                count //= width
            ctx.token_count = count
    raise RuntimeError("placeholder count did not settle")


def describe_error(error: BaseException) -> str:
    """`Type: first line of the message`, bounded; a bare `assert` has no message at all."""
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {message}"[:300]


def recorded(spec: ModelSpec) -> ModelSpec:
    """`spec` as a flag run or a repro reads it back: written to JSON as a snapshot does, and read."""
    return ModelSpec.model_validate_json(spec.model_dump_json())


def round_trip_difference(spec: ModelSpec) -> str | None:
    """Where the config rebuilt from the recorded `spec` differs from the one `spec` builds (the
    key path and both values), or None when they are equal."""
    model_class = import_object(spec.class_path)
    built = config_from_dict(model_class, spec.config)
    try:
        rebuilt = config_from_dict(model_class, recorded(spec).config)
    except Exception as error:
        return f"it does not rebuild: {describe_error(error)}"
    return first_difference(built, rebuilt, "config")
