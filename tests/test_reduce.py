"""The smallest repro: edits by the shrinker's rules, delta debugging over them, the time bounds,
and (with torch) a layered sentinel whose crash survives the reduction to one layer."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from builders import DATA, DYNAMIC, crash, ok, result, snapshot

from triagebot.reduce import Bounds, reduce_reproductions, reductions
from triagebot.reduce.edits import apply_edits, candidate_edits, within
from triagebot.reduce.graph import minifier_stages, same_error
from triagebot.reduce.search import Search, search
from triagebot.reduce.towers import parts_of
from triagebot.report.repro import repro_script
from triagebot.reproduce import Run, in_lanes, run_script, verify
from triagebot.results import InputSpec, ModelSpec, Reduction, Reproduction, Snapshot
from triagebot.store import read_snapshot

HERE = Path(__file__).resolve().parent


def composite() -> ModelSpec:
    """A vision-language spec as the shrinker leaves it: a text decoder of four layers of two
    kinds, a vision tower, token ids in the config and drawn ids below the special ones."""
    text = {
        "model_type": "llama",
        "num_hidden_layers": 4,
        "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "hidden_size": 64,
        "vocab_size": 512,
        "bos_token_id": 1,
    }
    vision = {"model_type": "siglip_vision_model", "num_hidden_layers": 2, "num_attention_heads": 4}
    return ModelSpec(
        model="TinyVLM",
        class_path="transformers:TinyVLM",
        config={"model_type": "tiny_vlm", "text_config": text, "vision_config": vision, "image_token_id": 10},
        inputs=[
            InputSpec(name="input_ids", shape=[1, 8], dtype="int64", kind="randint", low=3, high=448),
            InputSpec(name="attention_mask", shape=[1, 8], dtype="int64", kind="ones"),
            InputSpec(name="pixel_values", shape=[1, 3, 32, 32], dtype="float32"),
        ],
    )


def test_edits_are_the_shrinkers_kinds_at_every_level_layers_first_smallest_first():
    labels = [str(edit) for edit in candidate_edits(composite())]
    assert labels == [
        "text_config.num_hidden_layers 4 -> 1",
        "text_config.num_hidden_layers 4 -> 2",
        "vision_config.num_hidden_layers 2 -> 1",
        "text_config.num_attention_heads 4 -> 1",
        "text_config.num_attention_heads 4 -> 2",
        "vision_config.num_attention_heads 4 -> 1",
        "vision_config.num_attention_heads 4 -> 2",
        "sequence 8 -> 2",
        "sequence 8 -> 4",
        "input attention_mask left out",
        "text_config.vocab_size 512 -> 16",
        "text_config.vocab_size 512 -> 256",
    ]


def halves(spec: ModelSpec) -> list:
    """Each field's last edit: to half of its count where it has two."""
    return list({edit.field: edit for edit in candidate_edits(spec)}.values())


def test_made_together_the_edits_keep_what_the_config_states_twice():
    spec = composite()
    reduced = apply_edits(spec, halves(spec))
    text = reduced.config["text_config"]
    # the per-layer list follows the layer count; the key/value heads still divide the heads
    assert text["layer_types"] == ["sliding_attention", "full_attention"]
    assert (text["num_hidden_layers"], text["num_attention_heads"], text["num_key_value_heads"]) == (2, 2, 2)
    ids, pixels = reduced.inputs
    assert [item.name for item in reduced.inputs] == ["input_ids", "pixel_values"]
    assert ids.shape == [1, 4] and pixels.shape == [1, 3, 32, 32]
    assert ids.high is not None and ids.high <= 256 - 64  # drawn below the smaller vocabulary's specials
    assert spec.config["text_config"]["num_hidden_layers"] == 4  # the spec edited is a copy


def test_multi_head_attention_stays_multi_head_and_grouped_heads_keep_a_divisor():
    spec = ModelSpec(
        model="M", config={"model_type": "m", "num_attention_heads": 8, "num_key_value_heads": 8}
    )
    to_one, to_half = candidate_edits(spec)
    assert apply_edits(spec, [to_half]).config["num_key_value_heads"] == 4
    assert apply_edits(spec, [to_one]).config["num_key_value_heads"] == 1
    grouped = ModelSpec(
        model="M", config={"model_type": "m", "num_attention_heads": 6, "num_key_value_heads": 2}
    )
    _, to_half = candidate_edits(grouped)
    assert apply_edits(grouped, [to_half]).config["num_key_value_heads"] == 1  # 2 does not divide 3


