"""Polling the tracking issues of a repository for `/rerun-sweep` commands.

Used where this repository's workflows cannot be triggered by the comments (the tracker
repository is upstream). One listing of comments per tracking issue per poll; what happened to
each command is kept in the store's ledger (`ledger`), so a handled command costs nothing on
later polls and no reaction is read twice. A poll:

- skips what the ledger says is done, and commands the bot has answered (its answer's marker);
- looks after accepted commands that never got an answer: after `ledger.STALE_AFTER` one is
  started again, up to `ledger.MAX_ATTEMPTS` sweeps, then answered with a failure;
- obeys `commands_on_edited` (a comment edited since it was posted counts as edited);
- makes at most `max_writes` writes; what does not fit waits for the next poll, unrecorded;
- answers one refusal or help per person per issue per day; the others get nothing;
- returns the first command to run (the others wait for the next poll).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from triagebot.report.markers import answer_marker, failure_marker, result_marker
from triagebot.results import CommandRecord, Snapshot
from triagebot.tracker import commands
from triagebot.tracker.answer import post_failure
from triagebot.tracker.commands import Kind
from triagebot.tracker.github import GitHub
from triagebot.tracker.ledger import MAX_ATTEMPTS, STALE_AFTER, Ledger, answered_recently
from triagebot.tracker.remote import first_line, list_bot_issues
from triagebot.tracker.rerun import (
    CommentEvent,
    Decision,
    IssueFlag,
    answers_on,
    bot_reactions,
    collaborator_permission,
    decide,
    respond,
    writes_needed,
)


@dataclass
class PollSettings:
    known_models: Collection[str]
    known_flags: Collection[str]
    default_confirm: int
    on_edited: bool = False
    max_models: int = commands.MAX_MODELS
    max_writes: int = 50
    stored: Snapshot | None = None


def _aware(moment: datetime | None) -> datetime | None:
    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment


def edited(comment: Any) -> bool:
    created, updated = _aware(comment.created_at), _aware(comment.updated_at)
    return bool(created and updated and updated > created)


def answered_ids(comments: list[Any], bot: str) -> dict[int, tuple[str, datetime | None, bool]]:
    """comment id -> (state, when, whether a sweep ran) for the commands the bot's comments
    answer: a rerun's result or failure, or a help or refusal answer."""
    lines = {
        first_line(c.body): _aware(c.created_at)
        for c in comments
        if c.user and c.user.login.lower() == bot.lower()
    }
    answered: dict[int, tuple[str, datetime | None, bool]] = {}
    for cid in (c.id for c in comments):
        for marker, state, swept in (
            (answer_marker(cid), "answered", False),
            (failure_marker(cid), "failed", True),
            (result_marker(cid), "answered", True),
        ):
            if marker in lines:
                answered[cid] = (state, lines[marker], swept)
    return answered


