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
- returns the first command to carry out: a sweep, a bisection or a pin (the others wait for
  the next poll).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from triagebot.report.markers import answer_marker, failure_marker, result_marker
from triagebot.results import CommandRecord
from triagebot.tracker import commands
from triagebot.tracker.answer import (
    BotReactions,
    Reaction,
    answers_on,
    bot_reactions,
    post_failure,
    respond,
    settled,
    waiting,
    writes_needed,
)
from triagebot.tracker.commands import STARTED, Kind
from triagebot.tracker.github import GitHub
from triagebot.tracker.ledger import MAX_ATTEMPTS, STALE_AFTER, Ledger, answered_recently, aware, edited
from triagebot.tracker.plan import RemoteIssue
from triagebot.tracker.remote import first_line, issue_comments, list_bot_issues
from triagebot.tracker.rerun import (
    CommentEvent,
    Decision,
    IssueFlag,
    RerunSettings,
    decide_on_github,
    own_answer,
    polled_event,
)

STATE_OF = {Kind.help: "answered", Kind.refuse: "refused", **dict.fromkeys(STARTED, "accepted")}
"""The ledger's state of a command the bot has just responded to."""

Answered = dict[int, tuple[str, datetime | None, bool]]  # comment id -> (state, when, whether it swept)


def answered_ids(comments: list[Any], bot: str) -> Answered:
    """comment id -> (state, when, whether a sweep ran) for the commands the bot's comments
    answer: a rerun's result or failure, or a help or refusal answer."""
    lines = {
        first_line(c.body): aware(c.created_at)
        for c in comments
        if c.user and c.user.login.lower() == bot.lower()
    }
    answered: Answered = {}
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
    settings: RerunSettings,
    ledger: Ledger,
    now: datetime,
    say=print,
) -> Decision:
    """Handle the commands not yet handled on the bot's tracking issues, oldest first; see the
    module docstring. The ledger is updated in place (the caller saves it)."""
    gh.max_writes = gh.writes + settings.tracker.max_writes  # writes one poll may make
    round_ = PollRound(gh, repo_name, issue_flag, settings, ledger, now, say, budget=gh.max_writes)
    for issue in list_bot_issues(gh, repo_name):
        if issue_flag(issue.number, issue.body) is not None and not round_.read_issue(issue):
            break  # the write cap is reached
    return round_.chosen


