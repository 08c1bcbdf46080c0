"""`/rerun-sweep` on GitHub: who may run it, how the bot reacts and answers, polling, the answer.

A command arrives either as a workflow event payload (`issue_comment`, read by `read_event`) or
by polling the tracking issues (`poll`). `decide` turns it into ignore / help / refuse / run;
`respond` reacts (👀 accepted, 🚀 answered, 😕 refused) and answers every refusal in words.
A comment the bot has reacted to is handled: polling skips it, so each command runs once.
After the sweep, `post_answer` puts the table (still crashing, no longer crashing, flaky) on the
issue. Every answer carries a marker with the command's comment id, so a rerun of the
workflow never answers twice.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from github import GithubException

from triagebot.analysis import CRASH_EFFECTS, RAN_EFFECTS, classify
from triagebot.errors import TrackerError
from triagebot.report.markers import answer_marker, result_marker
from triagebot.results import Effect, RerunRequest, Snapshot
from triagebot.tracker import commands
from triagebot.tracker.commands import Kind
from triagebot.tracker.github import GitHub
from triagebot.tracker.remote import bot_comment_bodies, list_bot_issues, post_comment
from triagebot.tracker.render import render

WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
BOT_REACTIONS = frozenset({"eyes", "rocket", "confused"})
IssueFlag = Callable[[str], str | None]  # issue body -> the flag its marker names, or None


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


@dataclass
class Decision:
    kind: Kind  # Kind.none: ignored
    reason: str = ""
    flag: str | None = None
    request: RerunRequest | None = None


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
        )
    except (KeyError, TypeError, ValueError) as error:
        raise EventError(f"issue_comment payload lacks {error}") from None


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
) -> Decision:
    """What to do with one comment. `permission(login)` reads the collaborator permission;
    it is called only for a command, so ordinary comments cost no request."""
    if event.action == "deleted" or (event.action == "edited" and not on_edited):
        return Decision(Kind.none)
    if event.author.lower() == bot_login.lower() or event.author_type == "Bot" or event.is_pull_request:
        return Decision(Kind.none)
    command = commands.parse_command(event.body, known_models, known_flags)
    if command.kind == Kind.none:
        return Decision(Kind.none)
    flag = issue_flag(event.issue_body) if event.issue_author.lower() == bot_login.lower() else None
    if flag is None:
        return Decision(Kind.refuse, "this issue is not one of the bot's tracking issues")
    if command.kind == Kind.help:
        return Decision(Kind.help, flag=flag)
    level = permission(event.author)
    if level not in WRITE_PERMISSIONS:
        return Decision(
            Kind.refuse, f"it needs write access to the repository, and @{event.author} has {level}", flag
        )
    if command.kind == Kind.refuse:
        return Decision(Kind.refuse, command.reason, flag)
    request = RerunRequest(
        repo=event.repo,
        issue=event.issue,
        comment_id=event.comment_id,
        requested_by=event.author,
        models=command.models,
        flags=command.flags or [flag],
        confirm=default_confirm if command.confirm is None else command.confirm,
    )
    return Decision(Kind.run, flag=flag, request=request)


def collaborator_permission(gh: GitHub, repo_name: str, login: str) -> str:
    """`admin`, `maintain`, `write`, `triage`, `read` or `none`, from the collaborator
    permission API (author_association alone says nothing about write access)."""
    repo = gh.repo(repo_name)

    def read() -> str:
        try:
            data = repo.requester.requestJsonAndCheck("GET", f"{repo.url}/collaborators/{login}/permission")[
                1
            ]
        except GithubException as error:
            if error.status in (403, 404):  # not a collaborator, or not visible to us
                return "none"
            raise
        role = data.get("role_name") or ""
        return role if role in ("maintain", "triage") else str(data.get("permission") or "none")

    return gh.read(read)


def _comment(gh: GitHub, repo_name: str, issue: int, comment_id: int) -> Any:
    return gh.read(lambda: gh.repo(repo_name).get_issue(issue).get_comment(comment_id))


def react(gh: GitHub, repo_name: str, issue: int, comment_id: int, content: str) -> None:
    """Add the bot's reaction (GitHub answers an existing one with 200, so this is idempotent)."""
    comment = _comment(gh, repo_name, issue, comment_id)
    gh.write(lambda: comment.create_reaction(content))


def bot_reacted(gh: GitHub, repo_name: str, issue: int, comment_id: int) -> bool:
    comment = _comment(gh, repo_name, issue, comment_id)
    return gh.read(
        lambda: any(
            r.content in BOT_REACTIONS and r.user and r.user.login.lower() == gh.login.lower()
            for r in comment.get_reactions()
        )
    )


