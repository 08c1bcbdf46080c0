"""Acting on a `/rerun-sweep` decision on GitHub: one small handler per kind, in one table.

- help: the grammar as a comment, then 🚀;
- refuse: 😕, then the reason as a comment;
- run, bisect, link: 👀 (the job that carries it out answers later: `answer`, `keep`).

One person gets at most one refusal or help answer per issue per day (`ledger`): when the day's
answer was given (`quiet`), a limited decision is left without a word or a reaction. Every
answer carries `answer_marker(comment_id)` on its first line, so a rerun of the workflow never
answers twice, and so that the day's limit can be read back from the bot's comments alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from triagebot.report.markers import answer_marker
from triagebot.results import CommandRecord
from triagebot.tracker import commands
from triagebot.tracker.answer import Reaction, react
from triagebot.tracker.commands import Kind
from triagebot.tracker.github import GitHub
from triagebot.tracker.ledger import answered_recently, now
from triagebot.tracker.remote import first_line, issue_comments, post_comment
from triagebot.tracker.render import render
from triagebot.tracker.rerun import CommentEvent, Decision, RerunSettings


@dataclass
class Reply:
    """What a handler needs besides the comment and the decision."""

    gh: GitHub
    settings: RerunSettings


def answer_help(reply: Reply, event: CommentEvent, decision: Decision) -> None:
    marker = answer_marker(event.comment_id)
    body = render(
        "tracker-help.md.j2",
        marker=marker,
        grammar=commands.GRAMMAR,
        flags=sorted(reply.settings.known_flags),
        max_models=reply.settings.tracker.rerun_max_models,
        max_confirm=commands.MAX_CONFIRM,
    )
    what = f"answer help on {event.repo}#{event.issue}"
    post_comment(reply.gh, event.repo, event.issue, marker, body, what=what)
    react(reply.gh, event.repo, event.issue, event.comment_id, Reaction.answered)


def answer_refusal(reply: Reply, event: CommentEvent, decision: Decision) -> None:
    react(reply.gh, event.repo, event.issue, event.comment_id, Reaction.refused)
    marker = answer_marker(event.comment_id)
    body = render("tracker-refusal.md.j2", marker=marker, user=event.author, reason=decision.reason)
    what = f"answer a refusal on {event.repo}#{event.issue}"
    post_comment(reply.gh, event.repo, event.issue, marker, body, what=what)


def accept(reply: Reply, event: CommentEvent, decision: Decision) -> None:
    react(reply.gh, event.repo, event.issue, event.comment_id, Reaction.accepted)


Handler = Callable[[Reply, CommentEvent, Decision], None]
HANDLERS: dict[Kind, Handler] = {
    Kind.help: answer_help,
    Kind.refuse: answer_refusal,
    **dict.fromkeys(commands.STARTED, accept),
}
"""What the bot does for each kind of decision (an ignored comment gets nothing)."""

WRITES: dict[Kind, int] = {Kind.help: 2, Kind.refuse: 2, **dict.fromkeys(commands.STARTED, 1)}
"""The writes each handler makes: for the per-poll write cap."""


def respond(
    gh: GitHub,
    event: CommentEvent,
    decision: Decision,
    settings: RerunSettings,
    *,
    quiet: bool = False,
) -> None:
    """React to and answer `event` as `decision` says (nothing for an ignored comment, and
    nothing either for a limited answer when `quiet`: that person was answered today)."""
    handler = HANDLERS.get(decision.kind)
    if handler is None or (decision.limited and quiet):
        return
    handler(Reply(gh, settings), event, decision)


def writes_needed(decision: Decision, quiet: bool) -> int:
    """Writes `respond` makes for `decision`."""
    return 0 if decision.limited and quiet else WRITES.get(decision.kind, 0)


def answers_on(comments: list[Any], bot: str, issue: int) -> list[CommandRecord]:
    """The refusals and help answers the bot posted among `comments` (PyGithub comments of
    `issue`), as ledger records of whom they answered: the day's limit without a ledger."""
    authors = {c.id: (c.user.login if c.user else "") for c in comments}
    by_marker = {answer_marker(cid): (cid, author) for cid, author in authors.items()}
    found = []
    for comment in comments:
        if not comment.user or comment.user.login.lower() != bot.lower():
            continue
        answered = by_marker.get(first_line(comment.body))
        if answered is not None:
            cid, author = answered
            record = CommandRecord(
                repo="", issue=issue, comment_id=cid, author=author, state="refused", at=comment.created_at
            )
            found.append(record)
    return found


def answered_today(gh: GitHub, event: CommentEvent) -> bool:
    """Whether the bot answered this person on this issue within the day (from its comments)."""
    earlier = [c for c in issue_comments(gh, event.repo, event.issue) if c.id != event.comment_id]
    moment = event.created_at or now()  # GitHub's clock, as the answers' times are
    return answered_recently(answers_on(earlier, gh.login, event.issue), event.issue, event.author, moment)
