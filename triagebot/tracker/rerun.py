"""`/rerun-sweep` on GitHub: the comment it arrives in, who may run it, and what it sweeps.

A command arrives either as a workflow event payload (`issue_comment`, read by `read_event`) or
by polling the tracking issues (`polling`, `polled_event`). `decide` turns the comment into a
`Decision`: it drops what is never a command (`ignored`), parses the comment (`commands`, pure),
finds the issue's flag, and `handle`s the command: help, a refusal with its reason, or what to
carry out (`HANDLERS`, one per kind): a sweep, a bisection of a model's crash, or a crash group
pinned to an upstream issue, each with a `RerunRequest` saying where to answer. Acting on the
decision on GitHub is `answer.respond`'s; the jobs that carry it out read `outputs`.

Who may run a command is read from the collaborator permission API, else from the comment's
`author_association` (`permissions`).

A bare command reruns the models the issue lists as crashing: those that crash under the
issue's flag in the newest stored snapshot, at most `tracker.rerun_max_models` of them, one per
crash signature first. The answer (`answer`) compares the rerun with the stored snapshot.
`bisect MODEL` needs the model's crash under the issue's flag in the newest stored snapshot and
a verified reproduction of its group; `link GROUP #N` a crash group of that flag and
`tracker.upstream`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from triagebot.analysis import bisectable_reproduction, crash_group_of, flag_stats
from triagebot.analysis.compiler_wrong import compiler_wrong_results, groups_of
from triagebot.analysis.triage import failure_groups
from triagebot.config import Config, TrackerSettings
from triagebot.errors import TrackerError
from triagebot.report.markers import marked
from triagebot.results import FailureGroup, RerunRequest, Snapshot, UpstreamPin, signature_id, suites_name
from triagebot.tracker import commands
from triagebot.tracker.commands import Command, Kind
from triagebot.tracker.github import ACTIONS_BOT_LOGIN, GitHub
from triagebot.tracker.gpu_caps import GPU_KINDS, Started, cap_refusal, started_before
from triagebot.tracker.ledger import aware, now, parse_time
from triagebot.tracker.permissions import collaborator_permission, may_run

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


@dataclass(frozen=True)
class RerunSettings:
    """What deciding on a command needs, read once per step: the configuration (its keys
    under their own names: `tracker.rerun_max_models`, `sweep.confirm`, ...) and the newest
    stored snapshot, what a bare command reruns."""

    config: Config
    stored: Snapshot | None = None

    @property
    def tracker(self) -> TrackerSettings:
        return self.config.tracker

    @property
    def known_flags(self) -> list[str]:
        return list(self.config.flags)

    @property
    def known_models(self) -> list[str]:
        """The models a command may name: those of the newest stored sweep."""
        return [result.model for result in self.stored.results] if self.stored is not None else []


# The commands that take GPU time accepted before a command (`gpu_caps.started_before`).
StartedBefore = Callable[["CommentEvent"], list[Started]]


@dataclass
class Decision:
    kind: Kind  # Kind.none: ignored
    reason: str = ""
    flag: str | None = None
    request: RerunRequest | None = None
    limited: bool = False  # help, or a refusal for want of access: once a day per person and issue
    note: str = ""  # how access was decided when permissions could not be read: to be said
    pin: UpstreamPin | None = None  # link: the pin to keep


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
        created_at=aware(comment.created_at),
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
    bot's own answers (each opens with a marker: the token's account may be the maintainer's
    own, whose commands are read), any bot's, and those on pull requests."""
    if event.action == "deleted" or (event.action == "edited" and not on_edited):
        return True
    return (
        own_answer(event.author, event.body, bot_login) or event.author_type == "Bot" or event.is_pull_request
    )


def own_answer(author: str, body: str | None, bot_login: str) -> bool:
    """Whether a comment is one of the bot's answers: written by its account and opening with a
    marker (the account's other comments, the maintainer's own where it is theirs, are read)."""
    return author.lower() == bot_login.lower() and marked(body)


