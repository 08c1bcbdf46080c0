"""Tiny configs: generic rules that shrink any transformers config, then family fixes as data.

The rules work on the config as a dict (the default config class's `to_dict()`), recursing
into nested sub-configs (text, vision, audio, ...), so a family added to transformers later
is shrunk without code changes:

- `sizes.py`: the sizes everything shrinks to (one `WIDTH` everywhere, so projections between
  towers agree without knowing which key feeds which);
- `rules.py`: which keys are layer counts, widths, heads, experts, vocabularies, and their ceilings;
- `passes.py`: the passes over one config level, in order, each a small function, kept by
  concern in `layers.py`, `scalars.py` and `relations.py` (what they share: `level.py`);
- `tokens.py`: special-token ids remapped into the tiny vocabulary;
- `families.py`: what the rules cannot know about one family (model type, values, one-line
  reason), checked on load; `stale_fixes()` names those whose family is gone;
- `tiny.py`: `tiny_config(config_class)`, which puts them together.
"""

from triagebot.corpus.shrink.families import FAMILY_FIXES, FamilyFix, StaleFix, stale_fixes
from triagebot.corpus.shrink.sizes import EXPERTS, FFN, HEAD_DIM, HEADS, IMAGE, LAYERS, VOCAB, WIDTH
from triagebot.corpus.shrink.tiny import shrink_dict, tiny_config
from triagebot.corpus.shrink.tokens import text_token_limit

__all__ = [
    "EXPERTS",
    "FAMILY_FIXES",
    "FFN",
    "HEADS",
    "HEAD_DIM",
    "IMAGE",
    "LAYERS",
    "VOCAB",
    "WIDTH",
    "FamilyFix",
    "StaleFix",
    "shrink_dict",
    "stale_fixes",
    "text_token_limit",
    "tiny_config",
]