@dataclass
class PollRound:
    """One poll: its connection, ledger and write budget, and the command it chose to run."""

    gh: GitHub
    repo_name: str
    issue_flag: IssueFlag
    settings: RerunSettings
    ledger: Ledger
    now: datetime
    say: Callable[[str], None]
    budget: int
    chosen: Decision = field(default_factory=lambda: Decision(Kind.none))

    def read_issue(self, issue: RemoteIssue) -> bool:
        """Handle the commands on one tracking issue; False when the write cap stopped it."""
        comments = issue_comments(self.gh, self.repo_name, issue.number)
        done = answered_ids(comments, self.gh.login)
        answers = answers_on(comments, self.gh.login, issue.number)
        return all(self.read_comment(issue, comment, done, answers) for comment in comments)

    def read_comment(
        self, issue: RemoteIssue, comment: Any, done: Answered, answers: list[CommandRecord]
    ) -> bool:
        """Bring one comment's record up to date; False when the write cap stopped the poll."""
        author = comment.user.login if comment.user else ""
        if commands.command_line(comment.body or "") is None or own_answer(
            author, comment.body, self.gh.login
        ):
            return True
        record = self.ledger.get(comment.id)
        if record is not None and record.state != "accepted":
            return True  # settled
        base = CommandRecord(
            repo=self.repo_name,
            issue=issue.number,
            comment_id=comment.id,
            author=author,
            state="quiet",
            at=self.now,
        )
        if comment.id in done:
            state, answered_at, swept = done[comment.id]
            attempts = max(record.attempts if record is not None else 0, int(swept))
            self.ledger.note(
                base.model_copy(update={"state": state, "attempts": attempts, "at": answered_at or self.now})
            )
        elif record is not None:
            self.look_after(issue, comment, record)
        elif self.chosen.kind == Kind.none:  # one sweep per poll: the others wait, unrecorded
            mine = bot_reactions(self.gh, self.repo_name, issue.number, comment)
            # Never seen by the ledger: the event workflow may have handled it already.
            return self.settled_by_reactions(base, mine) or self.answer(issue, comment, base, answers)
        return True

    def look_after(self, issue: RemoteIssue, comment: Any, record: CommandRecord) -> None:
        """An accepted command without an answer: once stale, start it again (up to
        `MAX_ATTEMPTS` sweeps), or answer it with a failure."""
        if self.now - aware(record.at) < STALE_AFTER:
            return
        reason = f"no result came back from {record.attempts} sweep{'s' if record.attempts != 1 else ''}"
        if record.attempts < MAX_ATTEMPTS:
            if self.chosen.kind != Kind.none:
                return  # one sweep per poll
            again = self.restart(issue, comment)
            if again.kind in STARTED:
                self.chosen = again
                self.ledger.note(record.model_copy(update={"at": self.now, "attempts": record.attempts + 1}))
                self.say(f"starting the command {comment.id} on {self.repo_name}#{issue.number} again")
                return
            reason += f", and it cannot start again: {again.reason or 'it is no command now'}"
        if self.gh.writes + 2 <= self.budget:
            post_failure(self.gh, self.repo_name, issue.number, comment.id, reason)
            self.ledger.note(record.model_copy(update={"state": "failed", "at": self.now}))

    def restart(self, issue: RemoteIssue, comment: Any) -> Decision:
        """The decision on a stale accepted command, started again from its current text: with
        `commands_on_edited` off, text edited since it was posted never runs (the text that was
        accepted is gone, and an edit must not smuggle in another command)."""
        if edited(comment) and not self.settings.tracker.commands_on_edited:
            return Decision(Kind.none, reason="it was edited after it was posted")
        # Accepted once already: with edits allowed, a later one does not undo that.
        return self.decide(polled_event(self.repo_name, issue, comment, "created"))

    def settled_by_reactions(self, base: CommandRecord, mine: BotReactions) -> bool:
        """Record what the bot's reactions say of a command it already handled; False when
        they say nothing."""
        if waiting(mine):
            accepted = mine[Reaction.accepted] or self.now  # when it was accepted, as GitHub says
            self.ledger.note(base.model_copy(update={"state": "accepted", "attempts": 1, "at": accepted}))
            return True
        outcome = settled(mine)
        if outcome is None:
            return False
        answered_at = mine.get(Reaction.answered) or mine.get(Reaction.refused) or self.now  # as GitHub says
        state = "answered" if outcome == Reaction.answered else "refused"
        self.ledger.note(base.model_copy(update={"state": state, "at": answered_at}))
        return True

    def answer(
        self, issue: RemoteIssue, comment: Any, base: CommandRecord, answers: list[CommandRecord]
    ) -> bool:
        """Decide on a new command and respond; False when its writes would pass the cap."""
        event = polled_event(self.repo_name, issue, comment, "edited" if edited(comment) else "created")
        decision = self.decide(event)
        if decision.kind == Kind.none:
            self.ledger.note(base.model_copy(update={"state": "ignored"}))  # not read again
            return True
        posted = aware(comment.created_at) or self.now
        quiet = answered_recently(
            [*self.ledger.records.values(), *answers], issue.number, base.author, posted
        )
        if self.gh.writes + writes_needed(decision, quiet) > self.budget:
            cap = self.settings.tracker.max_writes
            self.say(f"the write cap of {cap} is reached; the rest waits for the next poll")
            return False
        respond(self.gh, event, decision, self.settings, quiet=quiet)
        state = "quiet" if decision.limited and quiet else STATE_OF[decision.kind]
        self.ledger.note(base.model_copy(update={"state": state, "attempts": int(decision.kind in STARTED)}))
        if decision.kind in STARTED:
            self.chosen = decision
        return True

    def decide(self, event: CommentEvent) -> Decision:
        decision = decide_on_github(self.gh, event, self.settings, self.issue_flag)
        if decision.note:
            self.say(f"{self.repo_name}#{event.issue}, comment {event.comment_id}: {decision.note}")
        return decision
