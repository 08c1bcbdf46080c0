"""What a child's start costs a run, with and without forking the next child ahead of need.

The pool forks each (model, config) run's child from the warm parent. Forked ahead of need
(`Pool(prestart=1)`, the default), the next child starts while the running ones work, and on
CUDA initialises CUDA there, so the run it is handed does not wait for either. This runs the
same tasks (a sentinel model, built, run eagerly and compiled: `--model Plain`) through a pool
with `--prestart 0` and with `--prestart 1`, and prints for each: the wall time per task, the
CUDA initialisation a child reported (seconds, and whether it happened before the task was
handed over), and the difference.

    python bench/child_start.py [--device cpu|cuda] [--tasks 40] [--jobs 1] [--model Plain]

On a CUDA machine: `python bench/child_start.py --device cuda --tasks 40 --jobs 1`; the line
`cuda_init_on_path=...` says how many seconds of CUDA start each run waited for, both ways.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from triagebot.corpus import load_corpus  # noqa: E402
from triagebot.results import BASELINE  # noqa: E402
from triagebot.sweep.pool import Pool  # noqa: E402
from triagebot.sweep.tasks import RunKey, run_task  # noqa: E402


def measure(spec, device: str, tasks: int, jobs: int, prestart: int, eager_only: bool) -> dict:
    task = run_task(RunKey(spec.model, BASELINE), spec, {}, eager_only=eager_only)
    work = [task] * tasks
    with Pool(device=device, jobs=jobs, timeout=300, warm_compile=True, prestart=prestart) as pool:
        list(pool.run([task]))  # the parent is up
        start = time.perf_counter()
        results = list(pool.run(work))
        wall = time.perf_counter() - start
    bad = [r.outcome.status.value for r in results if r.outcome.status != "ok"]
    if bad:
        sys.exit(f"runs failed: {bad}")
    starts = [r.message.get("start", {}) for r in results]
    init = [s.get("cuda_init_seconds", 0.0) for s in starts]
    # A child forked ahead that then waited for its task had CUDA up before it was needed; one
    # that did not wait may have made its run wait for some of it (counted whole: an upper bound).
    on_path = [
        s.get("cuda_init_seconds", 0.0) if not s.get("ahead") or s.get("waited_seconds", 0.0) < 0.001 else 0.0
        for s in starts
    ]
    return {
        "wall": wall,
        "per_task": wall / tasks * jobs,
        "run_seconds": statistics.mean(r.outcome.seconds for r in results),
        "ahead": sum(bool(s.get("ahead")) for s in starts),
        "cuda_init": statistics.mean(init),
        "on_path": statistics.mean(on_path),
        "waited": statistics.mean(s.get("waited_seconds", 0.0) for s in starts),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--model", default="Plain", help="a sentinel model")
    parser.add_argument("--eager-only", action="store_true", help="build and run eagerly, no compile")
    args = parser.parse_args()
    spec = next(s for s in load_corpus("sentinels") if s.model == args.model)
    rows = {}
    for prestart in (0, 1):
        rows[prestart] = row = measure(spec, args.device, args.tasks, args.jobs, prestart, args.eager_only)
        print(
            f"prestart={prestart}: {row['wall']:.2f} s for {args.tasks} tasks on {args.jobs} workers, "
            f"{1000 * row['per_task']:.0f} ms per task (run itself {1000 * row['run_seconds']:.0f} ms); "
            f"{row['ahead']} children forked ahead; CUDA init {1000 * row['cuda_init']:.0f} ms per child, "
            f"{1000 * row['on_path']:.0f} ms of it on the run's path; idle before hand-over "
            f"{1000 * row['waited']:.0f} ms"
        )
    saved = rows[0]["per_task"] - rows[1]["per_task"]
    print(
        f"saved_per_task_ms={1000 * saved:.0f} "
        f"cuda_init_on_path={rows[0]['on_path']:.3f},{rows[1]['on_path']:.3f}"
    )


if __name__ == "__main__":
    main()
