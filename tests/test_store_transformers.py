"""A build is torch and transformers (`Environment.same_build`): the store never stores a night of
another transformers over the night it holds under the same key."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import SCALAR, ok, result
from builders import snapshot as built

from triagebot.config import Config
from triagebot.errors import PipelineError, StoreError
from triagebot.pipeline import RunOptions, run
from triagebot.results import Environment, Night, Snapshot
from triagebot.store import LocalStore, MemoryStore, write_snapshot

TORCH, GIT = "2.13.0+cpu", "cf30153c4c13"


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
    assert "kept the stored one" in message
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
