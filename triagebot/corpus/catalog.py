"""Which transformers model classes exist, read from the installed transformers alone.

The catalog is the union of the classes named by the auto mappings (`MODEL_*_MAPPING_NAMES`)
and the top-level `PreTrainedModel` exports, so sub-towers the auto mappings never name
(`SiglipVisionModel`, `Qwen2_5_VisionTransformerPretrainedModel`, ...) are in it too.

The *population* that coverage is measured over is a subset: classes exported by
transformers that subclass `PreTrainedModel`, have a `config_class`, and whose names end in
`Model`, `ForCausalLM` or `ForConditionalGeneration`, minus the abstract bases named
`*PreTrainedModel` / `*PretrainedModel` and the deprecated `Pretrained*Model` aliases
(991 classes on transformers 5.23.0).

Strata follow the architecture, in this order:
1. `encoder_decoder`: the config (or its text sub-config) says `is_encoder_decoder`; this takes
   speech-to-text models such as Whisper, and text-to-audio ones such as MusicGen.
2. `vl_multimodal`: a text decoder with a vision, audio or video tower (a non-text sub-config
   next to a text one, or an image/audio token id in the config); this takes audio LLMs such
   as Qwen2-Audio, and vision or audio towers exported from such a family stay with their
   modality below.
3. `decoder_llm`: the model type has a causal-LM head and no masked-LM head (so BERT-like
   encoders that also offer a causal head are not LLMs).
4. `vision_other`: everything else: vision backbones, text and audio encoders (wav2vec2, HuBERT),
   time series.
So audio goes with its architecture: encoder-decoder speech models to `encoder_decoder`, audio
encoders to `vision_other`, audio-in LLMs to `vl_multimodal`.
"""

from __future__ import annotations

import functools
import inspect
import re
from dataclasses import asdict, dataclass

STRATA = ("vl_multimodal", "decoder_llm", "encoder_decoder", "vision_other")

_POPULATION_NAME = re.compile(r"(Model|ForCausalLM|ForConditionalGeneration)$")
_ABSTRACT_NAME = re.compile(r"(PreTrainedModel|PretrainedModel)$|^Pretrained", re.IGNORECASE)

# forward() argument -> modality, in the order a model's main input is looked for.
_INPUT_MODALITY = (
    ("past_values", "time_series"),
    ("input_features", "audio"),
    ("input_values", "audio"),
    ("pixel_values", "image"),
    ("grid_thw", "image"),
    ("pixel_values_videos", "video"),
    ("input_ids", "text"),
)
_TOWER_KEYS = ("vision_config", "audio_config", "video_config", "speech_config", "vision_tower_config")


@dataclass(frozen=True)
class CatalogEntry:
    model: str  # class name, exported by transformers
    config_class: str
    model_type: str
    stratum: str
    modality: str  # text, image, audio, video, time_series, image_text, audio_text, ...
    in_population: bool

    @property
    def class_path(self) -> str:
        return f"transformers:{self.model}"

    def as_dict(self) -> dict:
        return asdict(self)


def in_population(name: str) -> bool:
    return bool(_POPULATION_NAME.search(name)) and not _ABSTRACT_NAME.search(name)


def _auto_mapping_names() -> set[str]:
    from transformers.models.auto import modeling_auto

    names: set[str] = set()
    for attr in dir(modeling_auto):
        if not (attr.startswith("MODEL") and attr.endswith("MAPPING_NAMES")):
            continue
        for value in getattr(modeling_auto, attr).values():
            names.update(value if isinstance(value, (list, tuple)) else [value])
    return names


def _model_types_with(mapping: str) -> set[str]:
    from transformers.models.auto import modeling_auto

    return set(getattr(modeling_auto, mapping, {}))


def _forward_parameters(model_class: type) -> set[str]:
    try:
        return set(inspect.signature(model_class.forward).parameters)
    except (TypeError, ValueError):
        return set()


def _sub_config_keys(config_class: type) -> set[str]:
    return set(getattr(config_class, "sub_configs", {}) or {})


def modality_of(model_class: type) -> str:
    params = _forward_parameters(model_class)
    found = [modality for arg, modality in _INPUT_MODALITY if arg in params]
    if not found:
        main = getattr(model_class, "main_input_name", "input_ids")
        found = [modality for arg, modality in _INPUT_MODALITY if arg == main] or ["text"]
    if "text" in found and len(found) > 1:
        return f"{found[0]}_text"
    return found[0]


@functools.cache
def _is_encoder_decoder(config_class: type) -> bool:
    try:
        defaults = config_class()
    except Exception:  # a config that cannot be built with defaults says nothing here
        return False
    text = getattr(defaults, "text_config", None)
    return bool(getattr(defaults, "is_encoder_decoder", False) or getattr(text, "is_encoder_decoder", False))


def stratum_of(model_class: type, config_class: type, modality: str) -> str:
    model_type = getattr(config_class, "model_type", "") or ""
    if _is_encoder_decoder(config_class):
        return "encoder_decoder"
    sub_configs = _sub_config_keys(config_class)
    has_tower = bool(sub_configs & set(_TOWER_KEYS)) or modality.endswith("_text")
    if has_tower and ("text_config" in sub_configs or modality.endswith("_text")):
        return "vl_multimodal"
    causal = _model_types_with("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES")
    masked = _model_types_with("MODEL_FOR_MASKED_LM_MAPPING_NAMES")
    if (model_type in causal and model_type not in masked) or model_class.__name__.endswith("ForCausalLM"):
        return "decoder_llm" if modality == "text" else "vl_multimodal"
    return "vision_other"


def describe(name: str) -> CatalogEntry | None:
    """The catalog entry of one class exported by transformers (None if it is not a model
    class with a config class); imports only that model's module."""
    import transformers
    from transformers import PreTrainedModel

    try:
        model_class = getattr(transformers, name)
    except (AttributeError, ImportError, RuntimeError):
        return None
    if not (isinstance(model_class, type) and issubclass(model_class, PreTrainedModel)):
        return None
    config_class = getattr(model_class, "config_class", None)
    if not isinstance(config_class, type):
        return None
    modality = modality_of(model_class)
    return CatalogEntry(
        model=name,
        config_class=config_class.__name__,
        model_type=getattr(config_class, "model_type", "") or "",
        stratum=stratum_of(model_class, config_class, modality),
        modality=modality,
        in_population=in_population(name),
    )


@functools.cache
def catalog() -> tuple[CatalogEntry, ...]:
    """Every model class of the installed transformers, sorted by name (imports every model module)."""
    import transformers

    names = _auto_mapping_names() | {
        n for n in dir(transformers) if n.endswith(("Model", "LM", "Generation"))
    }
    return tuple(entry for name in sorted(names) if (entry := describe(name)) is not None)


def population() -> list[CatalogEntry]:
    return [entry for entry in catalog() if entry.in_population]


def entry(name: str) -> CatalogEntry:
    found = describe(name)
    if found is None:
        raise KeyError(f"{name!r} is not a model class of the installed transformers")
    return found
