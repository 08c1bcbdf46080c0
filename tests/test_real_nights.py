"""The real-nights replay's own logic (bench/real_nights.py): a sample's night drawn from a whole
night is the sample `run --sample` draws, what a night did on GitHub is read from the fake's
state before and after it, a claim holds only when the reruns saw it, and the document renders
untrusted error text as one table cell."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from triagebot.corpus.sampling import sample
from triagebot.report.markers import notice_marker, state_marker
from triagebot.store import read_snapshot, write_snapshot

ROOT = Path(__file__).resolve().parent.parent
SMOKE_SNAPSHOT = ROOT / "tests" / "data" / "smoke-2.13.0+cpu.json"
_SPEC = importlib.util.spec_from_file_location("real_nights", ROOT / "bench" / "real_nights.py")
real_nights = importlib.util.module_from_spec(_SPEC)
sys.modules["real_nights"] = real_nights  # its dataclasses look their module up there
_SPEC.loader.exec_module(real_nights)


def test_a_sample_taken_from_a_whole_night_is_the_sample_a_run_draws(tmp_path: Path):
    whole = read_snapshot(SMOKE_SNAPSHOT)
    (tmp_path / "whole").mkdir()
    write_snapshot(whole, tmp_path / "whole" / "snapshot.json")
    (tmp_path / "whole" / "cost.json").write_text(json.dumps({"wall_seconds": 428.3}), encoding="utf-8")
    real_nights.derive_sample(tmp_path / "whole", tmp_path / "sample", 6)
    derived = read_snapshot(tmp_path / "sample" / "snapshot.json")
    _, selection = sample([result.spec for result in whole.results], 6, seed=real_nights.SEED, corpus="smoke")
    assert derived.corpus == selection
    assert [result.model for result in derived.results] == [
        result.model for result in whole.results if result.model in selection.models
    ]
    assert {repro.model for repro in derived.reproductions} <= set(selection.models)
    kept = json.loads((tmp_path / "sample" / "cost.json").read_text(encoding="utf-8"))
    assert kept["derived_from"] == "whole" and kept["wall_seconds"] == 428.3


def _issue(number: int, state: str, body: str) -> dict:
    return {"number": number, "title": f"issue {number}", "state": state, "labels": [], "body": body}


def test_what_a_night_did_on_github_is_read_from_the_fake_before_and_after_it():
    flag_body = "<!-- triagebot:flag=capture_scalar_outputs -->\nbody"
    before = {
        "issues": [_issue(1, "open", flag_body), _issue(2, "open", "x"), _issue(3, "closed", "y")],
        "comments": [{"id": 10, "issue": 1, "body": "old"}],
    }
    after = {
        "issues": [
            _issue(1, "open", flag_body + " edited"),
            _issue(2, "closed", "x"),
            _issue(3, "open", "y"),
            _issue(4, "open", "z"),
        ],
        "comments": [
            {"id": 10, "issue": 1, "body": "old"},
            {
                "id": 11,
                "issue": 1,
                "body": notice_marker("regression", "capture_scalar_outputs", "2.14.1") + "\n|x|",
            },
            {"id": 12, "issue": 3, "body": state_marker("reopen", "capture_scalar_outputs", "2.14.1")},
        ],
        "writes": [["POST", "/x"]] * 5,
    }
    done = real_nights.published(before, after)
    assert [issue["number"] for issue in done["opened"]] == [4]
    assert [issue["number"] for issue in done["closed"]] == [2]
    assert [issue["number"] for issue in done["reopened"]] == [3]
    assert [(issue["number"], issue["what"]) for issue in done["edited"]] == [(1, "capture_scalar_outputs")]
    assert [(notice["kind"], notice["issue"]) for notice in done["notices"]] == [
        ("regression", 1),
        ("reopen", 3),
    ]
    assert done["writes"] == 5


@pytest.mark.parametrize(
    ("kind", "before", "now", "holds"),
    [
        ("new crash", "ok", "crash: GuardOnDataDependentSymNode: ...", True),
        ("new crash notice", "crash: X", "crash: Y", False),  # it crashed before too: reworded
        ("new crash", "ok", "timeout", False),
        ("fixed", "crash: X", "ok", True),
        ("fixed notice", "crash: X", "crash: X", False),
        ("wrong result", "ok", "ok, wrong result", True),
        ("wrong result", "ok, wrong result", "ok, wrong result", False),
    ],
)
def test_a_claim_holds_only_when_the_reruns_saw_it(kind, before, now, holds):
    assert real_nights.held(kind, before, now) is holds


def test_the_document_keeps_error_text_to_one_table_cell():
    change = {
        "model": "BertModel",
        "old_effect": "no_effect",
        "new_effect": "crashes",
        "old_signature": None,
        "new_signature": "RuntimeError: a | b\n`@someone`",
        "old_graphs": 1,
        "new_graphs": None,
        "error": None,
    }
    flag = {
        "headline": "1 model crashes",
        "verdict": "Not ready",
        "groups": 1,
        "news": {"new": [change], "fixed": []},
        "diff": {name: [] for name in real_nights.DIFF_LISTS} | {"newly_crashing": [change]},
    }
    build = {"torch": "2.13.0+cpu", "git": "a" * 40, "transformers": "5.24.0", "cuda": None, "device": "cpu"}
    cost = {
        "wall_seconds": 61.0,
        "run_seconds": 100.0,
        "night_bytes": 2**20,
        "environment_bytes": 2**30,
        "install_seconds": 40.0,
        "models": 1,
    }
    nothing = {"opened": [], "closed": [], "reopened": [], "edited": [], "notices": [], "writes": 0}
    record = {
        "builds": {
            "a": build | {"costs": {"whole": cost}},
            "b": build | {"torch": "2.14.1+cu130", "cuda": "13.0", "costs": {"whole": cost}},
        },
        "trains": [
            {
                "name": "whole",
                "selection": "whole",
                "key": "torch",
                "not_swept": [],
                "nights": [
                    {
                        "build": "a",
                        "key": "2.13.0+cpu",
                        "models": 1,
                        "previous": None,
                        "flags": {"f": flag | {"diff": None, "news": None}},
                        "published": nothing,
                    },
                    {
                        "build": "b",
                        "key": "2.14.1+cu130",
                        "models": 1,
                        "previous": "2.13.0+cpu",
                        "flags": {"f": flag},
                        "published": nothing,
                    },
                ],
            }
        ],
        "checks": [],
        "bisections": [],
    }
    document = real_nights.render(record)
    row = next(line for line in document.splitlines() if line.startswith("| BertModel |"))
    assert row == "| BertModel | no effect | RuntimeError: a \\| b `@someone` |"
    assert "CUDA 13.0 (swept on the CPU)" in document


def test_the_document_and_the_cost_page_are_rendered_from_the_committed_record():
    record = json.loads(real_nights.RECORD.read_text(encoding="utf-8"))
    assert real_nights.DOCUMENT.read_text(encoding="utf-8") == real_nights.render(record), (
        "docs/real-nights.md is stale: python bench/real_nights.py render"
    )
    page = real_nights.COST_PAGE.read_text(encoding="utf-8")
    assert real_nights.with_cost(page, record) == page, "docs/real-builds.md's real-nights cost is stale"


def test_the_cost_goes_between_the_pages_markers_and_nowhere_else():
    start, end = real_nights.COST_MARKERS
    record = {"builds": {}}
    written = real_nights.with_cost(f"before\n{start}\nold figures\n{end}\nafter\n", record)
    assert written.startswith(f"before\n{start}\n| build |") and written.endswith(f"{end}\nafter\n")
    assert "old figures" not in written
    with pytest.raises(SystemExit, match="no <!-- real-nights cost"):
        real_nights.with_cost("no markers here", record)


def test_every_picture_the_document_shows_is_committed_beside_it():
    document = real_nights.DOCUMENT.read_text(encoding="utf-8")
    pictures = re.findall(r"\]\((real-nights/[^)]+\.png)\)", document)
    assert pictures, "the document shows no compare page"
    missing = [name for name in pictures if not (real_nights.DOCUMENT.parent / name).is_file()]
    assert missing == [], "python bench/real_nights.py pages"
