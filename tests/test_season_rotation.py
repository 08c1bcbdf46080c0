"""A season of nightlies under the ladder's rotation, with the tests' builders: each night's
ladder climbs the changed models whose stored evidence is oldest within the default budget, the
coverage of every flag rises to every changed model within the window, each surface says it,
"Ready" waits for it, and a failure seen on an older build is rechecked first."""

from __future__ import annotations

from builders import SCALAR, night_of, ok, result, snapshot

from triagebot.config import Config, SweepSettings
from triagebot.pipeline.sweeping import ladder_evidence
from triagebot.report import run_summary, words
from triagebot.results import BASELINE, ModelSpec, Outcome, Status
from triagebot.store import MemoryStore
from triagebot.sweep.ladder import plan_climbs
from triagebot.sweep.plan import ladder_for

MODELS = [f"Helped{index:02}" for index in range(40)]
SECONDS = 3.0  # each model's sweep run: a pair's climb is estimated at 52.5 s, Inductor's floor 30 of it
WORKERS = 2


def sweep(key: str) -> list:
    """Every model helped by the flag: 3 graphs at baseline, 1 under it."""
    return [result(model, ok(3, seconds=SECONDS), {SCALAR: ok(1, seconds=SECONDS)}) for model in MODELS]


def climb(key: str, store: MemoryStore, broken: frozenset[tuple[str, str]] = frozenset()):
    """One night: the sweep, then the ladder the defaults plan for the stored evidence, its rungs
    all ok but `broken` (model, build) pairs, which crash under Inductor on that build."""
    settings = SweepSettings()
    evidence = ladder_evidence(store, say=print)
    ladder = ladder_for(settings, [ModelSpec(model=model) for model in MODELS], 0, evidence)
    results = sweep(key)
    rungs = ladder.rungs("cpu")  # the CPU's defaults: Inductor for failures, and in rotation
    chosen = ladder.choose(results, {SCALAR: {}})
    counted = {(m, c): r.outcomes[c] for r in results for m, c in chosen if r.model == m}
    climbs = plan_climbs(
        chosen,
        ladder,
        counted,
        rungs,
        {model: SECONDS for model in MODELS},
        {},
        rotation=ladder.rotation(results, {SCALAR: {}}),
        workers=WORKERS,
    )
    by_model = {r.model: r for r in results}
    for (model, config), todo in climbs.todo.items():
        outcomes = {}
        for rung in todo:
            if rung == "inductor" and (model, key) in broken and config == SCALAR:
                outcomes[rung] = Outcome(status=Status.crash, error_type="E", signature="E: e")
                break
            outcomes[rung] = ok(by_model[model].outcomes[config].graphs, seconds=SECONDS)
        by_model[model].ladder[config] = outcomes
    night = snapshot(list(by_model.values()), key=key, ladder=rungs.order)
    return night, [model for model, config in climbs.todo if config == SCALAR]


def season(nights: int, broken: frozenset[tuple[str, str]] = frozenset()):
    """`nights` nightlies, each stored before the next is swept: each night's analysis and the
    models whose flag pair climbed that night."""
    store, out = MemoryStore(), []
    for index in range(1, nights + 1):
        key = f"2.13.0.dev202612{index:02}"
        tonight, climbed = climb(key, store, broken)
        out.append((night_of(tonight, list(store.history()), Config()), climbed))
        store.put(tonight)
    return out


def inductor(night):
    return next(rung for rung in night.flags[SCALAR].figures.coverage if rung.rung == "inductor")


