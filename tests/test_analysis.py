"""Effects for every combination of outcomes, statistics, signatures on real messages, diffs."""

from __future__ import annotations

import itertools

import pytest
from builders import DYNAMIC, SCALAR, fixture_nightlies

from triagebot.analysis import choose_history, classify, diff, effect_of, flag_stats, night, summarise
from triagebot.results import BASELINE, Effect, ModelResult, Outcome, Status, error_signature
from triagebot.results.signatures import normalised

OLD, NEW = fixture_nightlies()


def outcome(status: Status, graphs: int | None = None) -> Outcome:
    if status == Status.crash:
        return Outcome(status=status, error_type="E", error="boom", signature="E: boom")
    return Outcome(status=status, graphs=graphs if status == Status.ok else None)


def result(baseline: Outcome, flagged: Outcome, confirmations: dict | None = None) -> ModelResult:
    return ModelResult(
        model="M", outcomes={BASELINE: baseline, "f": flagged}, confirmations=confirmations or {}
    )


def expected_effect(baseline: Status, flagged: Status) -> Effect:
    """The rule, written as a table: untestable, the sweep's own faults, skipped, then hang, then
    death, then crashes, then graphs."""
    pair = {baseline, flagged}
    untestable = {Status.create_error, Status.eager_error}
    if baseline in untestable | {Status.skipped, Status.engine_error}:
        return Effect.untestable
    if flagged in untestable | {Status.engine_error}:
        return Effect.engine_error
    if flagged == Status.skipped:
        return Effect.skipped
    if Status.timeout in pair:
        return Effect.timeout
    if Status.signal in pair:
        return Effect.signal
    return {
        (Status.crash, Status.crash): Effect.both_crash,
        (Status.ok, Status.crash): Effect.crashes,
        (Status.crash, Status.ok): Effect.fixes_crash,
    }.get((baseline, flagged), Effect.no_effect)


@pytest.mark.parametrize(("baseline", "flagged"), list(itertools.product(Status, Status)))
def test_every_combination_of_statuses(baseline: Status, flagged: Status) -> None:
    effect = effect_of(result(outcome(baseline, 3), outcome(flagged, 3)), "f")
    assert effect == expected_effect(baseline, flagged)
    if Status.timeout in (baseline, flagged) or Status.signal in (baseline, flagged):
        assert effect != Effect.no_effect


@pytest.mark.parametrize(
    ("baseline_graphs", "flag_graphs", "effect"),
    [(5, 3, Effect.reduces_graphs), (5, 5, Effect.no_effect), (3, 5, Effect.increases_graphs)],
)
def test_graph_counts_decide_between_runs_that_both_finished(baseline_graphs, flag_graphs, effect) -> None:
    assert (
        effect_of(result(outcome(Status.ok, baseline_graphs), outcome(Status.ok, flag_graphs)), "f") == effect
    )


def test_a_crash_that_does_not_repeat_is_flaky_and_one_that_does_is_a_crash() -> None:
    crashed = outcome(Status.crash)
    assert (
        effect_of(result(outcome(Status.ok, 2), crashed, {"f": [outcome(Status.ok, 2)]}), "f") == Effect.flaky
    )
    assert effect_of(result(outcome(Status.ok, 2), crashed, {"f": [crashed]}), "f") == Effect.crashes
    assert (
        effect_of(result(crashed, outcome(Status.ok, 2), {BASELINE: [outcome(Status.ok, 2)]}), "f")
        == Effect.flaky
    )


def test_missing_flag_run_gives_no_row() -> None:
    assert effect_of(ModelResult(model="M", outcomes={BASELINE: outcome(Status.ok, 1)}), "f") is None


GUARD = (
    "Could not guard on data-dependent expression {e} (unhinted: {e}).  (Size-like symbols: {u})\n\nconsider"
)
PENDING = (
    "Pending unbacked symbols {s} not in returned outputs FakeTensor(..., size=({f},), dtype=torch.int64) "
    "((1,), 0).\nDid you accidentally call new_dynamic_size() or item() more times than you needed to?"
)


