"""What a compiler developer reads first: a flag's figures and verdict, where each crash lives on
the backend ladder, the model code it starts from, what is new tonight, and the overlap between
flags; each computed once (`analysis`) and said in one set of words (`report.words`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import builders
import pytest
from builders import DYNAMIC, SCALAR, crash, ok, result

from triagebot import pipeline
from triagebot.analysis import flag_stats, night
from triagebot.analysis.figures import flag_figures, verdict
from triagebot.analysis.frames import crash_patterns, pattern_of
from triagebot.analysis.ladder import at_baseline_too, reach
from triagebot.analysis.triage import annotate
from triagebot.config import Config
from triagebot.report import issue_body, nightly_summary, words
from triagebot.results import (
    COUNTING_BACKEND,
    Accuracy,
    AccuracyCheck,
    CompileTime,
    CrashPattern,
    Effect,
    FlagFigures,
    ModelResult,
    ModelSpec,
    Outcome,
    RecompileCheck,
    Reduction,
    Snapshot,
    Status,
    UnreachedPair,
    VerdictRow,
)
from triagebot.store import LocalStore

PENDING = "PendingUnbackedSymbolNotFound: Pending unbacked symbols {u0} not in returned outputs"
SITE = "/venv/lib/python3.11/site-packages"
MISTRAL = f"{SITE}/transformers/models/mistral3/modeling_mistral3.py"
MISTRAL_TAIL = f"""\
  File "{SITE}/torch/_dynamo/variables/builder.py", line 3850, in handle_traced_output
    set_example_value(proxy.node, example_value)
  File "{SITE}/torch/fx/experimental/symbolic_shapes.py", line 1475, in compute_unbacked_bindings
    raise PendingUnbackedSymbolNotFound(msg)
torch._dynamo.exc.InternalTorchDynamoError: PendingUnbackedSymbolNotFound: Pending unbacked symbols {{u0}}

from user code:
   File "{MISTRAL}", line 236, in torch_dynamo_resume_in_get_image_features_at_222
    image_features = self.multi_modal_projector(selected_image_feature.squeeze(0), image_sizes)
                     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "{MISTRAL}", line 85, in forward
    for image_index, image_tokens in enumerate(image_features.split(tokens_per_image)):
                                               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace
