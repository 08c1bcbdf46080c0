"""Stratified sampling and the coverage summary: pure Python, no torch."""

from __future__ import annotations

import pytest
from builders import record, snapshot

from triagebot.corpus.coverage import render, summarize
from triagebot.corpus.sampling import SamplingError, allocate, breaking_models, sample
from triagebot.corpus.selection import narrow
from triagebot.errors import SelectionError
from triagebot.results import (
    BASELINE,
    CorpusSelection,
    ModelResult,
    ModelSpec,
    Outcome,
    RunRecord,
    Snapshot,
    Status,
)

SIZES = {"decoder_llm": 30, "vision_other": 40, "vl_multimodal": 20, "encoder_decoder": 10}


def corpus() -> list[ModelSpec]:
    return [
        ModelSpec(model=f"{stratum}-{i:02d}", stratum=stratum)
        for stratum, n in SIZES.items()
        for i in range(n)
    ]


def test_allocation_is_proportional_and_sums_to_the_request():
    counts = allocate(SIZES, 10)
    assert counts == {"decoder_llm": 3, "vision_other": 4, "vl_multimodal": 2, "encoder_decoder": 1}
    assert sum(allocate(SIZES, 7).values()) == 7
    assert allocate(SIZES, 1000) == SIZES  # never more than a stratum holds


def test_same_seed_same_sample_whatever_the_input_order():
    specs = corpus()
    first, selection = sample(specs, 20, seed=7)
    again, _ = sample(list(reversed(specs)), 20, seed=7)
    assert [s.model for s in first] == [s.model for s in again]
    assert selection.seed == 7 and selection.sample == 20
    assert selection.strata == {"decoder_llm": 6, "encoder_decoder": 2, "vision_other": 8, "vl_multimodal": 4}
    assert selection.models == [s.model for s in first]
    other, _ = sample(specs, 20, seed=8)
    assert [s.model for s in other] != [s.model for s in first]


def _members(specs: list[ModelSpec]) -> dict[str, set[str]]:
    by_stratum: dict[str, set[str]] = {stratum: set() for stratum in SIZES}
    for spec in specs:
        by_stratum[spec.stratum].add(spec.model)
    return by_stratum


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("change", ["added", "removed"])
def test_one_model_more_or_less_in_the_corpus_changes_at_most_one_member_of_its_stratum(seed, change):
    specs = corpus()
    if change == "added":
        changed = [*specs, ModelSpec(model="vision_other-new", stratum="vision_other")]
    else:
        changed = [spec for spec in specs if spec.model != "vision_other-17"]
    before, _ = sample(specs, 25, seed=seed)
    after, _ = sample(changed, 25, seed=seed)
    old, new = _members(before), _members(after)
    for stratum in SIZES:
        # Members beyond the stratum's change of size: one in, one out at most, and only in
        # the stratum that gained or lost the model.
        swapped = len(old[stratum] ^ new[stratum]) - abs(len(new[stratum]) - len(old[stratum]))
        assert swapped <= (2 if stratum == "vision_other" else 0), stratum


def test_the_draw_is_pinned():
    # A model's rank is sha256 of (seed, stratum, name): the same on every machine, Python
    # and run, so a seed names the same sample in a year.
    chosen, _ = sample(corpus(), 5, seed=7)
    assert [spec.model for spec in chosen] == [
        "decoder_llm-11",
        "decoder_llm-15",
        "vision_other-19",
        "vision_other-27",
        "vl_multimodal-17",
    ]


def test_configured_strata_override_proportions():
    chosen, selection = sample(corpus(), 0, seed=1, strata={"encoder_decoder": 5, "decoder_llm": 1})
    assert selection.strata == {"decoder_llm": 1, "encoder_decoder": 5}
    assert sorted({s.stratum for s in chosen}) == ["decoder_llm", "encoder_decoder"]
    with pytest.raises(SamplingError, match="stratum 'audio'"):
        sample(corpus(), 0, strata={"audio": 1})


