"""Reading GitHub's state of the tracking issues, and applying a plan to it.

The bot recognises its own issues and comments by a marker on the *first line* of a body
written by its own account, never by a marker found anywhere in a body (a crash message may
quote one), never by title search (whose index lags behind writes). The store's memory of
flag -> issue number comes first: an issue whose marker a person edited or removed is still
the flag's issue, and no duplicate is opened. Every create looks before it writes when its
answer was lost, so an interrupted publish run again converges without a duplicate.

The writes themselves (open an issue, comment, edit, label) are here too, one function each;
applying a whole plan, and containing what GitHub refuses, is `apply`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from triagebot.errors import TrackerError
from triagebot.report.markers import flag_marker
from triagebot.results import TrackedIssue
from triagebot.tracker.github import GitHub, GitHubError
from triagebot.tracker.plan import CLOSE_KINDS, REOPEN_KINDS, Action, RemoteIssue, RemoteState, Verb

LABEL_COLOR = "ededed"
STATE_KINDS = CLOSE_KINDS | REOPEN_KINDS


def first_line(body: str | None) -> str:
    """The first line of a body, as GitHub stores it (a person's edit in the web form turns
    line ends into CRLF; a byte-order mark may lead)."""
    return (body or "").lstrip("\ufeff").split("\n", 1)[0].strip()


def carries(body: str | None, marker: str) -> bool:
    """Whether `body` is the one the bot wrote under `marker`: the marker is its first line."""
    return first_line(body) == marker


def carries_notice(body: str | None, marker: str) -> bool:
    """Whether the bot's comment `body` holds the notice under `marker`: its first line, or a
    line of its own where the notices of one night on one issue were folded into one comment
    (`plan.fold`; no escaped text can form a marker)."""
    return any(line.strip() == marker for line in (body or "").lstrip("\ufeff").splitlines())


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

    return gh.read(read, what=f"list the issues {gh.login} opened in {repo_name}")


def find_by_marker(issues: Iterable[RemoteIssue], marker: str) -> RemoteIssue | None:
    """The oldest of the bot's issues whose body's first line is `marker`."""
    matching = [issue for issue in issues if carries(issue.body, marker)]
    return min(matching, key=lambda issue: issue.number) if matching else None


def match_issues(
    bot_issues: list[RemoteIssue], markers: Iterable[str], known: Mapping[str, int]
) -> dict[str, RemoteIssue]:
    """marker -> the bot's issue for it: the number the store remembers first (whatever its
    body now says), then the first-line marker among the issues no other marker has claimed."""
    by_number = {issue.number: issue for issue in bot_issues}
    markers = list(markers)
    found: dict[str, RemoteIssue] = {}
    for marker in markers:
        issue = by_number.get(known.get(marker, -1))
        if issue is not None:
            found[marker] = issue
    claimed = {issue.number for issue in found.values()}
    for marker in markers:
        if marker in found:
            continue
        issue = find_by_marker([i for i in bot_issues if i.number not in claimed], marker)
        if issue is not None:
            found[marker] = issue
            claimed.add(issue.number)
    return found


def tracked_issue_numbers(
    gh: GitHub, repo_name: str, flags: Iterable[str], known: Mapping[str, int] | None = None
) -> dict[str, int]:
    """flag -> number of the bot's tracking issue for it, for those that exist (`known`: the
    numbers the store remembers, by flag)."""
    flags = list(flags)
    markers = {flag_marker(flag): flag for flag in flags}
    known_by_marker = {flag_marker(flag): number for flag, number in (known or {}).items() if flag in flags}
    found = match_issues(list_bot_issues(gh, repo_name), markers, known_by_marker)
    return {markers[marker]: issue.number for marker, issue in found.items()}


def bot_comment_bodies(gh: GitHub, repo_name: str, number: int, *, fresh: bool = False) -> list[str]:
    issue = gh.repo(repo_name).get_issue(number)
    return gh.read(
        lambda: [
            c.body or "" for c in issue.get_comments() if c.user and c.user.login.lower() == gh.login.lower()
        ],
        what=f"read the comments of {repo_name}#{number}",
        fresh=fresh,
    )


def issue_comments(gh: GitHub, repo_name: str, number: int) -> list[Any]:
    """Every comment of issue `number` (PyGithub comments), in one listing."""
    handle = gh.repo(repo_name).get_issue(number)
    return gh.read(lambda: list(handle.get_comments()), what=f"read the comments of {repo_name}#{number}")


def read_comment(gh: GitHub, repo_name: str, issue: int, comment_id: int, *, what: str = "") -> Any:
    """Comment `comment_id` of issue `issue` (PyGithub); `what` names the reading in an error."""
    what = what or f"read comment {comment_id} on {repo_name}#{issue}"
    return gh.read(lambda: gh.repo(repo_name).get_issue(issue).get_comment(comment_id), what=what)


def issue_locked(gh: GitHub, repo_name: str, number: int) -> bool:
    """Whether issue `number`'s conversation is locked (only collaborators may comment)."""
    issue = gh.repo(repo_name).get_issue(number)
    return gh.read(lambda: bool(issue.locked), what=f"read whether {repo_name}#{number} is locked")


