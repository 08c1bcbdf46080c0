"""Every cell as a compiler developer deciding a default flip reads it (issue 55): the committed
smoke night, and the five real models of the SDPA-mask finding built as a night of their own
(eager disagrees with itself across attention implementations: outputs that cannot be judged)."""

from __future__ import annotations

from builders import SCALAR, night_of, ok, result, snapshot

from triagebot.analysis.library import library_signature
from triagebot.report import issue_body, words
from triagebot.results import (
    BASELINE,
    Accuracy,
    AccuracyCheck,
    CrossCheck,
    Night,
    Outcome,
    Reproduction,
    Status,
    VerdictRow,
)

SDPA_MASK = ["Aimv2Model", "Aimv2TextModel", "Phi4MultimodalVisionModel"]  # one graph: the flag skips them
PALIGEMMA = ["PaliGemmaForConditionalGeneration", "PaliGemmaModel"]  # an `.item()` break the flag removes


def _inconsistent() -> AccuracyCheck:
    return AccuracyCheck(
        verdict=Accuracy.eager_inconsistent,
        where="last_hidden_state",
        detail="largest difference 2.79 above tolerance 0.001",
        cross_checks=[
            CrossCheck(name="eager_other_attention", implementation="eager", agrees=False, detail="far"),
            CrossCheck(name="compiled_vs_other_attention", implementation="eager", agrees=True),
        ],
    )


def sdpa_mask_night() -> Night:
    """The SDPA-mask finding's five models swept as a night: every baseline eager-inconsistent,
    the two PaliGemma models compiled to fewer graphs under the flag, eager-inconsistent there too."""
    skipped = Outcome(status=Status.skipped)
    models = [result(name, ok(1, accuracy=_inconsistent()), {SCALAR: skipped}) for name in SDPA_MASK]
    models += [
        result(name, ok(3, ["item"], accuracy=_inconsistent()), {SCALAR: ok(1, accuracy=_inconsistent())})
        for name in PALIGEMMA
    ]
    signature = library_signature("last_hidden_state")
    repros = [
        Reproduction(
            flag=BASELINE,
            signature=signature,
            model=name,
            script="raise EagerInconsistent('last_hidden_state')\n",
            verified=True,
        )
        for name in [*SDPA_MASK, *PALIGEMMA]
    ]
    tonight = snapshot(models, checks=["accuracy"], reproductions=repros, when={SCALAR: "graph_breaks"})
    return night_of(tonight)


# --- 1. a model whose outputs could not be judged: fewer graphs can be real, "safe" cannot ---


def test_a_model_not_judged_is_no_help_and_no_evidence_of_ready() -> None:
    night = sdpa_mask_night()
    state = night.flags[SCALAR]
    assert state.stats.unjudged_helped == PALIGEMMA and state.figures.helped == 0
    assert state.figures.not_judged == 2 and not state.verdict.ready
    sentence = words.verdict_sentence(state.figures, state.verdict, state.stats.crash_groups)
    assert sentence == (
        "Not ready: no model crashes, 0 wrong results; helps 0 of the 2 models it could affect (0%); "
        "2 models' outputs could not be judged, counted neither as help nor as safe."
    )
    body = issue_body(night, SCALAR)
    row = f"| {VerdictRow.not_judged.label} | 2 of 2 models it could affect (100%) | **yes** |"
    assert row in body and VerdictRow.not_judged.label == "Outputs not judged (eager disagrees with itself)"
    assert state.trend[-1].helps == 0
    assert "| fewer graphs: outputs not judged, not counted as help | 2 | n/a |" in body


def test_the_issue_never_says_every_output_was_judged_beside_models_not_judged() -> None:
    body = issue_body(sdpa_mask_night(), SCALAR)
    assert "every compiled call's outputs judged match eager's" not in body
    assert (
        "Wrong results: none, every compiled call's outputs that could be judged match eager's within "
        "tolerance; 2 models could not be judged."
    ) in body
    unfolded = body.split("<details><summary>Environment", 1)[0]
    assert f"{words.LIBRARY_NOT_JUDGED}: `PaliGemmaForConditionalGeneration`, `PaliGemmaModel`." in unfolded
    assert words.NOT_JUDGED_RULE in unfolded
    # The library's script that compiles nothing, beside the models it names, not only in the health.
    assert (
        "<details><summary>`PaliGemmaForConditionalGeneration`: `EagerInconsistent: last_hidden_state` "
        "(verified, no torch.compile)</summary>"
    ) in unfolded
    assert "raise EagerInconsistent('last_hidden_state')" in unfolded
