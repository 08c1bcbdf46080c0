"""`triagebot command`: one `/rerun-sweep` step of the rerun workflow, from its options.

- `--event FILE`: the issue_comment that triggered the workflow: decide, react, answer a
  refusal, and write the sweep job's inputs (`run=true|false`, models, flags, confirm, corpus,
  where to answer) to $GITHUB_OUTPUT.
- `--poll`: the same for every command not yet handled on the tracking issues of `--repo`,
  with the ledger kept in the store (`polling`).
- `--answer SNAPSHOT`: post the rerun's result on the command's issue (`answer`).
- `--failed RESULT`: the sweep gave no result (`failure`, `cancelled`, ... or a reason):
  answer the command with why, and react 😕.

The cli only parses options and calls `command`; every error is a `TriagebotError` of one line.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from triagebot.config import Config
from triagebot.errors import TrackerError, UsageError
from triagebot.results import Snapshot
from triagebot.tracker import answer as answers
from triagebot.tracker import rerun
from triagebot.tracker.commands import Kind
from triagebot.tracker.github import ACTIONS_BOT_LOGIN, GitHub, connect
from triagebot.tracker.ledger import Ledger, answered_recently, now
from triagebot.tracker.memory import IssueMemory
from triagebot.tracker.polling import PollSettings, poll
from triagebot.tracker.remote import first_line


@dataclass
class CommandOptions:
    event: Path | None = None
    poll: bool = False
    answer: str | None = None  # the rerun's snapshot: a file or a key of the store
    failed: str | None = None  # the sweep job's result, or why it gave none
    repo: str | None = None
    issue: int | None = None
    comment_id: int | None = None
    output: Path | None = None
    token: str | None = None


def issue_flags(store, repo: str) -> rerun.IssueFlag:
    """(issue number, body) -> the flag it tracks: the store's memory first, then the marker on
    the body's first line."""
    from triagebot.report.markers import find_flag

    by_number = {record.number: flag for flag, record in IssueMemory.load(store, repo).records.items()}

    def flag_of(number: int, body: str) -> str | None:
        return by_number.get(number) or find_flag(first_line(body))

    return flag_of


def emit(decision: rerun.Decision, output: Path | None, say: Callable[[str], None]) -> None:
    lines = [f"{key}={value}" for key, value in rerun.outputs(decision).items()]
    say("\n".join(lines))
    path = output or (Path(os.environ["GITHUB_OUTPUT"]) if os.environ.get("GITHUB_OUTPUT") else None)
    if path is not None:
        with path.open("a", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")


def command(
    options: CommandOptions,
    settings: Config,
    store,
    load_snapshot: Callable[[str], Snapshot],
    *,
    say: Callable[[str], None] = print,
    warn: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
) -> None:
    """Run the one step `options` asks for (see the module docstring)."""
    chosen = sum(
        (options.event is not None, options.poll, options.answer is not None, options.failed is not None)
    )
    if chosen != 1:
        raise UsageError("give exactly one of --event FILE, --poll, --answer SNAPSHOT or --failed RESULT")
    target = options.repo or settings.tracker.repo
    secret = options.token or os.environ.get("GITHUB_TOKEN") or None
    if options.answer is not None or options.failed is not None:
        what = "--answer" if options.answer is not None else "--failed"
        if not (target and options.issue and secret):
            raise UsageError(f"{what} needs --repo (or [tracker] repo), --issue and a token")
        gh = connect(secret)
        if options.failed is not None:
            if not options.comment_id:
                raise UsageError("--failed needs --comment-id")
            reason = answers.failure_reason(options.failed)
            answers.post_failure(gh, target, options.issue, options.comment_id, reason)
            say(f"answered comment {options.comment_id} on {target}#{options.issue}: {reason}")
            return
        which = options.comment_id or answers.pending_command(gh, target, options.issue)
        if which is None:
            raise TrackerError(
                f"{target}#{options.issue}: no accepted /rerun-sweep comment waits for an answer"
            )
        result = load_snapshot(options.answer)
        stored = store.readable(result.key) if result.key in store else store.latest()
        answers.post_answer(
            gh, target, options.issue, which, result, stored, dashboard_url=settings.tracker.dashboard_url
        )
        say(f"answered comment {which} on {target}#{options.issue}")
        return

    stored = store.latest()
    # The models a command may name: those of the newest stored sweep (no corpus import here).
    known_models = [result.model for result in stored.results] if stored else []
    poll_settings = PollSettings(
        known_models=known_models,
        known_flags=list(settings.flags),
        default_confirm=settings.sweep.confirm,
        on_edited=settings.tracker.commands_on_edited,
        max_models=settings.tracker.rerun_max_models,
        max_writes=settings.tracker.max_writes,
        stored=stored,
    )
    if options.poll:
        if not (target and secret):
            raise UsageError("--poll needs --repo (or [tracker] repo) and a token")
        gh = connect(secret)
        ledger = Ledger.load(store, target)
        try:
            decision = poll(
                gh,
                target,
                issue_flag=issue_flags(store, target),
                settings=poll_settings,
                ledger=ledger,
                now=now(),
                say=warn,
            )
        finally:
            ledger.save(store)  # what was done is remembered even when a later write failed
        emit(decision, options.output, say)
        return

    assert options.event is not None
    event = read_event_file(options.event)
    if event is None:
        warn(f"{options.event}: not an issue comment; nothing to run")
        emit(rerun.Decision(Kind.none), options.output, say)
        return
    gh = connect(secret) if secret else None
    decision = rerun.decide(
        event,
        bot_login=gh.login if gh else ACTIONS_BOT_LOGIN,
        issue_flag=issue_flags(store, event.repo),
        permission=(lambda login: rerun.collaborator_permission(gh, event.repo, login))
        if gh
        else (lambda _: "unknown"),
        known_models=known_models,
        known_flags=poll_settings.known_flags,
        default_confirm=poll_settings.default_confirm,
        on_edited=poll_settings.on_edited,
        max_models=poll_settings.max_models,
        stored=stored,
    )
    if gh is not None:
        quiet = decision.limited and answered_today(gh, event)
        rerun.respond(
            gh, event, decision, poll_settings.known_flags, max_models=poll_settings.max_models, quiet=quiet
        )
    elif decision.kind != Kind.none:
        warn("no token: the command was neither checked nor answered on GitHub")
    if decision.kind == Kind.refuse:
        warn(f"refused: {decision.reason}")
    emit(decision, options.output, say)


def read_event_file(path: Path) -> rerun.CommentEvent | None:
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise TrackerError(f"{path}: cannot read the event payload: {' '.join(str(error).split())}") from None
    try:
        return rerun.read_event(payload)
    except rerun.EventError as error:
        raise rerun.EventError(f"{path}: {error}") from None


def answered_today(gh: GitHub, event: rerun.CommentEvent) -> bool:
    """Whether the bot answered this person on this issue within the day (from its comments)."""
    handle = gh.repo(event.repo).get_issue(event.issue)
    what = f"read the comments of {event.repo}#{event.issue}"
    comments = gh.read(lambda: list(handle.get_comments()), what=what)
    earlier = [c for c in comments if c.id != event.comment_id]
    moment = event.created_at or now()  # GitHub's clock, as the answers' times are
    return answered_recently(
        rerun.answers_on(earlier, gh.login, event.issue), event.issue, event.author, moment
    )
