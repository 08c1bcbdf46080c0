"""`/rerun-sweep` on GitHub: the comment it arrives in, who may run it, and what it sweeps.

A command arrives either as a workflow event payload (`issue_comment`, read by `read_event`) or
by polling the tracking issues (`polling`, `polled_event`). `decide` turns the comment into a
`Decision`: it drops what is never a command (`ignored`), parses the comment (`commands`, pure),
finds the issue's flag, and `handle`s the command: help, a refusal with its reason, or a
`RerunRequest` to run. Acting on the decision on GitHub is `respond`'s; the sweep job reads
`outputs`.

Who may run a command is read from the collaborator permission API (write, maintain or admin).
Where the bot's token may not read permissions (GitHub answers 403 to a token without push
access), the comment's own `author_association` decides instead (OWNER, MEMBER or
COLLABORATOR), and the decision says so (`Decision.note`); a person is never told they lack
access when the bot could not check.

A bare command reruns the models the issue lists as crashing: those that crash under the
issue's flag in the newest stored snapshot, at most `tracker.rerun_max_models` of them, one per
crash signature first. The answer (`answer`) compares the rerun with the stored snapshot.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from github import GithubException

from triagebot.analysis import flag_stats
from triagebot.errors import TrackerError
from triagebot.results import RerunRequest, Snapshot
from triagebot.tracker import commands
from triagebot.tracker.commands import Command, Kind
from triagebot.tracker.github import GitHub
from triagebot.tracker.ledger import parse_time

WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
UNREADABLE = "unreadable"  # the bot's token may not read permissions: GitHub did not say
TRUSTED_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
IssueFlag = Callable[[int, str], str | None]  # (issue number, body) -> the flag it tracks, or None


@dataclass
class CommentEvent:
    repo: str
    issue: int
    issue_body: str
    issue_author: str
    is_pull_request: bool
    comment_id: int
    body: str
    author: str
    author_type: str
    action: str  # created, edited, deleted
    created_at: datetime | None = None  # GitHub's time of the comment, when the payload says it
    author_association: str = ""  # GitHub's word for the author: OWNER, MEMBER, COLLABORATOR, NONE, ...


@dataclass
class RerunSettings:
    """What deciding on a command takes from the configuration and the store."""

    known_models: Collection[str]  # the models of the newest stored sweep
    known_flags: Collection[str]
    default_confirm: int  # `sweep.confirm`
    on_edited: bool = False  # `tracker.commands_on_edited`
    max_models: int = commands.MAX_MODELS  # `tracker.rerun_max_models`
    stored: Snapshot | None = None  # the newest stored snapshot: what a bare command reruns


@dataclass
class Decision:
    kind: Kind  # Kind.none: ignored
    reason: str = ""
    flag: str | None = None
    request: RerunRequest | None = None
    limited: bool = False  # help, or a refusal for want of access: once a day per person and issue
    note: str = ""  # how access was decided when permissions could not be read: to be said


class EventError(TrackerError):
    """A payload that is not a usable issue_comment event; the message says what is missing."""


def read_event(payload: Any) -> CommentEvent | None:
    """The comment of an `issue_comment` payload; None for any other event."""
    if not isinstance(payload, dict):
        raise EventError("event payload is not a JSON object")
    if "comment" not in payload or "issue" not in payload:
        return None
    try:
        comment, issue = payload["comment"], payload["issue"]
        return CommentEvent(
            repo=str(payload["repository"]["full_name"]),
            issue=int(issue["number"]),
            issue_body=str(issue.get("body") or ""),
            issue_author=str((issue.get("user") or {}).get("login", "")),
            is_pull_request=bool(issue.get("pull_request")),
            comment_id=int(comment["id"]),
            body=str(comment.get("body") or ""),
            author=str(comment["user"]["login"]),
            author_type=str(comment["user"].get("type", "User")),
            action=str(payload.get("action", "created")),
            created_at=parse_time(comment.get("created_at")),
            author_association=str(comment.get("author_association") or ""),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise EventError(f"issue_comment payload lacks {error}") from None


def read_event_file(path: Path) -> CommentEvent | None:
    """`read_event` of the JSON payload in `path` ($GITHUB_EVENT_PATH)."""
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise TrackerError(f"{path}: cannot read the event payload: {' '.join(str(error).split())}") from None
    try:
        return read_event(payload)
    except EventError as error:
        raise EventError(f"{path}: {error}") from None


def polled_event(repo_name: str, issue: Any, comment: Any, action: str) -> CommentEvent:
    """A polled comment (PyGithub) on one of the bot's issues (a `RemoteIssue`), as an event."""
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
        author_association=comment.author_association or "",
    )


def crashing_models(snapshot: Snapshot | None, flag: str, cap: int) -> tuple[list[str], int]:
    """The models `snapshot` lists as crashing under `flag`, at most `cap`, taking one model of
    each crash signature in turn (largest groups first) so that every signature is rerun; and
    how many crash in all."""
    if snapshot is None or flag not in snapshot.flags:
        return [], 0
    groups = [list(group.models) for group in flag_stats(snapshot, flag).crash_groups]
    total = sum(len(group) for group in groups)
    chosen: list[str] = []
    while len(chosen) < min(cap, total):
        for group in groups:
            if group and len(chosen) < cap:
                model = group.pop(0)
                if model not in chosen:
                    chosen.append(model)
    return chosen, total


def ignored(event: CommentEvent, bot_login: str, on_edited: bool) -> bool:
    """Comments never read as commands: deleted ones, edited ones (unless `on_edited`), the
    bot's own, any bot's, and those on pull requests."""
    if event.action == "deleted" or (event.action == "edited" and not on_edited):
        return True
    return event.author.lower() == bot_login.lower() or event.author_type == "Bot" or event.is_pull_request