def poll(
    gh: GitHub,
    repo_name: str,
    *,
    issue_flag: IssueFlag,
    settings: PollSettings,
    ledger: Ledger,
    now: datetime,
    say=print,
) -> Decision:
    """Handle the commands not yet handled on the bot's tracking issues, oldest first; see the
    module docstring. The ledger is updated in place (the caller saves it)."""
    gh.max_writes = gh.writes + settings.max_writes
    budget = gh.writes + settings.max_writes
    chosen = Decision(Kind.none)
    for issue in list_bot_issues(gh, repo_name):
        if issue_flag(issue.number, issue.body) is None:
            continue
        handle = gh.repo(repo_name).get_issue(issue.number)
        what = f"read the comments of {repo_name}#{issue.number}"
        comments = gh.read(lambda handle=handle: list(handle.get_comments()), what=what)
        done = answered_ids(comments, gh.login)
        answers = answers_on(comments, gh.login, issue.number)
        for comment in comments:
            body = comment.body or ""
            author = comment.user.login if comment.user else ""
            if commands.command_line(body) is None or author.lower() == gh.login.lower():
                continue
            record = ledger.get(comment.id)
            base = CommandRecord(
                repo=repo_name,
                issue=issue.number,
                comment_id=comment.id,
                author=author,
                state="quiet",
                at=now,
            )
            if record is not None and record.state != "accepted":
                continue
            if comment.id in done:
                state, answered_at, swept = done[comment.id]
                attempts = max(record.attempts if record is not None else 0, int(swept))
                update = {"state": state, "attempts": attempts, "at": answered_at or now}
                ledger.note(base.model_copy(update=update))
                continue
            if record is not None:  # accepted, no answer yet
                if now - _aware(record.at) < STALE_AFTER:
                    continue
                reason = (
                    f"no result came back from {record.attempts} sweep{'s' if record.attempts != 1 else ''}"
                )
                if record.attempts < MAX_ATTEMPTS:
                    if chosen.kind != Kind.none:
                        continue  # one sweep per poll
                    again = _retry(issue, comment, gh, repo_name, issue_flag, settings)
                    if again.kind == Kind.run:
                        chosen = again
                        ledger.note(record.model_copy(update={"at": now, "attempts": record.attempts + 1}))
                        say(f"starting the command {comment.id} on {repo_name}#{issue.number} again")
                        continue
                    reason += f", and it cannot start again: {again.reason or 'it is no command now'}"
                if gh.writes + 2 <= budget:
                    post_failure(gh, repo_name, issue.number, comment.id, reason)
                    ledger.note(record.model_copy(update={"state": "failed", "at": now}))
                continue
            if chosen.kind != Kind.none:
                continue  # one sweep per poll: this one waits, unrecorded, for the next
            # Never seen by the ledger: the event workflow may have handled it already.
            mine = bot_reactions(gh, repo_name, issue.number, comment)
            if "eyes" in mine and not mine.keys() & {"rocket", "confused"}:
                accepted = mine["eyes"] or now  # when it was accepted, as GitHub says
                ledger.note(base.model_copy(update={"state": "accepted", "attempts": 1, "at": accepted}))
                continue
            if mine.keys() & {"rocket", "confused"}:
                state = "answered" if "rocket" in mine else "refused"
                answered_at = mine.get("rocket") or mine.get("confused") or now  # as GitHub says
                ledger.note(base.model_copy(update={"state": state, "at": answered_at}))
                continue
            event = _event(repo_name, issue, comment, "edited" if edited(comment) else "created")
            decision = _decide(event, gh, repo_name, issue_flag, settings)
            if decision.kind == Kind.none:
                ledger.note(base.model_copy(update={"state": "ignored"}))  # not read again
                continue
            posted = _aware(comment.created_at) or now
            quiet = answered_recently([*ledger.records.values(), *answers], issue.number, author, posted)
            if gh.writes + writes_needed(decision, quiet) > budget:
                say(f"the write cap of {settings.max_writes} is reached; the rest waits for the next poll")
                return chosen
            respond(gh, event, decision, settings.known_flags, max_models=settings.max_models, quiet=quiet)
            state = {Kind.help: "answered", Kind.refuse: "refused", Kind.run: "accepted"}[decision.kind]
            if decision.limited and quiet:
                state = "quiet"
            ledger.note(base.model_copy(update={"state": state, "attempts": int(decision.kind == Kind.run)}))
            if decision.kind == Kind.run:
                chosen = decision
    return chosen


def _decide(event: CommentEvent, gh: GitHub, repo_name: str, issue_flag: IssueFlag, settings: PollSettings):
    return decide(
        event,
        bot_login=gh.login,
        issue_flag=issue_flag,
        permission=lambda login: collaborator_permission(gh, repo_name, login),
        known_models=settings.known_models,
        known_flags=settings.known_flags,
        default_confirm=settings.default_confirm,
        on_edited=settings.on_edited,
        max_models=settings.max_models,
        stored=settings.stored,
    )


def _event(repo_name: str, issue: Any, comment: Any, action: str) -> CommentEvent:
    """A polled comment (PyGithub) on one of the bot's issues (`RemoteIssue`), as an event."""
    return CommentEvent(
        repo=repo_name,
        issue=issue.number,
        issue_body=issue.body,
        issue_author=issue.author,
        is_pull_request=False,
        comment_id=comment.id,
        body=comment.body or "",
        author=comment.user.login if comment.user else "",
        author_type=comment.user.type if comment.user else "User",
        action=action,
    )


def _retry(issue, comment, gh, repo_name, issue_flag, settings) -> Decision:
    """The decision of an accepted command made again, to start its sweep once more (accepted
    once already: a later edit does not undo that)."""
    return _decide(_event(repo_name, issue, comment, "created"), gh, repo_name, issue_flag, settings)
