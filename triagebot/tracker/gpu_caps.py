"""How many commands that take GPU time one person, and everyone together, may start in a day
where GitHub's `author_association` stands in for the collaborator permission (the bot's token
cannot read permissions: any organisation member or collaborator, a read-only one included, is
then trusted): `tracker.gpu_commands_per_person` and `tracker.gpu_commands_per_day`.

Counted from GitHub itself, so that the event workflow (which keeps no ledger) and polling
decide alike, the same way whenever they decide: the `/rerun-sweep` comments on the bot's
tracking issues that take GPU time (a rerun or a bisection; not `link`, `unlink` or `help`) and
that the bot accepted (👀), from the day before the command was posted on: commands posted
together are handled one at a time (the parse job's concurrency group) but in any order, so one
posted after it and accepted first counts too. What counts is the bot's own record, not a
command's text now: an accepted comment edited since counts whatever it says now, and the answer
to one deleted since counts for the person it names. (A command deleted before its answer leaves
no trace on GitHub and is not counted.) The command itself is left out: a comment the bot
accepted once is never started again by an event (`answer.accepted_once`), only restarted by
polling when its sweep was lost. Only read for a command the association alone lets through.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from triagebot.report.markers import find_sweep_answer
from triagebot.tracker import commands
from triagebot.tracker.answer import Reaction, bot_reactions
from triagebot.tracker.commands import Kind
from triagebot.tracker.github import GitHub
from triagebot.tracker.ledger import aware, edited
from triagebot.tracker.remote import issue_comments, list_bot_issues

GPU_KINDS = frozenset({Kind.run, Kind.bisect})
DAY = timedelta(days=1)
_MENTION = re.compile(r"@([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)")


@dataclass(frozen=True)
class Started:
    """A command that takes GPU time, accepted by the bot: who posted it, and when."""

    author: str
    at: datetime


def takes_gpu(body: str) -> bool:
    """Whether the comment's command, whatever became of it, would take GPU time."""
    line = commands.command_line(body)
    return line is not None and commands.asked_kind(line.split()[1:]) in GPU_KINDS


def started_before(gh: GitHub, repo_name: str, comment_id: int, posted: datetime) -> list[Started]:
    """The commands that take GPU time the bot accepted on its tracking issues of `repo_name`
    from the day before `posted` on (comment `comment_id` itself left out)."""
    found = []
    for issue in list_bot_issues(gh, repo_name):
        comments = issue_comments(gh, repo_name, issue.number)
        found += _accepted_on(gh, repo_name, issue.number, comments, comment_id, posted)
    return found


def _accepted_on(
    gh: GitHub, repo_name: str, issue: int, comments: list[Any], comment_id: int, posted: datetime
) -> list[Started]:
    """`started_before` on one issue, from the bot's own record of what it accepted, never from
    a command's current text alone: a comment it accepted (👀) that takes GPU time as it reads
    now, or that was edited since (what was accepted is unknown, so it counts), and the sweep
    answers of commands deleted since (counted for the person the answer names)."""
    present = {comment.id for comment in comments}
    found = []
    for comment in comments:
        at = aware(comment.created_at)
        if comment.id == comment_id or at is None or at < posted - DAY or not comment.user:
            continue
        if comment.user.login.lower() == gh.login.lower():
            answered = find_sweep_answer(comment.body)
            if answered is not None and answered not in present and answered != comment_id:
                found.append(Started(_answered_person(comment.body or ""), at))
        elif (takes_gpu(comment.body or "") or edited(comment)) and Reaction.accepted in bot_reactions(
            gh, repo_name, issue, comment
        ):
            found.append(Started(comment.user.login, at))
    return found


def _answered_person(answer: str) -> str:
    """The person a sweep's answer names first (`@login` on the line after its marker)."""
    lines = answer.splitlines()
    mention = _MENTION.search(lines[1] if len(lines) > 1 else "")
    return mention[1] if mention else ""


def cap_refusal(author: str, started: list[Started], per_person: int, per_day: int) -> str | None:
    """Why `author` may not start another command that takes GPU time, or None."""
    mine = sum(item.author.lower() == author.lower() for item in started)
    limits = (
        f"where GitHub's author_association stands in for write access, commands that take GPU "
        f"time are limited to {per_person} per person and {per_day} in all a day"
    )
    if mine >= per_person:
        return f"{limits}, and @{author} started {mine} in the day before this one; try again later"
    if len(started) >= per_day:
        return f"{limits}, and {len(started)} were started in the day before this one; try again later"
    return None