def test_signatures_group_data_dependent_guards_across_symbols() -> None:
    first = error_signature("GuardOnDataDependentSymNode", GUARD.format(e="Eq(u0, 0)", u="u0"))
    second = error_signature("GuardOnDataDependentSymNode", GUARD.format(e="Eq(u8, 0)", u="u8"))
    assert first == second
    assert first.startswith("GuardOnDataDependentSymNode: Could not guard on data-dependent expression Eq(u*")
    other = error_signature("GuardOnDataDependentSymNode", GUARD.format(e="Ne(u8, 1)", u="u8"))
    assert other != first


def test_signatures_group_pending_unbacked_symbol_sets() -> None:
    one = error_signature("PendingUnbackedSymbolNotFound", PENDING.format(s="{u6}", f="u6"))
    two = error_signature("PendingUnbackedSymbolNotFound", PENDING.format(s="{u1, u0}", f="u0, 3"))
    assert one == two
    assert "{u*}" in one


def test_signatures_group_one_pad_whatever_the_symbolic_strides_of_the_models_tensor() -> None:
    """Mimi's encoder and decoder meet one bug in `pad`; the strides printed after the fake tensor
    are their own tensors' (`Max(...)` or `2*Max(...)`), not the bug's."""
    message = (
        "Pending unbacked symbols {{u0}} not in returned outputs "
        "FakeTensor(..., size=(1, 1, s35 + u0 + 7680)) "
        "(({stride}Max(1, s35 + u0 + 7680), Max(1, s35 + u0 + 7680), 1), 0)."
    )
    encoder = error_signature("PendingUnbackedSymbolNotFound", message.format(stride=""))
    decoder = error_signature("PendingUnbackedSymbolNotFound", message.format(stride="2*"))
    assert encoder == decoder
    assert encoder.endswith("not in returned outputs FakeTensor(...) (...).")
    assert normalised(encoder) == encoder  # a stored signature normalised again is the same


def test_signature_drops_paths_addresses_and_backed_symbols_but_keeps_the_user_function() -> None:
    message = (
        "RuntimeError when making fake tensor call at 0x7f3a9c0b2d30 with size s35\n"
        'from user code:\n   File "/home/ci/site-packages/transformers/models/qwen2_vl/modeling_qwen2_vl.py'
        '", '
        "line 1204, in torch_dynamo_resume_in_get_rope_index_at_1190\n    x = y.view(-1)"
    )
    signature = error_signature("TorchRuntimeError", message)
    expected = "RuntimeError when making fake tensor call at 0x? with size s* [in get_rope_index]"
    assert signature == f"TorchRuntimeError: {expected}"


def test_signature_looks_through_a_backend_wrapper() -> None:
    wrapped = "backend='eager' raised:\nGuardOnDataDependentSymNode: " + GUARD.format(e="Eq(u3, 0)", u="u3")
    direct = error_signature("GuardOnDataDependentSymNode", GUARD.format(e="Eq(u0, 0)", u="u0"))
    assert error_signature("BackendCompilerFailed", wrapped) == direct


