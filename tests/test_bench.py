"""The benchmarks' arithmetic: the queue the full sweep simulates, shard balance, the check that
skipping finds what running every flag finds, the slow tail and its check, the check that a
shrink kept every run's graphs, the night benchmark's ratios, and the checks that each benchmark
compares like with like (the overhead benchmark's three ways, the night benchmark's two nights)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from builders import SCALAR as FLAG
from builders import result, snapshot

from triagebot.config import DEFAULT_FLAGS
from triagebot.corpus.shrink.families import why_slow
from triagebot.results import (
    BACKWARD_RUNG,
    BASELINE,
    Accuracy,
    AccuracyCheck,
    Check,
    CorpusSelection,
    Environment,
    ModelSpec,
    Outcome,
    RunRecord,
    Snapshot,
    Status,
)
from triagebot.sweep.plan import ladder_for
from triagebot.sweep.summary import runs_made, seconds_by_model, slow_tail, sweep_figures

_SPEC = importlib.util.spec_from_file_location(
    "full_sweep", Path(__file__).resolve().parent.parent / "bench" / "full_sweep.py"
)
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)


def test_the_simulated_queue_runs_a_models_flags_after_its_baseline_at_the_front():
    runs = {"A": {BASELINE: 4.0, FLAG: 4.0}, "B": {BASELINE: 1.0, FLAG: 1.0}, "C": {BASELINE: 1.0, FLAG: 0.0}}
    # two workers: A's baseline 0-4; B's 0-1, then its flag 1-2; C 2-3; A's flag 4-8
    assert bench.simulate(runs, ["A", "B", "C"], 2) == 8.0
    # C first: C 0-1, A 0-4, B 1-2, B's flag 2-3, A's flag 4-8
    assert bench.simulate(runs, ["C", "A", "B"], 2) == 8.0
    assert bench.simulate(runs, ["B", "C", "A"], 1) == 11.0
    assert bench.longest_first(["A", "B", "C"], {"A": 1.0, "C": 5.0}, True) == ["B", "C", "A"]
    assert bench.longest_first(["A", "B", "C"], {"A": 1.0, "C": 5.0}, False) == ["C", "A", "B"]


def test_a_split_by_recorded_cost_balances_what_a_split_by_name_does_not():
    costs = {"a": 10.0, "b": 1.0, "c": 1.0, "d": 10.0, "e": 1.0, "f": 1.0, "g": 1.0, "h": 1.0}
    by_name = bench.by_name(list(costs), 2)
    assert by_name == [["a", "c", "e", "g"], ["b", "d", "f", "h"]]
    assert bench.balance(by_name, costs) == 1.0
    by_cost = bench.by_cost(costs, 2)
    assert sorted(m for shard in by_cost for m in shard) == sorted(costs)
    assert bench.balance(by_cost, costs) == 1.0
    skewed = {"a": 10.0, "b": 1.0, "c": 10.0, "d": 1.0}
    assert bench.balance(bench.by_name(list(skewed), 2), skewed) > 1.8
    assert bench.balance(bench.by_cost(skewed, 2), skewed) == 1.0


def _snapshot(flag_outcomes: dict[str, Outcome]) -> Snapshot:
    baseline = {
        "Single": Outcome(status=Status.ok, graphs=1),
        "Breaks": Outcome(status=Status.ok, graphs=3, break_reasons=["item"]),
        "Crashes": Outcome(status=Status.ok, graphs=2, break_reasons=["nonzero"]),
    }
    return snapshot(
        [result(model, outcome, {FLAG: flag_outcomes[model]}) for model, outcome in baseline.items()]
    )


CRASH = Outcome(status=Status.crash, error_type="E", error="e", signature="E: e")
HELPED = Outcome(status=Status.ok, graphs=1)


def test_compare_agrees_when_skipping_lost_nothing_and_names_what_it_lost():
    always = _snapshot({"Single": Outcome(status=Status.ok, graphs=1), "Breaks": HELPED, "Crashes": CRASH})
    skipping = _snapshot({"Single": Outcome(status=Status.skipped), "Breaks": HELPED, "Crashes": CRASH})
    lines, same = bench.compare_lines(always, skipping)
    assert same, lines
    assert f"{FLAG}: 1 runs skipped; with always, 1 of them had no effect" in lines
    lost = _snapshot({"Single": CRASH, "Breaks": HELPED, "Crashes": CRASH})
    lines, same = bench.compare_lines(lost, skipping)
    assert not same
    assert f"{FLAG}: confirmed crashes: always 2, graph_breaks 1: DIFFERENT" in lines
    assert "  only with always: Single" in lines
    engine = _snapshot({"Single": Outcome(status=Status.engine_error), "Breaks": HELPED, "Crashes": CRASH})
    lines, same = bench.compare_lines(engine, skipping)
    assert same and any("1 were engine errors (Single)" in line for line in lines)


_NIGHT = importlib.util.spec_from_file_location(
    "night", Path(__file__).resolve().parent.parent / "bench" / "night.py"
)
night_bench = importlib.util.module_from_spec(_NIGHT)
sys.modules["night"] = night_bench  # its dataclasses look their module up there
_NIGHT.loader.exec_module(night_bench)


def test_the_night_benchmark_sweeps_counting_only_against_the_defaults_with_the_ladder_scaled():
    counting = night_bench.night_config("counting", 0.1, 3, 101, 2, 180)
    defaults = night_bench.night_config("defaults", 0.1, 3, 101, 2, 180)
    assert (counting.sweep.accuracy, counting.sweep.recompiles, counting.sweep.backends) == (
        False,
        "none",
        [],
    )
    assert (defaults.sweep.accuracy, defaults.sweep.recompiles, defaults.sweep.backends) == (
        True,
        "selection",
        None,
    )
    assert (defaults.sweep.ladder_max_pairs, defaults.sweep.ladder_sample, defaults.sweep.ladder_seconds) == (
        6,
        2,
        90.0,  # 900 x 0.1
    )
    small = night_bench.night_config("defaults", 0.05, 3, 101, 2, 180)
    assert small.sweep.ladder_seconds == 60.0  # 45, raised to twice Inductor's floor: it can climb a failure
    half = night_bench.night_config("defaults", 0.75, 3, 101, 2, 180)
    assert half.sweep.ladder_seconds == 675.0
    for config in (counting, defaults):
        assert (config.sweep.corpus, config.corpus.sample, config.corpus.seed) == (["transformers"], 101, 3)
    phases = {"sweep": {"wall": 100.0, "cpu": 150.0, "runs": 10, "seconds": 180.0}}
    slower = {
        "sweep": {"wall": 110.0, "cpu": 153.0, "runs": 10, "seconds": 189.0},
        "ladder": {"wall": 5.0, "cpu": 9.0, "runs": 2, "seconds": 9.0},
    }
    lines = night_bench.ratio_lines(
        {"night": "counting", "phases": phases}, {"night": "defaults", "phases": slower}
    )
    assert lines[0] == "defaults / counting:"
    assert lines[1].split() == ["sweep", "wall", "1.100", "CPU", "1.020", "run", "seconds", "1.050"]
    assert lines[2].split()[:3] == ["ladder", "(defaults", "only:"]
    assert lines[-1].split() == ["the", "night", "wall", "1.150", "CPU", "1.080", "run", "seconds", "1.100"]


def test_the_night_benchmark_compares_the_backward_rung_and_the_suites_one_change_each():
    """`backward`: the defaults against the defaults without the backward rung, Inductor still
    for the failures only; `suites`: the transformers night against the three suites', whose
    like-with-like check reads the transformers models' runs."""
    from triagebot.sweep.ladder import Ladder

    no_backward = night_bench.night_config("no-backward", 0.1, 3, 101, 2, 180)
    defaults = night_bench.night_config("defaults", 0.1, 3, 101, 2, 180)
    assert no_backward == defaults  # the same [sweep]: only the default ladder differs
    shipped = Ladder(choose=lambda *_: []).rungs("cpu")
    with night_bench.default_ladder("no-backward"):
        cut = Ladder(choose=lambda *_: []).rungs("cpu")
    assert shipped.order == [*cut.order, BACKWARD_RUNG] and cut.failures_only == shipped.failures_only
    assert Ladder(choose=lambda *_: []).rungs("cpu") == shipped  # restored
    suites = night_bench.night_config("suites", 0.1, 3, 101, 2, 180)
    assert suites.sweep.corpus == ["transformers", "diffusers", "timm"]
    assert suites.sweep.model_copy(update={"corpus": ["transformers"]}) == defaults.sweep
    plain = Outcome(status=Status.ok, graphs=1)
    three = night_bench.listed(
        [_record("Bert", BASELINE, plain), _record("diffusers/UNet2DModel", BASELINE, plain)]
    )
    assert night_bench.transformers_runs(three) == [("Bert", BASELINE, False)]
    one = night_bench.listed([_record("Bert", BASELINE, plain)])
    figures = {"defaults": {"claims": []}, "suites": {"claims": []}}
    broken, said = night_bench.like_with_like("suites", figures, {"defaults": one, "suites": three})
    assert broken == [] and "the same 1 runs" in said and "transformers models' runs" in said
    broken, said = night_bench.like_with_like("suites", figures, {"defaults": [], "suites": three})
    assert broken == ["only the suites night made Bert baseline"] and "like with like: NO" in said


