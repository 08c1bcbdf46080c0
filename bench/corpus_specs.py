"""Every spec the transformers corpus resolves, dumped; and the difference between two dumps.

A change to the corpus (the recipes, the shrink rules, the family fixes) should change the
resolved specs of the models it is meant for and of no other. This script records, for every
model of the population, what a corpus check records (status, recipe, partial, parameter count,
tiny config, inputs, and the error of a model that does not run), one JSON object a line sorted
by model, so that two commits can be compared:

    python bench/corpus_specs.py dump before.jsonl [--jobs 2] [--models A,B]
    git checkout <change> && python bench/corpus_specs.py dump after.jsonl
    python bench/corpus_specs.py diff before.jsonl after.jsonl
    python bench/corpus_specs.py side-by-side before.jsonl [--models A,B] [--jobs 2] [--out FILE] [--resume]
    python bench/corpus_specs.py tail SWEEP.jsonl [--top 40] [--after SIDE_BY_SIDE.jsonl]

`diff` prints one line per model whose record differs (the first differing key path) and a
count; it exits 1 when any differs. Configs are compared by meaning: tagged values (see
`triagebot/corpus/encoding.py`) are decoded, then both sides are written as plain JSON would
(integer keys as strings, tuples as lists, `inf` kept), so a dump taken before the tagged
encoding and one taken after it differ only where the old record lost a value (`inf` written as
`null`). `dump` runs on any commit; `diff` needs the encoding module. Building every model takes
about as long as `triagebot corpus check`.

`side-by-side` sweeps, in one invocation, every model whose tiny config now differs from its
config in `before.jsonl` (a dump, or a sweep stream, whose baseline records carry their specs)
twice: with the config it had (named `MODEL@before`) and with today's, each pair queued together
so that both meet the same load (a shared machine's seconds are comparable only that way). Both
run as the night's sweep does: the baseline, then each default flag where the baseline broke,
accuracy checked. It prints each model's run seconds before and after and whether every config
kept its status, graph count, break reasons and crash signature, then the totals; it exits 1
when any of them changed.

`tail` gives a sweep's run seconds by model (its runs summed, confirmations left out): the
total, the median, and the share the `--top` slowest take, listed. With `--after`, a
side-by-side stream, each model it paired is scaled by its after/before ratio there, and the
same figures are given for the sweep so estimated, beside the measured ones.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def dump(out: Path, jobs: int, timeout: float, models: list[str] | None) -> None:
    from triagebot.corpus.coverage import status_of
    from triagebot.corpus.selection import load, narrow
    from triagebot.sweep import check_models

    specs = narrow(load("transformers"), "transformers", models=models)
    rows = []
    for record in check_models(specs, device="cpu", jobs=jobs, timeout=timeout, memory_limit_gb=8.0):
        spec = record.spec
        rows.append(
            {
                "model": record.model,
                "status": status_of(record),
                "error": None
                if record.outcome.error_type is None
                else f"{record.outcome.error_type}: {record.outcome.error}",
                "recipe": spec.recipe if spec else None,
                "partial": spec.partial if spec else None,
                "params": spec.params if spec else None,
                "config": spec.config if spec else None,
                "inputs": [item.model_dump(mode="json") for item in spec.inputs] if spec else None,
            }
        )
    rows.sort(key=lambda row: row["model"])
    out.write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in rows), encoding="utf-8")
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    print(f"{len(rows)} models: {counts} -> {out}")


def _read(path: Path) -> dict[str, dict]:
    from triagebot.corpus.encoding import decode

    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        row["config"] = json.loads(json.dumps(decode(row["config"])))
        rows[row["model"]] = row
    return rows


def diff(before: Path, after: Path) -> int:
    from triagebot.corpus.encoding import first_difference

    old, new = _read(before), _read(after)
    differing = 0
    for model in sorted(set(old) | set(new)):
        if model not in old or model not in new:
            print(f"{model}: only in {before if model in old else after}")
            differing += 1
            continue
        found = first_difference(old[model], new[model])
        if found:
            print(f"{model}: {found}")
            differing += 1
    print(f"{differing} of {len(set(old) | set(new))} models differ")
    return 1 if differing else 0


BEFORE = "@before"


def _before_configs(path: Path) -> dict[str, dict]:
    """Model -> its encoded tiny config, from a dump or from a sweep stream's baseline specs."""
    configs = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "outcome" in row:  # a sweep stream's record
            spec = row.get("spec") or {}
            if row["config"] == "baseline" and not row.get("attempt") and spec.get("config") is not None:
                configs[row["model"]] = spec["config"]
        elif row.get("config") is not None:
            configs[row["model"]] = row["config"]
    return configs


def changed_models(before: dict[str, dict], models: list[str] | None) -> list[str]:
    """The models (of `models`, or of the whole population) whose tiny config differs from `before`."""
    from triagebot.corpus.encoding import decode, first_difference
    from triagebot.corpus.hf import complete_spec, spec_for

    changed = []
    for model in models or sorted(before):
        if model not in before:
            continue
        now = complete_spec(spec_for(model)).config
        if first_difference(decode(before[model]), decode(now)):
            changed.append(model)
    return changed


