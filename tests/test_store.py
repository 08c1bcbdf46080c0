"""The three stores behave alike; the git store survives another job pushing first."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from triagebot.analysis import diff
from triagebot.config import StoreSettings
from triagebot.store import (
    GitStore,
    LocalStore,
    MemoryStore,
    StoreError,
    key_order,
    open_store,
    read_snapshot,
)

DATA = Path(__file__).parent / "data"
OLD = read_snapshot(DATA / "2.12.0.dev20260408+cu128.json")
NEW = read_snapshot(DATA / "2.12.0.dev20260409+cu128.json")


def rebuilt(key: str, git_version: str):
    return NEW.model_copy(
        update={
            "key": key,
            "environment": NEW.environment.model_copy(
                update={"torch_version": key, "torch_git_version": git_version}
            ),
        }
    )


def bare_repo(tmp_path: Path) -> Path:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
    return remote


@pytest.fixture(params=["memory", "local", "git"])
def store(request, tmp_path):
    if request.param == "memory":
        return MemoryStore()
    if request.param == "local":
        return LocalStore(tmp_path / "snapshots")
    return GitStore(str(bare_repo(tmp_path)), "triagebot-data", tmp_path / "checkout")


def test_put_get_order_and_previous(store) -> None:
    assert store.keys() == [] and store.latest() is None
    assert store.put(NEW) is True
    assert store.put(OLD) is True
    assert store.keys() == [OLD.key, NEW.key]
    assert store.get(NEW.key) == NEW
    assert store.latest_before(NEW.key) == OLD
    assert store.latest_before(OLD.key) is None
    assert store.find_build(OLD.environment.torch_git_version) == OLD.key
    assert diff(store.get(OLD.key), store.get(NEW.key)).models_added == ["GPT2LMHeadModel"]


def test_same_build_under_another_key_is_not_news(store) -> None:
    store.put(OLD)
    respin = rebuilt("2.12.0.dev20260410+cu128", OLD.environment.torch_git_version)
    assert store.put(respin) is False
    assert store.put(respin) is False
    # The previous build of the respin skips the snapshot of its own build.
    assert store.latest_before(respin.key) is None
    store.put(NEW)
    assert store.latest_before("2.12.0.dev20260411+cu128").key == respin.key


def test_unknown_and_unsafe_keys_are_clear_errors(store) -> None:
    with pytest.raises(StoreError, match=r"no snapshot '2\.0\.0'"):
        store.get("2.0.0")
    with pytest.raises(StoreError, match="not a plain version"):
        store.get("../etc/passwd")


def test_versions_order_dev_before_release() -> None:
    keys = ["2.12.0", "2.12.0.dev20260409+cu128", "2.11.1", "2.12.0rc1", "2.12.0.dev20260408+cu128"]
    assert sorted(keys, key=key_order) == [
        "2.11.1",
        "2.12.0.dev20260408+cu128",
        "2.12.0.dev20260409+cu128",
        "2.12.0rc1",
        "2.12.0",
    ]


def test_local_store_writes_one_json_per_snapshot_and_names_bad_files(tmp_path) -> None:
    store = LocalStore(tmp_path)
    store.put(OLD)
    assert [p.name for p in tmp_path.iterdir()] == [f"{OLD.key}.json"]
    (tmp_path / "2.0.0.json").write_text('{"key": "2.0.0"}')
    with pytest.raises(StoreError, match=r"2\.0\.0\.json: not a snapshot: 'environment'"):
        store.get("2.0.0")


def test_git_store_rebases_when_another_job_pushed_first(tmp_path) -> None:
    remote = str(bare_repo(tmp_path))
    first = GitStore(remote, "triagebot-data", tmp_path / "one")
    second = GitStore(remote, "triagebot-data", tmp_path / "two")
    first.put(OLD)
    second.sync()  # both checkouts now at the same commit
    first.put(NEW)
    other = rebuilt("2.12.0.dev20260410+cu128", "c" * 40)
    second.put(other)  # its first push is rejected: it must rebase onto the first job's commit
    fresh = GitStore(remote, "triagebot-data", tmp_path / "three")
    assert fresh.keys() == [OLD.key, NEW.key, other.key]
    log = subprocess.run(
        ["git", "--git-dir", remote, "log", "--format=%s", "triagebot-data"], capture_output=True, text=True
    )
    assert log.stdout.split("\n")[:3] == [
        f"snapshot {other.key}",
        f"snapshot {NEW.key}",
        f"snapshot {OLD.key}",
    ]


def test_open_store_reads_the_store_table(tmp_path) -> None:
    assert isinstance(open_store(StoreSettings(path=str(tmp_path / "s"))), LocalStore)
    subprocess.run(["git", "init", "--quiet", str(tmp_path / "repo")], check=True)
    with pytest.raises(StoreError, match="'origin' is not a git remote"):
        open_store(StoreSettings(path=str(tmp_path / "d"), branch="triagebot-data"), tmp_path / "repo")
