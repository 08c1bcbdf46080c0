"""What is swept (triagebot/corpus/selection.py): one choice for `run`, `sweep`, `corpus list`;
shards balanced by recorded cost, the same in every shard job, together exactly the whole."""

from __future__ import annotations

import random

import pytest
from builders import ok, record, snapshot

from triagebot.config import parse_config
from triagebot.corpus.selection import (
    assign_shards,
    estimated_costs,
    parse_shard,
    select,
    select_shard,
)
from triagebot.errors import SelectionError, StoreError
from triagebot.results import (
    BASELINE,
    Environment,
    ModelResult,
    ModelSpec,
    Snapshot,
    SweepHeader,
)
from triagebot.store import MemoryStore
from triagebot.sweep.engine import SweepResult

SENTINELS = '[sweep]\ncorpus = "sentinels"\n'


def recorded(seconds: dict[str, float], key: str = "2.12.0.dev20260408") -> Snapshot:
    """A stored snapshot in which each model took `seconds` (baseline only)."""
    results = [
        ModelResult(model=model, outcomes={BASELINE: ok(1, seconds=spent)})
        for model, spent in seconds.items()
    ]
    return snapshot(results, key=key, flags=[], corpus="sentinels")


def ratio(shards: list[list[str]], costs: dict[str, float]) -> float:
    loads = [sum(costs[model] for model in shard) for shard in shards]
    return max(loads) / (sum(loads) / len(loads))


def test_shards_are_balanced_by_cost_where_names_are_not():
    rng = random.Random(3)
    costs = {f"Model{i:03d}": rng.lognormvariate(0, 1.2) for i in range(300)}
    by_cost = assign_shards(costs, 8)
    by_name = [sorted(costs)[i::8] for i in range(8)]  # what a split by name alone gives
    assert sorted(m for shard in by_cost for m in shard) == sorted(costs)
    assert ratio(by_cost, costs) < 1.02 < 1.1 < ratio(by_name, costs)


def test_the_split_is_the_same_whatever_the_order_it_is_given_in():
    costs = {f"M{i}": float(i % 7 + 1) for i in range(40)}
    shuffled = dict(sorted(costs.items(), key=lambda item: random.Random(1).random()))
    assert assign_shards(costs, 3) == assign_shards(shuffled, 3)
    specs = [ModelSpec(model=name) for name in costs]
    for index in (1, 2, 3):
        forward = select_shard(specs, (index, 3), costs)
        backward = select_shard(specs[::-1], (index, 3), costs)
        assert forward == backward[::-1]  # the same models, each list in its input's order


def test_models_without_a_cost_count_as_the_mean_and_are_spread():
    costs = estimated_costs(["A", "B", "New1", "New2", "New3", "New4"], {"A": 10.0, "B": 30.0})
    assert costs["New1"] == costs["New4"] == 20.0
    shards = assign_shards(costs, 2)
    assert all(any(m.startswith("New") for m in shard) for shard in shards)  # not all in one
    assert ratio(shards, costs) == 1.0
    # A first night (no costs at all): every model counts the same, dealt out by name.
    first = assign_shards(estimated_costs([f"M{i}" for i in range(6)], {}), 3)
    assert first == [["M0", "M3"], ["M1", "M4"], ["M2", "M5"]]


@pytest.mark.parametrize("bad", ["0/2", "3/2", "x", "1/0", "1/2/3"])
def test_a_bad_shard_is_a_selection_error(bad):
    with pytest.raises(SelectionError, match="--shard"):
        parse_shard(bad)


@pytest.mark.torch
def test_shards_of_a_configured_sample_together_are_exactly_the_sample():
    config = parse_config(SENTINELS + "[corpus]\nsample = 5\nseed = 3\n")
    store = MemoryStore([recorded({"Plain": 40.0, "Segfault": 2.0, "ItemBreak": 9.0, "EagerError": 1.0})])
    whole = select(config, store=store)
    assert len(whole.specs) == 5 and whole.selection.sample == 5
    parts = [select(config, shard=f"{i}/3", store=store) for i in (1, 2, 3)]
    names = [spec.model for part in parts for spec in part.specs]
    assert sorted(names) == sorted(spec.model for spec in whole.specs)  # no model twice, none lost
    assert all(part.selection == whole.selection for part in parts)  # every header says the same
    assert all(part.costs_from == "2.12.0.dev20260408" for part in parts)
    assert whole.recorded == len(
        set(whole.selection.models) & {"Plain", "Segfault", "ItemBreak", "EagerError"}
    )


