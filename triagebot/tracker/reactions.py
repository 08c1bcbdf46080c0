"""The bot's reactions to a `/rerun-sweep` comment, and what each says about the command.

👀 accepted (its sweep is under way), 🚀 answered (help, or the rerun's result), 😕 refused (or
its sweep gave no result). The event workflow, polling and the answer read them back: a command
the bot accepted and has neither answered nor refused still waits for its answer.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from triagebot.tracker.github import GitHub
from triagebot.tracker.ledger import parse_time


class Reaction(StrEnum):
    """GitHub's names of the bot's reactions, by what they mean."""

    accepted = "eyes"
    answered = "rocket"
    refused = "confused"


BotReactions = dict[str, "datetime | None"]  # reaction -> when the bot made it (None: unknown)


def react(gh: GitHub, repo_name: str, issue: int, comment_id: int, content: str) -> None:
    """Add the bot's reaction (GitHub answers an existing one with 200, so this is idempotent)."""
    what = f"react {content} to comment {comment_id} on {repo_name}#{issue}"
    comment = gh.read(lambda: gh.repo(repo_name).get_issue(issue).get_comment(comment_id), what=what)
    gh.write(lambda: comment.create_reaction(content), what=what)


def bot_reactions(gh: GitHub, repo_name: str, issue: int, comment: Any) -> BotReactions:
    """The bot's own reactions to `comment` (a PyGithub comment): content -> when it was made."""
    bot = gh.login.lower()

    def read() -> BotReactions:
        mine = [r for r in comment.get_reactions() if r.user and r.user.login.lower() == bot]
        return {r.content: parse_time(r.raw_data.get("created_at")) for r in mine}

    return gh.read(read, what=f"read the reactions to comment {comment.id} on {repo_name}#{issue}")


def accepted_once(gh: GitHub, repo_name: str, issue: int, comment_id: int) -> bool:
    """Whether the bot accepted comment `comment_id` before (👀): a command edited since, or
    whose event came again, has had its start."""
    what = f"read comment {comment_id} on {repo_name}#{issue}"
    comment = gh.read(lambda: gh.repo(repo_name).get_issue(issue).get_comment(comment_id), what=what)
    return Reaction.accepted in bot_reactions(gh, repo_name, issue, comment)


def settled(mine: BotReactions) -> Reaction | None:
    """How the bot settled a command by its reactions: answered, refused, or None (not yet)."""
    if Reaction.answered in mine:
        return Reaction.answered
    return Reaction.refused if Reaction.refused in mine else None


def waiting(mine: BotReactions) -> bool:
    """Whether the bot accepted the command and has not settled it yet."""
    return Reaction.accepted in mine and settled(mine) is None
