"""Tiny configs: the default config of a class, shrunk level by level (`passes.py`), its special
tokens remapped into the tiny vocabulary (`tokens.py`), and its class fix applied."""

from __future__ import annotations

import copy
from typing import Any

from triagebot.corpus.shrink.families import BY_CONFIG_CLASS
from triagebot.corpus.shrink.level import without_checkpoint_keys
from triagebot.corpus.shrink.passes import shrink_level
from triagebot.corpus.shrink.tokens import remap_special_tokens


def shrink_dict(config: dict[str, Any]) -> dict[str, Any]:
    """A tiny copy of a config dict (nested sub-configs included)."""
    config = copy.deepcopy(config)
    shrink_level(config)
    remap_special_tokens(config)
    return config


def tiny_config(config_class: type) -> dict[str, Any]:
    """The shrunk config of `config_class` as a dict that `config_class.from_dict` accepts."""
    defaults = without_checkpoint_keys(config_class().to_dict())
    _fill_optional_towers(config_class, defaults)
    tiny = shrink_dict(defaults)
    fix = BY_CONFIG_CLASS.get(config_class.__name__)
    tiny.update(copy.deepcopy(dict(fix.values) if fix else {}))
    return tiny


def _fill_optional_towers(config_class: type, defaults: dict[str, Any]) -> None:
    """Towers a multimodal config declares optional and leaves out by default (Gemma 4's vision
    and audio towers, None until a checkpoint sets them): their own defaults, so the model is
    built with the towers it is made for."""
    from transformers import AutoConfig

    for key, sub in (getattr(config_class, "sub_configs_defaults", None) or {}).items():
        if not (key in _TOWER_KEYS and defaults.get(key, 0) is None and getattr(sub, "optional", False)):
            continue
        kwargs = getattr(sub, "init_kwargs", None) or {}
        model_type = getattr(sub, "model_type", None)
        if model_type:  # the class may be AutoConfig (EmbeddingGemma 2): built from the type
            tower = AutoConfig.for_model(model_type, **kwargs)
        elif getattr(sub, "config_class", None) is not None:
            tower = sub.config_class(**kwargs)
        else:
            continue
        defaults[key] = without_checkpoint_keys(tower.to_dict())


_TOWER_KEYS = ("vision_config", "audio_config", "video_config", "speech_config")
