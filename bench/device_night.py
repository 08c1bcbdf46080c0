"""The night on the machine it is built for: how a sweep scales with cores, and CPU against CUDA.

    python bench/device_night.py scaling --sample 64 --jobs 2,8,16 --out DIR
    python bench/device_night.py cuda --sample 64 --seconds 300 --out DIR [--device cuda]
    python bench/device_night.py record DIR [DIR ...] [--json bench/data/device-night.json]

Made for a GPU runner with many cores, where each step must fit one bounded command:

- `scaling` sweeps one stratified sample (seed 0) on the CPU once per worker count, each from
  an empty store (`triagebot sweep`, crashes confirmed, the ladder as configured), and writes
  `scaling-J.jsonl` per count with its wall seconds beside it (`scaling-J.json`).
- `cuda` sweeps the same sample on the GPU with `--jobs auto`, while `nvidia-smi` is polled for
  each worker's GPU memory, then, while `--seconds` last, a second sample drawn with another seed
  (a share of the corpus the CPU was not asked about: its CUDA-only figures). It writes
  `cuda.jsonl`, `cuda.json` (what `auto` chose and why, the wall) and `gpu-memory.csv`.
- `record` reads those folders and prints, per worker count, the wall, the lower bound (run
  seconds / workers) and their ratio, then the CUDA sweep's figures and every (model, flag) whose
  effect differs between the CPU and CUDA sweeps of the same models, and writes them as JSON.

`--device cpu` for `cuda` exercises the step on a machine without a GPU (the memory poll is then
skipped); its figures mean nothing about CUDA.

On the lent H200 (Python 3.12, its own torch with CUDA; no package index): the project's runtime
lock travels as wheels, less numpy and scipy, which are there (about 36 MB). Here, once:

    echo /.whl/ >> .git/info/exclude
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        --platform manylinux_2_34_x86_64 --platform manylinux_2_24_x86_64 \
        -d .whl -r requirements/runtime.lock
    rm .whl/numpy-* .whl/scipy-*

Then one call (carry `.whl`), with the tree in /tmp/night and one archive back:

    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl &&
    export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1 && nvidia-smi -L && nproc &&
    python3 bench/device_night.py scaling --sample 96 --jobs 16,8,2 --out /tmp/night &&
    python3 bench/device_night.py cuda --sample 96 --seconds 200 --out /tmp/night;
    python3 bench/device_night.py record /tmp/night --json $OUT/device-night.json;
    tar czf $OUT/night.tgz --exclude 'store-*' -C /tmp night
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from triagebot.analysis.effects import classify  # noqa: E402
from triagebot.sweep import StreamError, merge, read_stream  # noqa: E402
from triagebot.sweep.summary import run_seconds  # noqa: E402
from triagebot.workers import available_cpus  # noqa: E402

TRIAGEBOT = [sys.executable, "-m", "triagebot"]


def sweep(
    out: Path, name: str, *, sample: int, seed: int, jobs: str, device: str, budget: float | None
) -> dict:
    """One `triagebot sweep` of a sample from an empty store, timed; a budget stops it (its
    stream keeps every finished run, so a stopped sweep is a share, said as such)."""
    stream, store = out / f"{name}.jsonl", out / f"store-{name}"
    shutil.rmtree(store, ignore_errors=True)
    store.mkdir(parents=True)
    command = [*TRIAGEBOT, "sweep", "--sample", str(sample), "--seed", str(seed), "--jobs", jobs]
    command += ["--device", device, "--store", str(store), "--out", str(stream), "--force"]
    started = time.monotonic()
    with (out / f"{name}.log").open("w") as log:
        try:
            finished = (
                subprocess.run(command, timeout=budget, stdout=log, stderr=subprocess.STDOUT).returncode == 0
            )
        except subprocess.TimeoutExpired:
            finished = False
    workers, sweep_wall = engine_figures((out / f"{name}.log").read_text())
    facts = {
        "name": name,
        "sample": sample,
        "seed": seed,
        "jobs": jobs,
        "device": device,
        "workers": workers,
        "sweep_wall": sweep_wall,  # the engine's own: its warm parent's start left out
        "wall": round(time.monotonic() - started, 1),
        "finished": finished,
    }
    (out / f"{name}.json").write_text(json.dumps(facts, indent=1))
    return facts


def engine_figures(log: str) -> tuple[int | None, float | None]:
    """The workers a sweep ran and its own wall seconds, from the line `triagebot sweep` closes
    with (`sweep.summary.SweepFigures.lines`); None for both when it never got there."""
    said = re.search(r"^wall ([\d.]+) s; .* / (\d+) workers", log, re.M)
    return (int(said.group(2)), float(said.group(1))) if said else (None, None)


def scaling(args: argparse.Namespace) -> None:
    for jobs in args.jobs.split(","):
        facts = sweep(
            args.out, f"scaling-{jobs}", sample=args.sample, seed=0, jobs=jobs, device="cpu", budget=None
        )
        print(f"{jobs} workers: {facts['wall']} s", flush=True)


def gpu_memory_poll(path: Path) -> subprocess.Popen | None:
    """Each compute process's GPU memory every half second, as CSV, until stopped."""
    if not shutil.which("nvidia-smi"):
        return None
    query = [
        "nvidia-smi",
        "--query-compute-apps=pid,used_memory",
        "--format=csv,noheader,nounits",
        "-lms",
        "500",
    ]
    return subprocess.Popen(query, stdout=path.open("w"), stderr=subprocess.DEVNULL)


