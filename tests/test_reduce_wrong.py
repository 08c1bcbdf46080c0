"""A wrong result at the default config reduced to where it happens, on a sentinel built to give
one through a single op (`WrongAtBaseline`): its model-level repro verified, then the smallest
submodule whose compiled output differs on the inputs it saw in eager, its own standalone repro
verified, then the graph node and the line of model code; all in child processes, in seconds."""

from __future__ import annotations

import sys

import pytest
from builders import SCALAR, night_of, ok, result, snapshot

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
def test_a_search_that_cannot_run_says_why_in_its_notes():
    script = "def main():\n    pass\n"  # no SEED: the search stops before it starts
    broken = Reproduction(flag=BASELINE, signature="WrongResult: output", model="M", script=script)
    broken = broken.model_copy(update={"verified": True})
    (located,) = locate_wrong_results([broken], Bounds(group_seconds=60, night_seconds=60), sys.executable)
    locus = located.locus
    assert locus.notes == ["the search failed: KeyError: 'SEED'"] and not locus.complete, locus
    assert not locus.module and not locus.module_script


@pytest.mark.torch
def test_the_sweep_judges_the_sentinel_wrong_at_baseline_with_its_figures():
    from triagebot.corpus.sentinels import spec_of
    from triagebot.sweep.run import run_one

    outcome, _ = run_one(spec_of("WrongAtBaseline"), {}, "cpu", fresh=True, checks=[Check.accuracy])
    assert outcome.mismatched and outcome.accuracy.where == "output"
    compiled, eager = rmses(outcome.accuracy.detail)
    assert compiled > 0.1 and eager < 1e-6


# A model whose wrong result is no node's: the graph Dynamo captures computes `(-1) ** t` right
# node by node, and the Python code FX generates for it (`pow_1 = -1 ** to_1`) does not, on torch
# 2.13 (what diffusers' AutoencoderKLCosmos reduces to, at its `(-1) ** self._arange`).
NEGATIVE_BASE = """
import torch

SEED = 0
DEVICE = "cpu"
TOLERANCES = {torch.float32: 1e-3}


class WrongResult(AssertionError):
    pass


class Signs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("steps", torch.arange(2), persistent=False)

    def forward(self, x):
        return x * ((-1) ** self.steps)


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)
        self.signs = Signs()

    def forward(self, x):
        return self.signs(self.linear(x))


def build_model():
    torch.manual_seed(SEED)
    return Model().eval()


def build_inputs():
    return {"x": torch.ones(2)}


def main():
    raise WrongResult("output")


if __name__ == "__main__":
    main()
"""


@pytest.mark.torch
def test_a_graph_right_node_by_node_whose_generated_code_is_wrong_names_the_generated_line():
    import torch

    signs = (-1) ** torch.arange(2)
    if torch.equal(torch.compile(lambda t: (-1) ** t, backend="eager")(torch.arange(2)), signs):
        pytest.skip("this torch generates `(-1) ** t` right")
    repro = Reproduction(
        flag=BASELINE, signature="WrongResult: output", model="M", script=NEGATIVE_BASE, verified=True
    )
    (located,) = locate_wrong_results([repro], Bounds(group_seconds=120, night_seconds=120), sys.executable)
    locus = located.locus
    assert (locus.module, locus.module_class, locus.op) == ("signs", "Signs", "operator.pow"), locus
    assert (
        "x * ((-1) ** self.steps)" in locus.line and locus.generated == "pow_1 = -1 ** l_self_buffers_steps_"
    )
    assert locus.module_verified


@pytest.mark.torch
def test_a_night_of_the_sentinel_alone_names_it_first_reduced_to_its_op_and_line():
    from triagebot.pipeline import with_reproductions
    from triagebot.report import bodies
    from triagebot.reproduce.verify import groups_to_reproduce

    tonight = sentinel_night()
    # A night whose only finding is wrong at baseline reproduces it.
    assert len(groups_to_reproduce(tonight)) == 1
    tonight = with_reproductions(tonight, sys.executable, 120, Bounds(group_seconds=120, night_seconds=120))
    head = "\n".join(bodies.nightly_summary(night_of(tonight)).splitlines()[:6]).replace("\\", "")
    assert "1 wrong result of torch.compile at the default config" in head, head
    assert "`WrongAtBaseline` (sentinel), output: compiled 1.2 RMSE from the float64 run, eager 3e-08" in head
    assert "reduced to operator.mul at triagebot_repro.py:" in head and "`return x * gain`" in head
    assert "in submodule block.scale (Scale)" in head and "the submodule's own repro verified" in head
