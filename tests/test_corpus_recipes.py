"""The recipe registry: every recipe serves its example model, and the order is the registry's."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from triagebot import corpus  # noqa: E402
from triagebot.corpus import hf  # noqa: E402
from triagebot.corpus.recipes import FIRST, LAST_RESORT, REGISTRY, TEXT_ONLY, ladder_for  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.mark.parametrize("recipe", REGISTRY, ids=lambda recipe: recipe.name)
def test_every_recipe_serves_its_example_model(recipe):
    # Resolved by the whole ladder: the example runs on this recipe, and on none tried before it.
    built = corpus.build(hf.spec_for(recipe.example), "cpu")
    assert built.spec.recipe == recipe.name
    assert built.spec.partial == (recipe.text_only and built.spec.modality != "text")
    assert 0 < built.spec.params < 10_000_000
    assert [i.name for i in built.spec.inputs] == list(built.inputs)
    with torch.no_grad():
        built.model(**built.inputs)


def test_the_registry_names_each_recipe_once_with_an_example_of_the_installed_transformers():
    names = [recipe.name for recipe in REGISTRY]
    assert len(set(names)) == len(names)
    assert all(hasattr(transformers, recipe.example) for recipe in REGISTRY)
    assert all(name in names for first in FIRST.values() for name in first)


def test_every_ladder_tries_each_recipe_once_text_only_after_the_rest_and_the_last_resort_last():
    full = sorted(recipe.name for recipe in REGISTRY if not recipe.text_only)
    for modality in [*FIRST, "something_new"]:
        ladder = ladder_for(modality)
        assert len(set(ladder)) == len(ladder)
        assert sorted(name for name in ladder if name not in TEXT_ONLY) == full
        assert ladder[-1] == LAST_RESORT
        if modality != "text":
            text_only = [ladder.index(name) for name in TEXT_ONLY if name in ladder]
            assert min(text_only) > max(i for i, name in enumerate(ladder[:-1]) if name not in TEXT_ONLY)
    # Text-only recipes a modality names are all it tries (speech LLMs: text, no encoder-decoder).
    assert [name for name in ladder_for("audio_text") if name in TEXT_ONLY] == ["text"]
    # The modality's own first, then the registry's order.
    image = ladder_for("image")
    assert image[: len(FIRST["image"])] == list(FIRST["image"])
    rest = [name for name in image[len(FIRST["image"]) :] if name not in TEXT_ONLY and name != LAST_RESORT]
    order = [recipe.name for recipe in REGISTRY]
    assert rest == sorted(rest, key=order.index)
