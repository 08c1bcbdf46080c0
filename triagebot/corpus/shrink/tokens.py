"""Special-token ids of a shrunk vocabulary: ids outside it move to distinct ids at its top, and
`text_token_limit` tells the recipes which ids are plain text."""

from __future__ import annotations

from typing import Any

from triagebot.corpus.shrink.level import is_sub_config
from triagebot.corpus.shrink.rules import TOKEN_ID_KEYS
from triagebot.corpus.shrink.sizes import VOCAB


def _token_id_keys(config: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    found = []
    for key, value in config.items():
        if is_sub_config(value):
            found.extend(_token_id_keys(value))
        elif (
            TOKEN_ID_KEYS.search(key)
            and not key.endswith(("layer_id", "_group_id", "label_id"))
            and (
                (isinstance(value, int) and not isinstance(value, bool))
                or (isinstance(value, list) and value and all(isinstance(v, int) for v in value))
            )
        ):
            found.append((config, key))
    return found


def _vocab_of(config: dict[str, Any]) -> int | None:
    for key in ("vocab_size",):
        if isinstance(config.get(key), int):
            return config[key]
    text = config.get("text_config")
    if is_sub_config(text):
        return _vocab_of(text)
    return None


def remap_special_tokens(config: dict[str, Any]) -> None:
    """Special-token ids that fall outside the tiny vocabulary move to distinct ids at its top."""
    vocab = _vocab_of(config) or VOCAB
    mapping: dict[int, int] = {}
    assigned: list[int] = []  # ids handed out from the top of the vocabulary, in order

    def next_free() -> int:
        assigned.append(vocab - 1 - len(assigned))
        return assigned[-1]

    def remap(token: int) -> int:
        if token < vocab - 64 or token < 0:
            return token
        if token not in mapping:
            mapping[token] = next_free()
        return mapping[token]

    for owner, key in _token_id_keys(config):
        value = owner[key]
        owner[key] = [remap(v) for v in value] if isinstance(value, list) else remap(value)
    # Placeholder ids a processor normally sets (None in the defaults) get free ids too.
    for owner in _configs(config):
        for key in _PLACEHOLDER_KEYS:
            if key in owner and owner[key] is None:
                owner[key] = next_free()


_PLACEHOLDER_KEYS = (
    "image_token_id",
    "image_token_index",
    "video_token_id",
    "video_token_index",
    "audio_token_id",
    "audio_token_index",
)


def _configs(config: dict[str, Any]) -> list[dict[str, Any]]:
    found = [config]
    for value in config.values():
        if is_sub_config(value):
            found.extend(_configs(value))
    return found


def text_token_limit(config: dict[str, Any]) -> int:
    """Ids below this are plain text: special tokens of a shrunk config sit at or above it."""
    vocab = _vocab_of(config) or VOCAB
    specials = [
        v
        for owner, key in _token_id_keys(config)
        for v in (owner[key] if isinstance(owner[key], list) else [owner[key]])
        if 3 <= v < vocab
    ]
    return max(4, min([vocab - 64, *specials]))
