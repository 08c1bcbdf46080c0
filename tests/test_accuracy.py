"""Judging a compiled call's outputs against eager ones, and the checks a run makes: a backend that
perturbs one output is caught, a nondeterministic model is not judged, a second shape recompiles."""

from __future__ import annotations

import contextlib
import math

import pytest

torch = pytest.importorskip("torch")

from triagebot.corpus import load_corpus  # noqa: E402
from triagebot.results import Accuracy, Check, Status  # noqa: E402
from triagebot.sweep import accuracy  # noqa: E402
from triagebot.sweep.run import run_one  # noqa: E402

pytestmark = pytest.mark.torch

CHECKS = {Check.accuracy, Check.recompiles}


class Cache:
    """Stands in for a KV cache object in a model's outputs: tensors behind public attributes."""

    def __init__(self, keys):
        self.keys = keys
        self._private = object()


class Output(dict):
    """Stands in for a transformers ModelOutput: a dict subclass."""


def outputs(logits, keys):
    return Output(logits=logits, past_key_values=Cache([keys, keys * 2]), hidden_states=(logits, logits + 1))


def test_identical_outputs_agree_and_one_changed_element_is_found():
    logits, keys = torch.randn(2, 3), torch.randn(4)
    assert accuracy.compare(outputs(logits, keys), outputs(logits.clone(), keys.clone())) is None
    changed = keys.clone()
    changed[1] += 1.0
    difference = accuracy.compare(outputs(logits, keys), outputs(logits, changed))
    assert difference is not None and difference.where == "past_key_values.keys[0]"
    assert "largest difference 1" in difference.detail


def test_tolerance_per_dtype_nan_and_exact_values():
    reference = torch.tensor([1.0, math.nan, 3.0])
    assert accuracy.compare(reference, reference + 5e-4) is None  # float32: 1e-3
    assert accuracy.compare(reference, reference + 5e-3) is not None
    half = reference.to(torch.bfloat16)
    assert accuracy.compare(half, half + 0.0078125) is None  # bfloat16: 1e-2
    assert accuracy.compare(reference, reference, exact=True) is None  # NaN equals NaN
    assert (
        accuracy.compare(reference, reference + 1e-6, exact=True) is not None
    )  # two eager runs: no tolerance
    ids = torch.tensor([1, 2, 3])
    assert accuracy.compare(ids, torch.tensor([1, 2, 4])).detail == "1 of 3 elements differ"
    assert "dtype" in accuracy.compare(ids, ids.float()).detail
    assert accuracy.compare({"a": ids}, {"b": ids}).detail.startswith("structure differs")
    assert accuracy.compare((1, "x", None), (1, "y", None)).where == "[1]"


def test_a_float64_reference_forgives_rounding_that_eager_makes_too():
    precise = torch.linspace(0, 1, 50, dtype=torch.float64)
    eager = (precise + 4e-3).float()  # eager itself is 4e-3 off the float64 answer
    compiled = (precise - 4e-3).float()  # as far off, the other way: 8e-3 from eager
    assert accuracy.compare(eager, compiled) is not None  # no reference, a small tensor: fails
    assert accuracy.compare(eager, compiled, fp64=lambda: precise) is None
    assert accuracy.compare(eager, compiled + 0.1, fp64=lambda: precise) is not None


def test_large_outputs_fall_back_to_cosine_similarity_without_a_float64_reference():
    large = torch.randn(4000)
    noisy = large + 0.01 * torch.randn(4000)
    assert accuracy.compare(large, noisy) is None
    assert "cosine similarity" in accuracy.compare(large, -large).detail


def sentinel(name):
    return next(spec for spec in load_corpus("sentinels") if spec.model == name)


def perturb_one_output(gm, example_inputs):
    """A backend that runs the graph and adds 1 to the first element of its first tensor output."""

    def run(*args):
        out = list(gm.forward(*args))
        first = next(i for i, value in enumerate(out) if isinstance(value, torch.Tensor))
        changed = out[first].clone()
        changed.view(-1)[0] += 1.0
        out[first] = changed
        return out

    return run


