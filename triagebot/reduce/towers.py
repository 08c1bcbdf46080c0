"""What only transformers knows about a spec, asked of a child process: its config without the
settings that equal its class's defaults, and the sub-models of a composite that could stand
alone (a text decoder, a vision tower), each with the inputs its `forward` takes.

The child imports transformers and triagebot's config encoding (it runs with the Python the
sweep runs, which has both); this module imports neither.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field

from triagebot.reproduce import scrubbed_environment
from triagebot.results import ModelSpec

_ANSWER = "TRIAGEBOT-TOWERS "

_HARNESS = r"""
import importlib, inspect, json, sys
import transformers
from transformers.models.auto import modeling_auto
from triagebot.corpus.encoding import decode, encode

def without_defaults(config):
    # Every key whose value is its class's default left out, sub-configs against their own class.
    try:
        defaults = type(config)().to_dict()
    except Exception:  # a class that cannot be built without arguments: transformers' own diff
        return config.to_diff_dict()
    kept = {key: value for key, value in config.to_dict().items()
            if key == "model_type" or key not in defaults or defaults[key] != value}
    for key in getattr(type(config), "sub_configs", None) or {}:
        sub = getattr(config, key, None)
        if isinstance(sub, transformers.PreTrainedConfig):
            kept[key] = without_defaults(sub)
    kept.pop("transformers_version", None)
    return kept

def short(config):
    # The config without its defaults, when that rebuilds the very same config.
    diff = without_defaults(config)
    same = type(config).from_dict(diff).to_dict() == config.to_dict()
    return encode(diff) if same else None

def tower_class(sub):
    for mapping in (modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, modeling_auto.MODEL_MAPPING_NAMES):
        name = mapping.get(sub.model_type)
        name = name[0] if isinstance(name, (list, tuple)) else name
        model_class = getattr(transformers, name, None) if name else None
        if model_class is not None and isinstance(sub, model_class.config_class):
            return name, model_class
    return None, None

spec = json.load(sys.stdin)
module_name, _, class_name = spec["class_path"].partition(":")
config_class = getattr(importlib.import_module(module_name), class_name).config_class
config = config_class.from_dict(decode(spec["config"]))
answer = {"config": short(config), "towers": []}
for key in getattr(config_class, "sub_configs", None) or {}:
    sub = getattr(config, key, None)
    name, model_class = tower_class(sub) if sub is not None else (None, None)
    if model_class is None:
        continue
    takes = inspect.signature(model_class.forward).parameters
    inputs = [item for item in spec["inputs"] if item["name"] in takes]
    if inputs and (sub_config := short(sub)) is not None:
        answer["towers"].append({"key": key, "class": name, "config_class": type(sub).__name__,
                                 "model_type": sub.model_type, "config": sub_config, "inputs": inputs})
print("TRIAGEBOT-TOWERS " + json.dumps(answer))
"""


@dataclass
class Parts:
    """`config`: the spec's config without its defaults (None: it would not rebuild the same
    config, or the child could not say); `towers`: key of the sub-config -> a spec of that
    sub-model alone."""

    config: dict | None = None
    towers: dict[str, ModelSpec] = field(default_factory=dict)
    problem: str | None = None  # why the child gave no answer


def parts_of(spec: ModelSpec, python: str = sys.executable, timeout: float = 300.0) -> Parts:
    """Ask a child Python for `spec`'s config without defaults and its sub-models (see the module)."""
    if not (spec.class_path.startswith("transformers:") and spec.config):
        return Parts()  # a class of no released package: nothing for transformers to say
    try:
        done = subprocess.run(
            [python, "-c", _HARNESS],
            input=spec.model_dump_json(),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=scrubbed_environment(),
            check=False,
        )
    except (subprocess.TimeoutExpired, OSError) as error:
        return Parts(problem=f"the child gave no answer: {error}")
    line = next((line for line in reversed(done.stdout.splitlines()) if line.startswith(_ANSWER)), None)
    if line is None:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return Parts(problem=f"the child gave no answer: {tail}")
    answer = json.loads(line[len(_ANSWER) :])
    towers = {
        tower["key"]: ModelSpec.model_validate(
            {
                **spec.model_dump(),
                "class_path": f"transformers:{tower['class']}",
                "config_class": tower["config_class"],
                "model_type": tower["model_type"],
                "config": tower["config"],
                "inputs": tower["inputs"],
                "params": None,
            }
        )
        for tower in answer["towers"]
    }
    return Parts(config=answer["config"], towers=towers)
