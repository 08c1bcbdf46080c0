"""A flag's settings (`patch`, `when`), and what skipped runs and engine errors do to the numbers
and the words of the reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import SCALAR as SCALARS
from builders import snapshot

from triagebot.analysis import flag_stats, night
from triagebot.config import DEFAULT_FLAGS, parse_config
from triagebot.errors import ConfigError
from triagebot.report import issue_body, nightly_summary
from triagebot.results import (
    BASELINE,
    Effect,
    FlagSettings,
    ModelResult,
    Outcome,
    Snapshot,
    Status,
    default_when,
    named_in_break,
)
from triagebot.sweep.schedule import can_matter

DATA = Path(__file__).parent / "data"
DYNAMIC = "capture_dynamic_output_shape_ops"


def test_a_flag_table_is_a_patch_and_when_and_the_shorthand_is_all_patch():
    config = parse_config(
        "[flags]\n"
        "scalars = { capture_scalar_outputs = true }\n"
        "guards = { assume_static_by_default = false }\n"
        "[flags.everywhere]\n"
        "patch = { capture_dynamic_output_shape_ops = true }\n"
        'when = "always"\n'
    )
    assert config.flags == {
        "scalars": FlagSettings(patch={SCALARS: True}, when="named_in_breaks"),
        "guards": FlagSettings(patch={"assume_static_by_default": False}, when="always"),
        "everywhere": FlagSettings(patch={"capture_dynamic_output_shape_ops": True}, when="always"),
    }
    assert parse_config("").flags == DEFAULT_FLAGS
    assert {flag.when for flag in DEFAULT_FLAGS.values()} == {"named_in_breaks"}


def test_default_when_is_named_in_breaks_only_for_settings_that_act_only_at_graph_breaks():
    assert default_when({SCALARS: True}) == "named_in_breaks"
    assert default_when({SCALARS: True, DYNAMIC: True}) == "named_in_breaks"
    assert default_when({SCALARS: True, "cache_size_limit": 1}) == "always"
    assert FlagSettings(patch={"cache_size_limit": 1}).when == "always"
    assert FlagSettings(patch={SCALARS: True}, when="always").when == "always"


ITEM_CALL = "Unsupported Tensor.item() call with capture_scalar_outputs=False"
OPERATOR = (  # an op reading a tensor's value inside, as repeat_interleave does for its size
    "Data dependent operator\n  Explanation: Operator `aten._local_scalar_dense.default` ...\n"
    "  Hint: Enable tracing of data-dependent output operators with "
    "`torch._dynamo.config.capture_scalar_outputs = True`"
)
NONZERO = (
    "Dynamic shape operator\n  Hint: Enable tracing of dynamic shape operators with "
    "`torch._dynamo.config.capture_dynamic_output_shape_ops = True`"
)


def _broke(*reasons: str) -> Outcome:
    """A baseline of three graphs with these break reasons (a branch on data when none)."""
    return Outcome(status=Status.ok, graphs=3, break_reasons=list(reasons) or ["Data-dependent branching"])


@pytest.mark.parametrize(
    ("baseline", "scalars_run", "dynamic_run"),
    [
        (_broke(ITEM_CALL), True, False),  # a user's `.item()`: no op of dynamic output shape
        (_broke(OPERATOR), True, True),  # an op's scalar inside may be one of dynamic shape
        (_broke(NONZERO), False, True),
        (_broke(ITEM_CALL, NONZERO), True, True),
        (_broke(), False, False),  # breaks, none of which a flag's setting would trace through
        (Outcome(status=Status.ok, graphs=1), False, False),
        (Outcome(status=Status.crash, error_type="E"), True, True),  # the flag may fix it
    ],
)
def test_named_in_breaks_runs_a_flag_where_a_baseline_break_names_its_setting(
    baseline, scalars_run, dynamic_run
):
    scalars, dynamic = (FlagSettings(patch={name: True}) for name in (SCALARS, DYNAMIC))
    assert (can_matter(scalars, baseline), can_matter(dynamic, baseline)) == (scalars_run, dynamic_run)
    # `graph_breaks` runs both on every baseline but one graph without a break
    plain = baseline.graphs == 1 and not baseline.break_reasons and baseline.status == Status.ok
    assert can_matter(scalars.model_copy(update={"when": "graph_breaks"}), baseline) is not plain
    assert named_in_break({"cache_size_limit": 1}, "... set torch._dynamo.config.cache_size_limit")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[flags.x]\nwhen = "always"\n', "`when` but no `patch`"),
        ('[flags.x]\npatch = { capture_scalar_outputs = true }\nwhen = "never"\n', "'flags.x.when'"),
        ("[flags.x]\npatch = { capture_scalar_outputs = true }\nwhne = 1\n", "unknown key 'flags.x.whne'"),
        ("[flags.x]\npatch = {}\n", "patches nothing"),
    ],
)
def test_a_bad_flag_table_is_one_line_naming_it(text, message):
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def _snapshot(outcomes: dict[str, dict[str, Outcome]], when: dict[str, str] | None = None) -> Snapshot:
    results = [ModelResult(model=m, outcomes=o) for m, o in outcomes.items()]
    return snapshot(results, when=when if when is not None else {SCALARS: "graph_breaks"})


def ok(graphs: int, breaks: int = 0) -> Outcome:
    return Outcome(status=Status.ok, graphs=graphs, ops=graphs * 3, break_reasons=["break"] * breaks)


CRASH = Outcome(
    status=Status.crash, error_type="PendingUnbackedSymbolNotFound", error="u0", signature="P: u*"
)
SKIPPED = Outcome(status=Status.skipped)
ENGINE = Outcome(status=Status.engine_error, error_type="ValidationError", error="time_step_limit")
UNTESTABLE = Outcome(status=Status.create_error, error_type="RuntimeError", error="no")

# Ten models: six single-graph ones skipped, one untestable, one engine error, a crash, a help.
MODELS = {
    **{f"Single{i}": {BASELINE: ok(1), SCALARS: SKIPPED} for i in range(6)},
    "Untestable": {BASELINE: UNTESTABLE, SCALARS: UNTESTABLE},
    "Rebuilt": {BASELINE: ok(2, 1), SCALARS: ENGINE},
    "Crashes": {BASELINE: ok(2, 1), SCALARS: CRASH},
    "Helped": {BASELINE: ok(3, 2), SCALARS: ok(1)},
}


def _reports(snapshot: Snapshot) -> tuple[str, str]:
    """The issue body of the flag and the nightly summary, rendered from `snapshot`."""
    analysed = night(snapshot, [], None)
    return issue_body(analysed, SCALARS), nightly_summary(analysed)


def test_percentages_are_over_the_models_the_flag_could_affect():
    stats = flag_stats(_snapshot(MODELS), SCALARS)
    assert (stats.models, stats.testable, stats.skipped, stats.affectable) == (10, 9, 6, 3)
    assert stats.when == "graph_breaks"
    assert stats.counts[Effect.skipped] == 6 and stats.counts[Effect.engine_error] == 1
    assert stats.percentages == {Effect.crashes: 33.3, Effect.reduces_graphs: 33.3, Effect.engine_error: 33.3}
    assert stats.crash_to_benefit == 1.0


def test_the_reports_say_how_many_models_were_skipped_and_why_and_show_engine_errors_loudly():
    body, summary = _reports(_snapshot(MODELS))
    assert "makes **1 of 3 models it could affect (33.3%)** crash" in body
    assert (
        "6 of the 9 testable models were not compiled with the flag, which acts only where Dynamo "
        "would break the graph: their baseline compiled to one graph with no graph break "
        '(`when = "graph_breaks"`).' in body
    )
    named = _reports(_snapshot(MODELS, when={SCALARS: "named_in_breaks"}))
    assert (
        'no graph break of their baseline names the flag\'s setting (`when = "named_in_breaks"`)' in named[0]
    )
    assert "6 skipped, as no graph break of their baseline names the flag's setting" in named[1]
    assert "Percentages are over the 3 models it could affect." in body
    assert "**Engine errors: 1 model could not be rebuilt" in body
    assert "| Effect | Models | % of the 3 models it could affect |" in body
    assert (
        "`capture_scalar_outputs`: 10 models swept, 9 testable (1 could not be built or run eagerly), "
        "6 skipped" in summary
    )
    assert "its figures are over the 3 models it could affect" in summary
    assert "**Engine errors, `capture_scalar_outputs`: 1 model could not be rebuilt" in summary


def test_without_skipped_runs_the_reports_read_as_before():
    models = {m: o for m, o in MODELS.items() if not m.startswith("Single") and m != "Rebuilt"}
    snapshot = _snapshot(models, when={})
    stats = flag_stats(snapshot, SCALARS)
    assert stats.affectable == stats.testable == 2 and stats.when == "always"
    body, summary = _reports(snapshot)
    assert "makes **1 of 2 testable models (50%)** crash" in body
    assert "not compiled with the flag" not in body and "Engine errors" not in body
    assert "skipped" not in summary and "ENGINE" not in summary


def test_a_snapshot_older_than_when_reads_as_every_flag_run_everywhere():
    data = json.loads((DATA / "2.12.0.dev20260408+cu128.json").read_text())
    data.pop("when", None)
    snapshot = Snapshot.model_validate(data)
    assert snapshot.when == {}
    assert all(flag_stats(snapshot, flag).when == "always" for flag in snapshot.flags)
