"""A full-corpus sweep measured: wall time, lower bound, skipped share, stages, shard balance.

    python bench/full_sweep.py run [--share 0.1] [--jobs 2] [--when config|always|graph_breaks|
                                   named_in_breaks] [--costs SNAPSHOT] [--shards 4] [--out DIR]
    python bench/full_sweep.py compare ALWAYS GRAPH_BREAKS
    python bench/full_sweep.py simulate SNAPSHOT [--jobs 2] [--unknown 0.05] [--trials 200]
    python bench/full_sweep.py balance SNAPSHOT [--shards 4]
    python bench/full_sweep.py tail SNAPSHOT
    python bench/full_sweep.py graphs BEFORE AFTER

`run` sweeps the transformers corpus (or, with `--share S`, a stratified share of it, seed 0)
under the baseline and both default flags, as `triagebot run` would (crashes confirmed once,
`--timeout 180`), and prints the wall time, the lower bound (the sum of the run seconds over the
workers), the share of flag runs skipped (`when = "graph_breaks"`: a baseline of one graph and
no break), the seconds spent in each stage, and the shard balance: the slowest of `--shards`
shards over their mean, by the seconds this sweep recorded, for today's split by name and for a
split by recorded cost. Figures of a share are also given scaled up to the whole corpus (divided
by the share). `--when always` runs every flag on every model; `--costs SNAPSHOT` queues the
longest models of that earlier sweep first. The stream, the snapshot (`snapshot.json`) and the
progress log go to `--out`.

`compare` takes two snapshots (or streams) of one corpus, one swept with `--when always` and one
with `--when graph_breaks`, and checks that they find the same confirmed crashes and the same
helped models per flag, and that every run the second skipped had no effect in the first. It
exits 1 when they differ.

`simulate` replays the runs a snapshot recorded through the sweep's queue (a model's flag runs
follow its baseline, to the front of the queue) on `--jobs` workers, and gives the wall time
over the lower bound for three orders: the corpus's, longest first with models of unknown cost
(a random `--unknown` share of them, as new or changed models would be) queued first, and the
same with them queued last.

`balance` prints the shard balance of a snapshot's recorded costs.

`tail` prints a snapshot's slow tail (`sweep.summary.slow_tail`: its 40 slowest models, 40 per
thousand of a share) with why each family stays slow (its entry's `slow` in
`corpus/shrink/families.py`), and exits 1 when the tail takes more than 15% of the run seconds
and one of its models has no reason. `graphs` compares two snapshots of one corpus, one swept
before a shrink rule changed and one after: every run both made must have the same status,
graph count and break reasons (their first lines); it names the runs that differ and exits 1.
"""

from __future__ import annotations

import argparse
import heapq
import json
import random
import statistics
import sys
import time
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import get_args

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from triagebot.results import BASELINE, FlagSettings, ModelResult, Snapshot, Status, When  # noqa: E402

STAGES = ("build", "eager", "compile")
TAIL_TARGET = 0.15  # the slow tail's share of the run seconds, at most


# --- reading ----------------------------------------------------------------------------------


