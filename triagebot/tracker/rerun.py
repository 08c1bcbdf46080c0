"""`/rerun-sweep` on GitHub: who may run it, what it sweeps, how the bot reacts and refuses.

A command arrives either as a workflow event payload (`issue_comment`, read by `read_event`) or
by polling the tracking issues (`polling`). `decide` turns it into ignore / help / refuse /
run; `respond` reacts (👀 accepted, 🚀 answered, 😕 refused) and answers every refusal in words,
but one person gets at most one refusal or help answer per issue per day (`ledger`): the rest
are left without a word or a reaction.

A bare command reruns the models the issue lists as crashing: those that crash under the
issue's flag in the newest stored snapshot, at most `tracker.rerun_max_models` of them, one per
crash signature first. The answer (`answer`) compares the rerun with the stored snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from triagebot.analysis import flag_stats
from triagebot.errors import TrackerError
from triagebot.report.markers import answer_marker
from triagebot.results import CommandRecord, RerunRequest, Snapshot
from triagebot.tracker import commands
from triagebot.tracker.commands import Kind
from triagebot.tracker.github import GitHub
from triagebot.tracker.remote import first_line, post_comment
from triagebot.tracker.render import render

WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
BOT_REACTIONS = frozenset({"eyes", "rocket", "confused"})
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


@dataclass
class Decision:
    kind: Kind  # Kind.none: ignored
    reason: str = ""
    flag: str | None = None
    request: RerunRequest | None = None
    limited: bool = False  # help, or a refusal for want of access: once a day per person and issue


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
            created_at=_time(comment.get("created_at")),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise EventError(f"issue_comment payload lacks {error}") from None


def _time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None
    except ValueError:
        return None


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
    if event.action == "deleted" or (event.action == "edited" and not on_edited):
        return Decision(Kind.none)
    if event.author.lower() == bot_login.lower() or event.author_type == "Bot" or event.is_pull_request:
        return Decision(Kind.none)
    command = commands.parse_command(event.body, known_models, known_flags, max_models)
    if command.kind == Kind.none:
        return Decision(Kind.none)
    by_bot = event.issue_author.lower() == bot_login.lower()
    flag = issue_flag(event.issue, event.issue_body) if by_bot else None
    if flag is None:
        return Decision(Kind.refuse, "this issue is not one of the bot's tracking issues", limited=True)
    if command.kind == Kind.help:
        return Decision(Kind.help, flag=flag, limited=True)
    level = permission(event.author)
    if level not in WRITE_PERMISSIONS:
        reason = f"it needs write access to the repository, and @{event.author} has {level}"
        return Decision(Kind.refuse, reason, flag, limited=True)
    if command.kind == Kind.refuse:
        return Decision(Kind.refuse, command.reason, flag)
    models = command.models
    if not models:
        models, _ = crashing_models(stored, flag, max_models)
        if stored is None or not models:
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
    return Decision(Kind.run, flag=flag, request=request)


def collaborator_permission(gh: GitHub, repo_name: str, login: str) -> str:
    """`admin`, `maintain`, `write`, `triage`, `read` or `none`, from the collaborator
    permission API (author_association alone says nothing about write access)."""
    from github import GithubException

    repo = gh.repo(repo_name)

    def read() -> str:
        try:
            url = f"{repo.url}/collaborators/{login}/permission"
            data = repo.requester.requestJsonAndCheck("GET", url)[1]
        except GithubException as error:
            if error.status in (403, 404):  # not a collaborator, or not visible to us
                return "none"
            raise
        role = data.get("role_name") or ""
        return role if role in ("maintain", "triage") else str(data.get("permission") or "none")

    return gh.read(read, what=f"read the permission of {login} on {repo_name}")


def react(gh: GitHub, repo_name: str, issue: int, comment_id: int, content: str) -> None:
    """Add the bot's reaction (GitHub answers an existing one with 200, so this is idempotent)."""
    what = f"react {content} to comment {comment_id} on {repo_name}#{issue}"
    comment = gh.read(lambda: gh.repo(repo_name).get_issue(issue).get_comment(comment_id), what=what)
    gh.write(lambda: comment.create_reaction(content), what=what)


def bot_reactions(gh: GitHub, repo_name: str, issue: int, comment: Any) -> dict[str, datetime | None]:
    """The bot's own reactions to `comment` (a PyGithub comment): content -> when it was made."""
    bot = gh.login.lower()

    def read() -> dict[str, datetime | None]:
        mine = [r for r in comment.get_reactions() if r.user and r.user.login.lower() == bot]
        return {r.content: _time(r.raw_data.get("created_at")) for r in mine}

    return gh.read(read, what=f"read the reactions to comment {comment.id} on {repo_name}#{issue}")


def answers_on(comments: list[Any], bot: str, issue: int) -> list[CommandRecord]:
    """The refusals and help answers the bot posted among `comments` (PyGithub comments of
    `issue`), as ledger records of whom they answered: the day's limit without a ledger."""
    authors = {c.id: (c.user.login if c.user else "") for c in comments}
    found = []
    for comment in comments:
        if not comment.user or comment.user.login.lower() != bot.lower():
            continue
        line = first_line(comment.body)
        if not line.startswith("<!-- triagebot:answer="):
            continue
        for cid, author in authors.items():
            if line == answer_marker(cid):
                record = CommandRecord(
                    repo="",
                    issue=issue,
                    comment_id=cid,
                    author=author,
                    state="refused",
                    at=comment.created_at,
                )
                found.append(record)
    return found


def respond(
    gh: GitHub,
    event: CommentEvent,
    decision: Decision,
    known_flags: Collection[str],
    *,
    max_models: int = commands.MAX_MODELS,
    quiet: bool = False,
) -> None:
    """React to and answer `event` as `decision` says (nothing for an ignored comment, and
    nothing either for a limited answer when `quiet`: that person was answered today)."""
    marker = answer_marker(event.comment_id)
    where = f"{event.repo}#{event.issue}"
    if decision.kind in (Kind.help, Kind.refuse) and decision.limited and quiet:
        return
    if decision.kind == Kind.help:
        body = render(
            "tracker-help.md.j2",
            marker=marker,
            grammar=commands.GRAMMAR,
            flags=sorted(known_flags),
            max_models=max_models,
            max_confirm=commands.MAX_CONFIRM,
        )
        post_comment(gh, event.repo, event.issue, marker, body, what=f"answer help on {where}")
        react(gh, event.repo, event.issue, event.comment_id, "rocket")
    elif decision.kind == Kind.refuse:
        react(gh, event.repo, event.issue, event.comment_id, "confused")
        body = render("tracker-refusal.md.j2", marker=marker, user=event.author, reason=decision.reason)
        post_comment(gh, event.repo, event.issue, marker, body, what=f"answer a refusal on {where}")
    elif decision.kind == Kind.run:
        react(gh, event.repo, event.issue, event.comment_id, "eyes")


def writes_needed(decision: Decision, quiet: bool) -> int:
    """Writes `respond` makes for `decision`: for the per-poll write cap."""
    if decision.kind in (Kind.help, Kind.refuse):
        return 0 if decision.limited and quiet else 2
    return 1 if decision.kind == Kind.run else 0


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