"""


MATCH = AccuracyCheck(verdict=Accuracy.match)


def pending(traceback: str | None = MISTRAL_TAIL) -> Outcome:
    return crash("InternalTorchDynamoError", PENDING, traceback=traceback)


def with_ladder(model: str, flagged: Outcome, **rungs: Outcome) -> ModelResult:
    """`model` crashing under SCALAR in the sweep, its flag pair climbed to `rungs`."""
    return result(model, ok(3, ["item"]), {SCALAR: flagged}, ladder={SCALAR: dict(rungs)} if rungs else {})


# --- the model code a crash starts from ---------------------------------------------------------------


def test_the_pattern_is_the_innermost_model_frame_and_the_innermost_compiler_frame():
    pattern = pattern_of(MISTRAL_TAIL)
    model, compiler = pattern.model_frame, pattern.compiler_frame
    assert (model.file, model.line, model.function) == (
        "transformers/models/mistral3/modeling_mistral3.py",
        85,
        "forward",
    )
    assert (
        model.source == "for image_index, image_tokens in enumerate(image_features.split(tokens_per_image)):"
    )
    assert (compiler.file, compiler.line, compiler.function) == (
        "torch/fx/experimental/symbolic_shapes.py",
        1475,
        "compute_unbacked_bindings",
    )
    assert pattern.operation_frame is None  # raised inside Dynamo's machinery, from the model's code
    assert pattern_of(None) == CrashPattern() and pattern_of("no frames here") == CrashPattern()


def test_members_that_reach_the_error_from_different_model_code_are_told_apart():
    other = MISTRAL_TAIL.replace(
        "for image_index, image_tokens in enumerate(image_features.split(tokens_per_image)):",
        "counts = mask.sum().item()",
    )
    copied = MISTRAL_TAIL.replace("mistral3/modeling_mistral3.py", "pixtral/modeling_pixtral.py")
    results = {
        "A": with_ladder("A", pending()),
        "B": with_ladder("B", pending(copied)),  # the same source line copied into another family
        "C": with_ladder("C", pending(other)),
        "D": with_ladder("D", pending(None)),  # no traceback kept: says nothing either way
    }
    patterns = crash_patterns(results, ["A", "B", "C", "D"], SCALAR)
    assert [pattern.models for pattern in patterns] == [["A", "B"], ["C"]]
    assert patterns[1].model_frame.source == "counts = mask.sum().item()"


# --- where a crash lives --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rungs", "ladder", "expected"),
    [
        ({"aot_eager": "ok"}, [COUNTING_BACKEND, "aot_eager"], ("counting", ["inductor"])),
        ({"aot_eager": "crash"}, [COUNTING_BACKEND, "aot_eager"], ("aot_eager", ["inductor"])),
        ({"aot_eager": "ok", "inductor": "crash"}, ["aot_eager", "inductor"], ("inductor", [])),
        ({"aot_eager": "ok", "inductor": "ok"}, ["aot_eager", "inductor"], ("counting", [])),
        ({}, [COUNTING_BACKEND, "aot_eager"], (None, ["aot_eager", "inductor"])),
        ({"aot_eager": "flaky"}, ["aot_eager"], (None, ["inductor"])),
    ],
)
def test_where_a_crash_lives_names_only_the_backends_it_was_run_under(rungs, ladder, expected):
    assert reach(rungs, ladder) == expected


def test_groups_users_can_hit_come_first_and_counting_only_ones_say_so():
    aot_crash = crash("BackendCompilerFailed", "RuntimeError: aliased output")
    results = [
        # The largest group crashes under the counting backend only: it sorts last.
        with_ladder("Big1", pending(), aot_eager=ok(2)),
        with_ladder("Big2", pending()),
        with_ladder("Small", crash("GuardOnDataDependentSymNode", "Could not guard"), aot_eager=aot_crash),
        with_ladder("Unclimbed", crash("Unsupported", "Unsupported: data dependent")),
    ]
    snap = builders.snapshot(results, ladder=[COUNTING_BACKEND, "aot_eager"])
    groups = flag_stats(snap, SCALAR).crash_groups
    assert [(group.models[0], group.reach) for group in groups] == [
        ("Small", "aot_eager"),
        ("Unclimbed", None),
        ("Big1", "counting"),
    ]
    assert [words.reach(group) for group in groups] == [
        "also aot_eager (inductor not run)",
        "not checked beyond the counting backend",
        "Dynamo (counting backend) only",
    ]
    assert words.checked(groups[2], "cpu") == (
        "Big1 on cpu: counting backend: crashed; aot_eager: ran clean; "
        "inductor: not run (not on tonight's ladder)"
    )
    assert groups[2].name == "PendingUnbackedSymbolNotFound"  # the wrapped error, not the wrapper
    body = issue_body(night(snap), SCALAR)
    assert body.index("GuardOnDataDependentSymNode") < body.index("### PendingUnbackedSymbolNotFound")
    assert "### PendingUnbackedSymbolNotFound: 2 models — Dynamo (counting backend) only" in body
    assert "**Where it lives**: Big1 on cpu: counting backend: crashed; aot\\_eager: ran clean" in body
    assert "`transformers/models/mistral3/modeling_mistral3.py:85 in forward`" in body
    assert "the compiler gives up in `torch/fx/experimental/symbolic_shapes.py:1475" in body


def test_no_sentence_claims_a_rung_that_was_not_run():
    rungs = {COUNTING_BACKEND: ok(1), "aot_eager": ok(1)}
    helped = result("Helped", ok(3, ["item"]), {SCALAR: ok(1)}, ladder={SCALAR: rungs})
    snap = builders.snapshot([helped], ladder=[COUNTING_BACKEND, "aot_eager"])
    body = issue_body(night(snap), SCALAR)
    assert "full stack" not in body and "each until a rung failed" not in body
    assert "inductor was not on tonight's ladder" in body
    assert "the benefit of 1 of 1 survives every rung each ran on" in body


# --- every cell from the data it names ------------------------------------------------------------------

FULL_LADDER = [COUNTING_BACKEND, "aot_eager", "inductor"]


def ladder_table(body: str) -> dict[str, list[str]]:
    """The issue's ladder table: model -> its cells after the effect."""
    section = body.split("## The backend ladder", 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {row.split("`")[1]: [cell.strip() for cell in row.strip("|").split("|")[2:]] for row in rows}


def test_the_counting_cell_of_a_crashing_model_says_it_crashed():
    crashing = with_ladder("Crashing", pending(), aot_eager=ok(2), inductor=ok(2))
    snap = builders.snapshot([crashing], ladder=FULL_LADDER)
    [row] = flag_stats(snap, SCALAR).ladder_rows
    assert row.rungs == {COUNTING_BACKEND: "crash", "aot_eager": "ok", "inductor": "ok"}
    assert ladder_table(issue_body(night(snap), SCALAR))["Crashing"][:3] == [
        "crash (ok at baseline)",
        "ok",
        "ok",
    ]


def test_survival_counts_every_helped_model_by_the_rungs_it_ran():
    climbed = {COUNTING_BACKEND: ok(1), "aot_eager": ok(1)}  # inductor is for failures only on the CPU
    helped = [result(name, ok(3, ["item"]), {SCALAR: ok(1)}, ladder={SCALAR: climbed}) for name in "ABC"]
    snap = builders.snapshot(helped, ladder=FULL_LADDER)
    stats = flag_stats(snap, SCALAR)
    assert (stats.helped_survive, stats.helped_laddered) == (3, 3)
    assert stats.helped_rungs == {COUNTING_BACKEND: 3, "aot_eager": 3, "inductor": 0}
    body = issue_body(night(snap), SCALAR)
    assert "the benefit of 3 of 3 survives every rung each ran on" in body
    assert "counting: 3, aot\\_eager: 3, inductor: none" in body
    assert "each until a rung failed" not in body
    # The empty inductor cell says why it is empty.
    assert ladder_table(body)["A"][:3] == ["ok", "ok", "not run: failures only"]
    assert "helped models climbed it" not in body
    # A helped model the ladder's bounds kept off it is counted as such, not silently left out.
    unclimbed = result("D", ok(3, ["item"]), {SCALAR: ok(1)})
    body = issue_body(night(builders.snapshot([*helped, unclimbed], ladder=FULL_LADDER)), SCALAR)
    assert "the benefit of 3 of 3 survives every rung each ran on" in body
    assert "3 of the 4 helped models climbed it; the others did not tonight" in body


def test_a_rung_not_run_says_why():
    bounded = result("Bounded", ok(3, ["item"]), {SCALAR: ok(1)}, ladder={SCALAR: {COUNTING_BACKEND: ok(1)}})
    stopped = result(
        "Stopped",
        ok(3, ["item"]),
        {SCALAR: ok(1)},
        ladder={SCALAR: {COUNTING_BACKEND: ok(1), "aot_eager": crash("BackendCompilerFailed", "aliased")}},
    )
    unreached = [UnreachedPair(model="Bounded", config=SCALAR, rungs=["aot_eager"], bound="seconds")]
    snap = builders.snapshot([bounded, stopped], ladder=FULL_LADDER, ladder_unreached=unreached)
    rows = {row.model: row for row in flag_stats(snap, SCALAR).ladder_rows}
    assert rows["Bounded"].not_run == {"aot_eager": "budget", "inductor": "failures_only"}
    assert rows["Stopped"].not_run == {"inductor": "after_failure"}
    table = ladder_table(issue_body(night(snap), SCALAR))
    assert table["Bounded"][1] == "not run: beyond the time budget"
    assert table["Stopped"][2] == "not run: a rung below failed"


def test_where_a_group_lives_says_why_a_backend_was_not_run():
    cut = with_ladder("Cut", pending(), aot_eager=ok(2))
    unreached = [UnreachedPair(model="Cut", config=SCALAR, rungs=["inductor"], bound="seconds")]
    snap = builders.snapshot([cut], ladder=FULL_LADDER, ladder_unreached=unreached)
    [group] = flag_stats(snap, SCALAR).crash_groups
    assert group.not_run == {"inductor": "budget"}
    assert words.checked(group, "cpu").endswith(
        "aot_eager: ran clean; inductor: not run (beyond the time budget)"
    )


def test_where_a_group_lives_says_its_first_model_was_not_chosen_to_climb():
    # Another member climbed for the group (a sample taken from a whole night keeps its choices).
    alone = result("Alone", ok(3, ["item"]), {SCALAR: pending()})
    snap = builders.snapshot([alone], ladder=FULL_LADDER)
    [group] = flag_stats(snap, SCALAR).crash_groups
    assert group.not_run == {"aot_eager": "not_chosen", "inductor": "not_chosen"}
    assert words.checked(group, "cpu").endswith(
        "aot_eager: not run (not chosen to climb); inductor: not run (not chosen to climb)"
    )


def test_where_a_wrong_result_lives_says_each_rung_in_the_same_words():
    wrong = ok(1, accuracy=AccuracyCheck(verdict=Accuracy.mismatch, where="output"))
    model = result(
        "Wrong",
        ok(2, ["item"]),
        {SCALAR: wrong},
        ladder={SCALAR: {COUNTING_BACKEND: wrong, "aot_eager": wrong}},
    )
    snap = builders.snapshot([model], ladder=[COUNTING_BACKEND, "aot_eager"], checks=["accuracy"])
    [group] = flag_stats(snap, SCALAR).wrong_result_groups
    assert words.checked(group, "cpu").startswith(
        "Wrong on cpu: counting backend: gave a wrong result; aot_eager: gave a wrong result"
    )


def test_a_group_failing_under_aot_eager_and_inductor_says_both():
    failing = crash("BackendCompilerFailed", "GuardOnDataDependentSymNode: Could not guard")
    group_model = with_ladder(
        "Both", crash("GuardOnDataDependentSymNode", "Could not guard"), aot_eager=failing, inductor=failing
    )
    snap = builders.snapshot([group_model], ladder=FULL_LADDER)
    [group] = flag_stats(snap, SCALAR).crash_groups
    assert group.fails_under == ["aot_eager", "inductor"]
    assert words.reach(group) == "also aot_eager and inductor"
    body = issue_body(night(snap), SCALAR)
    assert "— also aot\\_eager and inductor" in body
    assert "also aot\\_eager and inductor" in body.split("## Summary")[0]  # the verdict says it too


def test_a_counting_only_crash_says_what_the_real_backends_do_with_the_model():
    mistral = result(
        "Mistral3",
        ok(17, ["item"]),
        {SCALAR: pending()},
        ladder={
            SCALAR: {"aot_eager": ok(12, accuracy=MATCH), "inductor": ok(12, accuracy=MATCH)},
            "baseline": {"aot_eager": ok(18, accuracy=MATCH)},
        },
    )
    snap = builders.snapshot([mistral], ladder=FULL_LADDER)
    [group] = flag_stats(snap, SCALAR).crash_groups
    assert [
        (rung.backend, rung.graphs, rung.baseline_graphs, rung.baseline_backend) for rung in group.clean_under
    ] == [
        ("aot_eager", 12, 18, "aot_eager"),
        ("inductor", 12, 17, COUNTING_BACKEND),
    ]
    said = words.other_half(group)
    assert "under aot_eager it compiles to 12 graphs (18 at baseline), outputs matching eager's" in said
    assert "under inductor it compiles to 12 graphs (17 at baseline with the counting backend)" in said
    # Like with like: aot_eager's baseline ran there; inductor's count is the counting backend's.
    assert said.endswith(
        ": for users of aot_eager the flag helps this model; fewer graphs than the counting backend's "
        "baseline, but the baseline was not run under inductor, so whether the flag helps users of it "
        "is not measured"
    )
    assert "**The other half**: Mistral3 crashes with the counting backend alone" in issue_body(
        night(snap), SCALAR
    )


# --- new tonight ------------------------------------------------------------------------------------------


def nightly(day: int, crashing: list[str]) -> Snapshot:
    key = f"2.13.0.dev2026110{day}"
    snap = builders.nightly(key, {SCALAR: {model: pending() for model in crashing}}, ["A", "B", "C"])
    return snap.model_copy(
        update={
            "created": datetime(2026, 11, 1, tzinfo=UTC) + timedelta(days=day),
            "environment": snap.environment.model_copy(update={"torch_git_version": f"{day}" * 40}),
        }
    )


def test_a_crash_is_new_tonight_per_model_and_the_title_counts_it():
    first, second, third = nightly(1, ["A"]), nightly(2, ["A", "B"]), nightly(3, ["A", "B", "C"])
    tonight = night(third, [first, second], second)
    [group] = tonight.flags[SCALAR].stats.crash_groups
    assert group.since == {"A": first.key, "B": second.key, "C": third.key}
    assert group.new == ["C"]
    figures = tonight.flags[SCALAR].figures
    assert (figures.crashes, figures.new_crashes, figures.new_errors) == (
        3,
        1,
        ["PendingUnbackedSymbolNotFound"],
    )
    assert words.headline(figures) == "3 models crash, 1 new (PendingUnbackedSymbolNotFound)"
    body = issue_body(tonight, SCALAR)
    since = f"`A` (crashing since `{first.key}`), `B` (crashing since `{second.key}`)"
    assert f"Models: {since}, `C` (**new tonight**)." in body
    # A first night has nothing to be new against.
    assert night(first).flags[SCALAR].figures.new_crashes == 0


def test_a_model_that_joined_the_corpus_crashing_is_not_a_new_crash():
    first, second = nightly(1, ["A"]), nightly(2, ["A"])
    joined = builders.nightly(second.key, {SCALAR: {"A": pending(), "D": pending()}}, ["A", "B", "C", "D"])
    joined = joined.model_copy(update={"created": second.created, "environment": second.environment})
    tonight = night(joined, [first], first)
    [group] = tonight.flags[SCALAR].stats.crash_groups
    # D was never swept before: it crashes since tonight, but nothing it did before changed.
    assert group.since["D"] == joined.key and group.new == []
    assert tonight.flags[SCALAR].figures.new_crashes == 0
    assert "new tonight" not in issue_body(tonight, SCALAR)


def test_the_headline_names_errors_while_they_fit():
    many = FlagFigures(flag=SCALAR, swept=9, testable=9, affectable=9, crashes=9, errors=["E" * 80] * 3)
    assert words.headline(many) == f"9 models crash ({'E' * 80} and 2 more)"
    huge = many.model_copy(update={"errors": ["E" * 200, "F" * 200]})
    assert words.headline(huge) == f"9 models crash ({'E' * 80} and 1 more)"
    assert (
        words.headline(FlagFigures(flag=SCALAR, swept=1, wrong_results=1))
        == "no model crashes, 1 wrong result"
    )


def test_a_title_names_an_error_in_plain_letters_whatever_the_snapshot_says():
    hostile = FlagFigures(flag=SCALAR, swept=1, crashes=1, errors=["Boom@owner#1<b>"])
    assert words.headline(hostile) == "1 model crashes (Boom?owner?1?b?)"


def test_a_crash_that_stopped_and_came_back_is_new_again():
    tonight = night(nightly(3, ["A"]), [nightly(1, ["A"]), nightly(2, [])], nightly(2, []))
    assert tonight.flags[SCALAR].stats.crash_groups[0].new == ["A"]


# --- the overlap ------------------------------------------------------------------------------------------


def test_the_overlap_is_shown_whenever_two_flags_were_swept():
    results = [
        result("Both", ok(3, ["item"]), {SCALAR: pending(), DYNAMIC: pending()}),
        result("HelpedThere", ok(3, ["item"]), {SCALAR: pending(), DYNAMIC: ok(1)}),
        result("Rescued", ok(3, ["item"]), {SCALAR: ok(1), DYNAMIC: pending()}),
    ]
    stats = flag_stats(builders.snapshot(results, flags=(SCALAR, DYNAMIC)), SCALAR)
    assert stats.overlap == {DYNAMIC: ["Both"]}
    assert stats.overlap_helped == {DYNAMIC: ["HelpedThere"]} and stats.overlap_rescued == {
        DYNAMIC: ["Rescued"]
    }
    quiet = builders.snapshot(
        [result("Calm", ok(3, ["item"]), {SCALAR: ok(3), DYNAMIC: ok(3)})], flags=(SCALAR, DYNAMIC)
    )
    body = issue_body(night(quiet), SCALAR)
    assert "## Overlap with other flags" in body
    assert "no model crashes under both; none crashing here is helped there" in body


# --- the verdict ------------------------------------------------------------------------------------------


def figures(**counts) -> FlagFigures:
    return FlagFigures(flag=SCALAR, swept=10, testable=10, affectable=10, **counts)


@pytest.mark.parametrize(
    ("counts", "ready", "blocking"),
    [
        ({"helped": 3}, True, []),
        (
            {
                "helped": 3,
                "increases_graphs": 2,
                "recompile_checked": 4,
                "recompile_more": 1,
                "engine_errors": 1,
            },
            True,
            [],
        ),
        ({"helped": 3, "crashes": 1}, False, ["crashes"]),
        ({"wrong_results": 1}, False, ["wrong_results"]),
        ({"not_judged": 10}, False, ["not_judged"]),  # no model judged: nothing shows it safe
        ({"not_judged": 2, "helped": 1}, True, []),
        ({"helped": 3, "laddered": 3, "ladder_failures": 1}, False, ["ladder_failures"]),
    ],
)
def test_the_verdict_is_one_rule(counts, ready, blocking):
    decided = verdict(figures(**counts))
    assert decided.ready is ready
    assert [line.what for line in decided.blockers] == blocking


def test_a_verdict_weighs_every_row_of_the_table_in_its_order_when_everything_was_checked():
    timed = CompileTime(models=1, median=1.0)
    everything = {"laddered": 1, "recompile_checked": 1, "engine_errors": 1, "not_judged": 1, "unverified": 1}
    checked = verdict(figures(**everything, compile_time=timed))
    assert [line.what for line in checked.lines] == list(VerdictRow)
    assert [line.what.label for line in checked.lines][:3] == [
        "Wrong results (confirmed)",
        "Outputs not judged (eager disagrees with itself)",
        "Crashes (confirmed)",
    ]


def test_a_flag_run_on_nothing_it_could_affect_is_not_ready():
    nothing = FlagFigures(flag=SCALAR, swept=3, testable=3, skipped=3, affectable=0)
    assert verdict(nothing).ready is False
    assert words.verdict_sentence(nothing, verdict(nothing), []) == (
        "Not ready: the flag was not run on any model it could affect."
    )


def test_the_verdict_sentence_names_what_blocks_and_what_the_flag_buys():
    snap = builders.snapshot(
        [
            with_ladder("Crashy", pending(), aot_eager=ok(2)),
            result("Helped", ok(3, ["item"]), {SCALAR: ok(1)}),
            result("Hurt", ok(2, ["item"]), {SCALAR: ok(4)}),
            result("Single", ok(1), {SCALAR: Outcome(status=Status.skipped)}),
        ],
        ladder=[COUNTING_BACKEND, "aot_eager"],
        when={SCALAR: "graph_breaks"},
    )
    tonight = night(snap)
    state = tonight.flags[SCALAR]
    sentence = words.verdict_sentence(state.figures, state.verdict, state.stats.crash_groups)
    assert sentence == (
        "Not ready: 1 model crashes (PendingUnbackedSymbolNotFound, Dynamo (counting backend) only), "
        "outputs not compared, 1 model has more graphs; helps 1 of the 3 models it could affect (33.3%)."
    )
    body = issue_body(tonight, SCALAR)
    assert body.index("## Verdict") < body.index("## Summary")
    assert "| Crashes (confirmed) | 1 of 3 models it could affect (33.3%) | **yes** |" in body
    # The rule is said once (the README and the site); the issue links to it.
    assert words.RULE not in body and "By the readiness rule (triagebot's README" in body
    assert f"- `{SCALAR}`: {sentence}" in nightly_summary(tonight)


def test_the_readme_states_the_verdicts_rule():
    from pathlib import Path

    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    assert " ".join(words.RULE.split()) in " ".join(readme.split())


def test_the_figures_are_the_statistics_over_one_denominator():
    snap = builders.snapshot(
        [
            result("Crashy", ok(3, ["item"]), {SCALAR: pending()}),
            result("Helped", ok(3, ["item"]), {SCALAR: ok(1)}),
            result(
                "Broken", Outcome(status=Status.create_error), {SCALAR: Outcome(status=Status.create_error)}
            ),
        ]
    )
    stats = flag_stats(snap, SCALAR)
    found = flag_figures(stats)
    assert (found.swept, found.untestable, found.testable, found.affectable) == (3, 1, 2, 2)
    assert (found.crashes, found.helped, found.crash_errors, found.errors) == (
        1,
        1,
        1,
        ["PendingUnbackedSymbolNotFound"],
    )
    assert words.of(found.crashes, found) == "1 of 2 testable models (50%)"
    assert stats.percentages[Effect.crashes] == 50.0  # the same share, over the same denominator


# --- quiet by default -----------------------------------------------------------------------------------

ALIASING = (
    "Found a custom (non-ATen) operator whose output has alias annotations: view_of. "
    "We only support functionalizing operators whose outputs do not have alias annotations (e.g. 'T"
)


def sentinel(model: ModelResult) -> ModelResult:
    """`model` as one of the test corpus's sentinels."""
    return model.model_copy(update={"spec": ModelSpec(model=model.model, source="sentinel")})


def annotated(snap: Snapshot):
    return annotate(night(snap), pins={}, links={}, searches={}, bisections={}, repo=None, local=False)


def test_a_ladder_failure_at_baseline_too_is_one_line_in_a_collapsed_section():
    aliasing = crash("RuntimeError", ALIASING)
    everywhere = result(
        "Aliasing",
        ok(2, ["item"]),
        {SCALAR: ok(1)},
        ladder={
            SCALAR: {COUNTING_BACKEND: ok(1), "aot_eager": aliasing},
            "baseline": {"aot_eager": aliasing},
        },
    )
    tonight = annotated(builders.snapshot([everywhere], ladder=[COUNTING_BACKEND, "aot_eager"]))
    [group] = tonight.flags[SCALAR].stats.ladder_groups
    assert at_baseline_too(group) and tonight.flags[SCALAR].triage == {}  # no labels, no link command
    body = issue_body(tonight, SCALAR)
    assert "### Under" not in body and "/rerun-sweep link" not in body
    collapsed = body.split(
        "<details><summary>Failing on the ladder at baseline too, not the flag's doing: 1 model"
    )
    assert len(collapsed) == 2
    # One line, its signature ending at its last whole sentence.
    assert (
        "- under `aot_eager`: `Aliasing`, `RuntimeError: Found a custom (non-ATen) operator whose output "
        in body
    )
    assert "outputs do not have alias annotations (e.g. 'T" not in body and "view_of. …`" in body


def test_a_sentinels_wrong_result_is_in_no_table_and_never_labelled():
    wrong = ok(1, accuracy=AccuracyCheck(verdict=Accuracy.mismatch, where="output"))
    models = [
        sentinel(
            result(
                "WrongSentinel", ok(2, ["item"]), {SCALAR: wrong}, ladder={SCALAR: {COUNTING_BACKEND: wrong}}
            )
        ),
        result("Real", ok(3, ["item"]), {SCALAR: ok(1)}, ladder={SCALAR: {COUNTING_BACKEND: ok(1)}}),
    ]
    tonight = annotated(builders.snapshot(models, ladder=[COUNTING_BACKEND], checks=["accuracy"]))
    assert tonight.sentinels == {"WrongSentinel"}
    # The sentinel's wrong result is no group of the flag's (`effects.real_rows`): nothing to label.
    assert tonight.flags[SCALAR].triage == {}
    assert [group.models for group in tonight.flags[SCALAR].stats.sentinel_groups] == [["WrongSentinel"]]
    body = issue_body(tonight, SCALAR)
    assert "Labels a PT2 triager" not in body
    # In no table: on the sentinels' line alone.
    assert not [line for line in body.splitlines() if line.startswith("| `WrongSentinel`")]
    assert "the flag ran on 1: `WrongSentinel` (wrong result)." in body
    assert all(line.startswith("| `Real` |") for line in body.splitlines() if line.startswith("| `Real`"))


def test_a_reduction_that_saved_nothing_is_not_said():
    spec = ModelSpec(model="M")
    slower = Reduction(
        spec=spec, steps=["a step"], lines_before=95, lines_after=95, seconds_before=6.3, seconds_after=6.5
    )
    assert words.reduction_said(slower) is None
    shorter = slower.model_copy(update={"lines_after": 40})
    assert words.reduction_said(shorter) == "Reduced from 95 to 40 lines"
    faster = shorter.model_copy(update={"seconds_after": 2.04})
    assert words.reduction_said(faster) == "Reduced from 95 to 40 lines, 6.3 s to 2.0 s a run"


# --- what was missing -----------------------------------------------------------------------------------


def test_the_issue_names_the_unchanged_models_the_recompile_gaps_and_the_cpu_only_measure():
    second = RecompileCheck(change="batch 1 -> 2", status="ok", recompiles=3, dynamic=True, again=0)
    fewer = second.model_copy(update={"recompiles": 1})
    none = RecompileCheck(change="no second shape: inputs with different leading axes", status="skipped")

    def called_again(model: str, flagged: RecompileCheck, baseline: RecompileCheck) -> ModelResult:
        ladder = {
            SCALAR: {COUNTING_BACKEND: ok(1, recompile=flagged)},
            "baseline": {COUNTING_BACKEND: ok(3, recompile=baseline)},
        }
        return result(model, ok(3, ["item"]), {SCALAR: ok(1)}, ladder=ladder)

    models = [
        result("Same", ok(2, ["item"]), {SCALAR: ok(2)}),
        called_again("Fewer", fewer, second),
        called_again("NoShape", none, none),
    ]
    snap = builders.snapshot(models, ladder=[COUNTING_BACKEND])
    stats = flag_stats(snap, SCALAR)
    assert [row.model for row in stats.recompiles] == ["Fewer"]
    assert stats.recompile_gaps == {"NoShape": "no second shape: inputs with different leading axes"}
    body = issue_body(night(snap), SCALAR)
    assert "No effect: `Same`." in body
    assert "; fewer: 1 of 1 model called on a second shape (100%)." in body
    # Symbolic sizes and third-shape recompiles in words, not Python's True and None.
    assert "| `Fewer` | fewer graphs | `batch 1 -> 2` | 3 | 1 | yes, yes | 0, 0 |" in body
    assert (
        "not in the recompile figures: `NoShape` (no second shape: inputs with different leading axes)"
        in body
    )
    verdict = body.split("## Summary")[0]
    assert "Measured on the CPU only" in verdict


def test_the_site_shows_the_model_s_ladder_the_other_half_and_the_rule_once(tmp_path):
    from triagebot.config import Config
    from triagebot.pipeline import build_site
    from triagebot.report import links
    from triagebot.store import MemoryStore, read_snapshot

    smoke = read_snapshot(Path(__file__).parent / "data" / "smoke-2.13.0+cpu.json")
    build_site(MemoryStore([smoke]), tmp_path, Config(), readers=1, say=lambda line: None)
    page = (tmp_path / links.model_page("Mistral3ForConditionalGeneration")).read_text(encoding="utf-8")
    ladder = page.split('<h2 id="ladder">On the backend ladder tonight</h2>', 1)[1].split("</table>")[0]
    assert '<span class="rung crash">crash</span>' in ladder and '<span class="rung ok">ok</span>' in ladder
    assert "under aot_eager it compiles to 12 graphs (17 at baseline with the counting backend)" in page
    assert "so whether the flag helps users of them is not measured" in page  # no baseline on those rungs
    # The flag page's group says the other half too; its verdict says where it was measured, and
    # links the rule the index says once.
    flag_page = (tmp_path / links.flag_page(SCALAR)).read_text(encoding="utf-8")
    assert '<dt>The other half</dt><dd class="other-half">Mistral3ForConditionalGeneration' in flag_page
    assert "Measured on the CPU only" in flag_page.split('class="verdict-sentence"')[1].split("</p>")[0]
    assert words.RULE not in flag_page and 'href="../index.html#ready-rule"' in flag_page
    assert f'<p class="note" id="ready-rule">{words.RULE}</p>' in (tmp_path / links.INDEX).read_text(
        encoding="utf-8"
    )


def test_the_pattern_names_the_torch_operation_the_model_reached_on_every_surface(tmp_path):
    """A crash raised in symbolic shapes through a decomposition: the pattern names the
    decomposition beside the model code, in the issue and on the site."""
    through_refs = MISTRAL_TAIL.replace(
        f'  File "{SITE}/torch/fx/',
        f'  File "{SITE}/torch/_refs/__init__.py", line 4120, in split_with_sizes\n'
        f"    torch._check_with(ValueError, sum(split_sizes) == self.shape[dim])\n"
        f'  File "{SITE}/torch/fx/',
    )
    snap = builders.snapshot([with_ladder("Big1", pending(through_refs))])
    pattern = flag_stats(snap, SCALAR).crash_groups[0].patterns[0]
    assert (pattern.operation_frame.file, pattern.operation_frame.function) == (
        "torch/_refs/__init__.py",
        "split_with_sizes",
    )
    body = issue_body(night(snap), SCALAR)
    assert (
        "it reaches torch's `torch/_refs/__init__.py:4120 in split_with_sizes`; the compiler gives up" in body
    )
    store = LocalStore(tmp_path / "store")
    store.put(snap)
    pipeline.build_site(store, tmp_path / "site", Config(), say=lambda line: None)
    pages = "".join(page.read_text() for page in (tmp_path / "site").rglob("*.html"))
    assert (
        "it reaches torch's <code>torch/_refs/__init__.py:4120</code> in <code>split_with_sizes</code>"
        in pages
    )