def test_classify_rows_and_stats_match_the_fixture() -> None:
    rows = {(row.model, row.flag): row for row in classify(OLD)}
    assert rows[("Qwen2VLForConditionalGeneration", DYNAMIC)].effect == Effect.crashes
    assert rows[("MistralForCausalLM", DYNAMIC)].effect == Effect.flaky
    assert rows[("DetrForObjectDetection", SCALAR)].effect == Effect.timeout
    assert rows[("ViTModel", SCALAR)].effect == Effect.signal
    assert rows[("WhisperModel", SCALAR)].effect == Effect.fixes_crash
    assert ("BartModel", SCALAR) not in rows  # never run under the flag

    stats = flag_stats(OLD, DYNAMIC)
    # The sentinel NonzeroGuardCrash is in no figure: 8 testable, not 9; one crash, not two.
    assert stats.testable == 8  # BartModel has no flag run; Detr timed out but was testable
    assert stats.counts[Effect.crashes] == 1
    assert stats.percentages[Effect.crashes] == round(100 / 8, 1)
    assert stats.crash_to_benefit == 1.0  # one crash, one model helped (Llava 8 -> 6)
    assert stats.mean_graph_reduction == 2.0
    assert stats.mean_graph_reduction_percent == 25.0
    # One bug per (guard expression, user function): Eq in get_rope_index; the sentinel's (Ne in
    # its forward) is a group apart, reproduced but never the flag's.
    assert [group.models for group in stats.crash_groups] == [["Qwen2VLForConditionalGeneration"]]
    assert [group.models for group in stats.sentinel_groups] == [["NonzeroGuardCrash"]]
    assert stats.sentinel_groups[0].signature.endswith(
        "Ne(u*, N) (unhinted: Ne(u*, N)). (Size-like symbols: u*) [in forward]"
    )
    assert [flaky.models for flaky in stats.flaky_groups] == [["MistralForCausalLM"]]
    assert stats.overlap == {SCALAR: ["Qwen2VLForConditionalGeneration"]}
    assert stats.top_break_reasons[0].models == 3
    assert {s.stratum: s.counts.get(Effect.crashes, 0) for s in stats.strata}["vl"] == 1


def test_first_seen_and_trend_follow_history() -> None:
    analysis = night(NEW, [OLD], OLD)
    by_signature = {group.signature: group for group in analysis.flags[DYNAMIC].stats.crash_groups}
    # T5 crashes in the new nightly the way Qwen2-VL crashed in the old one: seen first then.
    guard_group = next(group for sig, group in by_signature.items() if "get_rope_index" in sig)
    assert guard_group.models == ["T5ForConditionalGeneration"]
    assert guard_group.first_seen == OLD.key
    runtime = next(group for sig, group in by_signature.items() if sig.startswith("RuntimeError"))
    assert runtime.first_seen == NEW.key
    points = [summarise(snapshot).trend[SCALAR] for snapshot in (OLD, NEW)]
    assert [(p.key, p.crashes, p.helps) for p in points] == [(OLD.key, 2, 1), (NEW.key, 1, 1)]
    assert analysis.flags[SCALAR].trend == points
    assert analysis.previous_key == OLD.key and analysis.history == [OLD.key]
    assert analysis.flags[DYNAMIC].diff == analysis.diff.flags[DYNAMIC]


def test_a_history_of_summaries_gives_the_same_night() -> None:
    """A night whose history is given as summaries (the site's compact data) is the night of the
    whole snapshots: trends, first sightings and the previous nightly's signatures alike."""
    whole = night(NEW, [OLD], OLD)
    assert night(NEW, [summarise(OLD)], OLD) == whole
    assert whole.flags[DYNAMIC].previous_signatures == summarise(OLD).crash_signatures[DYNAMIC]


def test_a_night_classifies_each_snapshot_once_and_diffs_once(monkeypatch) -> None:
    import sys

    names = ("diff", "night_analysis")
    diff_module, night_module = (sys.modules[f"triagebot.analysis.{name}"] for name in names)

    classified: list[str] = []
    real = night_module.classify

    def counting(snapshot):
        classified.append(snapshot.key)
        return real(snapshot)

    effects: list[str] = []
    real_effect = diff_module.model_effect

    def counting_effect(result, flag):
        effects.append(result.model)
        return real_effect(result, flag)

    summary = summarise(OLD)
    monkeypatch.setattr(night_module, "classify", counting)
    monkeypatch.setattr(diff_module, "model_effect", counting_effect)
    night(NEW, [OLD], OLD)
    assert sorted(classified) == sorted([OLD.key, NEW.key])
    assert effects == []  # the diff reads the rows already made
    classified.clear()
    night(NEW, [summary], OLD)
    assert sorted(classified) == sorted([OLD.key, NEW.key])  # the previous, whole, for the diff