def test_the_slow_tail_is_the_share_of_the_sweeps_run_seconds_its_slowest_models_took():
    def run(model, config, seconds, status=Status.ok, model_type=None, **fields):
        spec = ModelSpec(model=model, model_type=model_type)
        return RunRecord(
            model=model, config=config, outcome=Outcome(status=status, seconds=seconds), spec=spec, **fields
        )

    records = [
        run("Slow", BASELINE, 6.0),
        run("Slow", FLAG, 2.0),
        run("Fast", BASELINE, 1.0),
        run("Fast", FLAG, 1.0),
        run("Fast", FLAG, 50.0, attempt=1),  # a confirmation: not the sweep's run
        run("Fast", FLAG, 50.0, backend="aot_eager"),  # a ladder rung: neither
        run("Broken", BASELINE, 9.0, Status.create_error),
        run("Broken", FLAG, 9.0, Status.create_error),  # its baseline's record, copied: nothing ran
    ]
    tail = slow_tail(seconds_by_model(records))
    assert (tail.share, tail.models, tail.slowest) == (9.0 / 19.0, 3, [("Broken", 9.0, "")])
    # 40 per thousand models, at most 40: the issues' 40 slowest of the whole corpus
    many = {f"M{i:04}": (float(i), None) for i in range(2000)}
    assert [len(slow_tail(dict(list(many.items())[:n])).slowest) for n in (3, 122, 1014, 2000)] == [
        1,
        5,
        40,
        40,
    ]
    documented = slow_tail(seconds_by_model([run("Detector", BASELINE, 9.0, model_type="oneformer")]))
    assert documented.slowest[0][2] == why_slow("oneformer") != ""
    assert documented.unexplained == [] and "1 of them in families that say why" in documented.line()
    assert tail.unexplained == [("Broken", 9.0)] and tail.line().endswith("the others: Broken 9.0 s")


