"""The ladder as a rotation: each pair's latest evidence per rung, kept in the compact history
with its build, and the order tonight's ladder climbs the pairs a flag changes in."""

from __future__ import annotations

from builders import SCALAR, crash, ok, result, snapshot

from triagebot.analysis.compact import night_data, night_script, read_night_data
from triagebot.analysis.night_analysis import summarise
from triagebot.analysis.rotation import latest_evidence, rotation_pairs, staleness
from triagebot.results import BASELINE, LadderPoint

RUNGS = ["aot_eager", "inductor"]


def climbed(model: str, rungs: dict[str, object], flagged_graphs: int = 1):
    """`model` helped by the flag (2 graphs to `flagged_graphs`), its flag pair having climbed
    `rungs` (rung -> outcome) and its baseline every rung ok."""
    return result(
        model,
        ok(2),
        {SCALAR: ok(flagged_graphs)},
        ladder={SCALAR: rungs, BASELINE: {rung: ok(2) for rung in rungs}},
    )


def night(key: str, *results):
    return snapshot(list(results), key=key)


def test_a_night_keeps_what_its_ladder_said_of_each_pair_in_its_compact_form(tmp_path):
    tonight = night("2.13.0.dev20261201", climbed("Helped", {"aot_eager": ok(1), "inductor": crash()}))
    summary = summarise(tonight)
    assert summary.ladder[SCALAR]["Helped"] == LadderPoint(
        rungs={"aot_eager": "ok", "inductor": "crash"}, graphs=1
    )
    assert summary.ladder[BASELINE]["Helped"].rungs == {"aot_eager": "ok", "inductor": "ok"}
    path = tmp_path / "night.js"
    path.write_text(night_script(night_data(tonight)[0]))
    assert read_night_data(path).ladder == summary.ladder  # read back as a later night's history


def test_the_latest_evidence_of_each_rung_names_its_night_and_its_build():
    older = night("2.13.0.dev20261201", climbed("Helped", {"aot_eager": ok(1), "inductor": crash()}))
    newer = night("2.13.0.dev20261202", climbed("Helped", {"aot_eager": ok(1)}))
    evidence = latest_evidence([older, summarise(newer)])  # whole or summarised, alike
    mine = evidence[("Helped", SCALAR)]
    assert (mine["aot_eager"].key, mine["aot_eager"].age) == ("2.13.0.dev20261202", 0)
    assert (mine["inductor"].word, mine["inductor"].build, mine["inductor"].age) == (
        "crash",
        "2.13.0.dev20261201",
        1,
    )


def test_the_rotation_covers_every_model_a_flag_changes_at_baseline_and_under_it():
    results = [
        result("Helped", ok(2), {SCALAR: ok(1)}),
        result("More", ok(1), {SCALAR: ok(3)}),
        result("Crashes", ok(1), {SCALAR: crash()}),
        result("Same", ok(1), {SCALAR: ok(1)}),
    ]
    assert rotation_pairs(results, {SCALAR: {}}) == {
        (model, config) for model in ("Helped", "More", "Crashes") for config in (BASELINE, SCALAR)
    }


def test_a_failure_on_an_older_build_comes_first_then_the_never_climbed_then_the_oldest():
    nights = [
        night("2.13.0.dev1", climbed("Oldest", {"aot_eager": ok(1), "inductor": ok(1)})),
        night("2.13.0.dev2", climbed("Failed", {"aot_eager": ok(1), "inductor": crash()})),
        night(
            "2.13.0.dev3",
            climbed("Newest", {"aot_eager": ok(1), "inductor": ok(1)}),
            climbed("Changed", {"aot_eager": ok(1), "inductor": ok(1)}, flagged_graphs=2),
        ),
    ]
    evidence = latest_evidence(nights)
    models = ["Newest", "Oldest", "Never", "Failed", "Changed"]
    order = sorted(models, key=lambda model: staleness((model, SCALAR), RUNGS, evidence, graphs=1))
    assert order == ["Failed", "Never", "Oldest", "Changed", "Newest"]
    # Tonight's build is the failure's own: it is evidence of tonight, not an older build's.
    assert staleness(("Failed", SCALAR), RUNGS, evidence, 1, build="2.13.0.dev2")[0] == 2


def test_tonight_s_ladder_climbs_the_changed_models_whose_evidence_is_oldest_first():
    """Read from the store as `run` reads it before the sweep: a model climbed last night waits
    behind one never climbed and one climbed the night before, whatever their change in graphs."""
    from triagebot.config import SweepSettings
    from triagebot.pipeline.sweeping import ladder_evidence
    from triagebot.results import ModelSpec
    from triagebot.store import MemoryStore
    from triagebot.sweep.plan import ladder_for

    def all_ok(model):
        return {rung: ok(1) for rung in ("aot_eager", "inductor", "aot_eager+backward")}

    stored = MemoryStore(
        [
            night("2.13.0.dev1", climbed("Before", all_ok("Before"))),
            night("2.13.0.dev2", climbed("Last", all_ok("Last"))),
        ]
    )
    evidence = ladder_evidence(stored, say=lambda _: None)
    assert (
        evidence[("Last", SCALAR)]["inductor"].age == 0 and evidence[("Before", SCALAR)]["inductor"].age == 1
    )
    ladder = ladder_for(SweepSettings(ladder_sample=0), [ModelSpec(model=m) for m in ("Last",)], 0, evidence)
    tonight = [
        result("Last", ok(9), {SCALAR: ok(1)}),  # the largest change
        result("Before", ok(3), {SCALAR: ok(1)}),
        result("Never", ok(2), {SCALAR: ok(1)}),
    ]
    chosen = ladder.choose(tonight, {SCALAR: {}})
    assert [model for model, config in chosen if config == SCALAR] == ["Never", "Before", "Last"]
    assert ladder.rotation(tonight, {SCALAR: {}}) == set(chosen)


def test_a_helped_model_s_benefit_is_judged_on_the_rungs_its_baseline_ran_too():
    from triagebot.analysis.ladder import survives
    from triagebot.results import Effect

    helped = Effect.reduces_graphs
    both = {"aot_eager": "ok", "inductor": "crash"}
    assert survives(helped, both) is False  # unlike with like: the flag blamed for the model's crash
    assert survives(helped, both, baseline={"aot_eager": "ok", "inductor": "crash"}) is None
    assert survives(helped, both, baseline={"aot_eager": "ok", "inductor": "ok"}) is False
    assert survives(helped, {"aot_eager": "ok"}, baseline={"aot_eager": "ok"}) is True
