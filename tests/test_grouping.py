"""How well crash groups match bugs, measured against a hand-labelled set of the whole corpus's
crashing runs (`tests/data/crash-labels.json`, written by `bench/grouping.py extract` and labelled
by hand); docs/lifecycle.md states the figures this computes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_SPEC = importlib.util.spec_from_file_location("grouping", ROOT / "bench" / "grouping.py")
grouping = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(grouping)


def row(model: str, signature: str, label: str, pattern: str = "p") -> dict:
    return {"model": model, "config": "flag", "signature": signature, "pattern": pattern, "label": label}


def test_precision_and_recall_are_over_pairs_of_runs():
    rows = [row("A", "s1", "bug1"), row("B", "s1", "bug1"), row("C", "s1", "bug2"), row("D", "s2", "bug2")]
    # Together: A-B (one bug), A-C, B-C (two); one bug: A-B, C-D (apart).
    assert grouping.pairwise(rows, lambda r: r["signature"]) == (1 / 3, 1 / 2)
    assert grouping.pairwise(rows[:1], lambda r: r["signature"]) == (None, None)
    split = [row("A", "s1", "bug1", "x"), row("B", "s1", "bug1", "x"), row("C", "s1", "bug2", "y")]
    assert grouping.measure(split) == {
        "signature as stored": (1 / 3, 1.0),
        "signature": (1 / 3, 1.0),
        "signature and pattern": (1.0, 1.0),
    }


def test_the_docs_state_the_grouping_measured_against_the_labelled_set():
    rows = json.loads(grouping.LABELS.read_text(encoding="utf-8"))
    assert rows and all(row["label"] for row in rows)
    said = " ".join((ROOT / "docs" / "lifecycle.md").read_text(encoding="utf-8").split())
    assert grouping.summary(rows) in said


def test_one_torch_frame_reached_from_two_model_functions_is_one_group_of_the_labelled_set():
    rows = json.loads(grouping.LABELS.read_text(encoding="utf-8"))
    tolist = [row for row in rows if row["label"].startswith("guard in unbind")]
    functions = {row["signature"].rpartition(" [")[2] for row in tolist}
    assert len(tolist) == 64 and len(functions) > 1  # signed by the night from two functions
    assert len({grouping.signed_now(row) for row in tolist}) == 1
    precision, recall = grouping.measure(rows)["signature"]
    assert precision is not None and precision >= 0.99
    assert recall is not None and recall >= 0.95