def load(path: Path) -> Snapshot:
    """A snapshot file, or a sweep stream merged into one; one line and exit 1 where it is neither."""
    from pydantic import ValidationError

    from triagebot.errors import TriagebotError
    from triagebot.sweep import merge

    try:
        if path.suffix == ".jsonl":
            return merge([path])
        return Snapshot.model_validate_json(path.read_text(encoding="utf-8"))
    except TriagebotError as error:  # a stream's own words name the file and the line
        sys.exit(f"full_sweep.py: {error}")
    except (OSError, ValueError, ValidationError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not a snapshot or sweep stream"
        sys.exit(f"full_sweep.py: {path}: {reason}")


def run_seconds(result: ModelResult) -> dict[str, float]:
    """The seconds each config's run took; a skipped run, or the baseline's record copied for a
    flag of an untestable model, took none."""
    seconds = {}
    for config, outcome in result.outcomes.items():
        copied = config != BASELINE and outcome.untestable
        seconds[config] = 0.0 if copied or outcome.status == Status.skipped else outcome.seconds
    return seconds


# --- shard balance ----------------------------------------------------------------------------


def by_name(models: Sequence[str], shards: int) -> list[list[str]]:
    """Today's split (`select_shard`): every n-th model in name order."""
    ordered = sorted(models)
    return [ordered[i::shards] for i in range(shards)]


def by_cost(costs: Mapping[str, float], shards: int) -> list[list[str]]:
    """Longest first onto the least loaded shard (ties by name): a deterministic balanced split."""
    heap = [(0.0, i) for i in range(shards)]
    split: list[list[str]] = [[] for _ in range(shards)]
    for model in sorted(costs, key=lambda m: (-costs[m], m)):
        load, i = heapq.heappop(heap)
        split[i].append(model)
        heapq.heappush(heap, (load + costs[model], i))
    return split


def balance(split: list[list[str]], costs: Mapping[str, float]) -> float:
    loads = [sum(costs.get(m, 0.0) for m in shard) for shard in split]
    mean = statistics.mean(loads)
    return max(loads) / mean if mean else 1.0


def balance_lines(costs: Mapping[str, float], shards: int) -> list[str]:
    return [
        f"shard balance over {shards} shards (slowest / mean of recorded seconds, {len(costs)} models): "
        f"by name {balance(by_name(list(costs), shards), costs):.3f}, "
        f"by recorded cost {balance(by_cost(costs, shards), costs):.3f}"
    ]


# --- simulate ---------------------------------------------------------------------------------


def simulate(runs: Mapping[str, Mapping[str, float]], order: Sequence[str], jobs: int) -> float:
    """Wall time of the sweep's queue: baselines in `order`; when a baseline ends, its model's
    flag runs go to the front. Runs that took no time (skipped, copied) are not queued."""
    queue = deque((model, BASELINE) for model in order)
    free = [0.0] * jobs  # when each worker is next free
    running: list[tuple[float, str, str]] = []  # (end, model, config)
    now = 0.0
    while queue or running:
        while queue and free and min(free) <= now:
            free.remove(min(free))
            model, config = queue.popleft()
            heapq.heappush(running, (now + runs[model][config], model, config))
        end, model, config = heapq.heappop(running)
        now = end
        free.append(end)
        if config == BASELINE:
            flags = [c for c, s in runs[model].items() if c != BASELINE and s > 0]
            queue.extendleft((model, c) for c in reversed(flags))
    return now


def longest_first(order: Sequence[str], costs: Mapping[str, float], unknown_first: bool) -> list[str]:
    unknown = [m for m in order if m not in costs]
    known = sorted((m for m in order if m in costs), key=lambda m: -costs[m])
    return unknown + known if unknown_first else known + unknown


def simulate_lines(snapshot: Snapshot, jobs: int, unknown: float, trials: int, seed: int = 0) -> list[str]:
    runs = {r.model: run_seconds(r) for r in snapshot.results}
    order = [r.model for r in snapshot.results]
    total = {m: sum(s.values()) for m, s in runs.items()}
    bound = sum(total.values()) / jobs
    rng = random.Random(seed)
    ratios: dict[str, list[float]] = {"corpus order": [], "unknown first": [], "unknown last": []}
    for _ in range(trials):
        hidden = set(rng.sample(order, round(unknown * len(order))))
        known = {m: c for m, c in total.items() if m not in hidden}
        ratios["corpus order"].append(simulate(runs, order, jobs) / bound)
        ratios["unknown first"].append(simulate(runs, longest_first(order, known, True), jobs) / bound)
        ratios["unknown last"].append(simulate(runs, longest_first(order, known, False), jobs) / bound)
    lines = [
        f"{len(order)} models, {sum(total.values()):.0f} run seconds, {jobs} workers: "
        f"lower bound {bound:.0f} s; {unknown:.0%} of the models of unknown cost, {trials} draws"
    ]
    for name, values in ratios.items():
        lines.append(
            f"  {name:14s} wall / bound: mean {statistics.mean(values):.4f}, worst {max(values):.4f}"
        )
    return lines


# --- compare ----------------------------------------------------------------------------------


def compare_lines(always: Snapshot, skipping: Snapshot) -> tuple[list[str], bool]:
    """Per flag: confirmed crashes and helped models of both sweeps, and every run the second
    skipped checked against the first. Returns the lines and whether the two agree."""
    from triagebot.analysis import classify
    from triagebot.results import Effect

    def effects(snapshot: Snapshot) -> dict[tuple[str, str], Effect]:
        return {(row.model, row.flag): row.effect for row in classify(snapshot)}

    first, second = effects(always), effects(skipping)
    lines, same = [], True
    shared = set(always.flags) & set(skipping.flags)
    models = {m for m, _ in first} & {m for m, _ in second}
    for flag in [f for f in always.flags if f in shared]:
        for name, effect in (("confirmed crashes", Effect.crashes), ("helped models", Effect.reduces_graphs)):
            a = {m for m in models if first.get((m, flag)) == effect}
            b = {m for m in models if second.get((m, flag)) == effect}
            agree = a == b
            same &= agree
            lines.append(
                f"{flag}: {name}: always {len(a)}, graph_breaks {len(b)}: {'same' if agree else 'DIFFERENT'}"
            )
            if not agree:
                lines.append(f"  only with always: {', '.join(sorted(a - b)) or '-'}")
                lines.append(f"  only with graph_breaks: {', '.join(sorted(b - a)) or '-'}")
        skipped = [m for m in models if second.get((m, flag)) == Effect.skipped]
        # an engine error under `always` (the flag run could not rebuild the model) checks nothing
        unchecked = sorted(m for m in skipped if first.get((m, flag)) == Effect.engine_error)
        broken = sorted(
            m for m in skipped if first.get((m, flag)) not in (Effect.no_effect, Effect.engine_error)
        )
        same &= not broken
        line = (
            f"{flag}: {len(skipped)} runs skipped; with always, "
            f"{len(skipped) - len(broken) - len(unchecked)} of them had no effect"
        )
        if unchecked:
            line += f", {len(unchecked)} were engine errors ({', '.join(unchecked)})"
        if broken:
            line += f"; the others: {', '.join(f'{m} ({first.get((m, flag))})' for m in broken)}"
        lines.append(line)
    flaky = [
        f"{flag}: flaky always {sum(e == Effect.flaky for (m, f), e in first.items() if f == flag)}, "
        f"graph_breaks {sum(e == Effect.flaky for (m, f), e in second.items() if f == flag)}"
        for flag in shared
    ]
    return lines + flaky, same


# --- tail and graphs --------------------------------------------------------------------------


def tail_lines(snapshot: Snapshot) -> tuple[list[str], bool]:
    """The snapshot's slow tail (`sweep.summary.slow_tail`), one line per model of it, and whether
    it meets its target: at most 15% of the run seconds, or every model of it in a family that
    says why it stays slow."""
    from triagebot.sweep.summary import slow_tail

    tail = slow_tail(
        {
            result.model: (sum(run_seconds(result).values()), result.spec.model_type if result.spec else None)
            for result in snapshot.results
        }
    )
    lines = [tail.line()]
    lines += [f"  {seconds:6.1f} s  {model}: {why or 'NO REASON'}" for model, seconds, why in tail.slowest]
    return lines, tail.share <= TAIL_TARGET or not tail.unexplained


def graph_lines(before: Snapshot, after: Snapshot) -> tuple[list[str], bool]:
    """Every (model, config) run both snapshots made: the same status, graph count and break
    reasons (their first lines), as a shrink rule must keep them. Returns the differences and
    whether there are none."""
    from triagebot.analysis.breaks import reason_lines

    def seen(snapshot: Snapshot) -> dict[tuple[str, str], tuple]:
        return {
            (result.model, config): (
                outcome.status.value,
                outcome.graphs,
                sorted(reason_lines(outcome.break_reasons)),
            )
            for result in snapshot.results
            for config, outcome in result.outcomes.items()
            if outcome.status != Status.skipped
        }

    first, second = seen(before), seen(after)
    both = sorted(set(first) & set(second))
    differ = [key for key in both if first[key] != second[key]]
    lines = [
        f"{model} {config}: {first[model, config]} -> {second[model, config]}" for model, config in differ
    ]
    lines.append(f"{len(both)} runs made in both, {len(differ)} differ")
    return lines, not differ


# --- run --------------------------------------------------------------------------------------


def flags_for(when: str) -> dict[str, FlagSettings]:
    from triagebot.config import DEFAULT_FLAGS

    if when == "config":
        return dict(DEFAULT_FLAGS)
    return {name: flag.model_copy(update={"when": when}) for name, flag in DEFAULT_FLAGS.items()}


def share_of(specs: list, share: float, seed: int) -> tuple[list, object]:
    from triagebot.corpus.sampling import sample

    return sample(specs, max(1, round(share * len(specs))), seed=seed, corpus="transformers")


def run(args: argparse.Namespace) -> None:
    from triagebot.config import check_jobs, jobs_value
    from triagebot.results import CorpusSelection
    from triagebot.sweep import SweepPlan, merge, run_sweep, start_parent
    from triagebot.sweep.progress import PlainProgress
    from triagebot.sweep.summary import sweep_figures

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    start_parent()
    from triagebot.corpus import load_corpus

    specs = load_corpus(args.corpus)
    if args.share < 1:
        chosen, selection = share_of(specs, args.share, args.seed)
    else:
        chosen, selection = specs, CorpusSelection(name=args.corpus, models=[s.model for s in specs])
    costs = load(args.costs).model_seconds() if args.costs else None
    loaded = time.monotonic() - began
    print(
        f"{len(chosen)} of {len(specs)} models ({args.share:g} of the corpus), when={args.when}, "
        f"jobs={args.jobs}, costs={'from ' + str(args.costs) if costs else 'none'}; "
        f"corpus loaded in {loaded:.1f} s",
        flush=True,
    )
    with open(out / "progress.log", "w", encoding="utf-8") as log:
        result = run_sweep(
            SweepPlan(
                chosen,
                flags_for(args.when),
                out / "sweep.jsonl",
                corpus=selection,
                device=args.device,
                jobs=check_jobs(jobs_value(args.jobs)),
                timeout=args.timeout,
                confirm=args.confirm,
                costs=costs,
            ),
            progress=PlainProgress(log),
        )
    wall = time.monotonic() - began
    snapshot = merge([result.path])
    (out / "snapshot.json").write_text(snapshot.model_dump_json(indent=1) + "\n", encoding="utf-8")
    figures = sweep_figures(result.new_records, result.jobs, result.seconds)
    scale = 1 / args.share
    print(f"wall {wall:.1f} s in all (corpus loading and the warm parent's start included)")
    for line in figures.lines():
        print(line)
    if args.share < 1:
        print(
            f"scaled to the whole corpus (x{scale:.1f}): wall {figures.wall * scale / 60:.1f} min, "
            f"lower bound {figures.lower_bound * scale / 60:.1f} min"
        )
    stats = {
        "models": len(chosen),
        "share": args.share,
        "when": args.when,
        "jobs": result.jobs,
        "wall": round(wall, 1),
        "sweep_wall": round(figures.wall, 1),
        "lower_bound": round(figures.lower_bound, 1),
        "run_seconds": round(figures.run_seconds, 1),
        "skipped": figures.skipped,
        "flag_runs": figures.flag_runs,
        "skipped_share": round(figures.skipped_share, 4),
        "engine_errors": figures.engine_errors,
        "stages": {stage: round(figures.stages.get(stage, 0.0), 1) for stage in STAGES},
    }
    costs_now = snapshot.model_seconds()
    for line in balance_lines(costs_now, args.shards):
        print(line)
    stats["balance_by_name"] = round(balance(by_name(list(costs_now), args.shards), costs_now), 4)
    stats["balance_by_cost"] = round(balance(by_cost(costs_now, args.shards), costs_now), 4)
    print(json.dumps(stats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    sweep = commands.add_parser("run", help="sweep the corpus, or a share of it, and measure it")
    sweep.add_argument("--corpus", default="transformers")
    sweep.add_argument("--share", type=float, default=1.0, help="a stratified share of the corpus (0-1]")
    sweep.add_argument("--seed", type=int, default=0)
    sweep.add_argument("--jobs", default="2", help="workers, or auto")
    sweep.add_argument("--device", default="cpu")
    sweep.add_argument("--timeout", type=float, default=180.0)
    sweep.add_argument("--confirm", type=int, default=1)
    sweep.add_argument("--when", choices=("config", *get_args(When)), default="config")
    sweep.add_argument("--costs", type=Path, default=None, help="an earlier snapshot: longest models first")
    sweep.add_argument("--shards", type=int, default=4)
    sweep.add_argument("--out", type=Path, default=Path(".triagebot/bench-full-sweep"))
    compare = commands.add_parser("compare", help="same crashes and helped models with and without skipping")
    compare.add_argument("always", type=Path)
    compare.add_argument("graph_breaks", type=Path)
    sim = commands.add_parser("simulate", help="the queue's wall time for three orders of a snapshot's runs")
    sim.add_argument("snapshot", type=Path)
    sim.add_argument("--jobs", type=int, default=2)
    sim.add_argument("--unknown", type=float, default=0.05)
    sim.add_argument("--trials", type=int, default=200)
    shards = commands.add_parser("balance", help="shard balance of a snapshot's recorded costs")
    shards.add_argument("snapshot", type=Path)
    shards.add_argument("--shards", type=int, default=4)
    tail = commands.add_parser("tail", help="the slowest models of a snapshot and why each stays slow")
    tail.add_argument("snapshot", type=Path, help="a snapshot (.json) or a sweep stream (.jsonl)")
    graphs = commands.add_parser("graphs", help="same status, graphs and break reasons in two snapshots")
    graphs.add_argument("before", type=Path, help="swept before the shrink rule changed")
    graphs.add_argument("after", type=Path, help="swept after it, of the same corpus")
    args = parser.parse_args()
    if args.command == "run":
        if not 0 < args.share <= 1:
            parser.error("--share must be in (0, 1]")
        run(args)
    elif args.command == "compare":
        lines, same = compare_lines(load(args.always), load(args.graph_breaks))
        print("\n".join(lines))
        print("same crashes and helped models" if same else "DIFFERENT: see above")
        sys.exit(0 if same else 1)
    elif args.command in ("tail", "graphs"):
        lines, met = (
            tail_lines(load(args.snapshot))
            if args.command == "tail"
            else graph_lines(load(args.before), load(args.after))
        )
        print("\n".join(lines))
        sys.exit(0 if met else 1)
    elif args.command == "simulate":
        print("\n".join(simulate_lines(load(args.snapshot), args.jobs, args.unknown, args.trials)))
    else:
        print("\n".join(balance_lines(load(args.snapshot).model_seconds(), args.shards)))


if __name__ == "__main__":
    main()
