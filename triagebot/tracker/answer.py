"""The bot's answers to `/rerun-sweep` commands on GitHub, and its reactions to them.

As soon as a command is decided (`respond`), one small handler per kind of decision, in one table:

- help: the grammar as a comment, then 🚀;
- refuse: 😕, then the reason as a comment;
- run, bisect, link: 👀 (the job that carries it out answers later, below).

One person gets at most one refusal or help answer per issue per day (`ledger`): when the day's
answer was given (`quiet`), a limited decision is left without a word or a reaction.

Once the job is done: what the rerun found (`post_answer`), what was kept for a `link` or a
`bisect` (`post_kept`), or why there is no result (`post_failure`, with 😕). The rerun is
compared with the stored snapshot of the same torch build when the store has it, else with the
newest stored one: "no longer crashing" lists only models that crashed there and ran now; a
model that crashes now but did not crash there is "crashing now", apart from those "still
crashing". The bounded renderer shows each section's first rows and says how many more there
are, so an answer always fits GitHub's comment limit.

Every answer carries a marker with the command's comment id on its first line, so a rerun of
the workflow never answers twice, and the day's limit can be read back from the bot's comments
alone. The reactions say what became of a command: 👀 accepted (its job is under way), 🚀
answered (help, or the job's result), 😕 refused (or its job gave no result). The event
workflow, polling and the answer read them back: a command the bot accepted and has neither
answered nor refused still waits for its answer.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from triagebot.analysis import CRASH_EFFECTS, RAN_EFFECTS, classify
from triagebot.report.markers import answer_marker, failure_marker, result_marker
from triagebot.results import CommandRecord, Effect, ModelEffect, Snapshot
from triagebot.tracker import commands
from triagebot.tracker.actions import run_url
from triagebot.tracker.commands import Kind
from triagebot.tracker.github import GitHub
from triagebot.tracker.ledger import answered_recently, now, parse_time
from triagebot.tracker.remote import (
    bot_comment_bodies,
    carries,
    first_line,
    issue_comments,
    post_comment,
    read_comment,
)
from triagebot.tracker.render import render

if TYPE_CHECKING:  # types only: `rerun` sits above, its caps (`gpu_caps`) read the reactions here
    from triagebot.tracker.rerun import CommentEvent, Decision, RerunSettings

SECTIONS = (
    ("still", "Still crashing"),
    ("new", "Crashing now, not in the stored snapshot"),
    ("fixed", "No longer crashing"),
    ("flaky", "Flaky"),
    ("clean", "Ran, and did not crash in the stored snapshot either"),
    ("other", "Could not be tested"),
)
SWEEP_RESULTS = {  # the result of the job that carries a command out: a sweep or a bisection
    "failure": "its job failed, or ran past its time limit",
    "cancelled": "its job was cancelled",
    "skipped": "its job did not run",
}


def answer_rows(
    rerun: Snapshot, stored: Snapshot | None, flags: Collection[str] | None = None
) -> dict[str, list[ModelEffect]]:
    """The rerun's (model, flag) rows sorted into the sections above, against `stored`."""
    crashed = set()
    if stored is not None:
        crashed = {(row.model, row.flag) for row in classify(stored) if row.effect == Effect.crashes}
    rows: dict[str, list[ModelEffect]] = {name: [] for name, _ in SECTIONS}
    for row in classify(rerun):
        if flags and row.flag not in flags:
            continue
        before = (row.model, row.flag) in crashed
        if row.effect == Effect.flaky:
            rows["flaky"].append(row)
        elif row.effect in CRASH_EFFECTS:
            rows["still" if before else "new"].append(row)
        elif row.effect in RAN_EFFECTS or row.effect == Effect.fixes_crash:
            rows["fixed" if before else "clean"].append(row)
        else:
            rows["other"].append(row)
    return rows


def not_rerun(rerun: Snapshot, stored: Snapshot | None, flags: Collection[str]) -> int:
    """Models crashing in `stored` under `flags` that this rerun did not sweep."""
    if stored is None:
        return 0
    swept = {result.model for result in rerun.results}
    crashing = {
        row.model
        for row in classify(stored)
        if row.effect == Effect.crashes and (not flags or row.flag in flags) and row.model not in swept
    }
    return len(crashing)


def answer_body(
    comment_id: int,
    user: str,
    rerun: Snapshot,
    stored: Snapshot | None,
    flags: Collection[str] | None,
    dashboard_url: str | None = None,
) -> str:
    """The answer's text; with `dashboard_url`, every model links to its page on the site."""
    rows = answer_rows(rerun, stored, flags)
    # Full sections: the bounded renderer sheds rows ("and N more") until the answer fits.
    sections = [{"title": title, "rows": rows[name]} for name, title in SECTIONS if rows[name]]
    return render(
        "tracker-answer.md.j2",
        marker=result_marker(comment_id),
        user=user,
        key=rerun.key,
        stored=stored.key if stored is not None else None,
        counts={name: len(found) for name, found in rows.items()},
        sections=sections,
        not_rerun=not_rerun(rerun, stored, flags or list(rerun.flags)),
        dashboard_url=dashboard_url,
    )


