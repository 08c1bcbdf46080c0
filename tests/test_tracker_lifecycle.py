"""A tracker's life beyond one night: the watchdog (no nightly stored for `stale_after_days`
days is said where people look, the step summary of the scheduled poll and one comment on a
tracking issue, once per silence), and a failing model whose class left transformers, which is
reported as removed, never as fixed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from builders import DYNAMIC, REPO, SCALAR, crash, night_of, nightly
from climain import run_main
from fakegithub import point_tracker_at, serve
from test_tracker import MODELS, snapshot
from test_tracker import run as publish_nights
from test_tracker_failures import publish_command

from triagebot.report.markers import notice_marker, silence_marker
from triagebot.store import LocalStore
from triagebot.tracker.watchdog import silence_of

NOW = datetime(2026, 4, 10, 12, tzinfo=UTC)


def stored_at(key: str, when: datetime):
    return snapshot(key, {SCALAR: ["Bert"]}).model_copy(update={"created": when})


@pytest.fixture
def fake(monkeypatch):
    for fake in serve():
        point_tracker_at(fake, monkeypatch)
        yield fake


def test_a_silence_is_whole_days_since_the_newest_stored_nightly():
    night = stored_at("2.12.0.dev20260405", NOW - timedelta(days=5, hours=2))
    silence = silence_of(night, NOW, 3)
    assert silence is not None and (silence.key, silence.days) == (night.key, 5)
    assert silence.line() == (
        "no nightly stored for 5 days (over 3): the last is 2.12.0.dev20260405, stored 2026-04-05; "
        "the nightly workflow may be failing"
    )
    assert silence_of(night, NOW - timedelta(days=3), 3) is None  # two days: not yet
    assert silence_of(night, NOW, 0) is None  # off
    assert silence_of(None, NOW, 3) is None  # nothing stored yet: nothing to be silent about
    naive = night.model_copy(update={"created": (NOW - timedelta(days=4)).replace(tzinfo=None)})
    assert silence_of(naive, NOW, 3).days == 4


def poll(monkeypatch, capsys, tmp_path):
    return run_main(
        monkeypatch, capsys, "command", "--poll", "--repo", REPO, "--store", str(tmp_path / "store"),
        "--output", str(tmp_path / "outputs"),
    )  # fmt: skip


def test_the_scheduled_poll_says_a_silence_once_on_an_issue(fake, monkeypatch, capsys, tmp_path):
    old = stored_at("2.12.0.dev20260401", datetime.now(UTC) - timedelta(days=4))
    assert publish_command(fake, monkeypatch, capsys, tmp_path, old).status == 0
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))

    first = poll(monkeypatch, capsys, tmp_path)
    assert first.status == 0, first.err
    assert "watchdog: no nightly stored for 4 days (over 3): the last is 2.12.0.dev20260401" in first.err
    assert "**triagebot watchdog:** no nightly stored for 4 days" in summary.read_text(encoding="utf-8")
    [comment] = fake.comments(REPO, 1)
    assert comment["body"].startswith(
        silence_marker(old.key) + "\n**No nightly has been stored for 4 days.**"
    )

    again = poll(monkeypatch, capsys, tmp_path)  # the next poll: said already
    assert again.status == 0 and len(fake.comments(REPO, 1)) == 1

    # A nightly is stored again: the silence is over, nothing more is said.
    LocalStore(tmp_path / "store").put(stored_at("2.12.0.dev20260406", datetime.now(UTC)))
    after = poll(monkeypatch, capsys, tmp_path)
    assert "watchdog" not in after.err and len(fake.comments(REPO, 1)) == 1


def test_a_watchdog_that_cannot_comment_says_why_and_the_poll_still_answers(
    fake, monkeypatch, capsys, tmp_path
):
    old = stored_at("2.12.0.dev20260401", datetime.now(UTC) - timedelta(days=9))
    assert publish_command(fake, monkeypatch, capsys, tmp_path, old).status == 0
    fake.permissions["triagebot-bot"] = "read"
    fake.lock_issue(REPO, 1)
    ran = poll(monkeypatch, capsys, tmp_path)
    assert ran.status == 0 and "run=false" in ran.out
    assert "watchdog: say the silence on pytorch/pytorch#1: GitHub answered 403" in ran.err


def test_a_failing_model_whose_class_left_transformers_is_removed_never_fixed(fake):
    crashes = {SCALAR: {"Bert": crash(), "T5": crash()}, DYNAMIC: {"Bert": crash()}}
    before = nightly("2.12.0.dev20260401", crashes, MODELS, git="a" * 40)
    remaining = [model for model in MODELS if model != "Bert"]
    after = nightly("2.12.0.dev20260402", {SCALAR: {"T5": crash()}}, remaining, git="b" * 40)
    after = after.model_copy(
        update={"environment": after.environment.model_copy(update={"transformers_version": "5.25.0"})}
    )
    change = night_of(after, [before]).diff.flags[SCALAR]  # the diff's word: removed, not fixed
    assert [m.model for m in change.removed] == ["Bert"] and change.fixed == []
    first = publish_nights(fake, [before])
    assert first.not_applied == []
    publish_nights(fake, [before, after])
    scalar, dynamic = (issue["number"] for issue in fake.issues(REPO))
    for number, flag in ((scalar, SCALAR), (dynamic, DYNAMIC)):
        [comment] = fake.comments(REPO, number)
        body = comment["body"]
        assert body.startswith(notice_marker("removed", flag, after.key) + "\n")
        assert "left the corpus" in body and "no longer in transformers `5.25.0`" in body
        assert "| `Bert` |" in body and "removed, not fixed" in body
        assert "stopped crashing" not in body
    writes = len(fake.writes)
    publish_nights(fake, [before, after])
    assert len(fake.writes) == writes  # said once


def test_the_issue_of_a_flag_no_longer_swept_is_closed_once_saying_why(fake, monkeypatch, capsys, tmp_path):
    both = nightly(
        "2.12.0.dev20260401", {SCALAR: {"Bert": crash()}, DYNAMIC: {"T5": crash()}}, MODELS, git="a"
    )
    assert publish_command(fake, monkeypatch, capsys, tmp_path, both).status == 0
    [scalar] = [issue for issue in fake.issues(REPO) if SCALAR in issue["body"].splitlines()[0]]
    alone = nightly("2.12.0.dev20260402", {DYNAMIC: {"T5": crash()}}, MODELS, flags=(DYNAMIC,), git="b")
    for _ in range(2):  # published twice: said once
        assert publish_command(fake, monkeypatch, capsys, tmp_path, both, alone).status == 0
        assert state_of(fake, scalar["number"]) == "closed"
        [comment] = fake.comments(REPO, scalar["number"])
        assert f"`{SCALAR}` is no longer swept" in comment["body"]
    later = nightly("2.12.0.dev20260403", {DYNAMIC: {"T5": crash()}}, MODELS, flags=(DYNAMIC,), git="c")
    assert publish_command(fake, monkeypatch, capsys, tmp_path, both, alone, later).status == 0
    assert len(fake.comments(REPO, scalar["number"])) == 1  # nothing more on a later night
    back = nightly("2.12.0.dev20260404", {SCALAR: {"Bert": crash()}}, MODELS, git="d")
    assert publish_command(fake, monkeypatch, capsys, tmp_path, both, alone, later, back).status == 0
    assert state_of(fake, scalar["number"]) == "open"  # swept again and crashing: reopened


def state_of(fake, number: int) -> str:
    return next(issue["state"] for issue in fake.issues(REPO) if issue["number"] == number)
