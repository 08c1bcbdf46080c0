"""The full-sweep benchmark's arithmetic: the queue it simulates, shard balance, and the check
that skipping finds what running every flag finds."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from builders import SCALAR as FLAG
from builders import result, snapshot

from triagebot.results import (
    BASELINE,
    Outcome,
    RunRecord,
    Snapshot,
    Status,
)

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
        48.0,
    )
    for config in (counting, defaults):
        assert (config.sweep.corpus, config.corpus.sample, config.corpus.seed) == ("transformers", 101, 3)
    phases = {"sweep": {"wall": 100.0, "cpu": 150.0, "runs": 10, "seconds": 180.0}}
    slower = {
        "sweep": {"wall": 110.0, "cpu": 153.0, "runs": 10, "seconds": 189.0},
        "ladder": {"wall": 5.0, "cpu": 9.0, "runs": 2, "seconds": 9.0},
    }
    lines = night_bench.ratio_lines({"phases": phases}, {"phases": slower})
    assert lines[1].split() == ["sweep", "wall", "1.100", "CPU", "1.020", "run", "seconds", "1.050"]
    assert lines[2].split()[:3] == ["ladder", "(defaults", "only:"]
    assert lines[-1].split() == ["the", "night", "wall", "1.150", "CPU", "1.080", "run", "seconds", "1.100"]


def test_the_slow_tail_is_the_share_of_the_sweeps_run_seconds_its_slowest_models_took():
    def run(model, config, seconds, status=Status.ok):
        return RunRecord(model=model, config=config, outcome=Outcome(status=status, seconds=seconds))

    sweep = night_bench.Phase("sweep", 0.0)
    sweep.records = [
        run("Slow", BASELINE, 6.0),
        run("Slow", FLAG, 2.0),
        run("Fast", BASELINE, 1.0),
        run("Fast", FLAG, 1.0),
        run("Broken", BASELINE, 9.0, Status.create_error),
        run("Broken", FLAG, 9.0, Status.create_error),  # its baseline's record, copied: nothing ran
    ]
    confirmations = night_bench.Phase("confirmations", 0.0)
    confirmations.records = [run("Fast", FLAG, 50.0)]
    assert night_bench.slowest_share([sweep, confirmations], 1) == 9.0 / 19.0


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
