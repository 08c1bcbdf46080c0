"""Suites side by side: one night of several corpora, keyed by (suite, model), and a suite
whose library is missing said and skipped while the rest is swept."""

from __future__ import annotations

import dataclasses
import json
import sys
import types

import pytest

from triagebot.config import Config
from triagebot.corpus import Built, SuiteNotInstalled, build, load_suites
from triagebot.corpus.selection import select
from triagebot.results import SUITES, ModelResult, ModelSpec, RunRecord, Suite, model_key, split_key, suite_of
from triagebot.results.suites import MIXED_CORPORA


@pytest.fixture
def fake_timm(monkeypatch):
    """A timm corpus module of two models whose builder records the names it was handed."""
    handed: list[str] = []
    module = types.ModuleType("fake_timm_corpus")
    module.specs = lambda: [
        ModelSpec(model=name, source="timm", stratum="resnet") for name in ("resnet10t", "vit")
    ]

    def build_one(spec: ModelSpec, device: str) -> Built:
        handed.append(spec.model)
        return Built(model=None, inputs={}, spec=spec.model_copy(update={"params": 7}))

    module.build = build_one
    monkeypatch.setitem(sys.modules, "fake_timm_corpus", module)
    monkeypatch.setitem(SUITES, "timm", dataclasses.replace(SUITES["timm"], module="fake_timm_corpus"))
    return handed


def test_a_suite_crosses_to_the_warm_parent_whole():
    for suite in SUITES.values():  # timm's companions too, not only its packages
        assert Suite.from_fields(json.loads(json.dumps(dataclasses.asdict(suite)))) == suite


def test_a_transformers_key_is_its_bare_name_and_another_suite_s_names_its_suite():
    assert model_key("transformers", "LlamaForCausalLM") == "LlamaForCausalLM"
    assert model_key("sentinel", "RangeLoop") == "RangeLoop"
    assert model_key("timm", "resnet10t") == "timm/resnet10t"
    assert split_key("diffusers/UNet2DModel") == ("diffusers", "UNet2DModel")
    assert split_key("LlamaForCausalLM") == ("transformers", "LlamaForCausalLM")
    # a record stored before suites reads as transformers; the key says its suite
    assert ModelResult(model="BertModel", outcomes={}).suite == "transformers"
    spec = ModelSpec(model="timm/vit", source="timm")
    assert (
        RunRecord.model_validate(
            {"model": "timm/vit", "config": "baseline", "outcome": {"status": "ok"}, "spec": spec}
        ).suite
        == "timm"
    )
    assert suite_of("RangeLoop") == "transformers"  # the test corpora's sentinels stand with it


def test_two_suites_with_a_model_of_the_same_name_never_collide(fake_timm, monkeypatch):
    monkeypatch.setitem(MIXED_CORPORA, "twin", "fake_twin")
    twin = types.ModuleType("fake_twin")
    twin.specs = lambda: [ModelSpec(model="vit", source="transformers")]
    monkeypatch.setitem(sys.modules, "fake_twin", twin)

    specs, skipped = load_suites(["twin", "timm"])

    assert [spec.model for spec in specs] == ["vit", "timm/resnet10t", "timm/vit"] and skipped == {}


def test_a_suite_s_builder_gets_its_library_s_name_and_the_built_spec_keeps_the_key(fake_timm):
    (spec,) = [spec for spec in load_suites(["timm"])[0] if spec.model == "timm/resnet10t"]

    built = build(spec, "cpu")

    assert fake_timm == ["resnet10t"]
    assert built.spec.model == "timm/resnet10t" and built.spec.params == 7


def test_a_suite_whose_library_is_missing_is_said_and_the_rest_is_selected(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "timm", None)  # import timm fails as when it is not installed
    # Where timm is installed, loading the smoke corpus (its timm models) may have imported the suite.
    monkeypatch.delitem(sys.modules, "triagebot.corpus.timm_models", raising=False)
    config = Config.model_validate({"sweep": {"corpus": ["smoke", "timm"]}})

    selected = select(config)

    assert selected.selection.name == "smoke+timm"
    assert (
        list(selected.selection.skipped) == ["timm"]
        and "pip install timm" in selected.selection.skipped["timm"]
    )
    assert selected.selection.swept_suites() == ["smoke"] and selected.specs
    assert selected.selection.skipped_lines() == [
        f"suite timm not swept: {selected.selection.skipped['timm']}"
    ]


def test_one_suite_alone_or_every_suite_missing_is_one_line_not_a_night(monkeypatch):
    monkeypatch.setitem(sys.modules, "timm", None)
    monkeypatch.setitem(sys.modules, "diffusers", None)
    # Where the libraries are installed, an earlier test may have imported the corpus modules.
    monkeypatch.delitem(sys.modules, "triagebot.corpus.diffusion", raising=False)
    monkeypatch.delitem(sys.modules, "triagebot.corpus.timm_models", raising=False)
    with pytest.raises(
        SuiteNotInstalled, match=r"pip install timm, beside a torchvision built for this torch$"
    ):
        load_suites(["timm"])
    with pytest.raises(SuiteNotInstalled, match="none of the corpora diffusers, timm"):
        load_suites(["diffusers", "timm"])


@pytest.mark.torch
def test_the_smoke_corpus_holds_models_of_the_three_suites_each_keyed_by_its_suite():
    from triagebot.corpus import load_corpus, smoke

    specs = load_corpus("smoke")

    by_suite: dict[str, list[str]] = {}
    for spec in specs:
        by_suite.setdefault(spec.source, []).append(spec.model)
    assert {"transformers", "diffusers", "timm", "sentinel"} <= set(by_suite)
    for suite, names in smoke.OTHER_SUITES.items():
        assert by_suite[suite] == [model_key(suite, name) for name in names]
    kinds = {spec.stratum for spec in specs if spec.source != "transformers"}
    assert {"unet", "autoencoder", "transformer", "resnet", "vision_transformer"} <= kinds


@pytest.mark.torch
def test_the_smoke_corpus_leaves_out_a_suite_whose_library_is_missing_and_names_a_model_it_lacks(
    fake_timm, monkeypatch
):
    from triagebot.corpus import smoke
    from triagebot.errors import SelectionError

    monkeypatch.setitem(sys.modules, "diffusers", None)
    monkeypatch.delitem(sys.modules, "triagebot.corpus.diffusion", raising=False)
    monkeypatch.setitem(smoke.OTHER_SUITES, "timm", ("vit",))

    assert [spec.model for spec in smoke.other_suite_specs()] == ["vit"]  # the fake timm's, no diffusers

    monkeypatch.setitem(smoke.OTHER_SUITES, "timm", ("vit", "resnet999"))
    with pytest.raises(SelectionError, match="names timm models its suite has not: resnet999"):
        smoke.other_suite_specs()
