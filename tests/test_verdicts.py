"""What a compiler developer reads first: a flag's figures and verdict, where each crash lives on
the backend ladder, the model code it starts from, what is new tonight, and the overlap between
flags; each computed once (`analysis`) and said in one set of words (`report.words`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import builders
import pytest
from builders import DYNAMIC, SCALAR, crash, ok, result

from triagebot import pipeline
from triagebot.analysis import flag_stats, night
from triagebot.analysis.figures import flag_figures, verdict
from triagebot.analysis.frames import crash_patterns, pattern_of
from triagebot.analysis.ladder import reach
from triagebot.config import Config
from triagebot.report import issue_body, nightly_summary, words
from triagebot.results import (
    COUNTING_BACKEND,
    CrashPattern,
    Effect,
    FlagFigures,
    ModelResult,
    Outcome,
    Snapshot,
    Status,
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
        "also aot_eager",
        "not checked beyond the counting backend",
        "Dynamo (counting backend) only",
    ]
    assert words.checked(groups[2], "cpu") == (
        "Big1 on cpu: counting backend: crashed; aot_eager: ran clean; inductor: not run"
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
    assert "full stack" not in body
    assert "survives every rung it was run on (counting, aot_eager); nothing is known of inductor" in body


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
    assert "| `C` | `other` | 3 | **new tonight** |" in body
    assert f"| `A` | `other` | 3 | `{first.key}` |" in body
    # A first night has nothing to be new against.
    assert night(first).flags[SCALAR].figures.new_crashes == 0


def test_the_headline_names_errors_while_they_fit():
    many = FlagFigures(flag=SCALAR, swept=9, testable=9, affectable=9, crashes=9, errors=["E" * 80] * 3)
    assert words.headline(many) == f"9 models crash ({'E' * 80} and 2 more)"
    huge = many.model_copy(update={"errors": ["E" * 200, "F" * 200]})
    assert words.headline(huge) == f"9 models crash ({'E' * 80} and 1 more)"
    assert words.headline(FlagFigures(flag=SCALAR, swept=1, wrong=1)) == "no model crashes, 1 wrong result"


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
        ({"helped": 3, "hurt": 2, "recompile_checked": 4, "recompile_more": 1, "engine_errors": 1}, True, []),
        ({"helped": 3, "crashes": 1}, False, ["crashes"]),
        ({"wrong": 1}, False, ["wrong_results"]),
        ({"helped": 3, "laddered": 3, "ladder_failures": 1}, False, ["ladder_failures"]),
    ],
)
def test_the_verdict_is_one_rule(counts, ready, blocking):
    decided = verdict(figures(**counts))
    assert decided.ready is ready
    assert [line.what for line in decided.blockers] == blocking


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
    assert words.RULE in body
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
