"""Two default nights side by side in one invocation: what a part of the night costs.

    python bench/night.py [--compare counting|backward|suites[,...]] [--share 0.12] [--seed 0]
                          [--jobs 2] [--timeout 180] [--no-repros] [--first NIGHT] [--out DIR]

Draws a stratified share of the corpus (`[corpus] sample`, as a night with a sample draws it;
`--share 1`: the whole corpus) and sweeps it twice on this machine, one after the other, with both
default flags and crashes confirmed once. `--compare` names the two nights:

- `counting` (the default): `counting`, the counting backend alone (`accuracy = false`,
  `recompiles = "none"`, `backends = []`), against `defaults`, `[sweep]` as it ships (accuracy,
  the ladder with its recompile and backward rungs, its bounds);
- `backward`: `no-backward`, the defaults with the backward rung taken out of the default ladder
  (and nothing else: Inductor still for the failures' representatives only), against `defaults`;
- `suites`: `defaults` on the transformers corpus against `suites`, the defaults on the three
  suites side by side (`default_suites()`; a suite whose library this machine cannot import is
  skipped, as a night skips it), the share drawn from each.

Several, comma-separated (`--compare backward,suites`), sweep each night they name once.

The defaults' ladder bounds (`ladder_max_pairs`, `ladder_sample`, `ladder_seconds`, which are
per night) are scaled by the share, so that a share costs what its part of a whole night would;
the seconds no lower than twice Inductor's floor, or a small share's ladder climbs nothing.
Then each night's reproductions are written and verified (`reproduce`, as `triagebot run` does),
unless `--no-repros`. For each night it prints every phase's wall time, CPU time, runs and run
seconds (the sum of the seconds the runs recorded); the sweep's wall against its lower bound (run
seconds / workers); the sweep's run seconds per suite; the seconds per stage of a run; the
ladder's seconds per rung and the pairs it did not reach; then the ratios second / first. The
warm parent starts before either night and is shared by both. The last line is JSON.

Both nights must make the runs they claim, or their ratios compare unlike things: every run of
each sweep made the checks its `[sweep]` asks of every run (`plan.checks_for`), ladder rungs
appear only in a night that climbs them, and the two sweeps made and skipped the same (model,
config) runs (for `suites`, the transformers models' runs: the other suites' are what it adds).
A line says so, or names what broke it, and then the benchmark exits 1 (after its figures and
its JSON).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from triagebot.config import Config, SweepSettings, parse_config  # noqa: E402
from triagebot.corpus.selection import Selected, select  # noqa: E402
from triagebot.pipeline import script_lanes  # noqa: E402
from triagebot.reproduce import reproduce  # noqa: E402
from triagebot.results import BACKWARD_RUNG, RUNGS, RunRecord, Snapshot, default_suites, suite_of  # noqa: E402
from triagebot.sweep import merge, run_sweep, start_parent  # noqa: E402
from triagebot.sweep.parent import parent_pid  # noqa: E402
from triagebot.sweep.plan import checks_for, ladder_for, plan_for  # noqa: E402
from triagebot.sweep.progress import PlainProgress  # noqa: E402
from triagebot.sweep.summary import run_seconds, runs_made, seconds_by_model, slow_tail  # noqa: E402

COMPARISONS = {
    "counting": ("counting", "defaults"),
    "backward": ("no-backward", "defaults"),
    "suites": ("defaults", "suites"),
}
# Below twice Inductor's floor (`Rung.floor`), a scaled ladder budget admits no failure's
# representative, and with nothing run there is nothing to calibrate the next round from: a small
# share's ladder would climb nothing and its figures would mean nothing.
LADDER_SECONDS_FLOOR = 2 * RUNGS["inductor"].floor
STAGES = ("build", "eager", "eager_again", "compile", "accuracy", "float64", "recompile")


@dataclass
class Phase:
    name: str
    started: float
    cpu_started: float = 0.0
    wall: float = 0.0
    cpu: float = 0.0  # CPU seconds of the phase's children (runs and repro scripts)
    runs: int = 0
    seconds: float = 0.0
    records: list[RunRecord] = field(default_factory=list)


def children_cpu() -> float:
    """CPU seconds (user and system) of the finished children of the warm parent (every run's
    child is its child, reaped by it) and of this process (the repro scripts): unlike wall time
    and run seconds, hardly moved by what else the machine runs meanwhile."""
    own = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = own.ru_utime + own.ru_stime
    pid = parent_pid()
    if pid is not None:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            seconds += (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")  # cutime, cstime
        except (OSError, IndexError, ValueError):
            pass
    return seconds


class PhaseClock(PlainProgress):
    """Plain progress lines, and each phase's wall time, runs and run seconds."""

    def __init__(self, stream) -> None:
        super().__init__(stream)
        self.phases: list[Phase] = []

    def phase(self, name: str, total: int, recorded: Sequence[RunRecord] = (), note: str = "") -> None:
        self._stop()
        self.phases.append(Phase(name, time.monotonic(), children_cpu()))
        super().phase(name, total, recorded, note)

    def step(self, what: str) -> None:  # a run (`update` comes here too) or a reproduction
        self.phases[-1].runs += 1
        super().step(what)

    def update(self, record: RunRecord) -> None:
        current = self.phases[-1]
        current.seconds += run_seconds(record)
        current.records.append(record)
        super().update(record)

    def close(self) -> None:
        self._stop()
        super().close()

    def _stop(self) -> None:
        current = self.phases[-1] if self.phases else None
        if current is not None and not current.wall:
            current.wall = time.monotonic() - current.started
            current.cpu = children_cpu() - current.cpu_started