def test_a_backend_that_perturbs_one_output_is_caught():
    spec = sentinel("Plain")
    right, _ = run_one(spec, {}, "cpu", fresh=True, checks=CHECKS)
    assert right.status == Status.ok and right.accuracy.verdict == Accuracy.match
    wrong, _ = run_one(spec, {}, "cpu", fresh=True, backend=perturb_one_output, checks={Check.accuracy})
    assert wrong.status == Status.ok and wrong.graphs == 1
    assert wrong.accuracy.verdict == Accuracy.mismatch and wrong.mismatched and wrong.suspect
    assert wrong.accuracy.where == "output" and "largest difference 1" in wrong.accuracy.detail
    unchecked, _ = run_one(spec, {}, "cpu", fresh=True, backend=perturb_one_output)
    assert unchecked.accuracy is None and not unchecked.mismatched  # checks off: nothing judged


def test_a_model_whose_eager_runs_differ_is_not_judged():
    outcome, _ = run_one(sentinel("OwnGenerator"), {}, "cpu", fresh=True, checks=CHECKS)
    assert outcome.accuracy.verdict == Accuracy.nondeterministic and not outcome.mismatched
    assert "eager_again" in outcome.stage_seconds and "float64" not in outcome.stage_seconds


def test_a_second_and_third_shape_show_a_recompile_and_a_specialisation():
    loop, _ = run_one(sentinel("RangeLoop"), {}, "cpu", fresh=True, checks=CHECKS)
    check = loop.recompile
    assert (check.status, check.change, check.recompiles) == ("ok", "batch 8 -> 9", 1)
    assert check.again == 1  # the unrolled loop recompiles for every new length
    assert check.guard_failures and "size mismatch at index 0" in check.guard_failures[0]
    assert loop.accuracy.verdict == Accuracy.match  # the second call's outputs were judged too
    plain, _ = run_one(sentinel("NonzeroBreak"), {}, "cpu", fresh=True, checks=CHECKS)
    assert (plain.recompile.recompiles, plain.recompile.dynamic, plain.recompile.again) == (2, True, 0)
    linear, _ = run_one(sentinel("Plain"), {}, "cpu", fresh=True, checks=CHECKS)
    assert linear.recompile.status == "skipped" and "eager fails on it" in linear.recompile.change


def test_a_clear_match_costs_one_comparison_and_only_a_doubt_runs_eager_again_or_in_float64():
    """The eager run the sweep made is compared first; the second eager run and the float64
    reference come only when the comparison fails or is borderline."""
    from triagebot.sweep.judge import BORDERLINE, judge

    reference = torch.linspace(0, 1, 50)
    assert accuracy.agrees(reference, reference + 5e-5, margin=BORDERLINE)
    assert not accuracy.agrees(reference, reference + 5e-4, margin=BORDERLINE)
    assert accuracy.agrees(reference, reference + 5e-4) and not accuracy.agrees(reference, reference + 5e-3)
    assert not accuracy.agrees({"a": reference}, {"b": reference}) and not accuracy.agrees((1, "x"), (1, "y"))
    calls: list[str] = []

    class Model(torch.nn.Module):
        def __init__(self, shift=0.0):
            super().__init__()
            self.shift = shift

        def forward(self, x):
            calls.append("float64" if x.dtype == torch.float64 else "eager")
            return x + self.shift

    def call(model, inputs):
        return model(**inputs)

    inputs = {"x": reference}
    timed_stages: list[str] = []

    def timed(stage):
        timed_stages.append(stage)
        return contextlib.nullcontext()

    check = judge(Model(), inputs, reference, reference + 5e-5, call, timed=timed)
    assert check.verdict == Accuracy.match and calls == [] and timed_stages == ["accuracy"]
    check = judge(Model(), inputs, reference, reference + 5e-4, call)  # borderline: is eager steady?
    assert check.verdict == Accuracy.match and calls == ["eager"]
    calls.clear()
    check = judge(Model(), inputs, reference, reference + 0.5, call, prefix="second call: ")
    assert check.verdict == Accuracy.mismatch and check.where == "second call: output"
    assert calls == ["eager", "float64"]
    calls.clear()
    check = judge(Model(shift=1.0), inputs, reference, reference + 0.5, call)  # eager itself moves
    assert check.verdict == Accuracy.nondeterministic and calls == ["eager"]