def closed_by(gh: GitHub, repo_name: str, number: int) -> str | None:
    """Who closed issue `number` (GitHub lists issues without it: one read of the issue)."""
    issue = gh.repo(repo_name).get_issue(number)

    def read() -> str | None:
        user = issue.closed_by
        return user.login if user else None

    return gh.read(read, what=f"read who closed {repo_name}#{number}")


def read_state(
    gh: GitHub, repo_name: str, desired: list[TrackedIssue], known: Mapping[str, int] | None = None
) -> RemoteState:
    """GitHub's side of `desired`: the bot's issue per marker (`known`: marker -> the number
    the store remembers), which notice markers its comments already carry (read only where a
    notice may be owed), who closed those that are closed but should be open, and the
    repository's labels."""
    matched = match_issues(list_bot_issues(gh, repo_name), [d.marker for d in desired], known or {})
    issues: dict[str, RemoteIssue] = {}
    for tracked in desired:
        remote = matched.get(tracked.marker)
        if remote is None:
            continue
        if tracked.open and not remote.open:
            remote.closed_by = closed_by(gh, repo_name, remote.number)
        changes_state = remote.open != tracked.open
        owed = [n for n in tracked.notices if n.kind not in STATE_KINDS or changes_state]
        if owed:
            bodies = bot_comment_bodies(gh, repo_name, remote.number)
            remote.comment_markers = {
                n.marker for n in tracked.notices if any(carries_notice(b, n.marker) for b in bodies)
            }
            remote.comments_read = True
        issues[tracked.marker] = remote
    return RemoteState(issues=issues, labels=repository_labels(gh, repo_name))


def repository_labels(gh: GitHub, repo_name: str) -> set[str]:
    """The names of the repository's labels (also how a create whose answer was lost is checked)."""
    repo = gh.repo(repo_name)
    return gh.read(
        lambda: {label.name for label in repo.get_labels()}, what=f"list the labels of {repo_name}"
    )


def operation(action: Action, repo_name: str, number: int | None) -> str:
    """The operation in words, naming its issue: `edit body of pytorch/pytorch#123`."""
    return replace(action, number=number or action.number).describe(repo_name)


def create_issue(
    gh: GitHub, repo_name: str, marker: str, title: str, body: str, labels: list[str], *, what: str = ""
) -> int:
    repo = gh.repo(repo_name)

    def existing() -> int | None:
        found = find_by_marker(list_bot_issues(gh, repo_name), marker)
        return found.number if found else None

    def create() -> int:
        return repo.create_issue(title=title, body=body, labels=labels).number

    return gh.write(create, what=what or f"open an issue in {repo_name}", find_existing=existing)


def post_comment(
    gh: GitHub,
    repo_name: str,
    number: int,
    marker: str,
    body: str,
    *,
    fresh: bool = False,
    what: str = "",
) -> None:
    """Post `body` on issue `number` unless a comment of the bot already starts with `marker`."""
    issue = gh.repo(repo_name).get_issue(number)

    def existing() -> bool | None:
        bodies = bot_comment_bodies(gh, repo_name, number, fresh=fresh)
        return True if any(carries(b, marker) for b in bodies) else None

    gh.write(
        lambda: bool(issue.create_comment(body)),
        what=what or f"comment on {repo_name}#{number}",
        find_existing=existing,
        fresh=fresh,
    )


def create_label(gh: GitHub, repo_name: str, name: str, what: str) -> None:
    repo = gh.repo(repo_name)

    def exists() -> bool | None:
        return True if name in repository_labels(gh, repo_name) else None

    try:
        gh.write(lambda: bool(repo.create_label(name, LABEL_COLOR)), what=what, find_existing=exists)
    except GitHubError as error:
        if error.status != 422:  # 422: already exists, created meanwhile by someone else
            raise


def update_issue(
    gh: GitHub, repo_name: str, number: int, action: Action, *, fresh: bool, what: str = ""
) -> None:
    issue = gh.repo(repo_name).get_issue(number)
    what = what or operation(action, repo_name, number)
    if action.verb == Verb.edit:
        fields = {k: v for k, v in (("title", action.title), ("body", action.body)) if v is not None}
        gh.write(lambda: issue.edit(**fields), what=what, fresh=fresh)
    elif action.verb == Verb.add_labels:
        gh.write(lambda: issue.add_to_labels(*action.labels), what=what, fresh=fresh)
    elif action.verb == Verb.comment:
        assert action.notice is not None
        post_comment(gh, repo_name, number, action.notice.marker, action.notice.body, fresh=fresh, what=what)
    elif action.verb == Verb.close:
        gh.write(lambda: issue.edit(state="closed", state_reason="completed"), what=what, fresh=fresh)
    elif action.verb == Verb.reopen:
        gh.write(lambda: issue.edit(state="open", state_reason="reopened"), what=what, fresh=fresh)
    else:
        raise TrackerError(f"{what}: not a write")