def night_corpus(night: str) -> list[str]:
    return default_suites() if night == "suites" else ["transformers"]


def night_config(night: str, share: float, seed: int, sample: int, jobs: int, timeout: float) -> Config:
    """The `triagebot.toml` of one night; the defaults' ladder bounds scaled by `share`."""
    corpus = ", ".join(f'"{name}"' for name in night_corpus(night))
    sweep = [f"corpus = [{corpus}]", 'device = "cpu"', f"jobs = {jobs}", f"timeout = {float(timeout)}"]
    if night == "counting":
        sweep += ["accuracy = false", 'recompiles = "none"', "backends = []"]
    else:
        base = SweepSettings()
        sweep += [
            f"ladder_max_pairs = {max(1, round(base.ladder_max_pairs * share))}",
            f"ladder_sample = {round(base.ladder_sample * share)}",
            f"ladder_seconds = {max(base.ladder_seconds * share, LADDER_SECONDS_FLOOR):.1f}",
        ]
    return parse_config("[sweep]\n" + "\n".join(sweep) + f"\n[corpus]\nsample = {sample}\nseed = {seed}\n")


@contextmanager
def default_ladder(night: str) -> Iterator[None]:
    """The default ladder of the night: `no-backward` takes the backward rung out of it and
    leaves the rest as it ships (`[sweep] backends` cannot say "the defaults but one": a list
    climbs Inductor on every pair)."""
    shipped = RUNGS[BACKWARD_RUNG]
    if night == "no-backward":
        RUNGS[BACKWARD_RUNG] = dataclasses.replace(shipped, default=False)
    try:
        yield
    finally:
        RUNGS[BACKWARD_RUNG] = shipped


def claim_lines(night: str, config: Config, records: Sequence[RunRecord]) -> list[str]:
    """Where the night's records break what its config claims, a line each (at most five runs
    named): a run that ran without the checks `[sweep]` asks of every run, or with others; a
    ladder rung in a night that climbs none. [] when it made the runs it claims."""
    asked = tuple(sorted(checks_for(config.sweep)))
    wrong = [
        f"{model} {run_config}: checks {', '.join(made) or 'none'}, asked {', '.join(asked) or 'none'}"
        for model, run_config, status, made in runs_made(records)
        if status == "ok" and made != asked
    ]
    said = [f"{night}: {line}" for line in wrong[:5]]
    if len(wrong) > 5:
        said.append(f"{night}: and {len(wrong) - 5} more runs with other checks")
    rungs = sum(1 for record in records if record.backend is not None)
    if rungs and ladder_for(config.sweep, []) is None:
        said.append(f"{night}: {rungs} ladder rungs, but its [sweep] climbs no ladder")
    return said


Listed = list[tuple[str, str, bool]]
"""A sweep's own runs: (model, config, whether it was skipped)."""


def listed(records: Sequence[RunRecord]) -> Listed:
    return [(model, config, status == "skipped") for model, config, status, _ in runs_made(records)]


def same_list_lines(first: tuple[str, Listed], second: tuple[str, Listed]) -> list[str]:
    """Where the two sweeps' lists of runs differ, a line each (at most five per side)."""
    said = []
    for (name, mine), (_, theirs) in ((first, second), (second, first)):
        only = sorted(set(mine) - set(theirs))
        said += [f"only the {name} night {'skipped' if skip else 'made'} {m} {c}" for m, c, skip in only[:5]]
        if len(only) > 5:
            said.append(f"and {len(only) - 5} more runs only in the {name} night")
    return said


def transformers_runs(runs: Listed) -> Listed:
    """The runs of the transformers models: what a three-suite night shares with a transformers one."""
    return [run for run in runs if suite_of(run[0]) == "transformers"]


