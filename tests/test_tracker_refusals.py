"""A real repository's refusals, against the fake GitHub: a bot account without triage rights,
a locked issue, and a `Retry-After` given as a date. Each is reproduced first, then the run
either converges or says once what GitHub refused, and everything else is still written."""

from __future__ import annotations

import re
import time

import pytest
from builders import DYNAMIC, REPO, SCALAR
from fakegithub import serve
from test_tracker import connected, snapshot
from test_tracker_failures import publish_command

from triagebot.report.markers import notice_marker
from triagebot.results import RefusedLabels
from triagebot.store import LocalStore
from triagebot.tracker.memory import REFUSED, labels_folder
from triagebot.tracker.remote import list_bot_issues

BOT = "triagebot-bot"
N1 = snapshot("2.12.0.dev20260401", {SCALAR: ["Llama"], DYNAMIC: ["T5"]})
N2 = snapshot("2.12.0.dev20260402", {SCALAR: ["Llama", "Bert"], DYNAMIC: ["T5"]})
N3 = snapshot("2.12.0.dev20260403", {SCALAR: ["Llama", "Whisper"], DYNAMIC: []})
N4 = snapshot("2.12.0.dev20260404", {SCALAR: ["Llama", "Whisper"], DYNAMIC: []})


@pytest.fixture
def fake():
    yield from serve()


def label_posts(fake) -> int:
    return sum(1 for method, path in fake.requests if method == "POST" and path.endswith("/labels"))


def test_labels_a_bot_without_triage_rights_may_not_set_are_said_once(fake, monkeypatch, capsys, tmp_path):
    fake.permissions[BOT] = "read"  # may open issues and comment, as anyone may; no labels
    first = publish_command(fake, monkeypatch, capsys, tmp_path, N1)
    assert first.status == 0, first.err
    assert "2 refused by GitHub, first: create label 'module: dynamo' in pytorch/pytorch: " in first.out
    assert "GitHub answered 403: Resource not accessible by integration" in first.out
    assert [issue["labels"] for issue in fake.issues(REPO)] == [[], []]  # both opened all the same
    refused = LocalStore(tmp_path / "store").records(labels_folder(REPO), RefusedLabels)[REFUSED]
    assert refused.labels == ["module: dynamo", "triagebot"] and refused.key == N1.key

    # The next nights ask for no label again, and say nothing of them: the rest is written.
    asked = label_posts(fake)
    second = publish_command(fake, monkeypatch, capsys, tmp_path, N1, N2)
    assert second.status == 0 and "refused" not in second.out, second.out
    assert label_posts(fake) == asked
    scalar = fake.issues(REPO)[0]
    assert "2 models crash" in scalar["title"]
    regression = notice_marker("regression", SCALAR, N2.key)
    assert [c["body"].splitlines()[0] for c in fake.comments(REPO, scalar["number"])] == [regression]


def test_a_refused_label_change_skips_that_change_alone(fake, monkeypatch, capsys, tmp_path):
    assert publish_command(fake, monkeypatch, capsys, tmp_path, N1, N2).status == 0
    dynamic = fake.issues(REPO)[1]["number"]
    # A person takes a label off; the bot's token is swapped for one without triage rights.
    fake.edit_issue(REPO, dynamic, "maintainer", labels=["module: dynamo"])
    fake.permissions[BOT] = "read"
    ran = publish_command(fake, monkeypatch, capsys, tmp_path, N1, N2, N3)
    assert ran.status == 0, ran.err
    assert f"refused by GitHub, not retried: add labels triagebot to {REPO}#{dynamic}" in ran.out
    # Its other changes went through (the new body), and the next night asks for it no more.
    issue = fake.issues(REPO)[1]
    assert "no model crashes" in issue["title"]
    assert publish_command(fake, monkeypatch, capsys, tmp_path, N1, N2, N3, N4).status == 0
    assert "refused" not in capsys.readouterr().out