@pytest.mark.torch
def test_named_models_are_swept_as_named_and_checked():
    config = parse_config(SENTINELS + "[corpus]\nsample = 2\n")
    chosen = select(config, models=["Plain", "Segfault"])
    assert [spec.model for spec in chosen.specs] == ["Plain", "Segfault"]  # no sample over names
    suggested = r"unknown model 'segfalt' in corpus 'sentinels' \(did you mean 'Segfault'\?\)"
    with pytest.raises(SelectionError, match=suggested):
        select(config, models=["segfalt"])


@pytest.mark.torch
def test_a_shard_needs_the_store_that_splits_it():
    class Broken:
        def get(self, key: str) -> Snapshot:
            raise StoreError("git fetch failed")

        def latest(self) -> Snapshot | None:
            raise StoreError("git fetch failed")

    config = parse_config(SENTINELS)
    assert select(config, store=Broken()).costs_from is None  # unsharded: only the order is lost
    with pytest.raises(SelectionError, match="--shard 1/2: the store's recorded costs split the shards"):
        select(config, shard="1/2", store=Broken())


@pytest.mark.torch
def test_only_breaking_in_names_the_option_or_the_key():
    with pytest.raises(SelectionError, match=r"^corpus.only_breaking_in: no snapshot 'k1'"):
        select(parse_config(SENTINELS + '[corpus]\nonly_breaking_in = "k1"\n'), store=MemoryStore())
    config = parse_config(SENTINELS, options={"--only-breaking-in": "k1"})
    with pytest.raises(SelectionError, match=r"^--only-breaking-in: no snapshot 'k1'"):
        select(config, store=MemoryStore())


def fake_sweeps(monkeypatch) -> list[list[str]]:
    """Stand in for the engine: each sweep writes a stream of ok runs and records its models."""
    from triagebot.pipeline import run_stages  # the module whose `run` reads the build
    from triagebot.sweep import command

    swept: list[list[str]] = []

    def run_sweep(plan, progress=None):
        environment = Environment(torch_version="2.13.0", torch_git_version="abc")
        header = SweepHeader(
            environment=environment, flags=plan.patches, corpus=plan.selection, shard=plan.shard
        )
        records = [
            record(spec.model, config, ok(1, seconds=1.0))
            for spec in plan.specs
            for config in (BASELINE, *plan.flags)
        ]
        plan.path.parent.mkdir(parents=True, exist_ok=True)
        lines = [header.model_dump_json(), *(record.model_dump_json() for record in records)]
        plan.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        swept.append([spec.model for spec in plan.specs])
        return SweepResult(plan.path, header, records, len(records))

    monkeypatch.setattr(command, "run_sweep", run_sweep)
    monkeypatch.setattr(command, "start_parent", lambda: None)
    monkeypatch.setattr(run_stages, "installed_build", lambda: Environment(torch_version="2.13.0"))
    return swept


@pytest.mark.torch
def test_shards_merged_are_exactly_what_run_sweeps(tmp_path, monkeypatch, capsys):
    from triagebot.cli import main
    from triagebot.store import read_snapshot

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    (tmp_path / "triagebot.toml").write_text(
        SENTINELS + "[corpus]\nsample = 5\nseed = 11\n", encoding="utf-8"
    )
    swept = fake_sweeps(monkeypatch)

    def triagebot(*arguments: str) -> str:
        with pytest.raises(SystemExit) as exit_:
            main(list(arguments))
        out, err = capsys.readouterr()
        assert exit_.value.code in (0, None), err
        return out

    for i in (1, 2, 3):
        triagebot("sweep", "--shard", f"{i}/3", "--store", "store", "--out", f"shards/{i}.jsonl")
    triagebot("merge", "shards/1.jsonl", "shards/2.jsonl", "shards/3.jsonl", "--out", "merged.json")
    shards = swept[:3]
    triagebot("run", "--store", "store", "--out", "night")
    (night,) = swept[3:]
    merged, ran = read_snapshot("merged.json"), read_snapshot("night/snapshot.json")
    assert sorted(m for shard in shards for m in shard) == sorted(night)
    assert [r.model for r in merged.results] == [r.model for r in ran.results]
    assert merged.corpus == ran.corpus and merged.corpus.sample == 5
    listed = triagebot("corpus", "list", "--store", "store").splitlines()
    assert sorted(line.split()[0] for line in listed[:-1]) == sorted(night)
    assert listed[-1] == "5 models of corpus 'sentinels'"
