"""A new rung of the backend ladder is one `Rung` entry: the toy rung, added in the test (not in
the shipped table), is climbed, costed and minified by the sweep's side, placed in the stack and
labelled by the analysis, and said on the issue and on the site's flag page."""

from __future__ import annotations

import pytest
from builders import night_of
from test_stack import FLAG, crash, ok, result, snapshot

from triagebot.analysis import flag_stats
from triagebot.analysis.triage import suggested_labels
from triagebot.reduce.graph import minifier_stages
from triagebot.report import issue_body
from triagebot.report.site import MemoryWriter, write_site
from triagebot.results import BACKWARD_RUNG, BASELINE, COUNTING_BACKEND, RUNGS, Rung
from triagebot.store import MemoryStore
from triagebot.sweep.ladder import Ladder, estimate

TOY = "toy_backend"
TOY_RUNG = Rung(
    name=TOY,
    lives_in="the toy compiler",
    label="module: toy",
    fails_why="fails under toy_backend, not under aot_eager",
    wrong_why="wrong under toy_backend, right under aot_eager",
    cost=4.0,
    floor=5.0,
    failures_only=frozenset({"cpu"}),
    minifier=("aot",),
    default=True,
    aside=" (a compiler of toys)",
)


@pytest.fixture(autouse=True)
def toy_rung(monkeypatch):
    monkeypatch.setitem(RUNGS, TOY, TOY_RUNG)  # gone again after the test


def toy_night():
    """A flag that takes a model from 3 graphs to 1, which then fails on the toy rung alone."""
    failed = crash("ToyError", "ToyError: no toy for this graph")
    helped = result(
        "Toyed",
        ok(3),
        ok(1),
        ladder={
            BASELINE: {COUNTING_BACKEND: ok(3), "aot_eager": ok(3), TOY: ok(3)},
            FLAG: {COUNTING_BACKEND: ok(1), "aot_eager": ok(1), TOY: failed},
        },
        ladder_confirmations={FLAG: {TOY: [failed]}},
    )
    return snapshot([helped], ladder=(COUNTING_BACKEND, "aot_eager", TOY))


def test_the_sweep_climbs_costs_and_minifies_the_toy_rung_from_its_entry():
    rungs = Ladder(choose=lambda *_: []).rungs("cpu")
    assert rungs.order[-1] == TOY and TOY in rungs.failures_only
    assert TOY not in Ladder(choose=lambda *_: []).rungs("cpu", compiler=True).order[:-1]
    assert Ladder(choose=lambda *_: []).rungs("cuda").order == ["aot_eager", "inductor", BACKWARD_RUNG, TOY]
    assert estimate(10.0, TOY) == 40.0 and estimate(0.5, TOY) == 5.0
    assert minifier_stages(TOY) == ("aot",)


def test_the_analysis_places_and_labels_a_failure_on_the_toy_rung():
    stats = flag_stats(toy_night(), FLAG)
    [row] = stats.ladder_rows
    assert (row.failed_at, row.lives_in) == (TOY, "the toy compiler")
    [group] = stats.ladder_groups
    assert group.backend == TOY
    labels = {label.label: label.reason for label in suggested_labels(group)}
    assert labels["module: toy"] == "fails under toy_backend, not under aot_eager"


def test_the_issue_and_the_site_say_the_toy_rung():
    snap = toy_night()
    night = night_of(snap)
    body = issue_body(night, FLAG)
    assert "first under `toy_backend` (a compiler of toys) in the toy compiler." in body
    assert "| `counting` | `aot_eager` | `toy_backend` | Lives in |" in body  # its column
    assert "| crash (ok at baseline) | the toy compiler |" in body
    assert "### Under `toy_backend` (lives in the toy compiler): 1 model" in body
    assert "`module: toy` (fails under toy\\_backend, not under aot\\_eager)" in body
    assert "on cpu, toy\\_backend is climbed by the failures' representatives only" in body
    memory = MemoryWriter()
    from triagebot.analysis.history import read_history

    write_site(read_history(MemoryStore([snap])), night, memory)
    page = memory.files[f"flags/{FLAG}.html"]
    assert "<th>toy_backend</th>" in page and "(lives in the toy compiler)" in page