def test_a_comment_on_a_locked_issue_is_said_and_the_rest_is_written(fake, monkeypatch, capsys, tmp_path):
    assert publish_command(fake, monkeypatch, capsys, tmp_path, N1).status == 0
    fake.permissions[BOT] = "triage"  # may label, may not comment on a locked conversation
    fake.lock_issue(REPO, 1)
    ran = publish_command(fake, monkeypatch, capsys, tmp_path, N1, N2)
    assert ran.status == 0, ran.err
    refused = f"comment regression notice on {REPO}#1: GitHub answered 403: Unable to create comment because"
    assert refused in ran.out and "issue is locked." in ran.out
    assert "2 models crash" in fake.issues(REPO)[0]["title"]  # the body was written
    assert fake.comments(REPO, 1) == []
    writes = len(fake.writes)
    again = publish_command(fake, monkeypatch, capsys, tmp_path, N1, N2)  # the same night again
    assert again.status == 0 and len(fake.writes) == writes


def test_a_failed_edit_no_longer_holds_back_its_issues_notices(fake, monkeypatch, capsys, tmp_path):
    assert publish_command(fake, monkeypatch, capsys, tmp_path, N1).status == 0
    fake.inject("PATCH", r"/issues/1$", "error", status=422)
    ran = publish_command(fake, monkeypatch, capsys, tmp_path, N1, N2)
    assert ran.status == 2 and ran.err.count("\n") == 1
    assert f"edit title and body of {REPO}#1: GitHub answered 422" in ran.err
    assert notice_marker("regression", SCALAR, N2.key) in fake.comments(REPO, 1)[0]["body"]
    again = publish_command(fake, monkeypatch, capsys, tmp_path, N1, N2)  # converges, no duplicate
    assert again.status == 0 and len(fake.comments(REPO, 1)) == 1
    assert "2 models crash" in fake.issues(REPO)[0]["title"]


def test_retry_after_given_as_an_http_date_is_waited_out(fake):
    slept: list[float] = []
    gh = connected(fake, slept=slept, write_interval=0)
    fake.inject("GET", r"/issues$", "secondary", retry_after=fake.http_date(42))
    fake.inject("GET", r"/issues$", "secondary", retry_after=fake.http_date(-30))  # already past
    fake.inject("GET", r"/issues$", "secondary", retry_after="in a while")  # unreadable
    assert list_bot_issues(gh, REPO) == []
    assert slept == [42.0, 1.0, 240.0]  # the last: GitHub's default minute, doubled per attempt


def test_retry_after_as_a_date_through_the_command_is_no_traceback(fake, monkeypatch, capsys, tmp_path):
    fake.clock = time.time  # the dates it sends are read against the runner's clock
    fake.inject("POST", r"/issues$", "secondary", retry_after=fake.http_date(5))
    fake.inject("POST", r"/issues$", "secondary", retry_after=fake.http_date(3600))
    ran = publish_command(fake, monkeypatch, capsys, tmp_path, N1)
    assert ran.status == 2 and "Traceback" not in ran.err
    assert re.search(r"GitHub asks to wait 3[56]\d\ds \(secondary rate limit\), over 900s$", ran.err)
    assert publish_command(fake, monkeypatch, capsys, tmp_path, N1).status == 0
    assert len(fake.issues(REPO)) == 2


def test_a_token_that_may_not_write_issues_is_a_failure_in_one_line(fake, monkeypatch, capsys, tmp_path):
    assert publish_command(fake, monkeypatch, capsys, tmp_path, N1).status == 0
    fake.read_only.add("bot-token")  # e.g. an Actions token without `issues: write`
    fake.edit_issue(REPO, 2, "maintainer", labels=[])  # so that labels are asked for too
    ran = publish_command(fake, monkeypatch, capsys, tmp_path, N1, N3)
    assert ran.status == 2 and "Traceback" not in ran.err
    assert ran.err.splitlines() == [
        f"triagebot: error: applied 0 of 4 change(s) to {REPO}; 3 failed, first: edit title and body of "
        f"{REPO}#1: GitHub answered 403: Resource not accessible by integration; 1 refused by "
        f"GitHub, first: add labels module: dynamo, triagebot to {REPO}#2: GitHub answered 403: "
        "Resource not accessible by integration"
    ]
    store = LocalStore(tmp_path / "store")
    assert store.records(labels_folder(REPO), RefusedLabels) == {}  # not set aside: a person fixes it
    fake.read_only.clear()
    assert publish_command(fake, monkeypatch, capsys, tmp_path, N1, N3).status == 0
    assert {label["name"] for label in fake.issues(REPO)[1]["labels"]} == {"module: dynamo", "triagebot"}
