"""`triagebot command`: one `/rerun-sweep` step of the rerun workflow, from its options.

Each step is one small function, registered in `STEPS` under the option that asks for it:

- `--event FILE`: the issue_comment that triggered the workflow: decide, react, answer a
  refusal, and write the sweep job's inputs (`run=true|false`, models, flags, confirm, corpus,
  where to answer) as step outputs (`actions.write_outputs`).
- `--poll`: the same for every command not yet handled on the tracking issues of `--repo`,
  with the ledger kept in the store (`polling`); then the watchdog (`watchdog`): no nightly
  stored for `tracker.stale_after_days` days is said, once on an issue.
- `--answer SNAPSHOT`: post the rerun's result on the command's issue (`answer`).
- `--failed RESULT`: the sweep gave no result (`failure`, `cancelled`, ... or a reason):
  answer the command with why, and react 😕.
- `--link GROUP --number N`: a `/rerun-sweep link` (N) or `unlink` (0) accepted earlier: keep
  the pin of that crash group of the newest stored nightly in the store, and answer.
- `--bisection FILE`: a `/rerun-sweep bisect` carried out: answer with the bisection (the cli
  has kept it in the store, so that its range is never bisected again).

The cli only parses options (the token included) and calls `command`; every error is a
`TriagebotError` of one line.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from triagebot.config import Config
from triagebot.errors import TrackerError, UsageError
from triagebot.report.markers import find_flag
from triagebot.results import Bisection, Snapshot, UpstreamPin
from triagebot.tracker import answer as answers
from triagebot.tracker import rerun
from triagebot.tracker.actions import notice, write_outputs
from triagebot.tracker.answer import accepted_once, answered_today, respond
from triagebot.tracker.commands import Kind
from triagebot.tracker.github import GitHub, connect
from triagebot.tracker.gpu_caps import GPU_KINDS
from triagebot.tracker.ledger import Ledger, now
from triagebot.tracker.memory import IssueMemory
from triagebot.tracker.polling import poll
from triagebot.tracker.remote import first_line
from triagebot.tracker.upstream_memory import keep_pin
from triagebot.tracker.watchdog import watch


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
    token: str | None = None  # None: no token (the cli reads $GITHUB_TOKEN)
    link: str | None = None  # a crash group's id, to pin to upstream issue `number` (0: unpin)
    number: int | None = None
    bisection: Bisection | None = None  # a bisection the store keeps now: answered with


@dataclass(frozen=True)
class Answering:
    """The accepted command a step answers: the connection, and where the command is."""

    gh: GitHub
    repo: str
    issue: int
    comment_id: int

    @property
    def where(self) -> str:
        return f"comment {self.comment_id} on {self.repo}#{self.issue}"


@dataclass
class Step:
    """What every step is given: the options, the configuration, the store and the outputs."""

    options: CommandOptions
    settings: Config
    store: Any  # a triagebot.store.Store
    load_snapshot: Callable[[str], Snapshot]
    say: Callable[[str], None]
    warn: Callable[[str], None]

    @property
    def repo(self) -> str | None:
        return self.options.repo or self.settings.tracker.repo

    def connect(self, option: str, *, issue: bool = False) -> GitHub:
        """The connection to GitHub for the step of `option`, which needs the repository and a
        token (and, with `issue`, the command's issue)."""
        if issue and not (self.repo and self.options.issue and self.options.token):
            raise UsageError(f"{option} needs --repo (or [tracker] repo), --issue and a token")
        if not (self.repo and self.options.token):
            raise UsageError(f"{option} needs --repo (or [tracker] repo) and a token")
        return connect(self.options.token)

    def answering(self, option: str, *, needs: str = "", ready: bool = True) -> Answering:
        """The command the step of `option` answers, which needs the repository, a token, the
        issue and `--comment-id` (and, unless `ready`, what `needs` names)."""
        gh = self.connect(option, issue=True)
        if not self.options.comment_id or not ready:
            raise UsageError(f"{option} needs {needs or '--comment-id'}")
        assert self.options.issue is not None
        return Answering(gh, self.repo or "", self.options.issue, self.options.comment_id)

    def emit(self, decision: rerun.Decision) -> None:
        """The sweep job's inputs, printed and written as step outputs."""
        values = rerun.outputs(decision)
        self.say("\n".join(f"{key}={value}" for key, value in values.items()))
        write_outputs(values, self.options.output)

    def rerun_settings(self) -> rerun.RerunSettings:
        """What deciding on a command needs: the configuration and the newest stored nightly."""
        return rerun.RerunSettings(self.settings, self.store.latest())


def issue_flags(store, repo: str) -> rerun.IssueFlag:
    """(issue number, body) -> the flag it tracks: the store's memory first, then the marker on
    the body's first line."""
    by_number = {record.number: flag for flag, record in IssueMemory.load(store, repo).records.items()}

    def flag_of(number: int, body: str) -> str | None:
        return by_number.get(number) or find_flag(first_line(body))

    return flag_of


def from_event(step: Step) -> None:
    """`--event FILE`: decide on the comment, react and answer on GitHub, emit the outputs."""
    assert step.options.event is not None
    event = rerun.read_event_file(step.options.event)
    if event is None:
        step.warn(f"{step.options.event}: not an issue comment; nothing to run")
        step.emit(rerun.Decision(Kind.none))
        return
    gh = connect(step.options.token) if step.options.token else None
    settings = step.rerun_settings()
    decision = rerun.decide_on_github(gh, event, settings, issue_flags(step.store, event.repo))
    if gh is not None and started_once(gh, event, decision):
        where = f"comment {event.comment_id} on {event.repo}#{event.issue}"
        step.warn(f"{where} was already accepted: not started again")
        decision = rerun.Decision(Kind.none)
    if gh is not None:
        respond(gh, event, decision, settings, quiet=decision.limited and answered_today(gh, event))
    elif decision.kind != Kind.none:
        step.warn("no token: the command was neither checked nor answered on GitHub")
    if decision.note:
        step.warn(decision.note)
    if decision.kind == Kind.refuse:
        step.warn(f"refused: {decision.reason}")
    step.emit(decision)


def started_once(gh: GitHub, event: rerun.CommentEvent, decision: rerun.Decision) -> bool:
    """Whether `decision` would start GPU time for a comment the bot already accepted: an edit
    of it (with `commands_on_edited`) or its event delivered again never starts it twice."""
    return decision.kind in GPU_KINDS and accepted_once(gh, event.repo, event.issue, event.comment_id)


def from_poll(step: Step) -> None:
    """`--poll`: handle what waits on the tracking issues, emit the outputs of the one to run.
    With no tracker repository (`[tracker] repo`, or --repo: the TRIAGEBOT_REPO variable) or no
    token, nothing is polled: a notice says why, and nothing runs (a fresh fork, a trial)."""
    missing = _poll_missing(step)
    if missing:
        step.say(notice(f"nothing polled: {missing}"))
        step.emit(rerun.Decision(Kind.none))
        return
    gh = step.connect("--poll")
    repo = step.repo or ""
    ledger = Ledger.load(step.store, repo)
    settings = step.rerun_settings()
    try:
        decision = poll(
            gh,
            repo,
            issue_flag=issue_flags(step.store, repo),
            settings=settings,
            ledger=ledger,
            now=now(),
            say=step.warn,
        )
    finally:
        ledger.save(step.store)  # what was done is remembered even when a later write failed
    step.emit(decision)
    try:  # the scheduled poll is what still runs when the nightly does not: it looks
        limit = step.settings.tracker.stale_after_days
        watch(gh, repo, step.store, settings.stored, flags=settings.known_flags, limit=limit, say=step.warn)
    except TrackerError as error:
        step.warn(f"watchdog: {error}")


def _poll_missing(step: Step) -> str | None:
    """What polling lacks: the repository to poll, or the token that reads it."""
    if not step.repo:
        return "no tracker repository ([tracker] repo in triagebot.toml, or the TRIAGEBOT_REPO variable)"
    if not step.options.token:
        return f"no token to read {step.repo}'s issues with (the TRIAGEBOT_TOKEN secret)"
    return None


def answer_rerun(step: Step) -> None:
    """`--answer SNAPSHOT`: the rerun's result on the command's issue."""
    options, repo = step.options, step.repo or ""
    gh = step.connect("--answer", issue=True)
    assert options.answer is not None and options.issue is not None
    which = options.comment_id or answers.pending_command(gh, repo, options.issue)
    if which is None:
        raise TrackerError(f"{repo}#{options.issue}: no accepted /rerun-sweep comment waits for an answer")
    result = step.load_snapshot(options.answer)
    stored = step.store.readable(result.key) if result.key in step.store else step.store.latest()
    dashboard = step.settings.tracker.dashboard_url
    answers.post_answer(gh, repo, options.issue, which, result, stored, dashboard_url=dashboard)
    step.say(f"answered comment {which} on {repo}#{options.issue}")


def answer_failure(step: Step) -> None:
    """`--failed RESULT`: why the rerun gave no result, on the command's issue."""
    command = step.answering("--failed")
    assert step.options.failed is not None
    reason = answers.failure_reason(step.options.failed)
    answers.post_failure(command.gh, command.repo, command.issue, command.comment_id, reason)
    step.say(f"answered {command.where}: {reason}")


def keep_link(step: Step) -> None:
    """`--link GROUP --number N`: the pin kept in the store, and the command answered."""
    options, upstream = step.options, step.settings.tracker.upstream
    needs = "--number, --comment-id and [tracker] upstream"
    command = step.answering("--link", needs=needs, ready=options.number is not None and bool(upstream))
    gh, repo, issue, comment_id = command.gh, command.repo, command.issue, command.comment_id
    assert options.link is not None and upstream
    signature = rerun.known_groups(step.store.latest()).get(options.link)
    if signature is None:
        raise TrackerError(f"the newest stored nightly has no crash group {options.link}")
    by = answers.command_author(gh, repo, issue, comment_id)
    pin = UpstreamPin(
        repo=upstream, signature=signature, number=options.number or None, by=by, comment_id=comment_id
    )
    keep_pin(step.store, pin)
    answers.post_kept(gh, repo, issue, comment_id, "tracker-link.md.j2", pin=pin, local=upstream == repo)
    step.say(f"{'pinned' if pin.number else 'unpinned'} crash group {options.link} on {repo}#{issue}")


def answer_bisection(step: Step) -> None:
    """`--bisection FILE`: the command answered with its bisection."""
    command, bisection = step.answering("--bisection"), step.options.bisection
    assert bisection is not None
    template = "tracker-bisection.md.j2"
    answers.post_kept(
        command.gh, command.repo, command.issue, command.comment_id, template, bisection=bisection
    )
    step.say(f"answered {command.where} with the bisection")


STEPS: dict[str, tuple[Callable[[CommandOptions], bool], Callable[[Step], None]]] = {
    "--event FILE": (lambda options: options.event is not None, from_event),
    "--poll": (lambda options: options.poll, from_poll),
    "--answer SNAPSHOT": (lambda options: options.answer is not None, answer_rerun),
    "--failed RESULT": (lambda options: options.failed is not None, answer_failure),
    "--link GROUP": (lambda options: options.link is not None, keep_link),
    "--bisection FILE": (lambda options: options.bisection is not None, answer_bisection),
}
"""option -> (whether the options ask for it, the step): exactly one is asked for."""


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
    asked = [step for asks, step in STEPS.values() if asks(options)]
    if len(asked) != 1:
        *others, last = STEPS
        raise UsageError(f"give exactly one of {', '.join(others)} or {last}")
    asked[0](Step(options, settings, store, load_snapshot, say, warn))