def test_a_value_its_family_fix_pins_is_never_edited():
    # Zamba ties its shared transformer to three hybrid layers (corpus/shrink/families.py).
    spec = ModelSpec(
        model="ZambaModel", config={"model_type": "zamba", "num_hidden_layers": 3, "num_attention_heads": 4}
    )
    assert [str(edit) for edit in candidate_edits(spec)] == [
        "num_attention_heads 4 -> 1",
        "num_attention_heads 4 -> 2",
    ]


def test_a_literal_sequence_keeps_its_length_and_the_vocabulary_keeps_its_ids():
    spec = composite()
    ids = InputSpec(name="input_ids", shape=[1, 4], dtype="int64", kind="values", values=[[4, 10, 10, 300]])
    spec = spec.model_copy(update={"inputs": [ids, spec.inputs[1]]})
    labels = [str(edit) for edit in candidate_edits(spec)]
    assert not any(label.startswith("sequence") for label in labels)  # image placeholders must match
    assert "text_config.vocab_size 512 -> 301" in labels  # id 300 must stay in the vocabulary
    assert "text_config.vocab_size 512 -> 256" not in labels


def test_the_edits_kept_apply_to_a_tower_built_alone_one_level_up():
    spec = composite()
    kept = halves(spec)
    text = ModelSpec(model="TinyVLM", config=spec.config["text_config"], inputs=spec.inputs[:2])
    assert [str(edit) for edit in within(kept, "text_config")] == [
        "num_hidden_layers 4 -> 2",
        "num_attention_heads 4 -> 2",
        "sequence 8 -> 4",
        "input attention_mask left out",
        "vocab_size 512 -> 256",
    ]
    alone = apply_edits(text, within(kept, "text_config"))
    assert alone.config["layer_types"] == ["sliding_attention", "full_attention"]
    assert [item.shape for item in alone.inputs] == [[1, 4]]


@pytest.mark.torch
def test_transformers_names_a_composites_towers_and_its_config_without_defaults():
    spec = read_snapshot(DATA / "smoke-2.13.0+cpu.json").result("Mistral3ForConditionalGeneration").spec
    parts = parts_of(spec, timeout=300)
    assert parts.problem is None and parts.config is not None
    assert "output_hidden_states" in spec.config and "output_hidden_states" not in parts.config
    assert parts.config["text_config"]["num_hidden_layers"] == 2  # a tiny size is no default
    text, vision = parts.towers["text_config"], parts.towers["vision_config"]
    assert text.class_path == "transformers:MistralForCausalLM" and text.model_type == "mistral"
    assert [item.name for item in text.inputs] == ["input_ids", "attention_mask"]
    assert vision.class_path == "transformers:PixtralVisionModel"
    assert [item.name for item in vision.inputs] == ["pixel_values", "image_sizes"]


def needs_two_heads_and_the_mask(calls: list[ModelSpec]):
    """A crash that survives any reduction but fewer than two text heads or a missing mask."""

    def reproduces(spec: ModelSpec) -> bool:
        calls.append(spec)
        names = {item.name for item in spec.inputs}
        return spec.config["text_config"]["num_attention_heads"] >= 2 and "attention_mask" in names

    return reproduces


def test_delta_debugging_keeps_every_edit_that_still_reproduces():
    calls: list[ModelSpec] = []
    found = search(composite(), needs_two_heads_and_the_mask(calls), lambda: False)
    text, vision = found.spec.config["text_config"], found.spec.config["vision_config"]
    assert (text["num_hidden_layers"], vision["num_hidden_layers"]) == (1, 1)
    assert (text["num_attention_heads"], vision["num_attention_heads"]) == (2, 1)
    assert found.spec.inputs[0].shape == [1, 2]
    assert [item.name for item in found.spec.inputs] == ["input_ids", "attention_mask", "pixel_values"]
    assert found.complete and found.probes == len(calls)
    assert found.steps[:2] == [
        "text_config.num_hidden_layers 4 -> 1",
        "vision_config.num_hidden_layers 2 -> 1",
    ]
    assert "text_config.num_attention_heads 4 -> 2" in found.steps
    # each refused edit is tried alone once, and heads refused 1 from 4 are not offered 1 from 2
    assert found.probes <= 12