def test_a_crash_group_keeps_the_traceback_tail_of_its_first_model() -> None:
    [group, *_] = flag_stats(NEW, DYNAMIC).crash_groups
    first = NEW.result(group.models[0]).outcomes[DYNAMIC]
    assert group.traceback == first.traceback and group.traceback.startswith("Traceback")


def test_one_rule_chooses_the_history_and_the_previous_nightly() -> None:
    def at(key: str, day: int, git: str):
        return OLD.model_copy(
            update={
                "key": key,
                "created": OLD.created.replace(day=day),
                "environment": OLD.environment.model_copy(update={"torch_git_version": git}),
            }
        )

    a, b, c, now = (
        at("2.12.0.dev1", 1, "a"),
        at("2.12.0.dev2", 2, "b"),
        at("2.12.0.dev3", 3, "c"),
        at("2.12.0.dev4", 4, "d"),
    )
    rebuilt = at("2.12.0.dev4+rebuilt", 4, "d")  # the same build under another key: never compared
    stored = [a, b, c, now, rebuilt]
    history, previous = choose_history(now, stored)
    assert [s.key for s in history] == [a.key, b.key, c.key] and previous is c
    # --previous OLD: the history ends with OLD, whether it is stored or not.
    history, previous = choose_history(now, stored, b)
    assert [s.key for s in history] == [a.key, b.key] and previous is b
    elsewhere = at("2.12.0.dev2+file", 2, "x").model_copy(update={"created": b.created.replace(hour=12)})
    history, previous = choose_history(now, stored, elsewhere)
    assert [s.key for s in history] == [a.key, b.key, elsewhere.key] and previous is elsewhere
    assert choose_history(a, [a]) == ([], None)


def test_diff_of_two_nightlies() -> None:
    changes = diff(OLD, NEW)
    assert changes.compare_url == (
        "https://github.com/pytorch/pytorch/compare/"
        "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678...f0e1d2c3b4a5968778695a4b3c2d1e0f98765432"
    )
    assert not changes.same_build
    assert changes.models_added == ["GPT2LMHeadModel"]
    assert changes.models_removed == ["ViTModel"]
    assert [(c.model, c.old_graphs, c.new_graphs) for c in changes.baseline_graph_changes] == [
        ("LlamaForCausalLM", 3, 2)
    ]
    scalar, dynamic = changes.flags[SCALAR], changes.flags[DYNAMIC]
    assert [c.model for c in scalar.fixed] == ["LlavaForConditionalGeneration"]
    assert [(c.model, c.old_graphs, c.new_graphs) for c in scalar.graph_changes] == []
    assert [c.model for c in dynamic.newly_crashing] == ["T5ForConditionalGeneration"]
    assert dynamic.newly_crashing[0].error.startswith(
        "Could not guard on data-dependent expression Eq(u3, 0)"
    )
    assert [c.model for c in dynamic.signature_changes] == ["Qwen2VLForConditionalGeneration"]
    assert changes.has_changes


def test_diff_of_one_build_with_itself_has_no_changes() -> None:
    same = diff(OLD, OLD)
    assert same.same_build and same.compare_url is None and not same.has_changes


@pytest.mark.parametrize("status", [Status.timeout, Status.signal])
@pytest.mark.parametrize(
    ("stage", "testable"), [("build", False), ("eager", False), ("compile", True), (None, True)]
)
def test_a_hang_or_death_before_the_compiled_call_is_untestable(status, stage, testable) -> None:
    """Testable means built and ran eagerly: a timeout or a signal in build or eager is not."""
    died = Outcome(status=status, error_type="X", error="x", stage=stage)
    effect = effect_of(result(died, outcome(Status.ok, 2)), "f")
    assert (effect != Effect.untestable) == testable
    assert effect_of(result(outcome(Status.ok, 2), died), "f") == (
        Effect.timeout
        if status == Status.timeout and testable
        else Effect.signal
        if testable
        else Effect.engine_error
    )
