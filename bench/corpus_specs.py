"""Every spec the transformers corpus resolves, dumped; and the difference between two dumps.

A change to the corpus (the recipes, the shrink rules, the family fixes) should change the
resolved specs of the models it is meant for and of no other. This script records, for every
model of the population, what a corpus check records (status, recipe, partial, parameter count,
tiny config, inputs, and the error of a model that does not run), one JSON object a line sorted
by model, so that two commits can be compared:

    python bench/corpus_specs.py dump before.jsonl [--jobs 2] [--models A,B]
    git checkout <change> && python bench/corpus_specs.py dump after.jsonl
    python bench/corpus_specs.py diff before.jsonl after.jsonl

`diff` prints one line per model whose record differs (the first differing key path) and a
count; it exits 1 when any differs. Configs are compared by meaning: tagged values (see
`triagebot/corpus/encoding.py`) are decoded, then both sides are written as plain JSON would
(integer keys as strings, tuples as lists, `inf` kept), so a dump taken before the tagged
encoding and one taken after it differ only where the old record lost a value (`inf` written as
`null`). `dump` runs on any commit; `diff` needs the encoding module. Building every model takes
about as long as `triagebot corpus check`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def dump(out: Path, jobs: int, timeout: float, models: list[str] | None) -> None:
    from triagebot.corpus import load_corpus
    from triagebot.corpus.coverage import select, status_of
    from triagebot.sweep import check_models

    specs = select(load_corpus("transformers"), None, models)
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
    args = parser.parse_args()
    if args.command == "dump":
        models = [name.strip() for name in args.models.split(",") if name.strip()] or None
        dump(args.out, args.jobs, args.timeout, models)
        return 0
    return diff(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
