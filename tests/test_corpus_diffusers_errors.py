"""A diffusers candidate failing with a bare `assert` (no message) is a recorded failure, not an
IndexError out of the corpus."""

import pytest

pytestmark = pytest.mark.torch


def test_a_candidate_failing_with_a_bare_assert_is_named_in_the_no_recipe_error(monkeypatch):
    pytest.importorskip("diffusers")
    import torch

    from triagebot.corpus import diffusion
    from triagebot.corpus.hf import NoRecipe
    from triagebot.results import ModelSpec

    class Bare(torch.nn.Module):
        def forward(self):
            raise AssertionError

    monkeypatch.setattr(diffusion, "candidate_inputs", lambda *_: [[]])
    spec = ModelSpec(model="Bare", source="diffusers", class_path="bare:Bare")
    with pytest.raises(NoRecipe, match="AssertionError"):
        diffusion._resolve(Bare(), spec, "cpu")
