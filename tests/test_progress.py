"""What a sweep shows as it runs: each phase its own done/total and ETA, a total that never grows,
and a crash counter of distinct crashing pairs."""

from __future__ import annotations

import io

from triagebot.results import BASELINE, Outcome, RunRecord, Status
from triagebot.sweep.progress import PlainProgress, describe

FLAG = "capture_scalar_outputs"


def run(model: str, config: str, status: Status = Status.ok, attempt: int = 0, backend: str | None = None):
    return RunRecord(
        model=model, config=config, attempt=attempt, backend=backend, outcome=Outcome(status=status)
    )


def test_each_phase_counts_its_own_runs_and_a_crashing_pair_counts_once():
    stream = io.StringIO()
    progress = PlainProgress(stream)
    recorded = [run("A", BASELINE), run("A", FLAG, Status.crash)]
    progress.phase("sweep", 4, recorded=recorded)
    progress.update(run("B", BASELINE))
    progress.update(run("B", FLAG, Status.crash))
    progress.phase("confirmations", 2, note="each crash and wrong result run again")
    progress.update(run("A", FLAG, Status.crash, attempt=1))
    progress.update(run("B", FLAG, Status.crash, attempt=1))
    progress.phase("ladder", 3)
    progress.update(run("A", FLAG, Status.crash, backend="aot_eager"))
    progress.resize(-1)  # the pair stops at its failure: its next rung is not run
    progress.update(run("B", BASELINE, backend="aot_eager"))
    lines = stream.getvalue().splitlines()
    assert lines[0] == "sweep: 4 runs, 2 already recorded"
    assert lines[1].startswith("[sweep 3/4 crashing pairs 1 ETA ")
    assert lines[2].startswith("[sweep 4/4 crashing pairs 2 ETA 0:00:00] B [capture_scalar_outputs] crash: ")
    assert lines[3] == "confirmations: 2 runs (each crash and wrong result run again)"
    assert lines[4].startswith("[confirmations 1/2 crashing pairs 2 ")
    assert "attempt 1" in lines[4]
    assert lines[6] == "ladder: 3 runs"
    assert lines[7].startswith("[ladder 1/3 crashing pairs 2 ") and "on aot_eager" in lines[7]
    assert lines[8].startswith("[ladder 2/2 crashing pairs 2 ETA 0:00:00]")


def test_a_run_is_described_in_the_singular_where_it_counts_one():
    one = Outcome(status=Status.ok, graphs=1, ops=1, break_reasons=["a break"])
    two = Outcome(status=Status.ok, graphs=2, ops=5, break_reasons=["a break", "another"])
    assert describe(RunRecord(model="A", config=FLAG, outcome=one)) == "ok, 1 graph, 1 op, 1 break reason"
    assert describe(RunRecord(model="A", config=FLAG, outcome=two)) == "ok, 2 graphs, 5 ops, 2 break reasons"
