"""The smallest repro measured: how many crash groups reduce, by how much, and what it costs a night.

    python bench/reduction.py SNAPSHOT [--group-seconds 300] [--night-seconds 1800]
                              [--timeout 300] [--reproduced] [--repeat N] [--out FILE] [--json FILE]

SNAPSHOT is a snapshot or a sweep stream. Its reproductions are written and verified as a
night does (`triagebot.reproduce`; with `--reproduced`, those the snapshot already carries are
taken as they are), then reduced (`triagebot.reduce`) within `--group-seconds` per group and
`--night-seconds` in all. Both stages are timed in this one invocation, so that the reduction's
cost is read against the verification's on the same machine at the same time. Printed: per
group, what changed, the script's lines and run seconds before and after, the probes and the
seconds the reduction took, and the graph-level repro of a failure in a backend; then how many
groups reduced, the median lines and seconds before and after (and their ratios), and the
reduction's seconds against the verification's and against the sweep's recorded run seconds.
With `--repeat N` each reduced group's script before and after is run N more times, the two in
turn, and the medians of those runs are its seconds (one run of each, minutes apart, says little
on a machine others share). `--out` writes the snapshot with its reduced reproductions; `--json`
the figures.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from pathlib import Path

from triagebot.pipeline import read_input
from triagebot.reduce import Bounds, reduce_reproductions
from triagebot.reproduce import reproduce, timed_run
from triagebot.results import Reproduction
from triagebot.store import write_snapshot


def _row(repro: Reproduction) -> dict:
    reduction, graph = repro.reduction, repro.graph
    row = {"model": repro.model, "flag": repro.flag, "backend": repro.backend, "verified": repro.verified}
    if reduction is not None:
        row |= {
            "steps": reduction.steps,
            "lines": [reduction.lines_before, reduction.lines_after],
            "seconds": [reduction.seconds_before, reduction.seconds_after],
            "probes": reduction.probes,
            "reduce_seconds": reduction.seconds,
            "complete": reduction.complete,
        }
    if graph is not None:
        row["graph"] = {
            "lines": graph.lines,
            "verified": graph.verified,
            "seconds": graph.seconds,
            "observed": graph.observed,
        }
    return row


def _side_by_side(before: Reproduction, after: Reproduction, repeat: int, timeout: float) -> list[float]:
    """The median seconds of `repeat` runs of each script, run in turn."""
    runs: list[list[float]] = [[], []]
    for _ in range(repeat):
        for index, repro in enumerate((before, after)):
            runs[index].append(timed_run(repro.script, timeout=timeout).seconds)
    return [round(statistics.median(times), 2) for times in runs]


def _summary(rows: list[dict], verify_seconds: float, reduce_seconds: float, sweep_seconds: float) -> dict:
    measured = [row for row in rows if "lines" in row]
    reduced = [row for row in measured if row["steps"]]

    def median(values: list[float]) -> float | None:
        return round(statistics.median(values), 2) if values else None

    return {
        "groups": len(rows),
        "verified": sum(row["verified"] for row in rows),
        "searched": len(measured),
        "reduced": len(reduced),
        "median_lines": [
            median([row["lines"][0] for row in reduced]),
            median([row["lines"][1] for row in reduced]),
        ],
        "median_seconds": [
            median([row["seconds"][0] for row in reduced]),
            median([row["seconds"][1] for row in reduced]),
        ],
        "median_lines_ratio": median([row["lines"][1] / row["lines"][0] for row in reduced]),
        "median_seconds_ratio": median(
            [row["seconds"][1] / row["seconds"][0] for row in reduced if row["seconds"][0]]
        ),
        "graph_repros_verified": sum(row.get("graph", {}).get("verified", False) for row in rows),
        "verify_seconds": round(verify_seconds, 1),
        "reduce_seconds": round(reduce_seconds, 1),
        "sweep_run_seconds": round(sweep_seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("snapshot", type=Path)
    parser.add_argument("--group-seconds", type=float, default=300.0)
    parser.add_argument("--night-seconds", type=float, default=1800.0)
    parser.add_argument("--timeout", type=float, default=300.0, help="one script's run")
    parser.add_argument(
        "--reproduced", action="store_true", help="take the snapshot's reproductions as they are"
    )
    parser.add_argument("--repeat", type=int, default=0, help="runs of each script before and after, in turn")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--json", type=Path)
    options = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")

    snapshot = read_input(options.snapshot)
    start = time.monotonic()
    found = snapshot.reproductions if options.reproduced else reproduce(snapshot, timeout=options.timeout)
    verify_seconds = time.monotonic() - start
    print(
        f"{sum(r.verified for r in found)} of {len(found)} reproductions verified in {verify_seconds:.0f} s",
        flush=True,
    )
    start = time.monotonic()
    bounds = Bounds(options.group_seconds, options.night_seconds, options.timeout)
    reduced = reduce_reproductions(snapshot, found, bounds)
    reduce_seconds = time.monotonic() - start
    rows = [_row(repro) for repro in reduced]
    for row, before, after in zip(rows, found, reduced, strict=True):
        if options.repeat and row.get("steps"):
            row["seconds"] = _side_by_side(before, after, options.repeat, options.timeout)
    for row in rows:
        print(json.dumps(row))
    summary = _summary(rows, verify_seconds, reduce_seconds, sum(snapshot.model_seconds().values()))
    print(json.dumps(summary, indent=1))
    if options.out:
        write_snapshot(snapshot.model_copy(update={"reproductions": reduced}), options.out)
    if options.json:
        options.json.write_text(
            json.dumps({"groups": rows, "summary": summary}, indent=1) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