def sweep_night(
    night: str, config: Config, selected: Selected, out: Path, repros: bool
) -> tuple[dict, Listed]:
    """The night's figures (its `claims` among them: `claim_lines`) and its sweep's runs."""
    folder = out / night
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "progress.log", "w", encoding="utf-8") as log:
        clock = PhaseClock(log)
        result = run_sweep(plan_for(config, selected, folder / "sweep.jsonl"), clock)
        snapshot = merge([result.path])
        if repros:  # as `triagebot run` makes them (`pipeline.with_reproductions`), timed as a phase
            lanes = script_lanes(config)
            found = reproduce(snapshot, timeout=config.sweep.timeout, progress=clock, lanes=lanes)
            clock.close()
            snapshot = snapshot.model_copy(update={"reproductions": found})
    (folder / "snapshot.json").write_text(snapshot.model_dump_json(indent=1) + "\n", encoding="utf-8")
    figures = summarise(night, clock.phases, snapshot, result.jobs)
    records = [record for phase in clock.phases for record in phase.records]
    figures["claims"] = claim_lines(night, config, records)
    swept = [record for phase in clock.phases if phase.name == "sweep" for record in phase.records]
    return figures, listed(swept)


def summarise(night: str, phases: list[Phase], snapshot: Snapshot, jobs: int) -> dict:
    """The night's figures: each phase's, the stages', the rungs', the suites' and the slow tail."""
    stages: dict[str, float] = defaultdict(float)
    rungs: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for phase in phases:
        for record in phase.records:
            if run_seconds(record):
                for stage, seconds in record.outcome.stage_seconds.items():
                    stages[stage] += seconds
            if record.backend:
                rungs[record.backend][0] += 1
                rungs[record.backend][1] += record.outcome.seconds
    swept = seconds_by_model([r for p in phases if p.name == "sweep" for r in p.records])
    tail = slow_tail(swept)
    suites: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for model, (seconds, _) in swept.items():
        suites[suite_of(model)][0] += 1
        suites[suite_of(model)][1] += seconds
    return {
        "night": night,
        "jobs": jobs,
        "phases": {
            p.name: {
                "wall": round(p.wall, 1),
                "cpu": round(p.cpu, 1),
                "runs": p.runs,
                "seconds": round(p.seconds, 1),
            }
            for p in phases
        },
        "stages": {stage: round(stages.get(stage, 0.0), 1) for stage in STAGES},
        "rungs": {rung: {"runs": int(n), "seconds": round(s, 1)} for rung, (n, s) in rungs.items()},
        "unreached": len(snapshot.ladder_unreached),
        "reproductions": len(snapshot.reproductions),
        "slowest": {"models": len(tail.slowest), "share": round(tail.share, 3)},
        "suites": {
            suite: {"models": int(n), "seconds": round(t, 1)} for suite, (n, t) in sorted(suites.items())
        },
        "skipped_suites": dict(snapshot.corpus.skipped),
    }


KEYS = {"wall": "wall", "cpu": "CPU", "seconds": "run seconds"}


def lines(figures: dict) -> list[str]:
    said = [f"{figures['night']}:"]
    total = dict.fromkeys(KEYS, 0.0)
    for name, phase in figures["phases"].items():
        said.append(
            f"  {name:22s} wall {phase['wall']:7.1f} s  CPU {phase['cpu']:8.1f} s  "
            f"{phase['runs']:5d} runs  {phase['seconds']:8.1f} run s"
        )
        total = {key: total[key] + phase[key] for key in KEYS}
    said.append(
        f"  {'all phases':22s} wall {total['wall']:7.1f} s  CPU {total['cpu']:8.1f} s  "
        f"{'':10s}  {total['seconds']:8.1f} run s"
    )
    sweep = figures["phases"].get("sweep")
    if sweep and sweep["seconds"]:
        bound = sweep["seconds"] / figures["jobs"]
        said.append(f"  sweep wall / lower bound {sweep['wall'] / bound:.3f} ({figures['jobs']} workers)")
    slowest = figures["slowest"]
    said.append(
        f"  the {slowest['models']} slowest models: {slowest['share']:.1%} of the sweep's run seconds"
    )
    if len(figures["suites"]) > 1 or figures["skipped_suites"]:
        per_suite = ", ".join(
            f"{suite} {v['models']} models {v['seconds']:.1f} s" for suite, v in figures["suites"].items()
        )
        said.append(f"  sweep run seconds by suite: {per_suite}")
        said += [f"  skipped suite {suite}: {why}" for suite, why in figures["skipped_suites"].items()]
    said.append("  stages (run s): " + ", ".join(f"{s} {v:.1f}" for s, v in figures["stages"].items() if v))
    if figures["rungs"]:
        rungs = ", ".join(f"{r} {v['runs']} runs {v['seconds']:.1f} s" for r, v in figures["rungs"].items())
        said.append(f"  ladder rungs: {rungs}")
    said.append(f"  ladder pairs not reached: {figures['unreached']}")
    return said


