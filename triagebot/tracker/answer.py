"""The answer to an accepted `/rerun-sweep`: what the rerun found, what was kept for a `link` or a
`bisect` (`post_kept`), or why there is no result.

The rerun is compared with the stored snapshot of the same torch build when the store has it,
else with the newest stored one: "no longer crashing" lists only models that crashed there and
ran now; a model that crashes now but did not crash there is "crashing now", apart from those
"still crashing". The bounded renderer shows each section's first rows and says how many more
there are, so an answer always fits GitHub's comment limit. A sweep that failed, was cancelled or timed out is
answered too, with its reason and a 😕 reaction. Every answer carries a marker with the
command's comment id, so a rerun of the workflow never answers twice.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from triagebot.analysis import CRASH_EFFECTS, RAN_EFFECTS, classify
from triagebot.report.markers import failure_marker, result_marker
from triagebot.results import Effect, ModelEffect, Snapshot
from triagebot.tracker import commands
from triagebot.tracker.actions import run_url
from triagebot.tracker.github import GitHub
from triagebot.tracker.reactions import Reaction, bot_reactions, react, waiting
from triagebot.tracker.remote import bot_comment_bodies, carries, post_comment
from triagebot.tracker.render import render

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


def _author(gh: GitHub, repo_name: str, issue: int, comment_id: int) -> Any:
    what = f"read comment {comment_id} on {repo_name}#{issue}"
    comment = gh.read(lambda: gh.repo(repo_name).get_issue(issue).get_comment(comment_id), what=what)
    return comment.user.login if comment.user else ""


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
    marker = result_marker(comment_id)
    if not any(carries(body, marker) for body in bot_comment_bodies(gh, repo_name, issue)):
        author = _author(gh, repo_name, issue, comment_id)
        body = answer_body(comment_id, author, rerun, stored, flags, dashboard_url)
        post_comment(gh, repo_name, issue, marker, body, what=f"answer the rerun on {repo_name}#{issue}")
    react(gh, repo_name, issue, comment_id, Reaction.answered)


def failure_reason(result: str) -> str:
    """Why no result came, from a job's result (`needs.sweep.result`) or a reason of our own."""
    return SWEEP_RESULTS.get(result, result)


def post_failure(gh: GitHub, repo_name: str, issue: int, comment_id: int, reason: str) -> None:
    """Answer the command `comment_id` with why its rerun gave no result, and react 😕."""
    marker = failure_marker(comment_id)
    if not any(carries(body, marker) for body in bot_comment_bodies(gh, repo_name, issue)):
        body = render(
            "tracker-rerun-failed.md.j2",
            marker=marker,
            user=_author(gh, repo_name, issue, comment_id),
            reason=reason,
            run_url=run_url(),
            command=commands.COMMAND,
        )
        post_comment(gh, repo_name, issue, marker, body, what=f"answer a failed rerun on {repo_name}#{issue}")
    react(gh, repo_name, issue, comment_id, Reaction.refused)


def pending_command(gh: GitHub, repo_name: str, issue: int) -> int | None:
    """The newest comment on `issue` the bot accepted (👀) but has not answered (🚀, 😕) yet."""
    handle = gh.repo(repo_name).get_issue(issue)
    comments = gh.read(lambda: list(handle.get_comments()), what=f"read the comments of {repo_name}#{issue}")
    for comment in reversed(comments):
        if commands.command_line(comment.body or "") is None:
            continue
        if waiting(bot_reactions(gh, repo_name, issue, comment)):
            return comment.id
    return None


def post_kept(gh: GitHub, repo_name: str, issue: int, comment_id: int, template: str, **context: Any) -> None:
    """Answer the command `comment_id` with `template` (a pin, a bisection: what was kept in the
    store for it) and mark it answered (🚀); a rerun of the job never answers twice."""
    marker = result_marker(comment_id)
    if not any(carries(body, marker) for body in bot_comment_bodies(gh, repo_name, issue)):
        user = _author(gh, repo_name, issue, comment_id)
        body = render(template, marker=marker, user=user, **context)
        post_comment(gh, repo_name, issue, marker, body, what=f"answer the command on {repo_name}#{issue}")
    react(gh, repo_name, issue, comment_id, Reaction.answered)


def command_author(gh: GitHub, repo_name: str, issue: int, comment_id: int) -> str:
    """The login that wrote comment `comment_id` (who pinned a group, as GitHub says)."""
    return _author(gh, repo_name, issue, comment_id)
