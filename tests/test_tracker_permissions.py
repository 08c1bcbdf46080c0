"""`/rerun-sweep` from a bot whose token cannot read collaborator permissions (no push access:
GitHub answers 403, as recorded): the comment's `author_association` decides, the bot says so,
and nobody is told they lack access when the bot could not check."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from climain import run_main
from fakegithub import serve
from test_commands import (
    REPO,
    command_payload,
    gh_for,
    issue_flag,
    rerun_settings,
    stored_snapshot,
    tracked_issue,
)

import triagebot
from triagebot.store import LocalStore
from triagebot.tracker import answer, permissions, polling, rerun
from triagebot.tracker.commands import Kind
from triagebot.tracker.gpu_caps import takes_gpu
from triagebot.tracker.ledger import STALE_AFTER, Ledger

BOT = "triagebot-bot"


@pytest.fixture
def fake():
    yield from serve(repo=REPO)


def poll(gh, said: list[str], *, now: datetime = datetime(2026, 4, 10, tzinfo=UTC), **caps) -> rerun.Decision:
    settings = rerun_settings(stored_snapshot(), **caps)
    return polling.poll(
        gh,
        REPO,
        issue_flag=issue_flag,
        settings=settings,
        ledger=Ledger(REPO),
        now=now,
        say=said.append,
    )


def bot_comments(fake, number: int) -> list[str]:
    return [c["body"] for c in fake.comments(REPO, number) if c["user"]["login"] == BOT]


def test_the_fake_refuses_a_bot_without_push_access_the_permission_as_github_does(fake):
    fake.permissions[BOT] = "triage"
    gh = gh_for(fake)
    assert permissions.collaborator_permission(gh, REPO, "maintainer") == permissions.UNREADABLE
    fake.permissions[BOT] = "write"
    assert permissions.collaborator_permission(gh, REPO, "maintainer") == "read"


def test_a_rate_limited_permission_read_is_waited_out_not_taken_as_unreadable(fake):
    # A rate limit is a 403 too: the one door to GitHub waits it out, and only GitHub's answer
    # to the permission read itself says whether the bot may read it.
    fake.permissions.update({BOT: "write", "maintainer": "maintain"})
    fake.inject("GET", r"/collaborators/maintainer/permission$", "secondary", retry_after=5)
    gh = gh_for(fake)
    assert permissions.collaborator_permission(gh, REPO, "maintainer") == "maintain"
    assert gh.retries == 1 and gh.slept >= 5


def test_only_the_door_to_github_reads_pygithubs_answers():
    # GitHub's refusals become the project's errors in one place (`tracker.github`); every other
    # module reads a `GitHubError`'s status, never PyGithub's exceptions or its requester.
    package = Path(triagebot.__file__).parent
    readers = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if re.search(r"GithubException|\brequester\b|^(from|import) github\b", path.read_text(), re.M)
    )
    assert readers == ["tracker/github.py"]


def test_a_member_is_trusted_by_association_and_the_bot_says_how(fake):
    fake.permissions.update({BOT: "triage", "maintainer": "maintain"})
    number = tracked_issue(fake)
    comment = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "maintainer", "MEMBER")
    said: list[str] = []
    decision = poll(gh_for(fake), said)
    assert decision.kind == Kind.run and decision.request.requested_by == "maintainer"
    assert fake.reactions(REPO, comment["id"]) == ["eyes"] and bot_comments(fake, number) == []
    assert said == [
        f"{REPO}#{number}, comment {comment['id']}: the bot cannot read collaborator permissions "
        "(its token has no push access), so @maintainer was trusted as MEMBER, as GitHub's "
        "author_association says"
    ]


def test_someone_else_is_refused_without_being_told_they_lack_access(fake):
    fake.permissions[BOT] = "triage"
    number = tracked_issue(fake)
    fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "passerby", "CONTRIBUTOR")
    assert poll(gh_for(fake), []).kind == Kind.none
    [refusal] = bot_comments(fake, number)
    assert "which the bot cannot check" in refusal
    assert "author_association calls @passerby CONTRIBUTOR, not OWNER, MEMBER or COLLABORATOR" in refusal
    assert "has none" not in refusal and "has read" not in refusal


def test_the_event_path_trusts_the_payloads_association(fake, monkeypatch, capsys, tmp_path):
    fake.permissions[BOT] = "read"
    number = tracked_issue(fake)
    comment = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "Codertocat", "OWNER")
    data = command_payload(comment["body"])  # the recorded payload: author_association OWNER
    data["comment"]["id"] = comment["id"]
    data["issue"]["number"] = number
    assert data["comment"]["author_association"] == "OWNER"
    event = tmp_path / "event.json"
    event.write_text(json.dumps(data))
    LocalStore(tmp_path / "store").put(stored_snapshot())
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.setenv("GITHUB_TOKEN", "bot-token")
    output = tmp_path / "outputs"
    ran = run_main(
        monkeypatch, capsys, "command", "--event", str(event), "--store", str(tmp_path / "store"),
        "--output", str(output),
    )  # fmt: skip
    assert ran.status == 0, ran.err
    assert "run=true" in ran.out and "models=T5Model" in ran.out
    assert "so @Codertocat was trusted as OWNER" in ran.err
    assert bot_comments(fake, number) == [] and fake.reactions(REPO, comment["id"]) == ["eyes"]


def capped_poll(gh) -> rerun.Decision:
    return poll(gh, [], now=datetime.now(UTC), gpu_commands_per_person=1, gpu_commands_per_day=2)


def test_trust_by_association_starts_so_many_gpu_commands_a_day_and_the_refusal_says_so(fake):
    fake.permissions[BOT] = "triage"
    number = tracked_issue(fake)
    rerun_t5 = "/rerun-sweep models=T5Model"
    fake.add_comment(REPO, number, rerun_t5, "member", "MEMBER")
    assert capped_poll(gh_for(fake)).kind == Kind.run
    again = fake.add_comment(REPO, number, rerun_t5, "member", "MEMBER")
    assert capped_poll(gh_for(fake)).kind == Kind.none
    assert fake.reactions(REPO, again["id"]) == ["confused"]
    assert (
        "where GitHub's author_association stands in for write access, commands that take GPU time "
        "are limited to 1 per person and 2 in all a day, and @member started 1 in the day before this one"
    ) in bot_comments(fake, number)[-1]

    fake.add_comment(REPO, number, rerun_t5, "collaborator", "COLLABORATOR")
    assert capped_poll(gh_for(fake)).kind == Kind.run  # the second of the day
    fake.add_comment(REPO, number, rerun_t5, "another", "MEMBER")
    assert capped_poll(gh_for(fake)).kind == Kind.none
    assert "and 2 were started in the day before this one" in bot_comments(fake, number)[-1]

    # Where the bot can read permissions, write access is what counts, not a count.
    fake.permissions.update({BOT: "write", "member": "write"})
    fake.add_comment(REPO, number, rerun_t5, "member", "MEMBER")
    assert capped_poll(gh_for(fake)).kind == Kind.run


def test_a_command_edited_after_it_was_accepted_still_counts_against_the_cap(fake):
    fake.permissions[BOT] = "triage"
    number = tracked_issue(fake)
    first = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "member", "MEMBER")
    assert capped_poll(gh_for(fake)).kind == Kind.run
    fake.edit_comment(REPO, first["id"], "never mind, thanks")  # the 👀 stays: it was accepted
    again = fake.add_comment(REPO, number, "/rerun-sweep models=BertModel", "member", "MEMBER")
    assert capped_poll(gh_for(fake)).kind == Kind.none
    assert fake.reactions(REPO, again["id"]) == ["confused"]
    assert "@member started 1 in the day before this one" in bot_comments(fake, number)[-1]


def test_a_command_deleted_after_its_answer_still_counts_against_the_cap(fake):
    fake.permissions[BOT] = "triage"
    number = tracked_issue(fake)
    first = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "member", "MEMBER")
    gh = gh_for(fake)
    assert capped_poll(gh).kind == Kind.run
    answer.post_failure(gh, REPO, number, first["id"], "its job failed")
    fake.delete_comment(REPO, first["id"])  # its reactions go with it; the bot's answer stays
    again = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "member", "MEMBER")
    assert capped_poll(gh_for(fake)).kind == Kind.none
    assert fake.reactions(REPO, again["id"]) == ["confused"]
    assert "@member started 1 in the day before this one" in bot_comments(fake, number)[-1]
    # Someone else's command is counted in the day's total, not against them.
    fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "collaborator", "COLLABORATOR")
    assert capped_poll(gh_for(fake)).kind == Kind.run


def test_a_restarted_command_is_not_refused_for_its_own_acceptance_and_still_counts(fake):
    fake.permissions[BOT] = "triage"
    number = tracked_issue(fake)
    first = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "member", "MEMBER")
    ledger, now = Ledger(REPO), datetime.now(UTC)
    caps = {"gpu_commands_per_person": 1, "gpu_commands_per_day": 2}
    poll_caps = rerun_settings(stored_snapshot(), **caps)

    def poll_at(moment: datetime) -> rerun.Decision:
        return polling.poll(
            gh_for(fake), REPO, issue_flag=issue_flag, settings=poll_caps, ledger=ledger, now=moment,
            say=lambda _: None,
        )  # fmt: skip

    assert poll_at(now).kind == Kind.run
    restarted = poll_at(now + STALE_AFTER + timedelta(minutes=1))  # its sweep was lost
    assert restarted.kind == Kind.run and restarted.request.comment_id == first["id"]
    assert ledger.get(first["id"]).attempts == 2
    again = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "member", "MEMBER")
    assert capped_poll(gh_for(fake)).kind == Kind.none
    assert fake.reactions(REPO, again["id"]) == ["confused"]


def test_only_reruns_and_bisections_count_as_gpu_commands():
    assert takes_gpu("/rerun-sweep") and takes_gpu("/rerun-sweep models=A confirm=2")
    assert takes_gpu("/rerun-sweep bisect BertModel")
    for body in ("/rerun-sweep link abc #1", "/rerun-sweep unlink abc", "/rerun-sweep help", "no command"):
        assert not takes_gpu(body), body


def test_the_event_path_caps_gpu_commands_trusted_by_association_too(fake, monkeypatch, capsys, tmp_path):
    fake.permissions[BOT] = "read"
    number = tracked_issue(fake)
    LocalStore(tmp_path / "store").put(stored_snapshot())
    config = tmp_path / "triagebot.toml"
    config.write_text("[tracker]\ngpu_commands_per_person = 1\n")
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.setenv("GITHUB_TOKEN", "bot-token")
    arguments = (
        "--store",
        str(tmp_path / "store"),
        "--config",
        str(config),
        "--output",
        str(tmp_path / "out"),
    )
    ran = []
    for _ in range(2):
        comment = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "Codertocat", "OWNER")
        data = command_payload(comment["body"])  # the recorded payload: author_association OWNER
        data["comment"].update(id=comment["id"], created_at=comment["created_at"])
        data["issue"]["number"] = number
        event = tmp_path / "event.json"
        event.write_text(json.dumps(data))
        ran.append(run_main(monkeypatch, capsys, "command", "--event", str(event), *arguments))
    assert "run=true" in ran[0].out and "run=false" in ran[1].out
    assert fake.reactions(REPO, comment["id"]) == ["confused"]
    assert (
        "limited to 1 per person and 6 in all a day, and @Codertocat started 1"
        in bot_comments(fake, number)[-1]
    )


def event_of(tmp_path: Path, number: int, comment: dict, action: str = "created") -> Path:
    """The `issue_comment` event file GitHub hands the parse job for `comment` as it is now."""
    data = command_payload(comment["body"])  # the recorded payload: author_association OWNER
    data["action"] = action
    data["comment"].update(id=comment["id"], created_at=comment["created_at"])
    data["comment"]["updated_at"] = comment.get("updated_at", comment["created_at"])
    data["issue"]["number"] = number
    event = tmp_path / f"event-{comment['id']}-{action}.json"
    event.write_text(json.dumps(data))
    return event


def event_command(fake, monkeypatch, capsys, tmp_path: Path, caps: str):
    """`triagebot command --event FILE` as the parse job runs it, with the GPU caps `caps`."""
    fake.permissions[BOT] = "read"  # the association stands in for write access
    LocalStore(tmp_path / "store").put(stored_snapshot())
    config = tmp_path / "triagebot.toml"
    config.write_text(f"[tracker]\n{caps}\n")
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.setenv("GITHUB_TOKEN", "bot-token")
    arguments = ("--store", tmp_path / "store", "--config", config, "--output", tmp_path / "out")

    def handle(event: Path):
        return run_main(monkeypatch, capsys, "command", "--event", str(event), *map(str, arguments))

    return handle


def test_commands_posted_together_are_counted_against_each_other_whatever_the_order(
    fake, monkeypatch, capsys, tmp_path
):
    handle = event_command(fake, monkeypatch, capsys, tmp_path, "gpu_commands_per_person = 1")
    number = tracked_issue(fake)
    posted = []
    for second in range(4):  # four commands posted at once, a second apart
        comment = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "Codertocat", "OWNER")
        comment["created_at"] = fake.timestamp(second)
        posted.append(comment)
    # The parse jobs take turns (their concurrency group), but GitHub starts them in any order.
    ran = [handle(event_of(tmp_path, number, comment)) for comment in reversed(posted)]
    assert ["run=true" in each.out for each in ran] == [True, False, False, False]
    assert ["eyes" in fake.reactions(REPO, comment["id"]) for comment in posted] == [False] * 3 + [True]
    # Refused once with why (a refusal for the cap is said once a day per person and issue).
    (refusal,) = bot_comments(fake, number)
    assert "limited to 1 per person and 6 in all a day, and @Codertocat started 1" in refusal


def test_a_comment_edited_again_and_again_starts_one_command(fake, monkeypatch, capsys, tmp_path):
    caps = "gpu_commands_per_person = 1\ngpu_commands_per_day = 1\ncommands_on_edited = true"
    handle = event_command(fake, monkeypatch, capsys, tmp_path, caps)
    number = tracked_issue(fake)
    comment = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "Codertocat", "OWNER")
    assert "run=true" in handle(event_of(tmp_path, number, comment)).out
    for models in ("BertModel", "T5Model", "BertModel", "T5Model", "BertModel"):
        edited = fake.edit_comment(REPO, comment["id"], f"/rerun-sweep models={models}")
        again = handle(event_of(tmp_path, number, edited, "edited"))
        assert again.status == 0, again.err
        assert "run=false" in again.out and "already accepted" in again.err
    # A redelivered event (the parse job re-run) starts nothing either.
    assert "run=false" in handle(event_of(tmp_path, number, comment)).out
    assert fake.reactions(REPO, comment["id"]) == ["eyes"] and bot_comments(fake, number) == []
