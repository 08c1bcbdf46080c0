"""The ladder phase of one recorded night, climbed again with and without the backward rung.

    python bench/ladder.py STREAM [--rounds 2] [--out DIR]

Two default nights differ only in their ladder when one of them takes the backward rung out
(`bench/night.py --compare backward`): their sweeps and confirmations make the same runs. Two
whole nights side by side take about three hours on a 2-core machine, so this measures the part
they differ in, side by side: it copies the sweep's records of STREAM (a whole night's
`sweep.jsonl`, from `bench/night.py` or `triagebot sweep`) without its ladder rungs, and resumes
it (`--resume`, as a night resumes an interrupted stream) under the defaults' ladder, with and
without the backward rung, alternating, `--rounds` times each. Each climb spends the same
`ladder_seconds`; it prints each one's ladder wall, runs and run seconds by rung, then the mean
ladder wall of each night and their difference. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import night as night_bench  # noqa: E402

from triagebot.corpus.selection import select  # noqa: E402
from triagebot.sweep import run_sweep, start_parent  # noqa: E402
from triagebot.sweep.plan import plan_for  # noqa: E402

NIGHTS = ("defaults", "no-backward")


def sweep_records(stream: Path) -> list[str]:
    """The stream's lines less its ladder rungs (and their confirmations): what both nights share."""
    lines = stream.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and json.loads(line).get("backend") is None]


def climb(night: str, shared: list[str], models: list[str], out: Path) -> dict:
    """Resume the shared records of `models` under `night`'s ladder; its ladder's wall and rungs."""
    config = night_bench.night_config("defaults", 1.0, 0, len(models), 2, 180.0)
    out.write_text("\n".join(shared) + "\n", encoding="utf-8")
    with open(out.with_suffix(".log"), "w", encoding="utf-8") as log, night_bench.default_ladder(night):
        clock = night_bench.PhaseClock(log)
        run_sweep(plan_for(config, select(config, models=models), out, resume=True), clock)
    rungs = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()[len(shared) :]]
    by_rung: dict[str, list] = {}
    for record in rungs:
        if record.get("backend"):
            runs = by_rung.setdefault(record["backend"], [0, 0.0])
            runs[0] += 1
            runs[1] = round(runs[1] + record["outcome"]["seconds"], 1)
    ladder = next((phase.wall for phase in clock.phases if phase.name == "ladder"), 0.0)
    return {"night": night, "ladder_wall": round(ladder, 1), "by_rung": by_rung}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stream", type=Path, help="a whole night's sweep.jsonl")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path(".triagebot/bench-ladder"))
    args = parser.parse_args()
    if not args.stream.is_file():
        parser.error(f"{args.stream}: no such stream")
    try:
        shared = sweep_records(args.stream)
    except (UnicodeDecodeError, json.JSONDecodeError, AttributeError) as error:
        parser.error(f"{args.stream}: not a sweep's JSON Lines stream ({error})")
    models = sorted({json.loads(line).get("model") for line in shared} - {None})
    print(f"{args.stream}: {len(shared)} records of {len(models)} models without ladder rungs", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    start_parent()
    climbs = []
    for round_ in range(args.rounds):
        for night in NIGHTS:
            climbs.append(climb(night, shared, models, args.out / f"{night}-{round_}.jsonl"))
            print(json.dumps(climbs[-1]), flush=True)
    walls = {night: [c["ladder_wall"] for c in climbs if c["night"] == night] for night in NIGHTS}
    mean = {night: statistics.mean(seconds) for night, seconds in walls.items()}
    print(f"ladder wall, mean of {args.rounds}: " + ", ".join(f"{n} {s:.1f} s" for n, s in mean.items()))
    print(f"the backward rung adds {mean['defaults'] - mean['no-backward']:+.1f} s of ladder wall")
    print(json.dumps({"climbs": climbs, "mean_ladder_wall": mean}))


if __name__ == "__main__":
    main()
