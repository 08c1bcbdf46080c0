"""Recorded specs rebuild the config the baseline built: the tagged JSON encoding of tiny configs,
and (slow) the round trip of every model of the installed transformers."""

from __future__ import annotations

import json
import math

import pytest

from triagebot.corpus.encoding import UnrecordableConfig, decode, encode, first_difference
from triagebot.results import ModelSpec

AWKWARD = {
    "time_step_limit": (0.0, math.inf),
    "bounds": [-math.inf, 1.5, (1, (2, 3))],
    "id2label": {0: "LABEL_0", 1: "LABEL_1"},
    "nan": math.nan,
    "looks_like_a_tag": {"$tuple": [1, 2]},
    "nested": {"model_type": "t", "layers": {"0": {"heads": 4}}, "empty": {}, "flag": None},
}


def test_an_encoded_config_is_standard_json_that_decodes_to_what_was_encoded():
    text = json.dumps(encode(AWKWARD), allow_nan=False)  # standard JSON: no Infinity, no NaN
    back = decode(json.loads(text))
    assert first_difference(AWKWARD, back) is None
    assert isinstance(back["time_step_limit"], tuple) and back["time_step_limit"][1] == math.inf
    assert list(back["id2label"]) == [0, 1]
    assert back["looks_like_a_tag"] == {"$tuple": [1, 2]}  # a plain dict stays a dict


def test_a_spec_holding_an_encoded_config_survives_pydantic_json_both_ways():
    spec = ModelSpec(model="m", config=encode(AWKWARD))
    again = ModelSpec.model_validate_json(
        ModelSpec.model_validate_json(spec.model_dump_json()).model_dump_json()
    )
    assert first_difference(decode(again.config), AWKWARD) is None
    # What the encoding is for: written as they are, inf becomes null and a tuple a list.
    raw = ModelSpec.model_validate_json(ModelSpec(model="m", config=AWKWARD).model_dump_json())
    assert first_difference(raw.config, AWKWARD) == ".bounds[0]: None != -inf"


def test_a_value_json_cannot_hold_is_refused_with_its_key():
    with pytest.raises(UnrecordableConfig, match=r"config\.vision\.dtype: a object"):
        encode({"vision": {"dtype": object()}})


def test_differences_are_strict_about_types_and_lenient_about_nan():
    assert first_difference({"a": (1, 2)}, {"a": [1, 2]}) == ".a: (1, 2) != [1, 2]"
    assert first_difference({"a": math.nan}, {"a": math.nan}) is None
    assert first_difference({"a": 1}, {"a": 1, "b": 2}) == ".b: only on the second side"


@pytest.mark.torch
@pytest.mark.slow
def test_every_model_of_the_installed_transformers_rebuilds_its_config_from_its_recorded_spec():
    pytest.importorskip("transformers")
    from triagebot.corpus import catalog, hf

    checked, differing = 0, []
    for entry in catalog.population():
        try:
            spec = hf.complete_spec(hf.spec_for(entry.model))
            hf.config_from_dict(hf.import_object(spec.class_path), spec.config)
        except Exception:  # a config the corpus check reports as failing to build: nothing to compare
            continue
        checked += 1
        difference = hf.round_trip_difference(spec)
        if difference:
            differing.append(f"{entry.model}: {difference}")
    assert differing == []
    assert checked >= 0.99 * len(catalog.population())


@pytest.mark.torch
def test_a_spec_recorded_without_the_encoding_is_caught_naming_the_key():
    pytest.importorskip("transformers")
    from triagebot.corpus import hf

    spec = hf.complete_spec(hf.spec_for("Mamba2Model"))
    assert hf.round_trip_difference(spec) is None
    raw = spec.model_copy(update={"config": decode(spec.config)})  # inf as a bare float
    assert "time_step_limit" in hf.round_trip_difference(raw)
