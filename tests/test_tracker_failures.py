"""GitHub failures are clean and contained: one line naming the operation and the issue, the
other issues' writes still applied, exit 2 without a traceback, and a rerun that converges."""

from __future__ import annotations

import functools
import re
import socket

import pytest
from climain import run_main
from fakegithub import serve
from test_tracker import DYNAMIC, REPO, SCALAR, connected, night_of, publish, snapshot

from triagebot import report
from triagebot.config import TrackerSettings
from triagebot.report.markers import flag_marker
from triagebot.store import LocalStore
from triagebot.tracker.desired import desired_issues
from triagebot.tracker.github import GitHubError


@pytest.fixture
def fake():
    yield from serve()


def test_the_fake_answers_githubs_limits_with_its_422(fake):
    gh = connected(fake)
    repo = gh.repo(REPO)
    cases = [
        (
            lambda: repo.create_issue(title="t" * 257, body="b"),
            "title is too long (maximum is 256 characters)",
        ),
        (
            lambda: repo.create_issue(title="t", body="b" * 65_537),
            "body is too long (maximum is 65536 characters)",
        ),
        (lambda: repo.create_issue(title="", body="b"), "Issue title missing_field"),
    ]
    for call, message in cases:
        with pytest.raises(
            GitHubError, match=re.escape(f"open it: GitHub answered 422: {message}") + "$"
        ) as raised:
            gh.write(call, what="open it")
        assert raised.value.status == 422
    number = gh.write(lambda: repo.create_issue(title="t" * 256, body="b" * 65_536).number, what="open")
    issue = repo.get_issue(number)
    with pytest.raises(GitHubError, match=r"edit: GitHub answered 422: body is too long"):
        gh.write(lambda: issue.edit(body="b" * 65_537), what="edit")
    with pytest.raises(GitHubError, match=r"GitHub answered 422: Body is too long \(maximum is 65536"):
        gh.write(lambda: issue.create_comment("c" * 65_537), what="comment")
    with pytest.raises(GitHubError, match=r"GitHub answered 422: Body cannot be blank"):
        gh.write(lambda: issue.create_comment(" "), what="comment")
    gh.write(lambda: issue.create_comment("c" * 65_536), what="comment")
    assert len(fake.comments(REPO, number)) == 1 and len(fake.issues(REPO)) == 1


def oversized(flag: str):
    """report.issue_body, except that `flag`'s body is over GitHub's limit."""
    real = report.issue_body

    def body(night, name, **options):
        text = real(night, name, **options)
        return text + "\n" + "x" * 70_000 if name == flag else text

    return body


def test_a_refused_write_does_not_stop_the_other_issues(fake, monkeypatch):
    nightly = snapshot("k1", {SCALAR: ["Bert"], DYNAMIC: ["T5"]})
    monkeypatch.setattr(report, "issue_body", oversized(SCALAR))
    gh = connected(fake)
    settings = TrackerSettings(repo=REPO)
    desired = desired_issues(night_of([nightly], settings).linked({}, author=gh.login), settings)
    publication = publish(desired, key="k1", repo=REPO, gh=gh, max_writes=50)
    assert [missing.reason for missing in publication.not_applied] == [
        f"open the issue for {SCALAR} in {REPO}: "
        "GitHub answered 422: body is too long (maximum is 65536 characters)"
    ]
    issues = fake.issues(REPO)
    assert [issue["body"].splitlines()[0] for issue in issues] == [flag_marker(DYNAMIC)]

    monkeypatch.undo()  # the body fits again: running again opens what is missing, once
    desired = desired_issues(night_of([nightly], settings).linked({}, author=gh.login), settings)
    again = publish(desired, key="k1", repo=REPO, gh=connected(fake), max_writes=50)
    assert again.not_applied == []
    markers = sorted(issue["body"].splitlines()[0] for issue in fake.issues(REPO))
    assert markers == sorted([flag_marker(SCALAR), flag_marker(DYNAMIC)])


def publish_command(fake, monkeypatch, capsys, tmp_path, *nights, extra=()):
    store = LocalStore(tmp_path / "store")
    for night in nights:
        store.put(night)
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.setenv("GITHUB_TOKEN", "bot-token")
    from triagebot.tracker import github

    monkeypatch.setattr(github, "connect", functools.partial(github.connect, sleep=lambda _: None))
    return run_main(
        monkeypatch,
        capsys,
        "publish",
        nights[-1].key,
        "--repo",
        REPO,
        "--store",
        str(store.path),
        "--out",
        str(tmp_path / "out"),
        *extra,
    )


def test_publish_says_what_failed_applies_the_rest_and_exits_2(fake, monkeypatch, capsys, tmp_path):
    first = snapshot("2.12.0.dev20260401", {SCALAR: ["Bert"], DYNAMIC: ["T5"]})
    assert publish_command(fake, monkeypatch, capsys, tmp_path, first).status == 0
    scalar, dynamic = (i["number"] for i in fake.issues(REPO))

    second = snapshot("2.12.0.dev20260402", {SCALAR: ["Bert", "Llama"], DYNAMIC: ["T5", "Bert"]})
    with monkeypatch.context() as patched:
        patched.setattr(report, "issue_body", oversized(SCALAR))
        ran = publish_command(fake, patched, capsys, tmp_path, first, second)
    assert ran.status == 2 and "Traceback" not in ran.err
    refused = (
        f"edit title and body of {REPO}#{scalar}: GitHub answered 422: "
        "body is too long (maximum is 65536 characters)"
    )
    assert ran.err.splitlines() == [
        f"triagebot: error: applied 3 of 4 change(s) to {REPO}; 1 failed, first: {refused}"
    ]
    assert f"not applied: {refused}" in ran.out
    # The failed edit skips that change alone: its issue's notice is posted, and the other
    # flag's issue got its new body and its regression notice all the same.
    assert "2 models crash, 1 new" in fake.issues(REPO)[dynamic - 1]["title"]
    assert len(fake.comments(REPO, dynamic)) == 1 and len(fake.comments(REPO, scalar)) == 1

    ran = publish_command(fake, monkeypatch, capsys, tmp_path, first, second)  # fixed: converges
    assert ran.status == 0, ran.err
    assert len(fake.issues(REPO)) == 2 and len(fake.comments(REPO, scalar)) == 1
    assert len(fake.comments(REPO, dynamic)) == 1
    writes = len(fake.writes)
    assert publish_command(fake, monkeypatch, capsys, tmp_path, first, second).status == 0
    assert len(fake.writes) == writes


def test_an_unreachable_github_is_one_line(monkeypatch, capsys, tmp_path):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    store = LocalStore(tmp_path / "store")
    store.put(snapshot("2.12.0.dev20260401", {SCALAR: ["Bert"]}))
    from triagebot.tracker import github

    monkeypatch.setenv("GITHUB_API_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setattr(github, "connect", functools.partial(github.connect, sleep=lambda _: None))
    ran = run_main(
        monkeypatch,
        capsys,
        "publish",
        "2.12.0.dev20260401",
        "--repo",
        REPO,
        "--token",
        "t",
        "--store",
        str(store.path),
    )
    assert ran.status == 2
    assert ran.err.splitlines() == [
        f"triagebot: error: read the token's login from http://127.0.0.1:{port}: "
        "still failing after 6 attempts: cannot reach GitHub: Connection refused"
    ]