def ratio_lines(first: dict, second: dict) -> list[str]:
    """second / first per phase and for the night, in wall time, CPU time and run seconds."""
    said = [f"{second['night']} / {first['night']}:"]
    names = list(dict.fromkeys([*first["phases"], *second["phases"]]))
    totals = {key: [0.0, 0.0] for key in KEYS}
    for name in names:
        a, b = first["phases"].get(name), second["phases"].get(name)
        for key in KEYS:
            totals[key][0] += a[key] if a else 0.0
            totals[key][1] += b[key] if b else 0.0
        said.append(f"  {name:22s} " + _ratios(first["night"], a, second["night"], b))
    night = {key: totals[key][0] for key in KEYS}, {key: totals[key][1] for key in KEYS}
    said.append(f"  {'the night':22s} " + _ratios(first["night"], night[0], second["night"], night[1]))
    return said


def _ratios(first: str, a: dict | None, second: str, b: dict | None) -> str:
    if not b:
        return f"({first} only)"
    if not a:
        return f"({second} only: " + ", ".join(f"{label} {b[key]:.1f} s" for key, label in KEYS.items()) + ")"
    return "  ".join(
        f"{label} {b[key] / a[key]:.3f}" if a[key] else f"{label} -" for key, label in KEYS.items()
    )


def comparisons(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    unknown = [name for name in names if name not in COMPARISONS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"{', '.join(unknown)}: compare one of {', '.join(COMPARISONS)}")
    return names


def like_with_like(compare: str, figures: dict, runs: dict) -> tuple[list[str], str]:
    """What breaks the comparison (empty: nothing), and the line that says it."""
    first, second = COMPARISONS[compare]
    shared = transformers_runs if compare == "suites" else list
    broken = [
        *figures[first]["claims"],
        *figures[second]["claims"],
        *same_list_lines((first, shared(runs[first])), (second, shared(runs[second]))),
    ]
    if broken:
        return broken, f"{compare}: like with like: NO\n" + "\n".join(f"  {line}" for line in broken)
    common = shared(runs[second])
    skipped = sum(skip for _, _, skip in common)
    which = " (the transformers models' runs)" if compare == "suites" else ""
    return broken, (
        f"{compare}: like with like: both nights made the same {len(common) - skipped} runs and "
        f"skipped the same {skipped}{which}, each with the checks its [sweep] claims"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--compare",
        type=comparisons,
        default=["counting"],
        help=f"which two nights: {', '.join(COMPARISONS)}; several comma-separated share their nights",
    )
    parser.add_argument("--share", type=float, default=0.12, help="a stratified share of the corpus (0-1]")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=180.0)
    parser.add_argument("--first", help="which night runs first (default: the first named)")
    parser.add_argument("--no-repros", dest="repros", action="store_false")
    parser.add_argument("--out", type=Path, default=Path(".triagebot/bench-night"))
    args = parser.parse_args()
    if not 0 < args.share <= 1:
        parser.error("--share must be in (0, 1]")
    nights = list(dict.fromkeys(night for compare in args.compare for night in COMPARISONS[compare]))
    if args.first is not None and args.first not in nights:
        parser.error(f"--first: the nights compared are {', '.join(nights)}")
    start_parent()
    from triagebot.corpus import load_suites

    order = [args.first or nights[0], *(night for night in nights if night != (args.first or nights[0]))]
    figures, runs = {}, {}
    for night in order:
        size = len(load_suites(night_corpus(night))[0])
        sample = max(1, round(args.share * size))
        config = night_config(night, args.share, args.seed, sample, args.jobs, args.timeout)
        selected = select(config)
        drawn = f"{len(selected.specs)} of {size} models (share {args.share:g}, seed {args.seed})"
        print(f"{night}: {drawn}, {args.jobs} workers", flush=True)
        with default_ladder(night):
            figures[night], runs[night] = sweep_night(night, config, selected, args.out, args.repros)
        print("\n".join(lines(figures[night])), flush=True)
    broken = []
    for compare in args.compare:
        wrong, said = like_with_like(compare, figures, runs)
        broken += wrong
        first, second = COMPARISONS[compare]
        print(said)
        print("\n".join(ratio_lines(figures[first], figures[second])))
    print(json.dumps({"compare": args.compare, "share": args.share, "like_with_like": not broken, **figures}))
    if broken:
        sys.exit(1)


if __name__ == "__main__":
    main()
