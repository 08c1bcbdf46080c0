"""Reading GitHub's state of the tracking issues, and applying a plan to it.

Issues are found again by their hidden marker in bodies written by the bot's own account,
listing the bot's issues page by page; never by title search, whose index lags behind writes
and lets duplicates through. Every create looks before it writes when its answer was lost, so
an interrupted publish run again converges without a duplicate issue or comment.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from github import GithubException

from triagebot.report.markers import flag_marker
from triagebot.results import TrackedIssue
from triagebot.tracker.github import GitHub
from triagebot.tracker.plan import CLOSE_KINDS, REOPEN_KINDS, Action, Plan, RemoteIssue, RemoteState, Verb

LABEL_COLOR = "ededed"
STATE_KINDS = CLOSE_KINDS | REOPEN_KINDS


def list_bot_issues(gh: GitHub, repo_name: str) -> list[RemoteIssue]:
    """Every issue (open or closed, pull requests left out) the bot's account opened."""
    repo = gh.repo(repo_name)

    def read() -> list[RemoteIssue]:
        found = []
        for issue in repo.get_issues(state="all", creator=gh.login, sort="created", direction="asc"):
            author = issue.user.login if issue.user else ""
            if issue.pull_request is not None or author.lower() != gh.login.lower():
                continue
            found.append(
                RemoteIssue(
                    number=issue.number,
                    title=issue.title or "",
                    body=issue.body or "",
                    labels={label.name for label in issue.labels},
                    open=issue.state == "open",
                    author=author,
                )
            )
        return found

    return gh.read(read)


def find_by_marker(issues: Iterable[RemoteIssue], marker: str) -> RemoteIssue | None:
    """The oldest of the bot's issues whose body carries `marker`."""
    matching = [issue for issue in issues if marker in issue.body]
    return min(matching, key=lambda issue: issue.number) if matching else None


def tracked_issue_numbers(gh: GitHub, repo_name: str, flags: Iterable[str]) -> dict[str, int]:
    """flag -> number of the bot's tracking issue for it, for those that exist."""
    bot_issues = list_bot_issues(gh, repo_name)
    found = {flag: find_by_marker(bot_issues, flag_marker(flag)) for flag in flags}
    return {flag: issue.number for flag, issue in found.items() if issue is not None}


def bot_comment_bodies(gh: GitHub, repo_name: str, number: int, *, fresh: bool = False) -> list[str]:
    issue = gh.repo(repo_name).get_issue(number)
    return gh.read(
        lambda: [
            c.body or "" for c in issue.get_comments() if c.user and c.user.login.lower() == gh.login.lower()
        ],
        fresh=fresh,
    )


def read_state(gh: GitHub, repo_name: str, desired: list[TrackedIssue]) -> RemoteState:
    """GitHub's side of `desired`: the bot's issue per marker, which notice markers its comments
    already carry (read only where a notice may be owed), and the repository's labels."""
    bot_issues = list_bot_issues(gh, repo_name)
    issues: dict[str, RemoteIssue] = {}
    for tracked in desired:
        found = find_by_marker(bot_issues, tracked.marker)
        if found is None:
            continue
        remote = found
        changes_state = found.open != tracked.open
        owed = [n for n in tracked.notices if n.kind not in STATE_KINDS or changes_state]
        if owed:
            bodies = bot_comment_bodies(gh, repo_name, found.number)
            remote.comment_markers = {n.marker for n in tracked.notices if any(n.marker in b for b in bodies)}
            remote.comments_read = True
        issues[tracked.marker] = remote
    repo = gh.repo(repo_name)
    labels = gh.read(lambda: {label.name for label in repo.get_labels()})
    return RemoteState(issues=issues, labels=labels)


@dataclass
class Applied:
    action: Action
    number: int | None


def apply_plan(gh: GitHub, repo_name: str, plan: Plan) -> list[Applied]:
    """Carry out every write of `plan` in order; returns what was done (issue numbers filled in)."""
    repo = gh.repo(repo_name)
    created: dict[str, int] = {}
    done: list[Applied] = []
    for action in plan.writes:
        number = action.number or created.get(action.marker)
        if action.verb == Verb.create_label:
            _create_label(gh, repo, action.labels[0])
        elif action.verb == Verb.create:
            number = create_issue(
                gh, repo_name, action.marker, action.title or "", action.body or "", action.labels
            )
            created[action.marker] = number
        else:
            assert number is not None, action
            update_issue(gh, repo_name, number, action, fresh=action.marker in created)
        done.append(Applied(action, number))
    return done


def create_issue(gh: GitHub, repo_name: str, marker: str, title: str, body: str, labels: list[str]) -> int:
    repo = gh.repo(repo_name)

    def existing() -> int | None:
        found = find_by_marker(list_bot_issues(gh, repo_name), marker)
        return found.number if found else None

    def create() -> int:
        return repo.create_issue(title=title, body=body, labels=labels).number

    return gh.write(create, find_existing=existing)


def post_comment(
    gh: GitHub, repo_name: str, number: int, marker: str, body: str, *, fresh: bool = False
) -> None:
    """Post `body` on issue `number` unless a comment of the bot already carries `marker`."""
    issue = gh.repo(repo_name).get_issue(number)

    def existing() -> bool | None:
        return (
            True if any(marker in b for b in bot_comment_bodies(gh, repo_name, number, fresh=fresh)) else None
        )

    gh.write(lambda: bool(issue.create_comment(body)), find_existing=existing, fresh=fresh)


def _create_label(gh: GitHub, repo: Any, name: str) -> None:
    def exists() -> bool | None:
        try:
            repo.get_label(name)
        except GithubException as error:
            if error.status == 404:
                return None
            raise
        return True

    try:
        gh.write(lambda: bool(repo.create_label(name, LABEL_COLOR)), find_existing=exists)
    except GithubException as error:
        if error.status != 422:  # 422: already exists, created meanwhile by someone else
            raise


def update_issue(gh: GitHub, repo_name: str, number: int, action: Action, *, fresh: bool) -> None:
    issue = gh.repo(repo_name).get_issue(number)
    if action.verb == Verb.edit:
        fields = {k: v for k, v in (("title", action.title), ("body", action.body)) if v is not None}
        gh.write(lambda: issue.edit(**fields), fresh=fresh)
    elif action.verb == Verb.add_labels:
        gh.write(lambda: issue.add_to_labels(*action.labels), fresh=fresh)
    elif action.verb == Verb.comment:
        assert action.notice is not None
        post_comment(gh, repo_name, number, action.notice.marker, action.notice.body, fresh=fresh)
    elif action.verb == Verb.close:
        gh.write(lambda: issue.edit(state="closed", state_reason="completed"), fresh=fresh)
    elif action.verb == Verb.reopen:
        gh.write(lambda: issue.edit(state="open", state_reason="reopened"), fresh=fresh)
    else:
        raise ValueError(f"not a write: {action.verb}")