def decide_on_github(
    gh: GitHub | None, event: CommentEvent, settings: RerunSettings, issue_flag: IssueFlag
) -> Decision:
    """`decide` with what GitHub says through `gh`: the bot's login, the commenter's permission
    and the commands that take GPU time started before. Without a connection (no token), the
    login is the Actions bot's and the permission unknown: nothing is checked."""
    if gh is None:
        return decide(
            event,
            settings,
            bot_login=ACTIONS_BOT_LOGIN,
            issue_flag=issue_flag,
            permission=lambda login: "unknown",
        )

    def permission(login: str) -> str:
        return collaborator_permission(gh, event.repo, login)

    started = commands_started(gh)
    return decide(
        event, settings, bot_login=gh.login, issue_flag=issue_flag, permission=permission, started=started
    )


def decide(
    event: CommentEvent,
    settings: RerunSettings,
    *,
    bot_login: str,
    issue_flag: IssueFlag,
    permission: Callable[[str], str],
    started: StartedBefore | None = None,
) -> Decision:
    """What to do with one comment. `permission(login)` reads the collaborator permission; it
    is called only for a command, so ordinary comments cost no request. `started(event)`: the
    commands that take GPU time accepted in the day before `event`, read only where
    author_association stands in for permissions."""
    if ignored(event, bot_login, settings.tracker.commands_on_edited):
        return Decision(Kind.none)
    command = commands.parse_command(
        event.body,
        settings.known_models,
        settings.known_flags,
        settings.tracker.rerun_max_models,
        known_groups=known_groups(settings.stored),
    )
    if command.kind == Kind.none:
        return Decision(Kind.none)
    by_bot = event.issue_author.lower() == bot_login.lower()
    flag = issue_flag(event.issue, event.issue_body) if by_bot else None
    if flag is None:
        return Decision(Kind.refuse, "this issue is not one of the bot's tracking issues", limited=True)
    return handle(command, event, flag, permission, settings, started)


def handle(
    command: Command,
    event: CommentEvent,
    flag: str,
    permission: Callable[[str], str],
    settings: RerunSettings,
    started: StartedBefore | None = None,
) -> Decision:
    """The decision on a parsed command on `flag`'s issue (see `decide`)."""
    if command.kind == Kind.help:
        return Decision(Kind.help, flag=flag, limited=True)
    allowed, why = may_run(permission(event.author), event)
    if not allowed:
        return Decision(Kind.refuse, why, flag, limited=True)
    if command.kind == Kind.refuse:
        return Decision(Kind.refuse, command.reason, flag, note=why)
    if why and command.kind in GPU_KINDS and started is not None:  # trusted by association only
        caps = settings.tracker
        capped = cap_refusal(
            event.author, started(event), caps.gpu_commands_per_person, caps.gpu_commands_per_day
        )
        if capped is not None:
            return Decision(Kind.refuse, capped, flag, limited=True, note=why)
    decision = HANDLERS[command.kind](command, event, flag, settings)
    decision.note = why
    return decision


def asked_by(event: CommentEvent, **asked: Any) -> RerunRequest:
    """What a command asks for (`asked`), with who asked and where it is answered: the
    comment's repository, issue and id."""
    return RerunRequest(
        repo=event.repo, issue=event.issue, comment_id=event.comment_id, requested_by=event.author, **asked
    )


def sweep_request(command: Command, event: CommentEvent, flag: str, settings: RerunSettings) -> Decision:
    """A rerun: the models named, or those crashing under `flag` in the stored snapshot."""
    stored = settings.stored
    models = command.models or crashing_models(stored, flag, settings.tracker.rerun_max_models)[0]
    if not models:
        where = f"`{stored.key}`" if stored is not None else "the store (no snapshot yet)"
        reason = f"no model crashes under `{flag}` in {where}; name the models with models="
        return Decision(Kind.refuse, reason, flag)
    request = asked_by(
        event,
        models=models,
        flags=command.flags or [flag],
        confirm=settings.config.sweep.confirm if command.confirm is None else command.confirm,
        corpus=stored.corpus.suites() if stored is not None else [],
    )
    return Decision(Kind.run, flag=flag, request=request)