def test_a_sweeps_figures_count_its_own_flag_runs_and_name_its_tail_from_a_hundred_models():
    def run(model, config, seconds, status=Status.ok, **fields):
        return RunRecord(
            model=model, config=config, outcome=Outcome(status=status, seconds=seconds), **fields
        )

    records = [
        run("A", BASELINE, 3.0),
        run("A", FLAG, 1.0),
        run("B", BASELINE, 1.0),
        run("B", FLAG, 0.0, Status.skipped),
        run("A", FLAG, 2.0, backend="aot_eager"),  # a ladder rung: no flag run of the sweep's
    ]
    figures = sweep_figures(records, jobs=2, wall=4.0)
    assert (figures.flag_runs, figures.skipped, figures.run_seconds) == (2, 1, 7.0)
    assert not any(line.startswith("slow tail") for line in figures.lines())  # two models: no tail
    many = [run(f"M{i:03}", BASELINE, float(i)) for i in range(100)]
    assert sweep_figures(many, jobs=2, wall=1.0).lines()[-1].startswith("slow tail: the 4 slowest of 100")


def test_the_tail_check_passes_under_15_percent_or_with_every_slow_family_saying_why():
    def timed(model, seconds, model_type=None):
        return result(
            model,
            Outcome(status=Status.ok, graphs=1, seconds=seconds),
            {},
            spec=ModelSpec(model=model, model_type=model_type),
        )

    fast = [timed(f"Fast{i}", 1.0) for i in range(30)]
    lines, met = bench.tail_lines(snapshot([timed("Slow", 10.0), *fast]))  # 10 of 40 s: 25%
    assert not met and lines[1].endswith("Slow: NO REASON")
    lines, met = bench.tail_lines(snapshot([timed("Slow", 10.0, "oneformer"), *fast]))
    assert met and lines[1].endswith(why_slow("oneformer"))
    assert not bench.tail_lines(snapshot([timed("Slow", 6.0), *fast]))[1]  # 6 of 36 s: 16.7%
    assert bench.tail_lines(snapshot([timed("Slow", 5.0), *fast]))[1]  # 5 of 35 s: 14.3%


