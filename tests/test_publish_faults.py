"""A night counts as published only once its writes are done, and two publishers take turns:
against the fake GitHub, a revoked token and a failed write are finished by the next run
(same build or a new one), and two publishers at once open each issue once."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from builders import REPO, SCALAR
from fakegithub import point_tracker_at, serve
from test_store import bare_repo
from test_tracker import snapshot

from triagebot.config import Config, TrackerSettings
from triagebot.errors import StoreError, TrackerError, TriagebotError
from triagebot.pipeline import RunOptions, night_of, publish_stored, publish_under_lock, render_report, run
from triagebot.report.markers import notice_marker
from triagebot.results import Snapshot
from triagebot.store import GitStore, LocalStore, MemoryStore, mark_night, owed_nights, published_nights
from triagebot.store import lease as leases

ROOT = Path(__file__).resolve().parent.parent


CONFIG = Config(tracker=TrackerSettings(repo=REPO))


def configured_night(key: str, crashing: dict) -> Snapshot:
    """A night of the configured corpus (CONFIG's), so that no stored night is a trial."""
    night = snapshot(key, crashing)
    return night.model_copy(
        update={"corpus": night.corpus.model_copy(update={"name": CONFIG.sweep.corpus_name})}
    )


N1 = configured_night("2.12.0.dev20260401", {SCALAR: ["Llama"]})
N2 = configured_night("2.12.0.dev20260402", {SCALAR: ["Llama", "Bert"]})
N3 = configured_night("2.12.0.dev20260403", {SCALAR: ["Llama", "T5"]})


@pytest.fixture
def fake(monkeypatch):
    for fake in serve():
        point_tracker_at(fake, monkeypatch)
        yield fake


def night_run(store, tmp_path: Path, *, snapshot=None, token="bot-token", check=False, lines=None):
    """`triagebot run` with the real publisher: of `snapshot` (as the publish job runs it), or
    of the installed build `N2` when none is given."""
    path = None
    if snapshot is not None:
        path = tmp_path / f"{snapshot.key}.json"
        path.write_text(snapshot.model_dump_json(), encoding="utf-8")
    options = RunOptions(out=tmp_path / "out", token=token, snapshot=path, check_only=check)
    return run(
        CONFIG,
        options,
        store=store,
        build=None if snapshot is not None else N2.environment,
        say=(lines if lines is not None else []).append,
        sweeper=lambda *_: pytest.fail("nothing is swept here"),
        renderer=render_report,
        publisher=functools.partial(publish_under_lock, store=store, say=lambda _: None),
    )


def markers(fake, number: int = 1) -> list[str]:
    return [comment["body"].splitlines()[0] for comment in fake.comments(REPO, number)]


def states(store) -> dict[str, str]:
    return {key: record.state for key, record in published_nights(store, REPO).items()}


def test_a_night_whose_publish_failed_is_published_by_the_next_run_of_its_build(fake, tmp_path, monkeypatch):
    store = LocalStore(tmp_path / "store")
    night_run(store, tmp_path, snapshot=N1)
    with pytest.raises(TrackerError, match="GitHub answered 401: Bad credentials"):
        night_run(store, tmp_path, snapshot=N2, token="revoked")
    # Nothing computed is lost: stored, reported; and owed, with why.
    assert N2.key in store and (tmp_path / "out" / "report").is_dir()
    assert states(store) == {N1.key: "published", N2.key: "pending"}
    assert "Bad credentials" in published_nights(store, REPO)[N2.key].line
    assert markers(fake) == []

    output = tmp_path / "github-output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    lines: list[str] = []
    night_run(store, tmp_path, check=True, lines=lines)  # the same build tomorrow
    outputs = dict(line.split("=", 1) for line in output.read_text(encoding="utf-8").splitlines())
    assert (outputs["sweep"], outputs["publish"]) == ("false", "true")
    assert lines[-1] == f"stored but not published yet: {N2.key} (the next run publishes them)"

    report = night_run(store, tmp_path, lines=lines)
    assert not report.swept and "publishing what is owed to GitHub" in lines[-2]
    assert report.published.startswith(f"{N2.key} (stored earlier, published now): applied ")
    assert markers(fake) == [notice_marker("regression", SCALAR, N2.key)]
    assert states(store) == {N1.key: "published", N2.key: "published"}
    writes = len(fake.writes)
    night_run(store, tmp_path, lines=lines)
    assert len(fake.writes) == writes and "nothing to do" in lines[-1]


def test_a_new_build_publishes_the_night_still_owed_first(fake, tmp_path):
    store = LocalStore(tmp_path / "store")
    night_run(store, tmp_path, snapshot=N1)
    fake.inject("POST", r"/issues/1/comments$", "error", status=422)  # the regression notice fails
    with pytest.raises(TrackerError, match="applied 1 of 2 change"):
        night_run(store, tmp_path, snapshot=N2)
    assert states(store)[N2.key] == "pending"

    report = night_run(store, tmp_path, snapshot=N3)
    assert report.published.startswith(f"{N2.key} (stored earlier, published now): applied 1 of 1 ")
    assert markers(fake) == [
        notice_marker("regression", SCALAR, N2.key),
        notice_marker("regression", SCALAR, N3.key),
    ]
    assert "2 models crash" in fake.issues(REPO)[0]["title"]  # the newest night's issue
    assert states(store) == dict.fromkeys((N1.key, N2.key, N3.key), "published")


def test_a_night_older_than_a_published_one_is_set_aside_never_published():
    store = MemoryStore([N1, N2, N3])
    mark_night(store, REPO, N1.key, "pending")
    mark_night(store, REPO, N2.key, "published")
    mark_night(store, REPO, N3.key, "pending")
    assert owed_nights(store, REPO) == ([N3.key], [N1.key])


def test_two_publish_commands_at_once_open_each_issue_once(fake, tmp_path):
    store = LocalStore(tmp_path / "store")
    store.put(N1)
    # Opening an issue takes seconds: without a lock both would look, find none, and open one.
    fake.inject("POST", r"/issues$", "slow", seconds=3.0, times=10)
    env = {
        **os.environ,
        "GITHUB_API_URL": fake.base_url,
        "GITHUB_TOKEN": "bot-token",
        "PYTHONPATH": str(ROOT),
    }
    command = [
        sys.executable,
        "-m",
        "triagebot",
        "publish",
        N1.key,
        "--repo",
        REPO,
        "--store",
        str(store.path),
    ]

    def start(name: str) -> subprocess.Popen:
        return subprocess.Popen(
            [*command, "--out", str(tmp_path / name)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    # The second starts once the first holds the lock (its pid written in it), so that it meets
    # the lock held however long each takes to start.
    first = start("one")
    lock = store.path / f".publish-{REPO.replace('/', '--')}.lock"
    deadline = time.monotonic() + 120
    while not (lock.is_file() and lock.read_text().strip() == f"pid {first.pid}"):
        assert first.poll() is None and time.monotonic() < deadline, "the first publisher never took the lock"
        time.sleep(0.05)
    both = [first, start("two")]
    results = [process.communicate(timeout=300) for process in both]
    assert [process.returncode for process in both] == [0, 0], results
    assert len(fake.issues(REPO)) == 1
    assert "publishing to pytorch/pytorch is in use by pid" in results[1][1]
    assert states(store) == {N1.key: "published"}


def test_two_publishers_on_separate_checkouts_of_one_data_branch_take_turns(fake, tmp_path, monkeypatch):
    monkeypatch.setattr(leases, "Lease", functools.partial(leases.Lease, poll=0.05))
    remote = str(bare_repo(tmp_path))
    first = GitStore(remote, "triagebot-data", tmp_path / "one")
    first.put(N1)
    second = GitStore(remote, "triagebot-data", tmp_path / "two")
    fake.inject("POST", r"/issues$", "slow", seconds=1.0, times=10)
    lines: dict[str, str] = {}
    failures: list[BaseException] = []

    def publish(name: str, store: GitStore) -> None:
        try:
            night = night_of(store.get(N1.key), store, CONFIG)
            lines[name] = publish_stored(night, CONFIG, "bot-token", False, tmp_path / name, store=store)
        except BaseException as error:  # said by the assertion below
            failures.append(error)

    threads = [threading.Thread(target=publish, args=item) for item in (("one", first), ("two", second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert failures == []
    assert len(fake.issues(REPO)) == 1
    assert sorted(lines.values())[0].startswith(f"applied 0 of 0 change(s) to {REPO}")
    fresh = GitStore(remote, "triagebot-data", tmp_path / "three")
    assert states(fresh) == {N1.key: "published"}
    assert not list(fresh.checkout.glob("leases/*"))  # given back


class FailingRecords(LocalStore):
    """A store whose next write of records (the night owed) fails, as a push can."""

    fail = True

    def _write_records(self, folder, texts):
        if self.fail:
            self.fail = False
            raise StoreError("could not push records published/… after 5 attempts")
        super()._write_records(folder, texts)


class FailingSnapshot(LocalStore):
    """A store whose next write of a snapshot fails."""

    fail = True

    def _write(self, snapshot):
        if self.fail:
            self.fail = False
            raise StoreError("could not push snapshot after 5 attempts")
        super()._write(snapshot)


@pytest.mark.parametrize("store_class", [FailingRecords, FailingSnapshot])
def test_a_night_stored_is_always_owed_whichever_write_fails(store_class, fake, tmp_path):
    store = store_class(tmp_path / "store")
    with pytest.raises(TriagebotError, match="could not push"):
        night_run(store, tmp_path, snapshot=N1)
    # Either nothing is stored (the next run sweeps and publishes it) or it is stored and owed.
    assert N1.key not in store or states(store) == {N1.key: "pending"}
    night_run(store, tmp_path, snapshot=N1)
    assert states(store) == {N1.key: "published"}