def side_by_side(
    before_path: Path, out: Path, jobs: int, timeout: float, models: list[str] | None, resume: bool = False
) -> int:
    from triagebot.config import DEFAULT_FLAGS
    from triagebot.corpus.hf import spec_for
    from triagebot.results import Check
    from triagebot.sweep import SweepPlan, read_stream, run_sweep, start_parent

    start_parent()
    before = _before_configs(before_path)
    changed = changed_models(before, models)
    print(f"{len(changed)} models whose tiny config changed: {', '.join(changed)}", flush=True)
    specs = []
    for model in changed:
        old = spec_for(model).model_copy(update={"model": model + BEFORE, "config": before[model]})
        specs += [old, spec_for(model)]
    plan = SweepPlan(
        specs,
        DEFAULT_FLAGS,
        out,
        corpus="transformers",
        device="cpu",
        jobs=jobs,
        timeout=timeout,
        checks=frozenset({Check.accuracy}),
        resume=resume,
    )
    run_sweep(plan)
    _, records = read_stream(out)
    return report(records, changed)


def _seen(outcome) -> tuple:
    """What a shrink rule must keep of a run: its status, graphs, break reasons, crash signature."""
    return (outcome.status, outcome.graphs, outcome.break_reasons, outcome.signature)


def report(records: list, models: list[str]) -> int:
    """Each model's seconds before and after and whether its graphs stayed; 1 if any changed."""
    runs: dict[str, dict[str, object]] = {}
    for record in records:
        if record.attempt == 0:
            runs.setdefault(record.model, {})[record.config] = record.outcome
    totals = [0.0, 0.0]
    changed = []
    for model in models:
        old, new = runs.get(model + BEFORE, {}), runs.get(model, {})
        seconds = [sum(o.seconds for o in side.values()) for side in (old, new)]
        totals = [t + s for t, s in zip(totals, seconds, strict=True)]
        differing = [
            c
            for c in sorted(set(old) | set(new))
            if c not in old or c not in new or _seen(old[c]) != _seen(new[c])
        ]
        if differing:
            changed.append(model)
        verdict = "same graphs and breaks" if not differing else "CHANGED: " + ", ".join(differing)
        ratio = seconds[1] / seconds[0] if seconds[0] else float("nan")
        print(f"{model:50s} {seconds[0]:8.1f} s -> {seconds[1]:8.1f} s  x{ratio:.2f}  {verdict}")
    print(f"{len(models)} models: {totals[0]:.1f} s -> {totals[1]:.1f} s run seconds; {len(changed)} changed")
    return 1 if changed else 0


def model_seconds(records: list) -> dict[str, float]:
    """Run seconds by model: every first run (confirmations left out), summed."""
    seconds: dict[str, float] = {}
    for record in records:
        if record.attempt == 0 and record.backend is None:
            seconds[record.model] = seconds.get(record.model, 0.0) + record.outcome.seconds
    return seconds


def tail_lines(seconds: dict[str, float], top: int) -> list[str]:
    ranked = sorted(seconds.items(), key=lambda item: -item[1])
    total = sum(seconds.values()) or 1.0
    slow = sum(s for _, s in ranked[:top])
    median = statistics.median(seconds.values()) if seconds else 0.0
    lines = [
        f"{len(seconds)} models, {total:.0f} run seconds, median {median:.1f} s; "
        f"the {top} slowest {slow:.0f} s = {slow / total:.1%}"
    ]
    return lines + [f"  {s:8.1f} s  {model}" for model, s in ranked[:top]]


def tail(sweep: Path, top: int, after: Path | None) -> int:
    from triagebot.sweep import read_stream

    seconds = model_seconds(read_stream(sweep)[1])
    print("\n".join(["measured:", *tail_lines(seconds, top)]))
    if after is not None:
        paired = model_seconds(read_stream(after)[1])
        estimated = dict(seconds)
        for model, old in paired.items():
            if model.endswith(BEFORE) and old and model.removesuffix(BEFORE) in estimated:
                name = model.removesuffix(BEFORE)
                estimated[name] *= paired.get(name, old) / old
        print("\n".join(["with the side-by-side ratios:", *tail_lines(estimated, top)]))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("dump", help="resolve every model and write one JSON line each")
    run.add_argument("out", type=Path)
    run.add_argument("--jobs", type=int, default=2)
    run.add_argument("--timeout", type=float, default=120.0)
    run.add_argument("--models", default="", help="only these models: A,B,...")
    compare = commands.add_parser("diff", help="the models whose records differ")
    compare.add_argument("before", type=Path)
    compare.add_argument("after", type=Path)
    pair = commands.add_parser("side-by-side", help="sweep the changed models before and after, side by side")
    pair.add_argument("before", type=Path)
    pair.add_argument("--models", default="", help="only these models: A,B,...")
    pair.add_argument("--jobs", type=int, default=2)
    pair.add_argument("--timeout", type=float, default=600.0)
    pair.add_argument("--out", type=Path, default=Path(".triagebot/side-by-side.jsonl"))
    pair.add_argument("--resume", action="store_true", help="finish an interrupted --out")
    share = commands.add_parser("tail", help="a sweep's run seconds by model and the slowest's share")
    share.add_argument("sweep", type=Path)
    share.add_argument("--top", type=int, default=40)
    share.add_argument("--after", type=Path, help="a side-by-side stream: scale its models by their ratio")
    args = parser.parse_args()
    if args.command == "dump":
        models = [name.strip() for name in args.models.split(",") if name.strip()] or None
        dump(args.out, args.jobs, args.timeout, models)
        return 0
    if args.command == "side-by-side":
        models = [name.strip() for name in args.models.split(",") if name.strip()] or None
        return side_by_side(args.before, args.out, args.jobs, args.timeout, models, args.resume)
    if args.command == "tail":
        return tail(args.sweep, args.top, args.after)
    return diff(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