def test_the_graph_check_names_each_run_whose_graphs_or_break_reasons_changed():
    before = _snapshot({"Single": Outcome(status=Status.skipped), "Breaks": HELPED, "Crashes": CRASH})
    same = _snapshot({"Single": Outcome(status=Status.ok, graphs=1), "Breaks": HELPED, "Crashes": CRASH})
    lines, kept = bench.graph_lines(before, same)
    assert kept and lines == ["5 runs made in both, 0 differ"]  # the skipped run is not compared
    changed = Snapshot.model_validate(same.model_dump())
    changed.results[1].outcomes[BASELINE] = Outcome(status=Status.ok, graphs=2, break_reasons=["item\nwhere"])
    lines, kept = bench.graph_lines(before, changed)
    assert not kept
    assert lines == [
        "Breaks baseline: ('ok', 3, ['item']) -> ('ok', 2, ['item'])",
        "5 runs made in both, 1 differ",
    ]


def test_the_upstream_search_benchmark_counts_requests_and_searches_a_night_once():
    spec = importlib.util.spec_from_file_location(
        "upstream_search", Path(__file__).resolve().parent.parent / "bench" / "upstream_search.py"
    )
    search = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(search)
    found = search.measure(groups=12, issues=40, known=0.5)
    assert found["searched"] == 10  # one of the six error shapes names nothing telling
    assert found["requests"] >= found["searched"] and found["found"] >= 6
    assert found["waited"] == 0  # 12 groups stay within the search limit's minute
    assert found["again"] == 0  # published again: the store's searches answer


def test_a_file_that_is_no_snapshot_is_one_line_not_a_traceback(tmp_path):
    (tmp_path / "notes.json").write_text("{}", encoding="utf-8")
    (tmp_path / "stream.jsonl").write_text("{}\n", encoding="utf-8")
    for name, words in (
        ("missing.json", "No such file or directory"),
        ("notes.json", "not a snapshot or sweep stream"),
        ("stream.jsonl", "line 1 is not a sweep header"),
    ):
        with pytest.raises(SystemExit) as exit_:
            bench.load(tmp_path / name)
        assert str(exit_.value).startswith("full_sweep.py: ") and words in str(exit_.value)


