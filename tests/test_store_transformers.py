"""A build is torch and transformers (`Environment.same_build`), and `[store] key` says what names
a night: the torch version (the nightly stream), or torch and transformers, for nights of one
torch under several transformers releases (`results.snapshot_key`, `store.key_order`,
`Store.find_build`, `pipeline.sweep_need`)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from builders import SCALAR, ok, result
from builders import snapshot as built

from triagebot.analysis import night as analyse
from triagebot.config import Config, TrackerSettings, parse_config
from triagebot.errors import ConfigError, PipelineError, StoreError
from triagebot.pipeline import RunOptions, already_swept, build_site, installed_build, run, sweep_need
from triagebot.pipeline.inputs import out_of_order, read_input
from triagebot.report import links
from triagebot.report.markers import notice_marker
from triagebot.report.words import key_words
from triagebot.results import Environment, Night, RunRecord, Snapshot, SweepHeader, snapshot_key
from triagebot.store import LocalStore, MemoryStore, check_key, key_order, write_snapshot
from triagebot.sweep.stream import StreamWriter, merge
from triagebot.tracker.desired import title_for

TORCH, GIT = "2.13.0+cpu", "cf30153c4c13"
# The nights below are of the sentinels: the configured corpus, so that none is a trial.
BY_TORCH = parse_config('[sweep]\ncorpus = "sentinels"\n')
BY_TRANSFORMERS = parse_config('[sweep]\ncorpus = "sentinels"\n[store]\nkey = "torch+transformers"\n')


def build(transformers: str, torch: str = TORCH, git: str = GIT) -> Environment:
    return Environment(torch_version=torch, torch_git_version=git, transformers_version=transformers)


def night(transformers: str, *, key: str = TORCH, graphs: int = 2) -> Snapshot:
    """A night of torch 2.13.0+cpu under `transformers`, keyed `key` (the torch key a default
    merge gives it)."""
    swept = built([result("M", ok(3), {SCALAR: ok(graphs)})], key=key, git=GIT, corpus="sentinels")
    return swept.model_copy(update={"environment": build(transformers)})


def test_a_build_is_torch_and_transformers_and_old_snapshots_keep_the_torch_rule():
    assert build("5.22.0").same_build(build("5.22.0"))
    assert not build("5.22.0").same_build(build("5.23.0"))
    assert build("5.22.0").same_torch(build("5.23.0"))
    # A snapshot made before environments named transformers is of any.
    assert build("").same_build(build("5.23.0")) and build("5.23.0").same_build(build(""))
    assert not build("5.22.0").same_build(build("5.22.0", git="another"))


def test_a_night_of_another_transformers_never_replaces_the_stored_night(tmp_path: Path):
    store = LocalStore(tmp_path / "store")
    store.put(night("5.22.0"))
    before = store.file(TORCH).read_bytes()

    with pytest.raises(StoreError) as refused:
        store.put(night("5.23.0"))

    message = str(refused.value)
    assert "\n" not in message
    assert "transformers 5.23.0, the stored one of transformers 5.22.0" in message
    assert 'key = "torch+transformers"' in message and "kept the stored one" in message
    assert store.file(TORCH).read_bytes() == before


def test_run_snapshot_of_another_transformers_is_refused_under_the_default_key(tmp_path: Path):
    store = MemoryStore([night("5.22.0")])
    given = write_snapshot(night("5.23.0"), tmp_path / "night.json")

    refusal = r"transformers 5\.23\.0, the stored one of transformers 5\.22\.0"
    with pytest.raises(PipelineError, match=refusal):
        run(
            Config(),
            RunOptions(out=tmp_path / "out", snapshot=given),
            store=store,
            say=lambda _: None,
            **stages(),
        )

    assert store.keys() == [TORCH] and store.get(TORCH).environment.transformers_version == "5.22.0"


def test_the_key_names_torch_and_transformers_when_configured():
    assert Config().store.key == "torch"
    assert snapshot_key(build("5.23.0"), "torch") == TORCH
    key = snapshot_key(build("5.23.0"), "torch+transformers")
    assert key == "2.13.0+cpu_transformers-5.23.0"
    assert check_key(key) == key and notice_marker("fixed", SCALAR, key).endswith(f"snapshot={key} -->")
    assert snapshot_key(build(""), "torch+transformers") == TORCH  # nothing to add
    with pytest.raises(ConfigError, match=r"store\.key"):
        parse_config('[store]\nkey = "transformers"\n')


def test_a_title_says_a_key_of_torch_and_transformers_in_words():
    settings = TrackerSettings(title="{flag} on {key}: {crashes} crashing")
    tonight = analyse(night("5.23.0", key=f"{TORCH}_transformers-5.23.0"))
    title = title_for(settings, tonight.flags[SCALAR].figures, tonight.key)
    assert title == f"{SCALAR} on 2.13.0+cpu with transformers 5.23.0: 0 crashing"
    assert key_words(TORCH) == TORCH  # a key of torch alone, as before


def test_key_order_is_torch_then_transformers():
    keys = [
        "2.14.0_transformers-5.22.0",
        "2.13.0+cpu_transformers-5.10.0",
        "2.13.0+cpu_transformers-5.9.0",
        "2.13.0+cpu",
        "2.13.0+cpu_transformers-5.10.0rc1",
    ]
    assert sorted(keys, key=key_order) == [
        "2.13.0+cpu",
        "2.13.0+cpu_transformers-5.9.0",
        "2.13.0+cpu_transformers-5.10.0rc1",
        "2.13.0+cpu_transformers-5.10.0",
        "2.14.0_transformers-5.22.0",
    ]


def test_the_older_of_two_nights_is_read_from_the_transformers_in_their_keys():
    older = night("5.22.0", key=f"{TORCH}_transformers-5.22.0")
    newer = night("5.23.0", key=f"{TORCH}_transformers-5.23.0")
    swept_first = newer.model_copy(update={"created": older.created - timedelta(days=1)})
    assert out_of_order(swept_first, older) and not out_of_order(older, swept_first)


def test_a_transformers_train_on_one_torch_is_three_nights_in_order(tmp_path: Path):
    store = LocalStore(tmp_path / "store")
    taken = Stages()
    reports = []
    for number, transformers in enumerate(["5.22.0", "5.23.0", "5.24.0"]):
        # Each night keyed by torch, as a default merge keys it: `run` names it as the store does.
        given = write_snapshot(night(transformers, graphs=1 + number), tmp_path / f"{transformers}.json")
        options = RunOptions(out=tmp_path / transformers, snapshot=given)
        reports.append(run(BY_TRANSFORMERS, options, store=store, say=lambda _: None, **taken.stages()))

    keys = [f"{TORCH}_transformers-{version}" for version in ("5.22.0", "5.23.0", "5.24.0")]
    assert store.keys() == keys
    assert [report.snapshot_key for report in reports] == keys
    assert [store.previous_of(store.get(key)) for key in keys] == [
        None,
        store.get(keys[0]),
        store.get(keys[1]),
    ]
    # Each night is diffed against the previous release's night: a change, not the same build.
    assert [tonight.previous_key for tonight in taken.nights] == [None, *keys[:2]]
    last = taken.nights[-1].diff
    assert last is not None and not last.same_build
    assert [(c.old_graphs, c.new_graphs) for c in last.flags[SCALAR].graph_changes] == [(2, 3)]


def test_the_dashboard_says_only_transformers_moved_between_two_releases_on_one_torch(tmp_path: Path):
    store = LocalStore(tmp_path / "store")
    for transformers in ("5.23.0", "5.24.0"):
        store.put(night(transformers).model_copy(update={"key": f"{TORCH}_transformers-{transformers}"}))
    build_site(store, tmp_path / "site", BY_TRANSFORMERS, say=lambda _: None)
    keys = store.keys()
    page = (tmp_path / "site" / links.compare_page(*keys)).read_text(encoding="utf-8")
    # Not an empty torch commit range: the release's changes, and whose code moved.
    assert "Commit range" not in page
    assert "only transformers 5.23.0 → 5.24.0" in page
    assert 'href="https://github.com/huggingface/transformers/compare/v5.23.0...v5.24.0"' in page
    assert "what changed is the models" in page and "own code" in page


def test_run_check_answers_per_transformers_with_the_transformers_key():
    store = MemoryStore(
        [
            night("5.22.0", key=f"{TORCH}_transformers-5.22.0"),
            night("5.23.0", key=f"{TORCH}_transformers-5.23.0"),
        ]
    )
    config = BY_TRANSFORMERS.with_flags([SCALAR])

    swept = sweep_need(store, build("5.23.0"), config)
    fresh = sweep_need(store, build("5.24.0"), config)

    assert not swept.sweep and swept.existing == f"{TORCH}_transformers-5.23.0"
    assert "with transformers 5.23.0 was already swept" in swept.reason
    assert fresh.sweep and fresh.reason.endswith("with transformers 5.24.0 is not in the store")
    assert already_swept(store, build("5.24.0"), BY_TRANSFORMERS) is None
    # The nightly index names no transformers: a night of that torch under any is stored.
    assert already_swept(store, Environment(torch_version=TORCH), BY_TRANSFORMERS) is not None


def test_run_check_prints_sweep_per_transformers(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "github-output"))
    store = MemoryStore([night("5.22.0", key=f"{TORCH}_transformers-5.22.0")])
    answers = {}
    for transformers in ("5.22.0", "5.23.0"):
        printed: list[str] = []
        config, installed = BY_TRANSFORMERS.with_flags([SCALAR]), build(transformers)
        run(config, RunOptions(check_only=True), store=store, build=installed, say=printed.append, **stages())
        answers[transformers] = printed[0]
    assert answers == {"5.22.0": "sweep=false", "5.23.0": "sweep=true"}


def test_the_default_key_says_why_another_transformers_is_not_swept():
    store = MemoryStore([night("5.22.0")])

    need = sweep_need(store, build("5.23.0"), BY_TORCH)

    assert not need.sweep and need.existing == TORCH
    assert "with transformers 5.22.0, not the installed 5.23.0" in need.reason
    assert 'key = "torch+transformers"' in need.reason
    assert already_swept(store, build("5.23.0"), BY_TORCH) == TORCH


def test_a_stream_is_keyed_as_the_store_names_its_nights(tmp_path: Path):
    stream = tmp_path / "sweep.jsonl"
    swept = night("5.23.0")
    header = SweepHeader(environment=swept.environment, flags=swept.flags, corpus=swept.corpus)
    writer = StreamWriter.create(stream, header)
    for config, outcome in swept.results[0].outcomes.items():
        writer.write(RunRecord(model="M", config=config, outcome=outcome))
    writer.close()

    assert merge([stream]).key == TORCH
    assert merge([stream], "torch+transformers").key == f"{TORCH}_transformers-5.23.0"
    assert read_input(stream, "torch+transformers", reproductions=False).key == f"{TORCH}_transformers-5.23.0"


def test_the_installed_build_names_its_transformers(tmp_path: Path, monkeypatch):
    fake = tmp_path / "site"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text(
        "__version__ = '2.14.0'\nclass version:\n    git_version = 'abc123'\n", encoding="utf-8"
    )
    (fake / "transformers-5.23.0.dist-info").mkdir()
    (fake / "transformers-5.23.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: transformers\nVersion: 5.23.0\n", encoding="utf-8"
    )
    monkeypatch.setenv("PYTHONPATH", str(fake))

    assert installed_build() == Environment(
        torch_version="2.14.0", torch_git_version="abc123", transformers_version="5.23.0"
    )


class Stages:
    """Stand-in sweep, renderer and publisher for `run --snapshot`, keeping the nights rendered."""

    def __init__(self) -> None:
        self.nights: list[Night] = []

    def stages(self) -> dict:
        def sweeper(config, work, resume):
            raise AssertionError("a given snapshot is not swept")

        def renderer(night: Night, out: Path) -> Path:
            self.nights.append(night)
            return out

        def publisher(night: Night, config, token, dry_run, out):
            return "dry run", night

        return {"sweeper": sweeper, "renderer": renderer, "publisher": publisher}


def stages() -> dict:
    return Stages().stages()


def test_a_baseline_regression_that_came_with_transformers_says_so_and_links_its_releases():
    # Found replaying transformers 5.22 -> 5.24 on torch 2.13.0+cpu: the notice called it "a
    # Dynamo regression" and said "commit range unknown (a snapshot lacks its torch git hash)".
    from triagebot.analysis.diff import moved_between
    from triagebot.report.health import baseline_regression_notice

    older = night("5.22.0").model_copy(update={"key": "2.13.0+cpu_transformers-5.22.0"})
    newer = built([result("M", ok(5), {SCALAR: ok(2)})], key="2.13.0+cpu_transformers-5.24.0", git=GIT)
    newer = newer.model_copy(update={"environment": build("5.24.0"), "corpus": older.corpus})
    tonight = analyse(newer, [], older)
    assert tonight.diff.moved == ["transformers 5.22.0 → 5.24.0"] and not tonight.diff.torch_moved
    assert tonight.health.model_code_only
    assert tonight.diff.compare_url == "https://github.com/huggingface/transformers/compare/v5.22.0...v5.24.0"
    said = baseline_regression_notice(tonight)
    assert "(transformers 5.22.0 → 5.24.0, the torch build the same): the models' own code changed" in said
    assert "Commit range: https://github.com/huggingface/transformers/compare/v5.22.0...v5.24.0" in said
    assert "a Dynamo regression" not in said and "lacks its torch git hash" not in said
    moved, torch_moved, url = moved_between(
        build("5.24.0"), build("5.24.0", torch="2.14.1+cu130", git="d" * 12)
    )
    assert moved == ["torch 2.13.0+cpu → 2.14.1+cu130"] and torch_moved
    assert url.startswith("https://github.com/pytorch/pytorch/compare/")
