"""Every cell as a compiler developer deciding a default flip reads it (issue 55): the committed
smoke night, and the five real models of the SDPA-mask finding built as a night of their own
(eager disagrees with itself across attention implementations: outputs that cannot be judged)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from builders import DYNAMIC, SCALAR, eager_inconsistent, night_of, ok, result, snapshot

from triagebot.analysis.library import library_signature
from triagebot.report import issue_body, words
from triagebot.results import (
    BASELINE,
    COUNTING_BACKEND,
    Accuracy,
    AccuracyCheck,
    CrossCheck,
    ModelResult,
    ModelSpec,
    Night,
    Outcome,
    Reproduction,
    Snapshot,
    Status,
    VerdictRow,
)
from triagebot.store import read_snapshot

SMOKE = Path(__file__).parent / "data" / "smoke-2.13.0+cpu.json"

SDPA_MASK = ["Aimv2Model", "Aimv2TextModel", "Phi4MultimodalVisionModel"]  # one graph: the flag skips them
PALIGEMMA = ["PaliGemmaForConditionalGeneration", "PaliGemmaModel"]  # an `.item()` break the flag removes


def sdpa_mask_snapshot(extra: Sequence[ModelResult] = ()) -> Snapshot:
    """The SDPA-mask finding's five models swept as a night: every baseline eager-inconsistent,
    the two PaliGemma models compiled to fewer graphs under the flag, eager-inconsistent there too;
    `extra`: more models swept beside them."""
    skipped = Outcome(status=Status.skipped)
    models = [result(name, ok(1, accuracy=eager_inconsistent()), {SCALAR: skipped}) for name in SDPA_MASK]
    models += [
        result(
            name,
            ok(3, ["item"], accuracy=eager_inconsistent()),
            {SCALAR: ok(1, accuracy=eager_inconsistent())},
        )
        for name in PALIGEMMA
    ]
    models += extra
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
    return snapshot(models, checks=["accuracy"], reproductions=repros, when={SCALAR: "graph_breaks"})


def sdpa_mask_night(extra: Sequence[ModelResult] = ()) -> Night:
    return night_of(sdpa_mask_snapshot(extra))


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


def test_the_flag_page_says_the_not_judged_models_as_the_issue_does(tmp_path) -> None:
    import html

    from triagebot.config import Config
    from triagebot.pipeline import build_site
    from triagebot.report import links
    from triagebot.store import MemoryStore

    build_site(MemoryStore([sdpa_mask_snapshot()]), tmp_path, Config(), say=lambda line: None)
    page = html.unescape((tmp_path / links.flag_page(SCALAR)).read_text(encoding="utf-8"))
    state = sdpa_mask_night().flags[SCALAR]
    assert words.verdict_clause(state.figures, state.verdict, []) in page
    assert f"None: {words.wrong_results_none(state.figures)}." in page
    assert words.NOT_JUDGED_RULE in page


# --- the committed smoke night, as the issue and the site render it ---


@pytest.fixture(scope="module")
def smoke() -> Night:
    return night_of(read_snapshot(SMOKE))


def timed(graphs: int, seconds: float, reasons=("item",), **fields) -> Outcome:
    return ok(graphs, reasons, stage_seconds={"compile": seconds}, **fields)


def as_sentinel(model: ModelResult) -> ModelResult:
    return model.model_copy(update={"spec": ModelSpec(model=model.model, source="sentinel")})


# --- 2. slower and faster compilation, both said ---


def test_the_slower_compilation_row_says_both_directions_on_the_smoke_night(smoke) -> None:
    body = issue_body(smoke, SCALAR)
    assert (
        "| Slower compilation (beyond the noise floor) | 0 of 6 models timed at baseline and under the flag, "
        "slower beyond the floor (3 faster beyond it; median 0.89x) | no |"
    ) in body


def test_a_faster_median_counts_the_models_beyond_the_floor_either_way() -> None:
    ratios = {"A": 0.3, "B": 0.35, "C": 3.2, "D": 0.95}
    models = [
        result(name, timed(2, 2.0), {SCALAR: timed(1, 2.0 * ratio)}, baseline_again=again)
        for name, ratio, again in [
            ("A", 0.3, timed(2, 2.2)),
            ("B", 0.35, timed(2, 1.9)),
            ("C", 3.2, None),
            ("D", 0.95, None),
        ]
    ]
    state = night_of(snapshot(models)).flags[SCALAR]
    cost = state.figures.compile_time
    assert (cost.rose, cost.fell, cost.median) == (1, 2, 0.65) and len(ratios) == cost.models
    assert (
        "noise floor 1.10x (2 baselines run twice tonight): compilation is faster; beyond the floor, "
        "1 model slower and 2 faster." in words.compile_time(state.figures)
    )
    row = words.verdict_share(VerdictRow.compile_slower, cost.rose, state.figures)
    assert row == (
        "1 of 4 models timed at baseline and under the flag, slower beyond the floor "
        "(2 faster beyond it; median 0.65x)"
    )


# --- 3. compile time is Dynamo's tracing with the counting backend, and each compiled rung's ---


def test_the_compile_seconds_say_what_was_timed_and_the_compiled_rungs_seconds(smoke) -> None:
    body = issue_body(smoke, SCALAR)
    assert (
        "Compile time under the flag (Dynamo tracing with the counting backend and the first call; no "
        "Inductor compilation): 0.89x the baseline's"
    ) in body
    assert (
        "| `Qwen2VLForConditionalGeneration` | 14.35 s | 15.11 s | 1.05x | aot\\_eager: 18.16 s with the "
        "flag (its baseline did not climb it) |"
    ) in body
    assert "| `LongformerModel` | 3.46 s | 3.95 s | 1.14x | none climbed |" in body


def test_a_model_that_climbed_both_ways_gives_its_rungs_compile_seconds() -> None:
    climbed = result(
        "Climbed",
        timed(3, 1.0),
        {SCALAR: timed(1, 2.0)},
        ladder={
            BASELINE: {COUNTING_BACKEND: ok(3), "aot_eager": timed(3, 4.0)},
            SCALAR: {COUNTING_BACKEND: ok(1), "aot_eager": timed(1, 5.0)},
        },
    )
    night = night_of(snapshot([climbed], ladder=[COUNTING_BACKEND, "aot_eager"]))
    [riser] = night.flags[SCALAR].figures.compile_time.risers
    assert words.rung_compile(riser) == "aot_eager: 4.00 s -> 5.00 s (1.25x)"
    assert "| `Climbed` | 1.00 s | 2.00 s | 2.00x | aot\\_eager: 4.00 s -&gt; 5.00 s (1.25x) |" in issue_body(
        night, SCALAR
    )


# --- 4. sentinels out of the timings and the noise floor, on a line of their own ---


def test_the_smoke_nights_timings_are_its_real_models_and_its_sentinels_a_line_apart(smoke) -> None:
    figures = smoke.flags[SCALAR].figures
    cost = figures.compile_time
    assert (cost.models, cost.noise_models, cost.median, cost.sentinels_only) == (6, 2, 0.892, False)
    assert figures.call_time is not None and figures.call_time.models == 0  # the three timed were sentinels
    assert figures.backward_ran == 0  # the only model on the backward rung was a sentinel
    body = issue_body(smoke, SCALAR)
    assert (
        f"{words.SENTINELS_APART}; the flag ran on 4: `ItemMatmul` (fewer graphs), `AliasingCustomOp` "
        "(fewer graphs), `WrongUnderScalarCapture` (wrong result), `WrongGradUnderScalarCapture` "
        "(fewer graphs)."
    ) in body
    # The four sentinels the flag ran on are in no denominator: 6 of the 7 real models, not of 11.
    assert "helps 6 of the 7 models it could affect (85.7%). Measured" in body and "are sentinels" not in body
    assert "\n\nSentinels: 7 of 7 behaved as built.\n" in body


def test_a_figure_only_sentinels_give_says_so_and_a_sentinel_never_makes_a_flag_ready() -> None:
    sentinel = as_sentinel(
        result("ItemMatmul", timed(2, 0.14), {SCALAR: timed(1, 0.44)}, baseline_again=timed(2, 0.15))
    )
    night = sdpa_mask_night(extra=[sentinel])
    state = night.flags[SCALAR]
    said = words.compile_time(state.figures)
    assert said.startswith(
        "Compile time of the sentinels alone, no real model timed under the flag (Dynamo tracing with the "
        "counting backend and the first call; no Inductor compilation): 3.14x the baseline's"
    )
    # A sentinel ran and matched, yet no real model's outputs were judged: not ready. It is in no
    # denominator: the flag could affect the 2 PaliGemma models, the sentinel apart.
    assert state.figures.affectable == 2 and state.figures.sentinels == 1 and not state.verdict.ready


# --- 5. what was not measured, per flag ---


def test_the_not_measured_line_is_the_flags_own(smoke) -> None:
    state = smoke.flags[DYNAMIC]
    body = issue_body(smoke, DYNAMIC)
    said = words.not_measured(smoke.snapshot, state.figures)
    assert body.count("Not measured tonight:") == 1 and said.replace("_", "\\_") in body
    assert "training (no model climbed to the backward rung under the flag)" in said
    assert "time per call of the compiled model (no model timed both ways under the flag)" in said
    assert (
        "dynamic shapes asked for (dynamic=True, mark_dynamic: every compile is the default, sizes made "
        "dynamic only on a recompile)"
    ) in said
    assert "real-size speed" not in said
    assert "Backward pass (aot\\_eager+backward, train mode, gradients against eager's): no model" in body


# --- 6. like with like, and why Dynamo's alone ---


def test_the_other_half_compares_like_with_like_and_says_why_dynamo_alone(smoke) -> None:
    body = issue_body(smoke, SCALAR)
    assert "for users of aot\\_eager and inductor the flag helps this model" not in body
    assert (
        "**The other half**: Mistral3ForConditionalGeneration crashes with the counting backend alone "
        "(raised inside Dynamo as it traces, before any backend is called; the sweep does not record why "
        "the traces under the other backends did not meet it); under aot\\_eager it compiles to 12 graphs "
        "(17 at baseline with the counting backend), outputs matching eager's; under inductor it compiles "
        "to 12 graphs (17 at baseline with the counting backend), outputs matching eager's: fewer graphs "
        "than the counting backend's baseline, but the baseline was not run under aot\\_eager and "
        "inductor, so whether the flag helps users of them is not measured."
    ) in body


def test_like_with_like_the_flag_helps_users_of_a_backend_its_baseline_ran() -> None:
    from triagebot.results import CleanRung, FailureGroup

    group = FailureGroup(
        flag=SCALAR,
        signature="E: x",
        error_type="E",
        models=["M"],
        reach=COUNTING_BACKEND,
        clean_under=[
            CleanRung(backend="aot_eager", graphs=2, baseline_graphs=5, baseline_backend="aot_eager"),
        ],
    )
    said = words.other_half(group)
    assert said is not None and said.endswith(
        "under aot_eager it compiles to 2 graphs (5 at baseline): for users of aot_eager the flag "
        "helps this model"
    )


# --- 7. the smaller ones ---


def test_the_help_names_the_three_suites() -> None:
    from triagebot.cli.app import app

    assert app.info.help == (
        "Flag sweeps of torch.compile over the transformers, diffusers and timm suites, and the issues "
        "they feed."
    )


def test_corpus_doc_counts_the_smoke_nights_sentinels(smoke) -> None:
    doc = (Path(__file__).parent.parent / "docs" / "corpus.md").read_text(encoding="utf-8")
    assert len(smoke.sentinels) == 7 and "the 7 sentinels of the" in doc


def test_time_per_call_names_the_models_not_counted_as_helped() -> None:
    def called(graphs: int, seconds: float) -> Outcome:
        return ok(graphs, call_seconds=seconds)

    def climbed(name: str, flagged: Outcome, base: float, flag: float) -> ModelResult:
        return result(
            name,
            ok(2, ["item"]),
            {SCALAR: flagged},
            ladder={
                BASELINE: {COUNTING_BACKEND: ok(2), "aot_eager": called(2, base)},
                SCALAR: {COUNTING_BACKEND: flagged, "aot_eager": called(1, flag)},
            },
        )

    wrong = ok(1, accuracy=AccuracyCheck(verdict=Accuracy.mismatch, where="output"))
    models = [climbed("Helped", ok(1), 0.002, 0.001), climbed("Wrong", wrong, 0.001, 0.003)]
    night = night_of(snapshot(models, ladder=[COUNTING_BACKEND, "aot_eager"]))
    said = words.call_time(night.flags[SCALAR].figures)
    assert (
        said is not None
        and (
            "; of the 1 model with fewer graphs, 1 faster and 0 slower beyond 1.10x either way; of the 1 "
            "model not counted as helped, 0 faster and 1 slower."
        )
        in said
    )


def test_the_site_refusing_a_misnamed_snapshot_names_the_file_it_wants(tmp_path) -> None:
    import shutil

    from triagebot.config import Config
    from triagebot.errors import TriagebotError
    from triagebot.pipeline import build_site
    from triagebot.store import LocalStore

    shutil.copy(SMOKE, tmp_path / SMOKE.name)
    with pytest.raises(TriagebotError) as raised:
        build_site(LocalStore(tmp_path), tmp_path / "site", Config(), say=lambda line: None)
    assert str(raised.value) == (
        "the site renders the newest stored nightly smoke-2.13.0+cpu, not 2.13.0+cpu: the file "
        "smoke-2.13.0+cpu.json holds nightly 2.13.0+cpu, and a store names each nightly's file by its "
        "key: rename it 2.13.0+cpu.json"
    )


def test_the_backward_repro_of_a_module_without_dropout_zeroes_none(smoke) -> None:
    from triagebot.report.repro import repro_script
    from triagebot.results import BACKWARD_RUNG

    script = repro_script(
        smoke.snapshot, SCALAR, "WrongGradUnderScalarCapture", backend=BACKWARD_RUNG, wrong=True
    )
    compile(script, "repro.py", "exec")
    lines = script.splitlines()
    past_the_build = len(lines) - next(
        n for n, line in enumerate(lines) if line.startswith("def build_model")
    )
    assert past_the_build == 78  # 86 with the dropout-zeroing loop a module without dropout does not need
    assert "def for_training(model):" in script and "_DropoutNd" not in script
    assert "    return model.train()" in script


def test_a_genuine_wrong_results_cross_checks_are_said_with_it(smoke) -> None:
    checks = [
        CrossCheck(name="eager_other_attention", implementation="eager", agrees=True),
        CrossCheck(name="compiled_vs_other_attention", implementation="eager", agrees=False, detail="far"),
    ]
    wrong = ok(1, accuracy=AccuracyCheck(verdict=Accuracy.mismatch, where="logits", cross_checks=checks))
    night = night_of(snapshot([result("Genuine", ok(2, ["item"]), {SCALAR: wrong})], checks=["accuracy"]))
    assert (
        "**Which side is wrong**: eager vs eager with eager attention: agree; compiled vs eager with eager "
        "attention (float64 reference): differ (far); eager agrees with itself, so the difference is the "
        "compiler's."
    ) in issue_body(night, SCALAR)
    # The smoke night's only wrong result is a sentinel's, in no issue's groups: a real one says it.
    unchecked = ok(1, accuracy=AccuracyCheck(verdict=Accuracy.mismatch, where="logits"))
    bare = night_of(snapshot([result("Genuine", ok(2, ["item"]), {SCALAR: unchecked})], checks=["accuracy"]))
    assert (
        "**Which side is wrong**: no cross-check made (no other attention implementation to run eager under)."
    ) in issue_body(bare, SCALAR)
    assert "**Which side is wrong**" not in issue_body(smoke, SCALAR)
