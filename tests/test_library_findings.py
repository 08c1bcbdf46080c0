"""Eager disagreeing with itself is reported as the library's finding, on its own surface, and
never as a torch.compile wrong result or against a flag."""

from __future__ import annotations

from builders import SCALAR, eager_inconsistent, night_of, ok, result, snapshot

from triagebot.analysis import flag_stats
from triagebot.analysis.health import corpus_health
from triagebot.analysis.library import finding_title
from triagebot.report.render import render
from triagebot.results import BASELINE, Accuracy, AccuracyCheck, Reproduction


def _night_snapshot():
    inconsistent = ok(1, accuracy=eager_inconsistent())
    models = [result(f"Aimv2TextModel{n}", inconsistent, {SCALAR: inconsistent}) for n in range(200)]
    repros = [
        Reproduction(
            flag=BASELINE,
            signature="EagerInconsistent: last_hidden_state",
            model=model.model,
            script="raise EagerInconsistent('```\\n@someone')\n" * 400,
            verified=True,
        )
        for model in models
    ]
    return snapshot(models, reproductions=repros)


def test_eager_inconsistent_models_are_library_findings_not_wrong_results() -> None:
    tonight = _night_snapshot()
    health = corpus_health(tonight)
    assert len(health.library_findings) == 200
    finding = health.library_findings[0]
    assert finding.title == (
        "transformers: Aimv2TextModel0's sdpa attention ignores the attention mask it builds "
        "(eager and sdpa attention disagree in plain eager; compiled sdpa agrees with eager attention)"
    )
    assert finding.repro is not None and finding.repro.verified
    assert health.overall.wrong_results == 0
    stats = flag_stats(tonight, SCALAR)
    assert stats.wrong_result_groups == []


def test_the_library_section_stays_whole_and_within_githubs_limit() -> None:
    night = night_of(_night_snapshot())
    text = render("health-section.md.j2", health=night.health, detail=_detail())
    assert "### Library findings: transformers, not torch.compile" in text
    assert text.count("<details>") == text.count("</details>") == 3
    assert "````python" in text  # a fence the backticks in the script cannot close
    assert "wrong result" not in text.lower()
    assert len(text) < 65_536


def _detail():
    from triagebot.report.fit import Detail

    return Detail()


def test_the_library_findings_repro_compiles_nothing_and_compares_attention_implementations() -> None:
    from builders import snapshot as snapshot_of

    from triagebot.report.repro import repro_script
    from triagebot.results import InputSpec, ModelSpec

    spec = ModelSpec(
        model="Aimv2TextModel",
        class_path="transformers.models.aimv2.modeling_aimv2:Aimv2TextModel",
        config={"hidden_size": 8},
        inputs=[InputSpec(name="input_ids", shape=[1, 4], dtype="int64", kind="randint", high=9)],
    )
    tonight = snapshot_of([result("Aimv2TextModel", ok(1, accuracy=eager_inconsistent()), {}, spec=spec)])
    script = repro_script(tonight, BASELINE, "Aimv2TextModel", other_attention="eager")
    compile(script, "repro.py", "exec")
    assert "torch.compile" not in script.replace("no torch.compile", "")
    assert 'other.set_attn_implementation("eager")' in script or "set_attn_implementation('eager')" in script
    assert "class EagerInconsistent(AssertionError)" in script and "WrongResult" not in script


def test_the_title_names_only_what_the_checks_show() -> None:
    """The cause is named from the record: sdpa's mask skip where plain-eager sdpa is the odd one
    out; a model on eager attention gets the disagreement, no cause it was not shown; causality,
    which no check probes, is never claimed."""
    checks = eager_inconsistent().cross_checks
    sdpa = finding_title("Phi4MultimodalVisionModel", "sdpa", checks)
    assert sdpa.startswith("transformers: Phi4MultimodalVisionModel's sdpa attention ignores the attention")
    on_eager = [check.model_copy(update={"implementation": "sdpa"}) for check in checks]
    eager = finding_title("M", "eager", on_eager)
    assert eager == (
        "transformers: M's eager attention disagrees with sdpa attention "
        "(eager and sdpa attention disagree in plain eager; compiled eager agrees with sdpa attention)"
    )
    unconfirmed = finding_title("M", "sdpa", checks[:1])
    assert "ignores" not in unconfirmed and "compiled not compared" in unconfirmed
    assert not any("causal" in title for title in (sdpa, eager, unconfirmed))


def test_the_repro_docstring_carries_the_findings_title() -> None:
    from builders import snapshot as snapshot_of

    from triagebot.report.repro import repro_script
    from triagebot.results import ModelSpec

    spec = ModelSpec(model="Aimv2TextModel", class_path="transformers:Aimv2TextModel", config={})
    tonight = snapshot_of([result("Aimv2TextModel", ok(1, accuracy=eager_inconsistent()), {}, spec=spec)])
    [finding] = corpus_health(tonight).library_findings
    script = repro_script(tonight, BASELINE, "Aimv2TextModel", finding.signature)
    docstring = script.split('"""')[1]
    assert f"{finding.title}." in docstring.replace("\n", " ")


def test_a_library_findings_script_is_rendered_from_its_signature_alone() -> None:
    """The reducer renders a reproduction's candidates by its signature: a library finding's
    must stay the no-compile comparison, not become a compile script."""
    from builders import snapshot as snapshot_of

    from triagebot.report.repro import repro_script
    from triagebot.results import ModelSpec

    spec = ModelSpec(model="M", class_path="transformers:M", config={})
    tonight = snapshot_of([result("M", ok(1, accuracy=eager_inconsistent()), {}, spec=spec)])
    script = repro_script(tonight, BASELINE, "M", "EagerInconsistent: last_hidden_state")
    assert "set_attn_implementation" in script and "compiled = torch.compile" not in script


def test_a_flag_issue_names_them_not_judged_and_never_as_matching_or_wrong() -> None:
    """Under a flag, eager's disagreement with itself is no wrong result, and the issue does not
    claim every compiled call matched eager: it names them as not judged, the library's."""
    from builders import night_of

    from triagebot.report import issue_body, words

    inconsistent = ok(1, accuracy=eager_inconsistent())
    plain = ok(1, accuracy=AccuracyCheck(verdict=Accuracy.match))
    models = [
        result("Aimv2TextModel", ok(2, ["item"], accuracy=eager_inconsistent()), {SCALAR: inconsistent}),
        result("Plain", ok(2, ["item"], accuracy=plain.accuracy), {SCALAR: plain}),
    ]
    night = night_of(snapshot(models, checks=["accuracy"]))
    assert night.flags[SCALAR].stats.eager_inconsistent == ["Aimv2TextModel"]
    body = issue_body(night, SCALAR)
    assert f"{words.LIBRARY_NOT_JUDGED}: `Aimv2TextModel`." in body
    assert "every compiled call's outputs judged match eager's" not in body
    assert (
        "Wrong results: none, every compiled call's outputs that could be judged match eager's "
        "within tolerance; 1 model could not be judged."
    ) in body
    assert night.flags[SCALAR].figures.helped == 1  # Plain; Aimv2TextModel's fewer graphs are no help
    assert night.flags[SCALAR].figures.wrong_results == 0
