"""A fourth suite is its corpus module and one registry entry: the toy suite (`toy_suite.py`,
registered in the test, not in the shipped registry) is configured, selected, swept, keyed,
recorded and reproduced like the shipped ones, and nothing else had to learn its name."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from triagebot.config import DEFAULT_FLAGS, Config, parse_config
from triagebot.corpus.selection import select
from triagebot.results import BASELINE, SUITES, corpus_choices, model_key, split_key, suite_of
from triagebot.sweep import SweepPlan, read_stream, run_sweep
from triagebot.sweep.environment import detect_environment

pytestmark = pytest.mark.torch


@pytest.fixture
def toys(monkeypatch):
    import toy_suite

    monkeypatch.setitem(SUITES, "toy", toy_suite.SUITE)  # gone again after the test
    return toy_suite


def test_the_toy_suite_is_known_only_while_a_test_registers_it():
    import toy_suite

    assert toy_suite.SUITE.source not in SUITES  # importing it leaves the shipped registry alone


def test_the_toy_suite_is_configured_and_keyed_from_its_entry_alone(toys):
    config = parse_config('[sweep]\ncorpus = ["toys", "sentinels"]\n')
    assert config.sweep.corpus == ["toys", "sentinels"] and config.sweep.corpus_name == "toys+sentinels"
    assert model_key("toy", "Tiny") == "toy/Tiny" and split_key("toy/Tiny") == ("toy", "Tiny")
    assert suite_of("toy/Tiny") == "toy"
    assert "toys" in corpus_choices() and "toys" not in Config().sweep.corpus  # not a default suite
    version = importlib.metadata.version("pydantic")
    assert detect_environment("cpu", ["toys"]).library_versions()["pydantic"] == version


def test_the_toy_suite_is_swept_beside_the_sentinels(toys, tmp_path: Path):
    config = parse_config('[sweep]\ncorpus = ["toys", "sentinels"]\n')
    selected = select(config, models=["toy/Tiny", "toy/TinyItemBreak", "Plain"])
    assert [spec.model for spec in selected.specs] == ["toy/Tiny", "toy/TinyItemBreak", "Plain"]
    assert selected.selection.suites() == ["toys", "sentinels"]

    flags = {name: DEFAULT_FLAGS[name] for name in ("capture_scalar_outputs",)}
    plan = SweepPlan(
        selected.specs, flags, tmp_path / "toys.jsonl", device="cpu", jobs=2, timeout=60.0,
        corpus=selected.selection,
    )  # fmt: skip
    run_sweep(plan)
    header, records = read_stream(tmp_path / "toys.jsonl")

    graphs = {(r.model, r.config): r.outcome.graphs for r in records if r.backend is None and r.attempt == 0}
    assert graphs[("toy/Tiny", BASELINE)] == 1
    assert graphs[("toy/TinyItemBreak", BASELINE)] == 2
    assert graphs[("toy/TinyItemBreak", "capture_scalar_outputs")] == 1
    assert all(r.spec.source == "toy" for r in records if r.model.startswith("toy/") and r.spec)
    assert header.environment.library_versions()["pydantic"] == importlib.metadata.version("pydantic")