def test_the_search_stops_when_no_probe_fits_the_time_left_with_what_it_has():
    calls: list[ModelSpec] = []
    probes_left = iter([True, False])  # time for one probe: the first, all edits together
    found = search(composite(), needs_two_heads_and_the_mask(calls), lambda: not next(probes_left))
    assert not found.complete and found.probes == 1 and found.spec == composite() and found.steps == []


def test_the_nights_bound_leaves_the_rest_as_it_was():
    repro = Reproduction(flag=DYNAMIC, signature="E: x", model="M", script="raise E\n", verified=True)
    unverified = repro.model_copy(update={"verified": False})
    tonight = snapshot([result("M", ok(2), {DYNAMIC: crash()}, spec=composite())], flags=(DYNAMIC,))
    assert reduce_reproductions(tonight, [repro, unverified], Bounds(60, 0)) == [repro, unverified]


def _reduced_before(repro: Reproduction, spec: ModelSpec, key: str) -> Snapshot:
    """The nightly `key` on which `repro`'s group was reduced to `spec`."""
    reduction = Reduction(
        spec=spec,
        steps=["num_attention_heads 4 -> 1"],
        lines_before=9,
        lines_after=7,
        seconds_before=2.0,
        seconds_after=1.0,
        probes=6,
        seconds=30.0,
    )
    earlier = repro.model_copy(update={"reduction": reduction})
    return snapshot(
        [result("M", ok(2), {DYNAMIC: crash()}, spec=composite())],
        key=key,
        flags=(DYNAMIC,),
        reproductions=[earlier],
    )


def test_an_earlier_nights_reduction_that_still_raises_is_kept_with_one_probe(
    monkeypatch: pytest.MonkeyPatch,
):
    smaller = composite().model_copy(update={"config": {**composite().config, "image_token_id": 11}})
    repro = Reproduction(
        flag=DYNAMIC, signature="E: x", model="M", script="raise E\n" * 9, verified=True, seconds=2.0
    )
    tonight = snapshot(
        [result("M", ok(2), {DYNAMIC: crash()}, spec=composite())], key="2.14.0", flags=(DYNAMIC,)
    )
    probes: list[str] = []

    def run(script, python, timeout):
        probes.append(script)
        return Run("E: x" if "'image_token_id': 11" in script else "E: other", 1.5)

    monkeypatch.setattr(reductions, "timed_run", run)
    (kept,) = reduce_reproductions(
        tonight, [repro], Bounds(60, 60), earlier=_reduced_before(repro, smaller, "2.13.0")
    )
    assert len(probes) == 1 and kept.script == probes[0] and kept.seconds == 1.5
    assert kept.reduction.kept_from == "2.13.0" and kept.reduction.probes == 1
    assert (kept.reduction.lines_before, kept.reduction.seconds_before, kept.reduction.seconds_after) == (
        9,
        2.0,
        1.5,
    )
    assert kept.reduction.steps == ["num_attention_heads 4 -> 1"]  # what the reduction changed, as found

    # one that no longer raises it is searched for again, from tonight's spec
    monkeypatch.setattr(reductions, "timed_run", lambda script, python, timeout: Run("E: other", 1.0))
    searched: list[ModelSpec] = []
    monkeypatch.setattr(reductions, "_search", lambda spec, probe: searched.append(spec) or Search(spec))
    (again,) = reduce_reproductions(
        tonight, [repro], Bounds(60, 60), earlier=_reduced_before(repro, smaller, "2.13.0")
    )
    assert searched == [composite()] and again == repro