_OVERHEAD = importlib.util.spec_from_file_location(
    "sweep_overhead", Path(__file__).resolve().parent.parent / "bench" / "sweep_overhead.py"
)
overhead = importlib.util.module_from_spec(_OVERHEAD)
_OVERHEAD.loader.exec_module(overhead)

MATCHED = AccuracyCheck(verdict=Accuracy.match)


def _record(model, config, outcome, **fields) -> RunRecord:
    return RunRecord(model=model, config=config, outcome=outcome, **fields)


def test_the_overhead_benchmarks_sweep_makes_the_runs_of_the_other_two_ways_with_their_checks():
    sweep = overhead.settings().sweep
    assert (sweep.confirm, sweep.backends, sweep.recompiles, sweep.accuracy) == (0, [], "none", True)
    assert ladder_for(sweep, []) is None and ladder_for(overhead.settings(ladder=True).sweep, []) is not None
    assert all(flag.when == "always" for flag in overhead.settings().flags.values())
    assert overhead.checks() == {Check.accuracy}  # what (b) and (c) ask
    assert list(overhead._configs()) == [BASELINE, *DEFAULT_FLAGS]

    ok = Outcome(status=Status.ok, graphs=1, accuracy=MATCHED)
    a = [
        _record("Bert", BASELINE, ok),
        _record("Bert", FLAG, Outcome(status=Status.crash)),
        _record("Bert", FLAG, Outcome(status=Status.crash), attempt=1),  # a confirmation
        _record("Bert", BASELINE, ok, backend="aot_eager"),  # a ladder rung
    ]
    b = [("Bert", BASELINE, "ok", ("accuracy",)), ("Bert", FLAG, "crash", ())]
    assert runs_made(a) == b
    assert overhead.same_runs(runs_made(a), b, ("(a)", "(b)")).endswith(
        "made the same 2 runs with the same checks"
    )
    unchecked = [_record("Bert", BASELINE, Outcome(status=Status.ok, graphs=1)), a[1]]
    with pytest.raises(SystemExit) as stopped:
        overhead.same_runs(runs_made(unchecked), b, ("(a)", "(b)"))
    assert str(stopped.value).splitlines() == [
        "(a) and (b) did not make the same runs with the same checks:",
        f"  only in (a): Bert {BASELINE} ok ()",
        f"  only in (b): Bert {BASELINE} ok ('accuracy',)",
    ]


def test_the_night_benchmark_says_when_a_night_did_not_make_the_runs_it_claims():
    counting = night_bench.night_config("counting", 0.1, 3, 101, 2, 180)
    defaults = night_bench.night_config("defaults", 0.1, 3, 101, 2, 180)
    plain, judged = Outcome(status=Status.ok, graphs=1), Outcome(status=Status.ok, graphs=1, accuracy=MATCHED)
    skipped = Outcome(status=Status.skipped)
    rung = _record("Bert", BASELINE, judged, backend="aot_eager")
    assert night_bench.claim_lines("counting", counting, [_record("Bert", BASELINE, plain)]) == []
    assert night_bench.claim_lines("defaults", defaults, [_record("Bert", BASELINE, judged), rung]) == []
    assert night_bench.claim_lines("counting", counting, [_record("Bert", BASELINE, judged), rung]) == [
        f"counting: Bert {BASELINE}: checks accuracy, asked none",
        "counting: 1 ladder rungs, but its [sweep] climbs no ladder",
    ]
    assert night_bench.claim_lines("defaults", defaults, [_record("Bert", BASELINE, plain)]) == [
        f"defaults: Bert {BASELINE}: checks none, asked accuracy"
    ]
    one = night_bench.listed([_record("Bert", BASELINE, plain), _record("Bert", FLAG, skipped)])
    other = night_bench.listed([_record("Bert", BASELINE, judged), _record("Bert", FLAG, judged)])
    assert night_bench.same_list_lines(("counting", one), ("defaults", one)) == []
    assert night_bench.same_list_lines(("counting", one), ("defaults", other)) == [
        f"only the counting night skipped Bert {FLAG}",
        f"only the defaults night made Bert {FLAG}",
    ]