def _snapshot(outcomes: dict[str, Outcome]) -> Snapshot:
    results = [ModelResult(model=m, outcomes={BASELINE: o}) for m, o in outcomes.items()]
    return snapshot(results, flags=[], corpus=CorpusSelection(name="transformers"))


def test_only_models_that_graph_break_at_baseline():
    snapshot = _snapshot(
        {
            "decoder_llm-00": Outcome(status=Status.ok, graphs=3),
            "decoder_llm-01": Outcome(status=Status.ok, graphs=1, break_reasons=["Tensor.item()"]),
            "decoder_llm-02": Outcome(status=Status.ok, graphs=1),
            "vision_other-00": Outcome(status=Status.crash, graphs=None),
        }
    )
    assert breaking_models(snapshot) == {"decoder_llm-00", "decoder_llm-01"}
    chosen, selection = sample(corpus(), 50, seed=0, only_breaking_in=snapshot)
    assert sorted(s.model for s in chosen) == ["decoder_llm-00", "decoder_llm-01"]
    assert selection.only_breaking_in == "2.13.0"


def _record(
    model: str, status: Status, *, partial=False, error_type=None, error=None, params=10
) -> RunRecord:
    spec = ModelSpec(model=model, stratum="vl_multimodal", partial=partial, params=params, recipe="text")
    return record(model, "eager", Outcome(status=status, error_type=error_type, error=error), spec=spec)


def test_coverage_counts_partial_and_missing_dependencies_apart():
    specs = [ModelSpec(model=m, stratum="vl_multimodal") for m in ("A", "B", "C", "D", "E")]
    records = [
        _record("A", Status.ok, params=100),
        _record("B", Status.ok, partial=True),
        _record("C", Status.create_error, error_type="MissingDependency", error="needs the timm library"),
        _record("D", Status.eager_error, error_type="RuntimeError", error="shape mismatch"),
    ]
    summary = summarize(records, specs)
    assert (summary["population"], summary["covered"], summary["partial"]) == (5, 1, 1)
    assert (summary["missing_dependency"], summary["failed"]) == (1, 2)
    by_model = {e["model"]: e for e in summary["entries"]}
    assert by_model["D"]["reason"] == "eager_error: RuntimeError: shape mismatch"
    assert by_model["E"]["reason"].startswith("no result")
    assert summary["by_stratum"]["vl_multimodal"] == {
        "covered": 1,
        "failed": 2,
        "missing_dependency": 1,
        "partial": 1,
    }
    assert summary["median_params"] == 100
    assert "D [vl_multimodal] failed" in render(summary)


def test_coverage_names_what_the_library_has_and_the_corpus_leaves_out():
    specs = [ModelSpec(model="resnet10t", stratum="resnet")]
    records = [_record("resnet10t", Status.ok)]
    few = {"resnet18": "family timm.models.resnet/resnet is swept as its smallest variant, resnet10t"}
    summary = summarize(records, specs, left_out=few)
    assert summary["left_out"] == few
    assert f"  resnet18: {few['resnet18']}" in render(summary).splitlines()
    # timm leaves out some 1,190 variants: counted by reason, each listed by --json alone
    many = {f"variant{i:04d}": f"family f{i % 300} is swept as its smallest variant" for i in range(1190)}
    text = render(summarize(records, specs, left_out=many))
    assert "left out of the sweep: 1190 names of the library" in text
    assert "(300 reasons; --json lists each name with its reason)" in text
    assert "variant0001" not in text
    assert "left out" not in render(summarize(records, specs))


def test_selection_by_stratum_and_names():
    specs = corpus()
    assert len(narrow(specs, "test", "encoder_decoder")) == 10
    assert [s.model for s in narrow(specs, "test", None, ["vision_other-03"])] == ["vision_other-03"]
    with pytest.raises(SelectionError, match="unknown stratum 'audio'"):
        narrow(specs, "test", "audio")
    suggested = r"model 'vision_other_03' in corpus 'test' \(did you mean 'vision_other-03'\?\)"
    with pytest.raises(SelectionError, match=suggested):
        narrow(specs, "test", None, ["vision_other_03"])
