"""Corpus models through the sweep engine: a real (small) flag sweep and `triagebot corpus check`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from triagebot.cli import app
from triagebot.config import DEFAULT_FLAGS
from triagebot.corpus import load_corpus
from triagebot.results import BASELINE, Status
from triagebot.sweep import SweepPlan, read_stream, run_sweep
from triagebot.sweep.pool import Pool

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytestmark = [pytest.mark.slow, pytest.mark.torch]


def smoke(*names: str):
    by_name = {spec.model: spec for spec in load_corpus("smoke")}
    return [by_name[name] for name in names]


def test_a_sweep_of_corpus_models_records_graph_counts(tmp_path, monkeypatch):
    specs = smoke("LlamaForCausalLM", "LlavaForConditionalGeneration")
    out = tmp_path / "sweep.jsonl"
    started = []  # (model, config, whether the task came with inputs) as each child starts
    start = Pool._start

    def spy(pool, task):
        if task.kind == "run":
            started.append((task.key.model, task.key.config, bool(task.request.spec.inputs)))
        return start(pool, task)

    monkeypatch.setattr(Pool, "_start", spy)
    always = {name: flag.model_copy(update={"when": "always"}) for name, flag in DEFAULT_FLAGS.items()}
    run_sweep(SweepPlan(specs, always, out, corpus="smoke", device="cpu", jobs=2, timeout=240))
    # Baselines resolve the recipe ladder; the flag runs get the spec their baseline completed.
    assert sorted(started) == sorted(
        (spec.model, config, config != BASELINE) for spec in specs for config in [BASELINE, *DEFAULT_FLAGS]
    )
    header, records = read_stream(out)
    assert header.corpus.models == [spec.model for spec in specs]
    runs = {(r.model, r.config): r for r in records if r.attempt == 0}
    assert len(runs) == len(specs) * (1 + len(DEFAULT_FLAGS))
    for (model, config), record in runs.items():
        assert record.outcome.status == Status.ok, (model, config, record.outcome.error)
        assert record.outcome.graphs >= 1 and record.outcome.ops > 0
        # The completed spec travels with the record: a repro needs nothing else.
        assert record.spec.recipe and record.spec.inputs and record.spec.config
    llava = runs[("LlavaForConditionalGeneration", BASELINE)].outcome
    assert llava.graphs > 1 and llava.break_reasons  # image-token counting breaks the graph
    assert runs[("LlamaForCausalLM", BASELINE)].spec.recipe == "text"
    assert runs[("LlavaForConditionalGeneration", BASELINE)].spec.recipe == "image_text"


def test_corpus_check_reports_coverage_as_json():
    arguments = ["corpus", "check", "--corpus", "smoke", "--models", "BertModel,ViTModel", "--json"]
    result = CliRunner().invoke(app, [*arguments, "--jobs", "2"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["population"], report["covered"], report["partial"], report["failed"]) == (2, 2, 0, 0)
    entries = {entry["model"]: entry for entry in report["entries"]}
    assert entries["ViTModel"]["recipe"] == "image" and entries["ViTModel"]["params"] > 0
    assert entries["BertModel"]["stratum"] == "vision_other"


def test_corpus_commands_reject_bad_selections():
    result = CliRunner().invoke(app, ["corpus", "list", "--corpus", "smoke", "--stratum", "audio"])
    assert result.exit_code != 0
    assert "unknown stratum 'audio'" in str(result.exception)