def respond(gh: GitHub, event: CommentEvent, decision: Decision, known_flags: Collection[str]) -> None:
    """React to and answer `event` as `decision` says (nothing for an ignored comment)."""
    marker = answer_marker(event.comment_id)
    if decision.kind == Kind.help:
        body = render(
            "tracker-help.md.j2",
            marker=marker,
            grammar=commands.GRAMMAR,
            flags=sorted(known_flags),
            max_models=commands.MAX_MODELS,
            max_confirm=commands.MAX_CONFIRM,
        )
        post_comment(gh, event.repo, event.issue, marker, body)
        react(gh, event.repo, event.issue, event.comment_id, "rocket")
    elif decision.kind == Kind.refuse:
        react(gh, event.repo, event.issue, event.comment_id, "confused")
        body = render("tracker-refusal.md.j2", marker=marker, user=event.author, reason=decision.reason)
        post_comment(gh, event.repo, event.issue, marker, body)
    elif decision.kind == Kind.run:
        react(gh, event.repo, event.issue, event.comment_id, "eyes")


def poll(
    gh: GitHub,
    repo_name: str,
    *,
    issue_flag: IssueFlag,
    known_models: Collection[str],
    known_flags: Collection[str],
    default_confirm: int,
    on_edited: bool = False,
) -> Decision:
    """Handle the commands not yet handled on the bot's tracking issues, oldest first: help and
    refusals are answered at once; the first runnable command is accepted and returned (the
    others wait, unreacted, for the next poll). Returns Kind.none when nothing is to run."""
    for issue in list_bot_issues(gh, repo_name):
        if issue_flag(issue.body) is None:
            continue
        handle = gh.repo(repo_name).get_issue(issue.number)
        comments = gh.read(lambda handle=handle: list(handle.get_comments()))
        for comment in comments:
            if commands.command_line(comment.body or "") is None:
                continue
            author = comment.user.login if comment.user else ""
            if author.lower() == gh.login.lower() or bot_reacted(gh, repo_name, issue.number, comment.id):
                continue
            # Polling sees a comment as it is now: an edit before the poll simply counts.
            event = CommentEvent(
                repo=repo_name,
                issue=issue.number,
                issue_body=issue.body,
                issue_author=issue.author,
                is_pull_request=False,
                comment_id=comment.id,
                body=comment.body or "",
                author=author,
                author_type=comment.user.type if comment.user else "User",
                action="created",
            )
            decision = decide(
                event,
                bot_login=gh.login,
                issue_flag=issue_flag,
                permission=lambda login: collaborator_permission(gh, repo_name, login),
                known_models=known_models,
                known_flags=known_flags,
                default_confirm=default_confirm,
                on_edited=on_edited,
            )
            respond(gh, event, decision, known_flags)
            if decision.kind == Kind.run:
                return decision
    return Decision(Kind.none)


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
    }


def answer_rows(snapshot: Snapshot, flags: Collection[str] | None = None) -> dict[str, list[Any]]:
    """The rerun's (model, flag) rows sorted into still crashing, no longer crashing, flaky, other."""
    rows: dict[str, list[Any]] = {"still": [], "fixed": [], "flaky": [], "other": []}
    for row in classify(snapshot):
        if flags and row.flag not in flags:
            continue
        if row.effect == Effect.flaky:
            rows["flaky"].append(row)
        elif row.effect in CRASH_EFFECTS:
            rows["still"].append(row)
        elif row.effect in RAN_EFFECTS or row.effect == Effect.fixes_crash:
            rows["fixed"].append(row)
        else:
            rows["other"].append(row)
    return rows


def post_answer(
    gh: GitHub,
    repo_name: str,
    issue: int,
    comment_id: int,
    snapshot: Snapshot,
    flags: Collection[str] | None = None,
) -> None:
    """Answer the command `comment_id` with the rerun's table and mark it answered (🚀)."""
    comment = _comment(gh, repo_name, issue, comment_id)
    user = comment.user.login if comment.user else ""
    marker = result_marker(comment_id)
    if not any(marker in body for body in bot_comment_bodies(gh, repo_name, issue)):
        body = render(
            "tracker-answer.md.j2", marker=marker, user=user, key=snapshot.key, **answer_rows(snapshot, flags)
        )
        post_comment(gh, repo_name, issue, marker, body)
    react(gh, repo_name, issue, comment_id, "rocket")


def pending_command(gh: GitHub, repo_name: str, issue: int) -> int | None:
    """The newest comment on `issue` the bot accepted (👀) but has not answered (🚀) yet."""
    handle = gh.repo(repo_name).get_issue(issue)
    comments = gh.read(lambda: list(handle.get_comments()))
    bot = gh.login.lower()
    for comment in reversed(comments):
        if commands.command_line(comment.body or "") is None:
            continue
        mine = gh.read(
            lambda comment=comment: {
                r.content for r in comment.get_reactions() if r.user and r.user.login.lower() == bot
            }
        )
        if "eyes" in mine and "rocket" not in mine:
            return comment.id
    return None
