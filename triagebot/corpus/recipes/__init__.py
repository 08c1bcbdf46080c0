"""Input recipes by modality, and the registry that orders them.

One module per modality (`text`, `image`, `vision_language`, `video`, `audio`, `audio_text`,
`structured`), the helpers they share (`common`), and `registry`: every recipe in the order the
builder tries them, each with an example model. Recipes only make `InputSpec`s from a `Context`;
building and running models is the builder's (`triagebot.corpus.hf`).
"""

from triagebot.corpus.recipes.common import Context, NotApplicable, RecipeFunction
from triagebot.corpus.recipes.registry import (
    BY_NAME,
    FIRST,
    LAST_RESORT,
    REGISTRY,
    TEXT_ONLY,
    Recipe,
    ladder_for,
)

__all__ = [
    "BY_NAME",
    "FIRST",
    "LAST_RESORT",
    "REGISTRY",
    "TEXT_ONLY",
    "Context",
    "NotApplicable",
    "Recipe",
    "RecipeFunction",
    "ladder_for",
]