def cuda(args: argparse.Namespace) -> None:
    chosen = {"cpus": available_cpus(), "gpu_memory": None}
    if args.device == "cuda":
        import torch

        chosen["gpu_memory"] = torch.cuda.get_device_properties(0).total_memory
        chosen["gpu"] = torch.cuda.get_device_name(0)
    (args.out / "auto.json").write_text(json.dumps(chosen, indent=1))
    poll = gpu_memory_poll(args.out / "gpu-memory.csv") if args.device == "cuda" else None
    deadline = time.monotonic() + args.seconds
    try:
        facts = sweep(
            args.out, "cuda", sample=args.sample, seed=0, jobs="auto", device=args.device, budget=args.seconds
        )
        print(f"cuda, the scaling sample: {facts['wall']} s", flush=True)
        left = deadline - time.monotonic()
        if facts["finished"] and args.more and left > 60:
            facts = sweep(
                args.out, "cuda-more", sample=args.more, seed=1, jobs="auto", device=args.device, budget=left
            )
            print(
                f"cuda, a further sample (seed 1): {facts['wall']} s, finished: {facts['finished']}",
                flush=True,
            )
    finally:
        if poll:
            poll.terminate()


def streamed(folder: Path, name: str):
    """The records of `name`'s stream, its facts, and its snapshot (None when nothing ran)."""
    stream = folder / f"{name}.jsonl"
    if not stream.exists():
        return None
    facts = json.loads((folder / f"{name}.json").read_text())
    records = read_stream(stream)[1]
    try:
        snapshot = merge([stream], "torch")
    except StreamError:  # a sweep its budget stopped: a share, whose records still count
        snapshot = None
    return records, facts, snapshot


def bound_row(records, facts: dict, workers: int | None) -> dict:
    seconds = sum(run_seconds(record) for record in records)
    bound = seconds / workers if workers else None
    return {
        "workers": workers,
        "runs": len(records),
        "run_seconds": round(seconds, 1),
        "wall": facts["wall"],  # the command's, the warm parent's start included
        "sweep_wall": facts.get("sweep_wall"),
        "bound": round(bound, 1) if bound else None,
        "ratio": round(facts.get("sweep_wall") / bound, 2) if bound and facts.get("sweep_wall") else None,
        "finished": facts["finished"],
    }


def peak_gpu_memory(path: Path) -> dict | None:
    """The largest GPU memory any one worker held (MiB), and the most held at once by all."""
    if not path.exists():
        return None
    per_pid: dict[str, int] = {}
    for row in csv.reader(path.open()):
        if len(row) == 2 and row[1].strip().isdigit():
            per_pid[row[0].strip()] = max(per_pid.get(row[0].strip(), 0), int(row[1]))
    return {"workers_seen": len(per_pid), "peak_per_worker_mib": max(per_pid.values(), default=0)}


def effects_of(snapshot) -> dict[tuple[str, str], str]:
    return {(row.model, row.flag): row.effect.value for row in classify(snapshot)}


def record(args: argparse.Namespace) -> None:
    found: dict = {"scaling": [], "cuda": None, "differences": []}
    cpu_snapshot = None
    for folder in args.folders:
        for path in sorted(folder.glob("scaling-*.jsonl"), key=lambda p: int(p.stem.split("-")[1])):
            records, facts, snapshot = streamed(folder, path.stem)
            found["scaling"].append(bound_row(records, facts, facts["workers"] or int(facts["jobs"])))
            cpu_snapshot = snapshot
        cuda_run = streamed(folder, "cuda")
        if cuda_run:
            records, facts, snapshot = cuda_run
            chosen = json.loads((folder / "auto.json").read_text())
            found["cuda"] = {
                **bound_row(records, facts, facts["workers"]),
                "auto": chosen,
                "gpu_memory": peak_gpu_memory(folder / "gpu-memory.csv"),
            }
            more = streamed(folder, "cuda-more")
            if more:
                found["cuda_more"] = bound_row(more[0], more[1], more[1]["workers"] or facts["workers"])
            if cpu_snapshot is not None and snapshot is not None:
                cpu, gpu = effects_of(cpu_snapshot), effects_of(snapshot)
                found["differences"] = [
                    {"model": model, "flag": flag, "cpu": cpu[model, flag], "cuda": gpu[model, flag]}
                    for model, flag in sorted(cpu.keys() & gpu.keys())
                    if cpu[model, flag] != gpu[model, flag]
                ]
    for row in found["scaling"]:
        print(
            f"{row['workers']:>3} workers: sweep {row['sweep_wall']} s (the command {row['wall']} s), "
            f"bound {row['bound']} s, sweep/bound {row['ratio']}"
        )
    if found["cuda"]:
        print(f"cuda (auto): {json.dumps(found['cuda'])}")
    for row in found["differences"]:
        print(
            f"CPU and CUDA differ: {row['model']} {row['flag']}: {row['cpu']} on CPU, {row['cuda']} on CUDA"
        )
    if args.json:
        args.json.write_text(json.dumps(found, indent=1) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    step = steps.add_parser("scaling", help="the sample swept on the CPU once per worker count")
    step.add_argument("--sample", type=int, default=64)
    step.add_argument("--jobs", default="2,8,16")
    step.add_argument("--out", type=Path, required=True)
    step = steps.add_parser(
        "cuda", help="the sample swept on the GPU with --jobs auto, then more while time lasts"
    )
    step.add_argument("--sample", type=int, default=64)
    step.add_argument("--more", type=int, default=254, help="a further sample (seed 1) while time lasts")
    step.add_argument("--seconds", type=float, default=300)
    step.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    step.add_argument("--out", type=Path, required=True)
    step = steps.add_parser("record", help="the figures of those folders, printed and as JSON")
    step.add_argument("folders", type=Path, nargs="+")
    step.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if getattr(args, "out", None):
        args.out.mkdir(parents=True, exist_ok=True)
    {"scaling": scaling, "cuda": cuda, "record": record}[args.step](args)


if __name__ == "__main__":
    main()