def test_the_rotation_covers_every_changed_model_within_the_window_and_ready_waits_for_it():
    nights = season(4)
    checked = [inductor(night).checked for night, _ in nights]
    assert checked == sorted(checked) and checked[0] < len(MODELS) and checked[-1] == len(MODELS)
    first, climbed = nights[0]
    assert 0 < len(climbed) < len(MODELS)  # the default budget: a share a night, Inductor included
    every = {model for _, climbed in nights for model in climbed}
    assert every == set(MODELS)
    # Not ready before every changed model was checked on Inductor, never "Ready".
    state = first.flags[SCALAR]
    assert not state.verdict.ready
    assert words.verdict_word(state.verdict) == "Not judged yet on aot_eager and inductor"
    said = words.verdict_sentence(state.figures, state.verdict, state.stats.crash_groups)
    assert said.startswith(
        f"Not judged yet on aot_eager and inductor: {len(climbed)} of {len(MODELS)} checked"
    )
    done = next(night for night, _ in nights if inductor(night).checked == len(MODELS))
    assert done.flags[SCALAR].verdict.ready
    # Carried evidence says its build, never tonight's.
    line = words.coverage_line(inductor(done))
    assert inductor(done).carried and done.key not in line
    assert f"on an earlier nightly, the oldest on {inductor(done).oldest})" in line
    assert words.coverage(done.flags[SCALAR].figures) in run_summary(
        done.snapshot.environment, done, published="dry run"
    ).replace("\\", "")


def test_a_failure_seen_on_an_older_build_is_rechecked_first_and_blocks_until_then():
    broken = MODELS[-1]  # the last by name: climbed late in the first rotation
    nights = season(4, broken=frozenset({(broken, "2.13.0.dev20261203")}))
    failed_on = next(index for index, (_, climbed) in enumerate(nights) if broken in climbed)
    assert nights[failed_on][0].key == "2.13.0.dev20261203"
    figures = nights[failed_on][0].flags[SCALAR].figures
    assert (
        inductor(nights[failed_on][0]).failing == 1 and not nights[failed_on][0].flags[SCALAR].verdict.ready
    )
    recheck, climbed = nights[failed_on + 1]
    assert climbed[0] == broken  # before any pair never climbed or climbed longer ago
    assert inductor(recheck).failing == 0 and figures.coverage


def test_a_failure_carried_from_an_earlier_nightly_holds_the_verdict_unless_its_baseline_fails_too():
    def model(baseline_inductor: Outcome, climbs: bool = True):
        flagged = Outcome(status=Status.crash, error_type="E", signature="E: e")
        ladder = {
            BASELINE: {"aot_eager": ok(3), "inductor": baseline_inductor},
            SCALAR: {"aot_eager": ok(1), "inductor": flagged},
        }
        return result("Helped", ok(3), {SCALAR: ok(1)}, ladder=ladder if climbs else {})

    for baseline, word in ((ok(3), "Not judged yet on inductor"), (Outcome(status=Status.crash), "Ready")):
        failed = snapshot([model(baseline)], key="2.13.0.dev20261201", ladder=["aot_eager", "inductor"])
        tonight = snapshot([model(baseline, climbs=False)], key="2.13.0.dev20261202")
        state = night_of(tonight, [failed]).flags[SCALAR]
        assert words.verdict_word(state.verdict) == word
    said = words.verdict_sentence(state.figures, state.verdict, [])
    assert said.startswith("Ready: ") and "to recheck" not in said
    held = night_of(
        snapshot([model(ok(3), climbs=False)], key="2.13.0.dev20261202"),
        [snapshot([model(ok(3))], key="2.13.0.dev20261201", ladder=["aot_eager", "inductor"])],
    ).flags[SCALAR]
    sentence = words.verdict_sentence(held.figures, held.verdict, [])
    assert sentence.startswith("Not judged yet on inductor: 1 of 1 checked, 1 failure on an earlier nightly")
    line = words.coverage_line(held.figures.coverage[1])
    assert line.endswith("1 fails (1 on an earlier nightly, to recheck)") and "2.13.0.dev20261201" in line


def test_evidence_older_than_the_configured_window_does_not_count():
    nights = season(2)
    store = MemoryStore()
    first, _ = climb("2.13.0.dev20261201", store)
    store.put(first)
    second, climbed = climb("2.13.0.dev20261202", store)
    narrow = Config(sweep=SweepSettings(ladder_window=1))
    rung = inductor(night_of(second, [first], narrow))
    assert (rung.checked, rung.carried, rung.window) == (len(climbed), 0, 1)
    assert words.coverage_line(rung).startswith(
        f"On inductor under the flag: {len(climbed)} of 40 changed models checked tonight"
    )
    assert inductor(nights[1][0]).checked == inductor(night_of(second, [first])).checked > len(climbed)