@pytest.mark.slow  # three ways and the ladder over 4 models' 12 runs: minutes on 2 cores
@pytest.mark.torch
def test_the_overhead_benchmark_runs_end_to_end_and_its_ways_make_the_same_runs(tmp_path):
    script = Path(__file__).resolve().parent.parent / "bench" / "sweep_overhead.py"
    done = subprocess.run(
        [sys.executable, str(script), "--list", "sentinels", "--ladder", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stdout.splitlines()
    assert said[0] == "12 runs (4 models x 3 configs), 2 workers, checks: accuracy"
    for ways in ("(a) and (b)", "(a) with the ladder and (b)", "(c) and (b)"):
        assert f"    {ways} made the same 12 runs with the same checks" in said
    assert any(line.startswith("    of (b)'s ") and "; the checks " in line for line in said)
    assert said[-1].startswith("overhead=") and " naive_speedup=" in said[-1]


def test_the_night_benchmark_sums_the_sweeps_run_seconds_by_suite():
    records = [
        _record("Bert", BASELINE, Outcome(status=Status.ok, graphs=1, seconds=2.0)),
        _record("diffusers/UNet2DModel", BASELINE, Outcome(status=Status.ok, graphs=1, seconds=3.0)),
        _record("diffusers/UNet2DModel", FLAG, Outcome(status=Status.ok, graphs=1, seconds=1.0)),
    ]
    phase = night_bench.Phase("sweep", 0.0, wall=4.0, runs=3, seconds=6.0, records=records)
    empty = Snapshot(
        key="k",
        environment=Environment(torch_version="2.13.0"),
        flags={},
        corpus=CorpusSelection(name="x"),
        results=[],
    )
    figures = night_bench.summarise("suites", [phase], empty, 2)
    assert figures["suites"] == {
        "diffusers": {"models": 1, "seconds": 4.0},
        "transformers": {"models": 1, "seconds": 2.0},
    }
    assert (
        "  sweep run seconds by suite: diffusers 1 models 4.0 s, transformers 1 models 2.0 s"
        in night_bench.lines(figures)
    )


_LADDER = importlib.util.spec_from_file_location(
    "ladder_bench", Path(__file__).resolve().parent.parent / "bench" / "ladder.py"
)
ladder_bench = importlib.util.module_from_spec(_LADDER)
_LADDER.loader.exec_module(ladder_bench)


def test_the_ladder_benchmark_climbs_again_from_the_sweeps_records_alone(tmp_path):
    """What both nights share is the stream less its ladder rungs and their confirmations: the
    header, the sweep's runs and the sweep's confirmations, in their order."""
    plain = Outcome(status=Status.ok, graphs=1)
    crash = Outcome(status=Status.crash, error_type="RuntimeError", error="boom")
    sweep = [_record("Bert", BASELINE, plain), _record("Bert", FLAG, crash), _record("Bert", FLAG, crash)]
    sweep[2] = sweep[2].model_copy(update={"attempt": 1})
    rungs = [
        _record("Bert", FLAG, crash).model_copy(update={"backend": backend})
        for backend in ("counting", "aot_eager")
    ]
    rungs.append(rungs[1].model_copy(update={"attempt": 1}))
    header = '{"kind": "header", "flags": {}}'
    stream = tmp_path / "sweep.jsonl"
    lines = [
        header,
        *(
            record.model_dump_json()
            for record in [sweep[0], rungs[0], sweep[1], rungs[1], sweep[2], rungs[2]]
        ),
    ]
    stream.write_text("\n".join(lines) + "\n\n")
    assert ladder_bench.sweep_records(stream) == [header, *(record.model_dump_json() for record in sweep)]
    assert ladder_bench.NIGHTS == ("defaults", "no-backward")  # the two nights `--compare backward` names
    assert set(ladder_bench.NIGHTS) == set(night_bench.COMPARISONS["backward"])
