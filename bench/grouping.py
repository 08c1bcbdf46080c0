"""How well crash groups match bugs: pairwise precision and recall against a hand-labelled set.

    python bench/grouping.py extract SNAPSHOT [--labels FILE] [--out FILE]
    python bench/grouping.py measure [FILE]

`extract` lists every crashing run of SNAPSHOT (a snapshot or a sweep stream; the first run of
each (model, config), no confirmation or ladder rung) as a row of the labelled set: model,
config, exception type, first line, signature, pattern (`analysis.frames.pattern_key` of its
stored traceback), operation (the torch frame Dynamo named on its `Caused by:` line, as
`torch._refs.unbind`) and `label`, the bug it is, which a person writes; labels already in `--labels`
are kept by (model, config). `measure` prints how the crash groups (one per signature) and the
groups split by pattern match the labels, over pairs of runs: precision, of the pairs a grouping
puts together, the share that are one bug; recall, of the pairs that are one bug, the share it
puts together. The labelled set of the whole corpus's night is `tests/data/crash-labels.json`;
`tests/test_grouping.py` computes its figures and checks the sentence in the docs (docs/lifecycle.md).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from triagebot.analysis.frames import pattern_key, pattern_of
from triagebot.errors import TriagebotError
from triagebot.pipeline import is_stream, read_input
from triagebot.results import Outcome, Status
from triagebot.results.operations import caused_by, qualified, signed_at
from triagebot.results.signatures import normalised
from triagebot.sweep.stream import read_stream

LABELS = Path(__file__).resolve().parent.parent / "tests" / "data" / "crash-labels.json"

Row = dict[str, str | None]


def _runs(path: Path) -> list[tuple[str, str, Outcome]]:
    """(model, config, outcome) of each first run: a stream's as far as it goes, so that a night
    still sweeping can be labelled, or a snapshot's."""
    if is_stream(path):
        _, records = read_stream(path)
        return [(r.model, r.config, r.outcome) for r in records if r.attempt == 0 and r.backend is None]
    snapshot = read_input(path, reproductions=False)
    return [
        (result.model, config, outcome)
        for result in snapshot.results
        for config, outcome in result.outcomes.items()
    ]


def crashing_rows(path: str | Path) -> list[Row]:
    """The crashing runs of a snapshot or stream, as rows of the labelled set (no labels)."""
    rows = []
    for model, config, outcome in _runs(Path(path)):
        if outcome.status != Status.crash:
            continue
        model_place, operation = pattern_key(pattern_of(outcome.traceback))
        guarded = caused_by(outcome.traceback or "")
        rows.append(
            {
                "model": model,
                "config": config,
                "error_type": outcome.error_type,
                "error": outcome.error,
                "signature": outcome.signature,
                "pattern": " via ".join(part for part in (model_place, operation) if part) or None,
                # the torch frame Dynamo named as where it guarded (`Caused by:`), if any
                "operation": qualified(guarded[0], guarded[2]) if guarded else None,
                "label": None,
            }
        )
    return sorted(rows, key=lambda row: (row["signature"] or "", row["model"], row["config"]))


def pairwise(rows: Sequence[Row], key: Callable[[Row], object]) -> tuple[float | None, float | None]:
    """(precision, recall) of grouping `rows` by `key` against their labels, over pairs of rows;
    None where there is no pair to judge."""
    together = same_bug = both = 0
    for one, other in itertools.combinations(rows, 2):
        grouped = key(one) == key(other)
        labelled = one["label"] == other["label"]
        together += grouped
        same_bug += labelled
        both += grouped and labelled
    return (both / together if together else None, both / same_bug if same_bug else None)


def signed_now(row: Row) -> str:
    """A row's signature as the rules sign it now: normalised again, and keyed by the torch
    operation Dynamo named where the row records one (`operation`)."""
    signature = normalised(row["signature"] or "")
    return signed_at(signature, row["operation"]) if row.get("operation") else signature


GROUPINGS: dict[str, Callable[[Row], object]] = {
    "signature as stored": lambda row: row["signature"],
    "signature": signed_now,
    "signature and pattern": lambda row: (signed_now(row), row["pattern"]),
}
"""The groupings measured: the crash groups as the night's sweep signed them, as the signature's
rules sign them now (`signed_now`), and each split by its patterns."""


def measure(rows: Sequence[Row]) -> dict[str, tuple[float | None, float | None]]:
    unlabelled = [f"{row['model']} [{row['config']}]" for row in rows if not row["label"]]
    if unlabelled:
        raise SystemExit(f"rows without a label: {', '.join(unlabelled)}")
    return {name: pairwise(rows, key) for name, key in GROUPINGS.items()}


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def summary(rows: Sequence[Row]) -> str:
    """The figures in one sentence, as the docs state them."""
    figures = measure(rows)
    parts = [
        f"by {name} ({len({GROUPINGS[name](row) for row in rows})} groups), precision "
        f"{_percent(precision)} and recall {_percent(recall)}"
        for name, (precision, recall) in figures.items()
    ]
    bugs = len({row["label"] for row in rows})
    return f"{len(rows)} crashing runs, {bugs} bugs: " + "; ".join(parts) + "."


def read_labels(path: Path) -> list[Row]:
    """A labelled set (a JSON list of rows); `TriagebotError` in one line when it is none."""
    try:
        rows = json.loads(path.read_text())
    except OSError as error:
        raise TriagebotError(f"{path}: cannot read: {error.strerror}") from None
    except ValueError as error:
        raise TriagebotError(f"{path}: not JSON: {error}") from None
    if not isinstance(rows, list) or not all(isinstance(row, dict) and "label" in row for row in rows):
        raise TriagebotError(f"{path}: not a labelled set (a JSON list of rows, each with a label)")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except TriagebotError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


def _main(argv: Sequence[str] | None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    extract = commands.add_parser("extract", help="the crashing runs of a snapshot or stream, as rows")
    extract.add_argument("snapshot", help="a snapshot or a sweep's stream (.jsonl)")
    extract.add_argument("--labels", type=Path, help="a labelled set whose labels are kept")
    extract.add_argument("--out", type=Path, help="where to write the rows (default: standard output)")
    measured = commands.add_parser("measure", help="precision and recall against the labels")
    measured.add_argument(
        "labels", type=Path, nargs="?", default=LABELS, help=f"the labelled set (default: {LABELS.name})"
    )
    arguments = parser.parse_args(argv)
    if arguments.command == "extract":
        rows = crashing_rows(arguments.snapshot)
        if arguments.labels:
            known = {(row["model"], row["config"]): row["label"] for row in read_labels(arguments.labels)}
            for row in rows:
                row["label"] = known.get((row["model"], row["config"]))
        text = json.dumps(rows, indent=1) + "\n"
        if arguments.out:
            arguments.out.write_text(text)
        else:
            sys.stdout.write(text)
        return 0
    print(summary(read_labels(arguments.labels)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
