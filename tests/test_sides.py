"""Which side is wrong: eager inconsistent across attention implementations is the library's
finding; a compiled output that is truly wrong stays the compiler's."""

from __future__ import annotations

import pytest

from triagebot.results import Accuracy, AccuracyCheck, Outcome, Status

pytestmark = pytest.mark.torch

torch = pytest.importorskip("torch")


def _mismatch() -> AccuracyCheck:
    return AccuracyCheck(verdict=Accuracy.mismatch, where="last_hidden_state", detail="far")


def _aimv2_text():
    from triagebot.corpus import hf

    built = hf.build(hf.spec_for("Aimv2TextModel"))
    return built.model, built.inputs, built.spec.seed


def test_eager_disagreeing_with_itself_is_the_library_finding() -> None:
    from triagebot.sweep.calls import seeded_call
    from triagebot.sweep.sides import cross_checked

    model, inputs, seed = _aimv2_text()
    call = seeded_call(seed)
    with torch.no_grad():
        expected = call(model, inputs)  # sdpa, with the mask skipped in plain eager
        other = model.__class__(model.config.__class__.from_dict(model.config.to_dict()))
        other.load_state_dict(model.state_dict())
        other.eval().set_attn_implementation("eager")
        got = call(other, inputs)  # what the compiled call computes: the mask honoured
        checked = cross_checked(model, inputs, expected, got, call, _mismatch())
    assert checked.verdict == Accuracy.eager_inconsistent
    assert [(c.name, c.implementation, c.agrees) for c in checked.cross_checks] == [
        ("eager_other_attention", "eager", False),
        ("compiled_vs_other_attention", "eager", True),
    ]
    outcome = Outcome(status=Status.ok, accuracy=checked)
    assert outcome.eager_inconsistent and not outcome.mismatched and not outcome.suspect


def test_a_compiled_output_wrong_against_both_implementations_stays_a_wrong_result() -> None:
    from triagebot.sweep.calls import seeded_call
    from triagebot.sweep.sides import cross_checked

    model, inputs, seed = _aimv2_text()
    call = seeded_call(seed)
    with torch.no_grad():
        expected = call(model, inputs)
        got = expected.__class__(last_hidden_state=expected.last_hidden_state + 1.0)
        checked = cross_checked(model, inputs, expected, got, call, _mismatch())
    assert checked.verdict == Accuracy.mismatch
    assert checked.cross_checks[0].name == "eager_other_attention"
    assert all(check.agrees is not True for check in checked.cross_checks[1:])


def test_a_module_with_no_attention_implementation_keeps_its_wrong_result() -> None:
    from triagebot.corpus.sentinels import WrongUnderScalarCapture
    from triagebot.sweep.sides import cross_checked

    module = WrongUnderScalarCapture().eval()
    checked = cross_checked(module, {}, None, None, lambda m, i: None, _mismatch())
    assert checked == _mismatch()


def test_old_accuracy_checks_load_without_cross_checks() -> None:
    old = AccuracyCheck.model_validate({"verdict": "mismatch", "where": "logits", "detail": "far"})
    assert old.cross_checks == [] and old.verdict == Accuracy.mismatch