def bisect_request(command: Command, event: CommentEvent, flag: str, settings: RerunSettings) -> Decision:
    """The first bad nightly of a model's crash under `flag`: it must crash in the stored
    snapshot, in a group with a verified reproduction (the bisection runs it)."""
    model, stored = command.models[0], settings.stored
    group = crash_group_of(stored, flag, model)  # the group the bisect job will look for
    if stored is None or group is None:
        return Decision(
            Kind.refuse, f"`{model}` has no confirmed crash under `{flag}` in the newest stored nightly", flag
        )
    if bisectable_reproduction(stored, flag, group) is None:
        return Decision(
            Kind.refuse, f"the crash group of `{model}` has no verified reproduction to bisect with", flag
        )
    request = asked_by(event, models=[model], flags=[flag], corpus=stored.corpus.suites())
    return Decision(Kind.bisect, flag=flag, request=request)


def link_request(command: Command, event: CommentEvent, flag: str, settings: RerunSettings) -> Decision:
    """A crash group of `flag`'s issue pinned to an upstream issue (`unlink`: unpinned)."""
    upstream = settings.tracker.upstream
    if not upstream:
        return Decision(Kind.refuse, "no upstream repository is configured (`tracker.upstream`)", flag)
    signature = command.signature or ""
    if signature not in {group.signature for group in flag_groups(settings.stored, flag)}:
        return Decision(Kind.refuse, f"that crash group is not one of this issue's (`{flag}`)", flag)
    pin = UpstreamPin(
        repo=upstream,
        signature=signature,
        number=command.number,
        by=event.author,
        comment_id=event.comment_id,
    )
    return Decision(Kind.link, flag=flag, request=asked_by(event, flags=[flag]), pin=pin)


HANDLERS: dict[Kind, Callable[[Command, CommentEvent, str, RerunSettings], Decision]] = {
    Kind.run: sweep_request,
    Kind.bisect: bisect_request,
    Kind.link: link_request,
}
"""What each accepted kind of command asks for, decided (help and refusals are `handle`'s)."""


def flag_groups(snapshot: Snapshot | None, flag: str) -> list[FailureGroup]:
    """`flag`'s failure groups in `snapshot`: wrong results, crashes, then those met on the ladder."""
    if snapshot is None or flag not in snapshot.flags:
        return []
    return failure_groups(flag_stats(snapshot, flag))


def known_groups(snapshot: Snapshot | None) -> dict[str, str]:
    """group id -> signature, for every failure group of every flag of `snapshot`, and every
    group of its wrong results at the default config."""
    if snapshot is None:
        return {}
    groups = [group for flag in snapshot.flags for group in flag_groups(snapshot, flag)]
    groups += groups_of(compiler_wrong_results(snapshot))
    return {signature_id(group.signature): group.signature for group in groups}


def commands_started(gh: GitHub) -> StartedBefore:
    """`started` for `decide`: read from GitHub (`gpu_caps.started_before`), on GitHub's
    clock (the command's own time)."""

    def started(event: CommentEvent) -> list[Started]:
        return started_before(gh, event.repo, event.comment_id, event.created_at or now())

    return started


def outputs(decision: Decision) -> dict[str, str]:
    """The inputs of the jobs that carry a decision out, as key=value outputs: names from the
    catalog, the config and the stored snapshot only (a crash group by its id), and numbers."""
    request = decision.request
    if decision.kind == Kind.link and decision.pin is not None and request is not None:
        number = decision.pin.number
        return {
            "run": "false",
            "link": "true",
            "group": signature_id(decision.pin.signature),
            "number": str(number) if number is not None else "0",
            **where(decision),
        }
    if decision.kind not in (Kind.run, Kind.bisect) or request is None:
        return {"run": "false"}
    return {
        "run": "true" if decision.kind == Kind.run else "false",
        **({"bisect": "true"} if decision.kind == Kind.bisect else {}),
        **where(decision),
        "models": ",".join(request.models),
        "flags": ",".join(request.flags),
        "confirm": str(request.confirm),
        "corpus": suites_name(request.corpus),  # `--corpus` reads a night's name back
    }


def where(decision: Decision) -> dict[str, str]:
    """Where the command is to be answered: its repository, issue and comment."""
    request = decision.request
    assert request is not None
    return {"repo": request.repo, "issue": str(request.issue), "comment_id": str(request.comment_id)}
