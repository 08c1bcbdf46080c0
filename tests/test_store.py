"""The three stores behave alike; the git store survives another job pushing first."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from builders import fixture_nightlies
from climain import run_main

from triagebot.analysis import diff
from triagebot.config import StoreSettings
from triagebot.store import (
    GitStore,
    LocalStore,
    MemoryStore,
    StoreError,
    check_key,
    key_order,
    open_store,
    read_snapshot,
)

OLD, NEW = fixture_nightlies()


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
    assert store.find_build(OLD.environment, "torch") == OLD.key
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


def test_each_store_says_where_it_keeps_a_snapshot(store) -> None:
    store.put(OLD)
    path = store.path_of(OLD.key)
    if isinstance(store, MemoryStore):
        assert path is None and store.location is None
        return
    assert path is not None and read_snapshot(path) == OLD
    assert store.location in path.parents
    with pytest.raises(StoreError, match="not a plain version"):
        store.path_of("../etc/passwd")


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


# --- a store several writers and readers share ---------------------------------------------------


def test_writers_and_readers_never_meet_half_a_file(tmp_path) -> None:
    """Two writers of one key and a reader, at once: every read sees a whole snapshot, no write
    trips over another's temporary file, and no temporary file is left behind."""
    import threading

    store = LocalStore(tmp_path)
    store.put(OLD)
    errors: list[BaseException] = []
    done = threading.Event()

    def write(snapshot) -> None:
        try:
            for _ in range(150):
                store.put(snapshot)
        except BaseException as error:
            errors.append(error)

    def read() -> None:
        try:
            while not done.is_set():
                assert store.get(OLD.key).key == OLD.key
        except BaseException as error:
            errors.append(error)

    twin = OLD.model_copy(update={"created": NEW.created})
    threads = [threading.Thread(target=write, args=(s,)) for s in (OLD, twin)]
    reader = threading.Thread(target=read)
    reader.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    reader.join()
    assert errors == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{OLD.key}.json"]


@pytest.mark.parametrize("key", ["2.12.0\n", "2.12.0\r", "a/b", "../x", "-rf", ".hidden", "", "x y"])
def test_keys_are_checked_whole(key) -> None:
    with pytest.raises(StoreError, match="not a plain version"):
        check_key(key)


def test_a_snapshot_with_an_unsafe_key_is_refused_when_read(tmp_path) -> None:
    path = tmp_path / "evil.json"
    path.write_text(OLD.model_copy(update={"key": "../../../escape"}).model_dump_json())
    with pytest.raises(StoreError, match=r"evil\.json: snapshot key '\.\./\.\./\.\./escape'"):
        read_snapshot(path)


def test_run_with_a_snapshot_of_an_unsafe_key_creates_nothing(tmp_path, monkeypatch, capsys) -> None:
    work = tmp_path / "a" / "b" / "c"
    work.mkdir(parents=True)
    evil = tmp_path / "evil.json"
    evil.write_text(OLD.model_copy(update={"key": "../../../../escape"}).model_dump_json())
    monkeypatch.chdir(work)
    ran = run_main(monkeypatch, capsys, "run", "--snapshot", str(evil), "--store", "store")
    assert ran.status == 2 and len(ran.err.splitlines()) == 1
    assert "snapshot key '../../../../escape' is not a plain version string" in ran.err
    assert list(work.iterdir()) == [] and not (tmp_path / "escape").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "evil.json"]


def test_undecodable_snapshot_is_one_line_in_the_commands_that_read_it(tmp_path, monkeypatch, capsys):
    from fakegithub.recorded import WEBHOOK_FIXTURES

    store = tmp_path / "store"
    store.mkdir()
    (store / "2.0.0.json").write_bytes(b'{"key": "2.0.0", "x": "\xff"}')
    for argv in (["effects", "2.0.0", "--store", str(store)], ["effects", str(store / "2.0.0.json")]):
        ran = run_main(monkeypatch, capsys, *argv)
        assert ran.status == 2, (argv, ran)
        expected = f"triagebot: error: {store / '2.0.0.json'}: not UTF-8 text (byte 23 is 0xff)"
        assert ran.err.splitlines() == [expected]
    # `command` reads the newest snapshot for the models a command may name: it goes on without it.
    event = WEBHOOK_FIXTURES / "issue_comment.created.json"
    ran = run_main(monkeypatch, capsys, "command", "--event", str(event), "--store", str(store))
    assert ran.status == 0 and "Traceback" not in ran.err
    assert f"warning: {store / '2.0.0.json'}: not UTF-8 text" in ran.err