def test_the_groups_reduced_on_an_earlier_night_go_first(monkeypatch: pytest.MonkeyPatch):
    def repro(model: str) -> Reproduction:
        return Reproduction(flag=DYNAMIC, signature=f"E: {model}", model=model, script="", verified=True)

    tonight = snapshot(
        [result(m, ok(2), {DYNAMIC: crash()}, spec=composite()) for m in "ABC"], flags=(DYNAMIC,)
    )
    earlier = _reduced_before(repro("C"), composite(), "2.12.0")
    order: list[tuple[str, bool]] = []

    def reduce_one(snapshot, reproduction, bounds, python, kept):
        order.append((reproduction.model, kept is not None and kept.kept_from == "2.12.0"))
        return reproduction

    monkeypatch.setattr(reductions, "reduce_one", reduce_one)
    found = reduce_reproductions(tonight, [repro(m) for m in "ABC"], Bounds(60, 600), earlier=earlier)
    assert order == [("C", True), ("A", False), ("B", False)]
    assert [r.model for r in found] == ["A", "B", "C"]  # the snapshot keeps the groups' order


def test_two_lanes_reduce_two_groups_at_once_and_keep_the_groups_order(monkeypatch: pytest.MonkeyPatch):
    def repro(model: str) -> Reproduction:
        return Reproduction(flag=DYNAMIC, signature=f"E: {model}", model=model, script="", verified=True)

    tonight = snapshot(
        [result(m, ok(2), {DYNAMIC: crash()}, spec=composite()) for m in "ABCD"], flags=(DYNAMIC,)
    )
    both_running = threading.Barrier(2, timeout=10)  # broken (an error) unless two run at once

    def reduce_one(snapshot, reproduction, bounds, python, kept):
        if reproduction.model in "AB":
            both_running.wait()
        return reproduction.model_copy(update={"script": f"reduced {reproduction.model}"})

    monkeypatch.setattr(reductions, "reduce_one", reduce_one)
    found = reduce_reproductions(tonight, [repro(m) for m in "ABCD"], Bounds(60, 600), lanes=2)
    assert [r.script for r in found] == ["reduced A", "reduced B", "reduced C", "reduced D"]


def test_a_wrong_results_locating_counts_against_its_groups_time(monkeypatch: pytest.MonkeyPatch):
    from triagebot.results import BASELINE, WrongLocus

    def repro(model: str, located: float) -> Reproduction:
        wrong = Reproduction(
            flag=BASELINE, signature="WrongResult: output", model=model, script="", verified=True
        )
        return wrong.model_copy(update={"locus": WrongLocus(module="block", seconds=located)})

    tonight = snapshot([result(m, ok(2), {DYNAMIC: ok(2)}, spec=composite()) for m in "AB"], flags=(DYNAMIC,))
    given: dict[str, float] = {}

    def reduce_one(snapshot, reproduction, bounds, python, kept):
        given[reproduction.model] = bounds.group_seconds
        return reproduction

    monkeypatch.setattr(reductions, "reduce_one", reduce_one)
    reduce_reproductions(tonight, [repro("A", 20.0), repro("B", 55.0)], Bounds(60, 600))
    # A: the 40 s its locating left of the group's 60; B: 5 s, less than a probe, so not reduced
    assert list(given) == ["A"] and 39 < given["A"] <= 40, given


def test_in_lanes_yields_in_order_whatever_finishes_first():
    finished: list[int] = []

    def job(index: int, seconds: float):
        def run() -> int:
            time.sleep(seconds)
            finished.append(index)
            return index

        return run

    assert list(in_lanes([job(0, 0.3), job(1, 0.0), job(2, 0.0)], lanes=2)) == [0, 1, 2]
    assert finished[0] != 0  # the second lane finished first
    assert list(in_lanes([job(3, 0.0)], lanes=4)) == [3] and list(in_lanes([], lanes=2)) == []


def test_scripts_run_as_many_at_once_as_the_sweep_has_workers(monkeypatch: pytest.MonkeyPatch):
    from triagebot import workers as workers_module
    from triagebot.config import parse_config
    from triagebot.pipeline import script_lanes
    from triagebot.pipeline import sweeping as sweeping_module

    assert script_lanes(parse_config("[sweep]\njobs = 3\n")) == 3
    monkeypatch.setattr(workers_module, "available_cpus", lambda: 2)
    assert script_lanes(parse_config('[sweep]\njobs = "auto"\n')) == 2
    monkeypatch.setattr(workers_module, "available_cpus", lambda: 64)  # a GPU runner's cores
    assert script_lanes(parse_config('[sweep]\njobs = "auto"\n')) == sweeping_module.AUTO_SCRIPT_LANES


