"""The timm corpus: one variant per family of the registry, every other name left out with why,
built with `pretrained=False` and rebuilt the same from its record."""

from __future__ import annotations

import sys

import pytest

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def timm_models():
    """The suite's module, never skipped: `make` installs timm beside the torchvision built for
    its torch (the Makefile's pair), so a timm that does not import here is an install to fix."""
    from triagebot.corpus import timm_models

    return timm_models


def test_every_registry_name_is_swept_or_left_out_with_a_reason(timm_models):
    import timm

    from triagebot.corpus import load_corpus

    specs = load_corpus("timm")
    swept = [spec.model.removeprefix("timm/") for spec in specs]
    assert all(spec.model == f"timm/{name}" for spec, name in zip(specs, swept, strict=True))
    assert len(swept) == len(set(swept)), "a model name is unique within its suite"
    left_out = timm_models.left_out()
    assert set(swept) | set(left_out) == set(timm.list_models()) and not set(swept) & set(left_out)
    assert all(reason for reason in left_out.values())
    assert len(swept) == len(timm_models.families()) - len(timm_models.LEFT_OUT)
    # Left-out families still exist in the registry (crater-style: a stale exception fails).
    assert set(timm_models.LEFT_OUT) <= set(timm_models.families())
    from triagebot.corpus import left_out as corpus_left_out

    # what `corpus check` prints, keyed as a night keys the suite's models
    assert corpus_left_out("timm") == {f"timm/{name}": why for name, why in left_out.items()}
    # timm's own tiny test models stand for their families.
    assert {"test_vit", "test_resnet", "test_efficientnet"} & set(swept)


def test_the_smallest_variant_is_chosen_by_its_name(timm_models):
    names = ["resnet50", "resnet18", "resnet10t", "resnet101"]
    assert sorted(names, key=timm_models._smallness)[0] == "resnet10t"
    assert (
        sorted(["convnext_base", "convnext_atto", "convnext_tiny"], key=timm_models._smallness)[0]
        == "convnext_atto"
    )
    assert sorted(["vit_small_patch16_224", "test_vit"], key=timm_models._smallness)[0] == "test_vit"


def test_a_model_is_built_offline_and_rebuilt_the_same_from_its_record(timm_models):
    import torch

    from triagebot.corpus import build, load_corpus
    from triagebot.corpus.hf import recorded

    spec = next(spec for spec in load_corpus("timm") if spec.model.startswith("timm/test_vit"))
    built = build(spec, "cpu")
    assert built.spec.config["pretrained"] is False
    assert built.spec.inputs[0].shape[-1] <= 224
    again = build(recorded(built.spec), "cpu")
    with torch.no_grad():
        torch.testing.assert_close(built.model(**built.inputs), again.model(**again.inputs), rtol=0, atol=0)


@pytest.mark.parametrize(
    ("body", "found"),
    [
        ("import torchvision\n", "none is installed"),
        ("raise RuntimeError('operator torchvision::nms does not exist')\n", "built for another torch"),
    ],
    ids=["missing", "built-for-another-torch"],
)
def test_timm_without_its_torchvision_is_one_line_saying_which_torchvision(
    body, found, tmp_path, monkeypatch
):
    """A stand-in suite module fails as timm's import does where torchvision is missing or built
    for another torch (a runner image whose nightly has no torchvision build)."""
    import torch

    from triagebot.corpus import SuiteNotInstalled, _suite_module

    (tmp_path / "stand_in_timm_suite.py").write_text(body, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "torchvision", None)  # import torchvision: ModuleNotFoundError
    with pytest.raises(SuiteNotInstalled) as raised:
        _suite_module("stand_in_timm_suite", "timm")
    said = str(raised.value)
    assert "\n" not in said and found in said
    assert f"a torchvision built for this torch ({torch.__version__})" in said
    assert "PyPI has none for CPU builds" in said and "pip install torchvision" not in said


def test_an_attempt_failing_with_a_bare_assert_moves_on_to_the_next(timm_models, monkeypatch):
    """Halo attention asserts its feature map tiles into blocks with no message: an empty error
    is one failed attempt, not a crash of the whole resolution."""
    from triagebot.corpus import build, load_corpus

    spec = next(spec for spec in load_corpus("timm") if spec.model.startswith("timm/test_vit"))
    real = timm_models.eager_run
    calls = []

    def asserts_once(model, inputs):
        calls.append(1)
        if len(calls) == 1:
            raise AssertionError()
        return real(model, inputs)

    monkeypatch.setattr(timm_models, "eager_run", asserts_once)
    built = build(spec, "cpu")
    assert len(calls) >= 2 and built.spec.inputs


@pytest.mark.parametrize(
    ("family", "shrunk"), [("beit", {"depth": 2}), ("convnext", {"depths": [1, 1, 1, 1]})]
)
def test_a_base_sized_family_is_shrunk_through_its_constructor(timm_models, family, shrunk):
    from triagebot.corpus import build, load_corpus

    name = lambda spec: spec.model.removeprefix("timm/").removeprefix("test_")  # noqa: E731
    spec = next(spec for spec in load_corpus("timm") if name(spec).startswith(family))
    built = build(spec, "cpu")
    assert shrunk.items() <= built.spec.config.items()
    assert built.spec.params == sum(p.numel() for p in built.model.parameters())


@pytest.mark.parametrize("model", ["mobilenetv5_300m", "vgg11"])
def test_a_model_no_generic_shrink_reaches_is_shrunk_through_its_own_arguments(timm_models, model):
    """294M and 133M parameters as registered; a few million once shrunk, and rebuilt the same
    from the record (timm's builder pops keys from `block_args`: the record must keep them)."""
    import torch

    from triagebot.corpus import build, load_corpus

    spec = next(spec for spec in load_corpus("timm") if spec.model == f"timm/{model}")
    built = build(spec, "cpu")
    assert timm_models.MODEL_SHRINKS[model].items() <= built.spec.config.items()
    assert built.spec.params == sum(p.numel() for p in built.model.parameters()) < 12_000_000
    again = build(built.spec, "cpu")
    assert again.spec.config == built.spec.config
    weights = zip(built.model.state_dict().values(), again.model.state_dict().values(), strict=True)
    assert all(torch.equal(mine, theirs) for mine, theirs in weights)