def test_undecodable_and_corrupt_files_are_named_in_one_line(tmp_path) -> None:
    store = LocalStore(tmp_path)
    (tmp_path / "2.0.0.json").write_bytes(b'{"key": "2.0.0", "x": "\xff\xfe"}')
    (tmp_path / "2.0.1.json").write_text('{"key": "2.0.1", ')
    with pytest.raises(StoreError, match=r"2\.0\.0\.json: not UTF-8 text \(byte 23 is 0xff\)"):
        store.get("2.0.0")
    with pytest.raises(StoreError) as raised:
        store.get("2.0.1")
    assert "2.0.1.json: not a snapshot" in str(raised.value) and "\n" not in str(raised.value)


def test_readers_of_history_skip_a_corrupt_snapshot_with_a_warning(tmp_path) -> None:
    store = LocalStore(tmp_path)
    warnings: list[str] = []
    store.warn = warnings.append
    store.put(OLD)
    store.put(NEW)
    middle = "2.12.0.dev20260408+cu129"
    (tmp_path / f"{middle}.json").write_bytes(b"\x80not json")
    (tmp_path / "bad key.json").write_text("{}")
    assert [s.key for s in store.history()] == [OLD.key, NEW.key]
    assert store.latest_before(NEW.key) == OLD
    assert store.latest() == NEW
    assert store.find_build(NEW.environment, "torch") == NEW.key
    assert len(warnings) == 2  # each bad file once, however often it is met
    assert any(f"{middle}.json: not UTF-8" in w and w.endswith("skipped") for w in warnings)
    (tmp_path / f"{NEW.key}.json").write_text("{}")
    assert store.latest() == OLD  # the newest readable one


def test_two_holders_of_the_lock_take_turns(tmp_path) -> None:
    import threading

    store = LocalStore(tmp_path / "store")
    said: list[str] = []
    waiting = threading.Event()
    order: list[str] = []

    def say(message: str) -> None:
        said.append(message)
        waiting.set()

    other = LocalStore(tmp_path / "store")
    other.warn = say

    def second() -> None:
        with other.lock():
            order.append("second holds it")

    with store.lock():
        thread = threading.Thread(target=second)
        thread.start()
        assert waiting.wait(30)
        order.append("first lets go")
    thread.join()
    assert order == ["first lets go", "second holds it"]
    assert "is in use by pid" in said[0] and "waiting" in said[0]


def test_the_run_command_holds_the_store_lock(tmp_path, monkeypatch) -> None:
    import fcntl

    from typer.testing import CliRunner

    from triagebot import pipeline
    from triagebot.cli import app

    held: list[bool] = []

    def fake_run(config, options, *, store, **stages):
        with open(store.path / ".lock") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held.append(False)
            except BlockingIOError:
                held.append(True)

    monkeypatch.setattr(pipeline, "run", fake_run)
    monkeypatch.setattr(pipeline, "default_stages", lambda *a, **k: {})
    result = CliRunner().invoke(app, ["run", "--store", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert held == [True]


@pytest.mark.parametrize("kind", ["memory", "local", "git"])
def test_records_round_trip_and_refuse_unsafe_names(kind, tmp_path) -> None:
    from triagebot.results import IssueRecord

    if kind == "memory":
        store = MemoryStore()
    elif kind == "local":
        store = LocalStore(tmp_path / "s")
    else:
        store = GitStore(str(bare_repo(tmp_path)), "triagebot-data", tmp_path / "checkout")
    record = IssueRecord(repo="pytorch/pytorch", flag="f", number=7)
    store.put_records("issues/pytorch/pytorch", {"f": record})
    assert store.records("issues/pytorch/pytorch", IssueRecord) == {"f": record}
    assert store.records("issues/other/repo", IssueRecord) == {}
    for folder, name in (("issues/../x", "f"), ("issues", "../f"), ("issues", "f\n")):
        with pytest.raises(StoreError, match="not a plain path"):
            store.put_records(folder, {name: record})
    if kind == "git":
        fresh = GitStore(store.remote, "triagebot-data", tmp_path / "again")
        assert fresh.records("issues/pytorch/pytorch", IssueRecord) == {"f": record}
