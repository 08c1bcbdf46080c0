"""A wrong result at the default config reduced to where it happens, on a sentinel built to give
one through a single op (`WrongAtBaseline`): its model-level repro verified, then the smallest
submodule whose compiled output differs on the inputs it saw in eager, its own standalone repro
verified, then the graph node and the line of model code; all in child processes, in seconds."""

from __future__ import annotations

import sys

import pytest
from builders import SCALAR, ok, result, snapshot

from triagebot.analysis.compiler_wrong import compiler_wrong_results, rmses
from triagebot.reduce import Bounds
from triagebot.reduce.wrong import is_wrong_at_baseline, locate_wrong_results, submodule_script
from triagebot.reproduce import reproduce
from triagebot.results import BASELINE, Accuracy, AccuracyCheck, Check, Reproduction

DETAIL = "largest difference 1.9 above tolerance 0.001; RMSE to float64 1.2, eager's 3e-08"


def sentinel_night():
    from triagebot.corpus.sentinels import spec_of  # imports torch

    wrong = ok(1, accuracy=AccuracyCheck(verdict=Accuracy.mismatch, where="output", detail=DETAIL))
    model = result("WrongAtBaseline", wrong, {SCALAR: ok(1)}, reruns={BASELINE: wrong})
    model = model.model_copy(update={"spec": spec_of("WrongAtBaseline")})
    return snapshot([model], checks=[Check.accuracy])


@pytest.fixture(scope="module")
def located():
    night = sentinel_night()
    found = reproduce(night, python=sys.executable, timeout=120)
    return night, locate_wrong_results(found, Bounds(group_seconds=120, night_seconds=240), sys.executable)


@pytest.mark.torch
def test_the_sentinels_model_level_repro_is_verified(located):
    night, (repro,) = located
    assert compiler_wrong_results(night)[0].model == "WrongAtBaseline"
    assert (repro.flag, repro.signature, repro.verified) == (BASELINE, "WrongResult: output", True)


@pytest.mark.torch
def test_it_reduces_to_the_smallest_submodule_the_op_and_the_line(located):
    _, (repro,) = located
    locus = repro.locus
    assert locus is not None, repro
    assert (locus.module, locus.module_class) == ("block.scale", "Scale"), locus
    assert locus.op is not None and "mul" in locus.op, locus
    assert locus.line is not None and "return x * gain" in locus.line, locus
    assert locus.module_verified and "MODULE = 'block.scale'" in locus.module_script
    assert locus.seconds < 120 and locus.complete


@pytest.mark.torch
def test_a_submodule_that_does_not_differ_is_not_verified():
    night = sentinel_night()
    (repro,) = reproduce(night, python=sys.executable, timeout=120)
    from triagebot.reproduce import run_script

    assert run_script(submodule_script(repro, "block.shift", "Shift"), sys.executable, 120) is None


def test_only_verified_wrong_results_at_baseline_are_located():
    base = {"signature": "WrongResult: output", "model": "M", "script": "", "verified": True}
    assert is_wrong_at_baseline(Reproduction(flag=BASELINE, **base))
    assert not is_wrong_at_baseline(Reproduction(flag=SCALAR, **base))
    assert not is_wrong_at_baseline(Reproduction(flag=BASELINE, **{**base, "verified": False}))
    crash = Reproduction(flag=BASELINE, **{**base, "signature": "RuntimeError: boom"})
    assert not is_wrong_at_baseline(crash)
    assert locate_wrong_results([crash], Bounds(60, 60)) == [crash]  # nothing run


@pytest.mark.torch
def test_the_sweep_judges_the_sentinel_wrong_at_baseline_with_its_figures():
    from triagebot.corpus.sentinels import spec_of
    from triagebot.sweep.run import run_one

    outcome, _ = run_one(spec_of("WrongAtBaseline"), {}, "cpu", fresh=True, checks=[Check.accuracy])
    assert outcome.mismatched and outcome.accuracy.where == "output"
    compiled, eager = rmses(outcome.accuracy.detail)
    assert compiled > 0.1 and eager < 1e-6
