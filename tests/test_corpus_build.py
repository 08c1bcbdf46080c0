"""Building corpus models: placeholder counts, partial and failed ladders, determinism, spec round
trips, the catalog. Every recipe on its example model: test_corpus_recipes.py."""

from __future__ import annotations

import pytest
from builders import SCALAR, ok, result, snapshot

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from triagebot import corpus  # noqa: E402
from triagebot.corpus import catalog, hf  # noqa: E402
from triagebot.corpus.inputs import materialize_inputs  # noqa: E402
from triagebot.results import InputSpec, ModelSpec  # noqa: E402

pytestmark = pytest.mark.torch


def resolved(name: str) -> corpus.Built:
    return corpus.build(hf.spec_for(name), "cpu")


def test_image_tokens_planted_match_the_vision_features():
    built = resolved("LlavaForConditionalGeneration")
    config = built.model.config
    planted = int((built.inputs["input_ids"] == config.image_token_id).sum())
    with torch.no_grad():
        features = built.model.model.get_image_features(pixel_values=built.inputs["pixel_values"])
    features = features.pooler_output if hasattr(features, "pooler_output") else features
    count = (
        sum(f.shape[0] for f in features)
        if isinstance(features, list | tuple)
        else features.shape[:-1].numel()
    )
    assert planted == count


def test_a_multimodal_model_that_only_runs_on_text_is_partial():
    # Declared image+text, but its forward takes no pixels: only the text recipe can serve.
    spec = hf.spec_for("LlamaForCausalLM").model_copy(update={"modality": "image_text"})
    built = corpus.build(spec, "cpu")
    assert built.spec.recipe == "text"
    assert built.spec.partial


def test_no_recipe_is_a_clear_error_naming_each_failure():
    spec = hf.complete_spec(hf.spec_for("BertModel"))
    # Builds, but only 8 positions: the 16-token text recipe fails in the eager run.
    spec = spec.model_copy(update={"config": {**spec.config, "max_position_embeddings": 8}})
    with pytest.raises(hf.NoRecipe, match=r"^encoder_decoder|^text: "):
        corpus.build(spec, "cpu")


def test_build_is_deterministic_and_a_resolved_spec_skips_the_ladder(monkeypatch):
    first = resolved("MixtralForCausalLM")
    spec = ModelSpec.model_validate_json(first.spec.model_dump_json())  # as stored in a snapshot

    def no_ladder(*args, **kwargs):
        raise AssertionError("a resolved spec must not walk the recipe ladder again")

    monkeypatch.setattr(hf, "resolve", no_ladder)
    again = corpus.build(spec, "cpu")
    assert again.spec == spec
    for name, tensor in first.inputs.items():
        assert torch.equal(tensor, again.inputs[name])
    with torch.no_grad():
        assert torch.equal(first.model(**first.inputs).logits, again.model(**again.inputs).logits)


def test_the_tiny_config_dict_rebuilds_the_same_model():
    built = resolved("Gemma3ForConditionalGeneration")
    assert hf.round_trip_difference(built.spec) is None
    rebuilt = hf.instantiate(built.spec)
    assert hf.count_params(rebuilt) == built.spec.params
    assert rebuilt.config.to_dict() == built.model.config.to_dict()


def test_inputs_are_rebuilt_from_input_specs_alone():
    inputs = [
        InputSpec(name="a", shape=[2, 3], dtype="float32", kind="randn"),
        InputSpec(name="b", shape=[4], dtype="int64", kind="randint", low=5, high=9),
        InputSpec(name="c", shape=[2], dtype="bool", kind="ones"),
        InputSpec(name="d", shape=[1, 3], dtype="int64", kind="values", values=[[1, 4, 4]]),
    ]
    tensors = materialize_inputs(inputs, seed=3)
    torch.manual_seed(3)  # what a repro script does: seed, then draw in order
    assert torch.equal(tensors["a"], torch.randn(2, 3))
    assert torch.equal(tensors["b"], torch.randint(5, 9, (4,)))
    assert tensors["c"].all() and tensors["d"].tolist() == [[1, 4, 4]]


def test_missing_optional_dependencies_are_named():
    with pytest.raises(hf.MissingDependency, match="natten"):
        corpus.build(hf.spec_for("DinatModel"), "cpu")


def test_the_population_follows_the_rule():
    assert catalog.in_population("LlamaForCausalLM")
    assert catalog.in_population("SiglipVisionModel")
    assert not catalog.in_population("LlamaPreTrainedModel")
    assert not catalog.in_population("PretrainedBartModel")
    assert not catalog.in_population("LlamaForSequenceClassification")
    population = catalog.population()
    if transformers.__version__ == "5.23.0":
        assert len(population) == 991
    strata = {entry.stratum for entry in population}
    assert strata == set(catalog.STRATA)
    by_name = {entry.model: entry for entry in catalog.catalog()}
    assert by_name["WhisperForConditionalGeneration"].stratum == "encoder_decoder"
    assert by_name["Wav2Vec2Model"].stratum == "vision_other"
    assert by_name["Qwen2AudioForConditionalGeneration"].stratum == "vl_multimodal"
    assert by_name["MixtralForCausalLM"].stratum == "decoder_llm"
    # A sub-tower the auto mappings never name is still in the catalog.
    assert "Qwen2_5_VisionTransformerPretrainedModel" in by_name


def test_a_repro_script_rebuilds_the_config_of_a_tagged_spec():
    from triagebot.corpus.encoding import first_difference
    from triagebot.report.repro import repro_script
    from triagebot.results import Outcome, Status

    spec = hf.complete_spec(hf.spec_for("Mamba2Model"))  # time_step_limit holds inf: tagged
    assert "$float" in str(spec.config)
    crashed = Outcome(status=Status.crash, error_type="E", error="boom", signature="E: boom")
    mamba = result(spec.model, ok(1), {"f": crashed}, spec=spec, confirmations={})
    swept = snapshot([mamba], key=torch.__version__, flags={"f": {SCALAR: True}}, corpus="transformers")
    script = repro_script(swept, "f", spec.model)
    namespace: dict = {"__name__": "repro_under_test"}
    exec(script, namespace)
    assert first_difference(namespace["build_model"]().config, hf.instantiate(spec).config) is None