def command_author(gh: GitHub, repo_name: str, issue: int, comment_id: int) -> str:
    """The login that wrote comment `comment_id` (who pinned a group, as GitHub says)."""
    comment = read_comment(gh, repo_name, issue, comment_id)
    return comment.user.login if comment.user else ""


def _answer_once(
    gh: GitHub,
    repo_name: str,
    issue: int,
    comment_id: int,
    marker: str,
    reaction: Reaction,
    what: str,
    body_for: Callable[[str], str],
) -> None:
    """Answer the command `comment_id` with `body_for(its author)` unless the bot's answer
    carrying `marker` is there already (a rerun of the job never answers twice), then react."""
    if not any(carries(body, marker) for body in bot_comment_bodies(gh, repo_name, issue)):
        body = body_for(command_author(gh, repo_name, issue, comment_id))
        post_comment(gh, repo_name, issue, marker, body, what=f"{what} on {repo_name}#{issue}")
    react(gh, repo_name, issue, comment_id, reaction)


def post_answer(
    gh: GitHub,
    repo_name: str,
    issue: int,
    comment_id: int,
    rerun: Snapshot,
    stored: Snapshot | None,
    flags: Collection[str] | None = None,
    dashboard_url: str | None = None,
) -> None:
    """Answer the command `comment_id` with the rerun's table and mark it answered (🚀); with
    `dashboard_url` (`tracker.dashboard_url`), its models link to their pages on the site."""

    def body_for(author: str) -> str:
        return answer_body(comment_id, author, rerun, stored, flags, dashboard_url)

    marker = result_marker(comment_id)
    _answer_once(gh, repo_name, issue, comment_id, marker, Reaction.answered, "answer the rerun", body_for)


def failure_reason(result: str) -> str:
    """Why no result came, from a job's result (`needs.sweep.result`) or a reason of our own."""
    return SWEEP_RESULTS.get(result, result)


def post_failure(gh: GitHub, repo_name: str, issue: int, comment_id: int, reason: str) -> None:
    """Answer the command `comment_id` with why its rerun gave no result, and react 😕."""
    marker = failure_marker(comment_id)

    def body_for(author: str) -> str:
        context = {"reason": reason, "run_url": run_url(), "command": commands.COMMAND}
        return render("tracker-rerun-failed.md.j2", marker=marker, user=author, **context)

    _answer_once(
        gh, repo_name, issue, comment_id, marker, Reaction.refused, "answer a failed rerun", body_for
    )


def post_kept(gh: GitHub, repo_name: str, issue: int, comment_id: int, template: str, **context: Any) -> None:
    """Answer the command `comment_id` with `template` (a pin, a bisection: what was kept in the
    store for it) and mark it answered (🚀)."""
    marker = result_marker(comment_id)

    def body_for(author: str) -> str:
        return render(template, marker=marker, user=author, **context)

    _answer_once(gh, repo_name, issue, comment_id, marker, Reaction.answered, "answer the command", body_for)


def pending_command(gh: GitHub, repo_name: str, issue: int) -> int | None:
    """The newest comment on `issue` the bot accepted (👀) but has not answered (🚀, 😕) yet."""
    for comment in reversed(issue_comments(gh, repo_name, issue)):
        if commands.command_line(comment.body or "") is None:
            continue
        if waiting(bot_reactions(gh, repo_name, issue, comment)):
            return comment.id
    return None


# --- the bot's reactions, and what each says of a command ---------------------------------


class Reaction(StrEnum):
    """GitHub's names of the bot's reactions, by what they mean."""

    accepted = "eyes"
    answered = "rocket"
    refused = "confused"


BotReactions = dict[str, "datetime | None"]  # reaction -> when the bot made it (None: unknown)


def react(gh: GitHub, repo_name: str, issue: int, comment_id: int, content: str) -> None:
    """Add the bot's reaction (GitHub answers an existing one with 200, so this is idempotent)."""
    what = f"react {content} to comment {comment_id} on {repo_name}#{issue}"
    comment = read_comment(gh, repo_name, issue, comment_id, what=what)
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
    comment = read_comment(gh, repo_name, issue, comment_id)
    return Reaction.accepted in bot_reactions(gh, repo_name, issue, comment)


def settled(mine: BotReactions) -> Reaction | None:
    """How the bot settled a command by its reactions: answered, refused, or None (not yet)."""
    if Reaction.answered in mine:
        return Reaction.answered
    return Reaction.refused if Reaction.refused in mine else None


def waiting(mine: BotReactions) -> bool:
    """Whether the bot accepted the command and has not settled it yet."""
    return Reaction.accepted in mine and settled(mine) is None


# --- acting on a decision, as soon as it is made --------------------------------------------


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


Handler = Callable[[Reply, "CommentEvent", "Decision"], None]
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
