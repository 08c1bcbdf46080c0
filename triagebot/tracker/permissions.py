"""Who may run a `/rerun-sweep` command.

It is read from the collaborator permission API (write, maintain or admin).
Where the bot's token may not read permissions (GitHub answers 403 to a token without push
access), the comment's own `author_association` decides instead (OWNER, MEMBER or
COLLABORATOR), and the decision says so (`Decision.note`); a person is never told they lack
access when the bot could not check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from triagebot.tracker.github import GitHub, GitHubError

if TYPE_CHECKING:  # types only: `rerun` decides with what this module says
    from triagebot.tracker.rerun import CommentEvent

WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
UNREADABLE = "unreadable"  # the bot's token may not read permissions: GitHub did not say
TRUSTED_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})


def may_run(level: str, event: CommentEvent) -> tuple[bool, str]:
    """Whether the author of `event`, whose collaborator permission is `level`, may run a
    command; and why not, or, when the permission could not be read, how it was decided."""
    who = f"@{event.author}"
    if level != UNREADABLE:
        if level in WRITE_PERMISSIONS:
            return True, ""
        return False, f"it needs write access to the repository, and {who} has {level}"
    association = event.author_association.upper()
    cannot = "the bot cannot read collaborator permissions (its token has no push access)"
    if association in TRUSTED_ASSOCIATIONS:
        return True, f"{cannot}, so {who} was trusted as {association}, as GitHub's author_association says"
    called = f"calls {who} {association}" if association else f"says nothing of {who}"
    return False, (
        "it needs write access to the repository, which the bot cannot check (its token may not "
        f"read collaborator permissions), and GitHub's author_association {called}, not OWNER, "
        "MEMBER or COLLABORATOR"
    )


def collaborator_permission(gh: GitHub, repo_name: str, login: str) -> str:
    """`admin`, `maintain`, `write`, `triage`, `read` or `none`, from the collaborator
    permission API (author_association alone says nothing about write access); `UNREADABLE`
    when GitHub refuses the bot the answer (a token without push access gets 403)."""
    url = f"{gh.repo(repo_name).url}/collaborators/{quote(login, safe='')}/permission"
    try:
        data = gh.read_json(url, what=f"read the permission of {login} on {repo_name}")[1]
    except GitHubError as error:
        if error.status == 403:  # the token may not read permissions: not the person's fault
            return UNREADABLE
        if error.status == 404:  # not a collaborator, or no such account
            return "none"
        raise
    role = data.get("role_name") or ""
    return role if role in ("maintain", "triage") else str(data.get("permission") or "none")