def decide(
    event: CommentEvent,
    *,
    bot_login: str,
    issue_flag: IssueFlag,
    permission: Callable[[str], str],
    known_models: Collection[str],
    known_flags: Collection[str],
    default_confirm: int,
    on_edited: bool = False,
    max_models: int = commands.MAX_MODELS,
    stored: Snapshot | None = None,
) -> Decision:
    """What to do with one comment. `permission(login)` reads the collaborator permission;
    it is called only for a command, so ordinary comments cost no request. `stored`: the
    newest stored snapshot, whose crashing models a bare command reruns."""
    if ignored(event, bot_login, on_edited):
        return Decision(Kind.none)
    command = commands.parse_command(event.body, known_models, known_flags, max_models)
    if command.kind == Kind.none:
        return Decision(Kind.none)
    by_bot = event.issue_author.lower() == bot_login.lower()
    flag = issue_flag(event.issue, event.issue_body) if by_bot else None
    if flag is None:
        return Decision(Kind.refuse, "this issue is not one of the bot's tracking issues", limited=True)
    return handle(command, event, flag, permission, default_confirm, max_models, stored)


def decide_for(
    event: CommentEvent,
    settings: RerunSettings,
    *,
    bot_login: str,
    issue_flag: IssueFlag,
    permission: Callable[[str], str],
) -> Decision:
    """`decide` under `settings`."""
    return decide(
        event,
        bot_login=bot_login,
        issue_flag=issue_flag,
        permission=permission,
        known_models=settings.known_models,
        known_flags=settings.known_flags,
        default_confirm=settings.default_confirm,
        on_edited=settings.on_edited,
        max_models=settings.max_models,
        stored=settings.stored,
    )


def handle(
    command: Command,
    event: CommentEvent,
    flag: str,
    permission: Callable[[str], str],
    default_confirm: int,
    max_models: int,
    stored: Snapshot | None,
) -> Decision:
    """The decision on a parsed command on `flag`'s issue (see `decide`)."""
    if command.kind == Kind.help:
        return Decision(Kind.help, flag=flag, limited=True)
    allowed, why = may_run(permission(event.author), event)
    if not allowed:
        return Decision(Kind.refuse, why, flag, limited=True)
    if command.kind == Kind.refuse:
        return Decision(Kind.refuse, command.reason, flag, note=why)
    models = command.models or crashing_models(stored, flag, max_models)[0]
    if not models:
        where = f"`{stored.key}`" if stored is not None else "the store (no snapshot yet)"
        reason = f"no model crashes under `{flag}` in {where}; name the models with models="
        return Decision(Kind.refuse, reason, flag)
    request = RerunRequest(
        repo=event.repo,
        issue=event.issue,
        comment_id=event.comment_id,
        requested_by=event.author,
        models=models,
        flags=command.flags or [flag],
        confirm=default_confirm if command.confirm is None else command.confirm,
        corpus=stored.corpus.name if stored is not None else None,
    )
    return Decision(Kind.run, flag=flag, request=request, note=why)


def may_run(level: str, event: CommentEvent) -> tuple[bool, str]:
    """Whether the author of `event`, whose collaborator permission is `level`, may run a
    command; and why not, or, when the permission could not be read, how it was decided."""
    who = f"@{event.author}"
    if level != UNREADABLE:
        if level in WRITE_PERMISSIONS:
            return True, ""
        return False, f"it needs write access to the repository, and {who} has {level}"
    association = event.author_association.upper()
    cannot = "the bot cannot read collaborator permissions (its token has no push access)"
    if association in TRUSTED_ASSOCIATIONS:
        return True, f"{cannot}, so {who} was trusted as {association}, as GitHub's author_association says"
    called = f"calls {who} {association}" if association else f"says nothing of {who}"
    return False, (
        "it needs write access to the repository, which the bot cannot check (its token may not "
        f"read collaborator permissions), and GitHub's author_association {called}, not OWNER, "
        "MEMBER or COLLABORATOR"
    )


def collaborator_permission(gh: GitHub, repo_name: str, login: str) -> str:
    """`admin`, `maintain`, `write`, `triage`, `read` or `none`, from the collaborator
    permission API (author_association alone says nothing about write access); `UNREADABLE`
    when GitHub refuses the bot the answer (a token without push access gets 403)."""
    repo = gh.repo(repo_name)

    def read() -> str:
        try:
            url = f"{repo.url}/collaborators/{login}/permission"
            data = repo.requester.requestJsonAndCheck("GET", url)[1]
        except GithubException as error:
            if error.status == 403:  # the token may not read permissions: not the person's fault
                return UNREADABLE
            if error.status == 404:  # not a collaborator, or no such account
                return "none"
            raise
        role = data.get("role_name") or ""
        return role if role in ("maintain", "triage") else str(data.get("permission") or "none")

    return gh.read(read, what=f"read the permission of {login} on {repo_name}")


def outputs(decision: Decision) -> dict[str, str]:
    """The sweep job's inputs as key=value outputs: names from the catalog and config only."""
    request = decision.request
    if decision.kind != Kind.run or request is None:
        return {"run": "false"}
    return {
        "run": "true",
        "repo": request.repo,
        "issue": str(request.issue),
        "comment_id": str(request.comment_id),
        "models": ",".join(request.models),
        "flags": ",".join(request.flags),
        "confirm": str(request.confirm),
        "corpus": request.corpus or "",
    }