def test_a_graph_repro_is_compared_without_the_user_function():
    signature = "BackendCompilerFailed: RuntimeError: bad alias [in forward]"
    assert same_error("BackendCompilerFailed: RuntimeError: bad alias", signature)
    assert not same_error("BackendCompilerFailed: RuntimeError: other", signature)
    assert not same_error(None, signature)
    assert minifier_stages("aot_eager") == ("dynamo",) and minifier_stages("inductor") == ("aot", "dynamo")
    assert minifier_stages(None) == minifier_stages("my.module:backend") == ()


# --- with torch: a layered sentinel ------------------------------------------------------------


def layered_snapshot(signature: str = "GuardOnDataDependentSymNode") -> Snapshot:
    spec = ModelSpec(
        model="LayeredNonzeroGuard",
        class_path="reduce_sentinel:LayeredNonzeroGuard",
        config={"num_hidden_layers": 4, "num_attention_heads": 4, "hidden_size": 16, "vocab_size": 64},
        inputs=[
            InputSpec(name="input_ids", shape=[1, 8], dtype="int64", kind="randint", low=0, high=64),
            InputSpec(name="attention_mask", shape=[1, 8], dtype="int64", kind="ones"),
        ],
    )
    return snapshot(
        [result("LayeredNonzeroGuard", ok(2), {DYNAMIC: crash(signature=signature)}, spec=spec)],
        flags=(DYNAMIC,),
    )


@pytest.mark.torch
def test_a_layered_sentinels_crash_survives_the_reduction_to_one_layer(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])))
    tonight = layered_snapshot()
    script = repro_script(tonight, DYNAMIC, "LayeredNonzeroGuard")
    run = verify(script, flag=DYNAMIC, model="LayeredNonzeroGuard", signature="", timeout=120)
    signature = run.observed  # the group's signature: what the script raises
    assert signature is not None and signature.startswith("GuardOnDataDependentSymNode") and run.seconds
    repro = run.model_copy(update={"signature": signature, "verified": True})

    (reduced,) = reduce_reproductions(
        tonight, [repro], Bounds(group_seconds=240, night_seconds=240, probe_timeout=120)
    )
    reduction = reduced.reduction
    assert reduction is not None and reduction.complete
    assert reduction.spec.config == {
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "hidden_size": 16,
        "vocab_size": 16,
    }
    (ids,) = reduction.spec.inputs
    assert ids.name == "input_ids" and ids.shape == [1, 2]
    assert (
        reduction.steps[0] == "num_hidden_layers 4 -> 1" and "num_attention_heads 4 -> 2" in reduction.steps
    )
    assert reduction.lines_after < reduction.lines_before and reduction.seconds_before == repro.seconds
    # what the issue shows is the reduced script, and it still raises the signature on its own
    assert reduced.verified and reduced.script != script and "'num_hidden_layers': 1" in reduced.script
    assert run_script(reduced.script, timeout=120) == signature
    assert reduced.graph is None  # a failure of Dynamo itself: no backend graph to minify


@pytest.mark.torch
@pytest.mark.slow
def test_a_failure_only_inductor_meets_gets_pytorchs_graph_repro_verified_alone():
    from triagebot.corpus.sentinels import specs  # imports torch

    spec = next(spec for spec in specs() if spec.model == "BatchNormOut")
    tonight = snapshot([result("BatchNormOut", ok(1), {}, spec=spec)], flags=())
    script = repro_script(tonight, "baseline", "BatchNormOut", backend="inductor")
    run = verify(script, flag="baseline", model="BatchNormOut", signature="", backend="inductor", timeout=300)
    assert run.observed is not None and run.observed.startswith("AssertionError")
    repro = run.model_copy(update={"signature": run.observed, "verified": True})

    (minified,) = reduce_reproductions(tonight, [repro], Bounds(group_seconds=600, night_seconds=600))
    assert minified.reduction is None  # a sentinel of one literal input: nothing to reduce
    graph = minified.graph
    assert graph is not None and graph.verified, graph.observed
    # AOTAutograd's own passes fail before Inductor's compile: Dynamo's graph is the one cut
    assert (
        graph.after == "dynamo"
        and "native_batch_norm" in graph.script
        and graph.lines == len(graph.script.splitlines())
    )
