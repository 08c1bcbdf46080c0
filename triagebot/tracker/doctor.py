"""`triagebot doctor`: a deployment checked against GitHub, one finding per check, each with
the exact fix when it is wrong.

What is checked: the repository that runs the workflows (`home`) and the one the issues live
in (`tracker`, often the same); whether the scheduled workflows are enabled; the token's
account, scopes and role; the secrets and variables the workflows read (names only: GitHub
never shows a secret's value, and nothing here asks); the labels; the data branch; Pages; the
self-hosted runners. Every read goes through the one door (`tracker.github`). Nothing is
written unless `fix` is set, and then only the missing labels are created.

A finding is `ok`, a `note` (works, with a consequence worth knowing), a `problem` (the
deployment will fail or do less than it should: the command exits 1) or `unseen` (the token
may not look: listing secrets, variables and runners needs an admin of the repository).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from triagebot.config import Config
from triagebot.config.settings import DashboardSettings
from triagebot.errors import unknown
from triagebot.tracker.deployment import WorkflowNeeds
from triagebot.tracker.github import ACTIONS_BOT_LOGIN, GitHub, GitHubError

OK, NOTE, PROBLEM, UNSEEN = "ok", "note", "problem", "unseen"
TOKEN_SECRET = "TRIAGEBOT_TOKEN"


@dataclass(frozen=True)
class Finding:
    check: str
    status: str  # OK, NOTE, PROBLEM or UNSEEN
    say: str
    fix: str = ""

    def line(self) -> str:
        text = f"{self.status:<7} {self.check}: {self.say}"
        return f"{text} -> fix: {self.fix}" if self.fix else text


@dataclass(frozen=True)
class Deployment:
    """What the deployment is meant to be: from triagebot.toml, the workflows and the options."""

    home: str  # OWNER/NAME of the repository whose workflows run
    tracker: str  # OWNER/NAME of the repository the issues live in
    settings: Config
    needs: WorkflowNeeds
    maintainer: str | None = None  # the person who will comment /rerun-sweep


def _get(gh: GitHub, path: str, what: str) -> tuple[dict[str, str], Any]:
    headers, answer = gh.read_json(path, what=what)
    return {key.lower(): value for key, value in (headers or {}).items()}, answer


def _hidden(error: GitHubError) -> bool:
    """GitHub's answer to a token that may not look: 403, or 404 where it hides that it exists."""
    return error.status in (403, 404)


def check_repository(gh: GitHub, name: str, role: str) -> tuple[Finding, dict[str, Any] | None]:
    try:
        _, repo = _get(gh, f"/repos/{name}", f"read the repository {name}")
    except GitHubError as error:
        if not _hidden(error):
            raise
        fix = f"check the name ({role}); give the token's account access to {name}"
        return Finding("repository", PROBLEM, f"{name} ({role}): the token cannot see it", fix), None
    kind = ("private" if repo.get("private") else "public") + (" fork" if repo.get("fork") else "")
    return Finding("repository", OK, f"{name} ({role}): {kind}, seen by the token"), repo


_ENABLE = {
    "disabled_fork": "open https://github.com/{home}/actions and enable workflows: a fork of a "
    "public repository has them off until then",
    "disabled_inactivity": "Actions tab > {file} > Enable workflow (GitHub turns schedules off "
    "after 60 days without activity)",
    "disabled_manually": "Actions tab > {file} > Enable workflow",
}


def check_schedules(gh: GitHub, home: str, needs: WorkflowNeeds) -> Finding:
    """Each scheduled workflow is `active` in GitHub's workflows API; the fix for the first that
    is not (its state says why: a fork's, 60 days idle, by hand) covers the others too."""
    _, answer = _get(gh, f"/repos/{home}/actions/workflows", f"list the workflows of {home}")
    states = {PurePosixPath(w["path"]).name: w["state"] for w in answer.get("workflows", [])}
    off = [file for file in needs.scheduled if states.get(file) != "active"]
    if not off:
        return Finding("schedules", OK, f"{', '.join(needs.scheduled)} enabled")
    said = ", ".join(f"{file} is {states.get(file, 'not a workflow of ' + home)}" for file in off)
    state = states.get(off[0])
    if state is None:
        where = f".github/workflows/{off[0]}"
        fix = f"enable Actions (Settings > Actions > General); commit {where} to the default branch"
    else:
        fix = _ENABLE.get(state, "Actions tab > {file} > Enable workflow").format(home=home, file=off[0])
    return Finding("schedules", PROBLEM, f"{said}: no schedule fires", fix)


def token_account(gh: GitHub) -> tuple[str, str | None]:
    """The token's login and its classic scopes (None: a fine-grained token, which sends none)."""
    headers, user = _get(gh, "/user", "read the token's account")
    return user["login"], headers.get("x-oauth-scopes")


def check_token(gh: GitHub, deployment: Deployment, tracker: dict[str, Any]) -> list[Finding]:
    """Whose account the token is, its scopes (classic) or reach (fine-grained), its role."""
    if gh.login == ACTIONS_BOT_LOGIN:  # no account, no scopes: nothing more to read
        return [_owner(gh.login, deployment)]
    login, scopes = token_account(gh)
    findings = [_owner(login, deployment)]
    findings.append(_scopes(login, scopes, deployment, tracker))
    findings.extend(_role(login, deployment.tracker, tracker.get("permissions") or {}))
    return findings


def _owner(login: str, deployment: Deployment) -> Finding:
    if login == ACTIONS_BOT_LOGIN:
        fix = f"store a token of the bot's account as the secret {TOKEN_SECRET}"
        return Finding("token", PROBLEM, "the job's GITHUB_TOKEN: it cannot write the tracker's issues", fix)
    cc = {person.lower() for people in deployment.settings.tracker.cc.values() for person in people}
    if login.lower() in cc:
        fix = f"take {login} out of [tracker] cc (GitHub never notifies an account of its own mention)"
        return Finding("token", NOTE, f"writes as {login}, whom [tracker] cc copies", fix)
    if deployment.maintainer and login.lower() == deployment.maintainer.lower():
        say = f"writes as {login}, the maintainer: issues and answers carry your name"
        return Finding("token", NOTE, f"{say}; your /rerun-sweep comments are still read")
    return Finding("token", OK, f"writes as {login}")


def _scopes(login: str, scopes: str | None, deployment: Deployment, tracker: dict[str, Any]) -> Finding:
    owner = tracker.get("owner") or {}
    if scopes is not None:
        granted = {scope.strip() for scope in scopes.split(",") if scope.strip()}
        needed = "repo" if tracker.get("private") else "public_repo"
        if granted & {needed, "repo"}:
            return Finding("scopes", OK, f"classic token with {', '.join(sorted(granted))}")
        fix = f"github.com/settings/tokens > this token > tick {needed}"
        return Finding("scopes", PROBLEM, f"classic token without {needed}: it cannot write issues", fix)
    if owner.get("type") == "User" and str(owner.get("login", "")).lower() != login.lower():
        say = f"a fine-grained token of {login} cannot reach {deployment.tracker}, owned by another user"
        fix = "use a classic token with public_repo, or a tracker in an organisation that allows the token"
        return Finding("scopes", PROBLEM, say, fix)
    say = (
        f"fine-grained token (GitHub shows no scopes): it needs Issues read and write on {deployment.tracker}"
    )
    return Finding("scopes", NOTE, say)


def _role(login: str, tracker: str, permissions: dict[str, bool]) -> list[Finding]:
    add = f"{tracker}: Settings > Collaborators > add {login} as"
    if not permissions.get("triage"):
        return [
            Finding(
                "role",
                PROBLEM,
                f"{login} has no Triage role on {tracker}: labels are dropped",
                f"{add} Write",
            )
        ]
    if not permissions.get("push"):
        say = f"{login} has Triage but not Write on {tracker}: author_association stands in for permissions"
        return [Finding("role", NOTE, f"{say} and GPU commands are capped", f"{add} Write")]
    return [Finding("role", OK, f"{login} may write {tracker}")]


def listed(gh: GitHub, home: str, plural: str) -> dict[str, str] | None:
    """The `secrets` or `variables` of `home`: name -> value (GitHub never shows a secret's:
    ""), or None when the token may not see them."""
    try:
        _, answer = _get(gh, f"/repos/{home}/actions/{plural}", f"list the {plural} of {home}")
    except GitHubError as error:
        if not _hidden(error):
            raise
        return None
    return {item["name"]: str(item.get("value", "")) for item in answer.get(plural, [])}


def check_settings(needs: WorkflowNeeds, kind: str, present: dict[str, str] | None) -> list[Finding]:
    """The secrets (or variables) `present` in the repository (`listed`) against what the
    workflows read: by name."""
    check = kind + "s"
    read = needs.named(kind)
    if present is None:
        return [
            Finding(check, UNSEEN, f"cannot see them, needs admin (the workflows read {', '.join(read)})")
        ]
    findings = []
    for name in sorted(set(present) - set(read)):
        if name.startswith("TRIAGEBOT_"):
            say = f"{unknown(kind, name, read)}: no workflow reads it"
            findings.append(
                Finding(check, PROBLEM, say, "rename it (Settings > Secrets and variables > Actions)")
            )
    missing = [name for name in read if name not in present]
    if kind == "secret" and TOKEN_SECRET in missing:
        fix = f"Settings > Secrets and variables > Actions > New repository secret {TOKEN_SECRET}"
        findings.append(Finding(check, PROBLEM, f"{TOKEN_SECRET} is not set: publishing is a dry run", fix))
        missing.remove(TOKEN_SECRET)
    unset = f"; not set (their defaults apply): {', '.join(missing)}" if missing else ""
    status = NOTE if findings else OK  # beside a problem of the same check, not "ok"
    findings.append(
        Finding(check, status, f"set: {', '.join(sorted(set(present) & set(read))) or 'none'}{unset}")
    )
    return findings


def check_labels(gh: GitHub, tracker: str, wanted: list[str], fix: bool) -> list[Finding]:
    repo = gh.repo(tracker)
    have = gh.read(lambda: {label.name for label in repo.get_labels()}, what=f"list the labels of {tracker}")
    missing = [name for name in wanted if name not in have]
    if not missing:
        return [Finding("labels", OK, f"{', '.join(wanted)} exist on {tracker}")]
    if not fix:
        say = f"missing on {tracker}: {', '.join(missing)}"
        return [Finding("labels", PROBLEM, say, "triagebot doctor --fix creates them")]
    for name in missing:
        gh.write(
            lambda name=name: repo.create_label(name, "ededed"),
            what=f"create the label {name!r} on {tracker}",
        )
    return [Finding("labels", OK, f"created on {tracker}: {', '.join(missing)}")]


def check_branch(gh: GitHub, home: str, branch: str | None) -> Finding:
    if branch is None:
        fix = 'set [store] branch = "triagebot-data"'
        return Finding("data branch", NOTE, "no [store] branch: snapshots are lost with the runner", fix)
    try:
        _, answer = _get(gh, f"/repos/{home}/branches/{branch}", f"read the branch {branch} of {home}")
    except GitHubError as error:
        if error.status != 404:
            raise
        return Finding("data branch", OK, f"{branch} does not exist yet: the first night creates it")
    if answer.get("protected"):
        fix = f"{home}: Settings > Branches: let GitHub Actions push {branch}, or remove the rule"
        return Finding(
            "data branch", PROBLEM, f"{branch} is protected: the jobs' GITHUB_TOKEN may not push it", fix
        )
    return Finding(
        "data branch", OK, f"{branch} exists, unprotected: the jobs push it with their GITHUB_TOKEN"
    )


def check_pages(gh: GitHub, home: str, dashboard: DashboardSettings) -> Finding:
    publish = dashboard.publish
    if publish == "none":
        return Finding("pages", OK, '[dashboard] publish = "none": the dashboard is an artifact only')
    wanted = "workflow" if publish == "pages" else "legacy"
    source = "GitHub Actions" if publish == "pages" else f"Deploy from a branch, {dashboard.branch}"
    fix = f"{home}: Settings > Pages > Source: {source}"
    try:
        _, answer = _get(gh, f"/repos/{home}/pages", f"read the Pages of {home}")
    except GitHubError as error:
        if error.status != 404:
            raise
        return Finding("pages", PROBLEM, f"Pages is off on {home}", fix)
    branch = (answer.get("source") or {}).get("branch")
    if answer.get("build_type") != wanted or (publish == "branch" and branch != dashboard.branch):
        say = f"Pages builds from {branch if answer.get('build_type') == 'legacy' else 'GitHub Actions'}"
        return Finding("pages", PROBLEM, f'{say}, but [dashboard] publish = "{publish}"', fix)
    return Finding("pages", OK, f"serves {answer.get('html_url', home)} from {source}")


def check_runners(gh: GitHub, home: str, needs: WorkflowNeeds, shards: str | None) -> Finding:
    labels = sorted(needs.runner_labels)
    try:
        _, answer = _get(gh, f"/repos/{home}/actions/runners", f"list the runners of {home}")
    except GitHubError as error:
        if not _hidden(error):
            raise
        return Finding(
            "runners", UNSEEN, f"cannot see them, needs admin (the GPU jobs ask for {', '.join(labels)})"
        )
    ready = [
        runner["name"]
        for runner in answer.get("runners", [])
        if runner.get("status") == "online"
        and needs.runner_labels <= {label["name"] for label in runner.get("labels", [])}
    ]
    if not ready:
        fix = f"{home}: Settings > Actions > Runners: register one with {', '.join(labels)} and start it"
        return Finding("runners", PROBLEM, f"no runner online with {', '.join(labels)}", fix)
    say = f"{len(ready)} online with {', '.join(labels)}: {', '.join(ready)}"
    if shards and shards.isdigit() and int(shards) > len(ready):
        return Finding("runners", NOTE, f"{say}; TRIAGEBOT_SHARDS={shards} shards run {len(ready)} at a time")
    return Finding("runners", OK, say)


def examine(gh: GitHub, deployment: Deployment, *, fix: bool = False) -> list[Finding]:
    """Every check of a deployment, in the order of docs/deploy.md. A check GitHub refuses to
    answer (403: the token may not look) is said as unseen, and the others still run."""
    home_finding, home = check_repository(gh, deployment.home, "runs the workflows")
    findings = [home_finding]
    tracker = home
    if deployment.tracker != deployment.home:
        tracker_finding, tracker = check_repository(gh, deployment.tracker, "holds the issues")
        findings.append(tracker_finding)
    where, settings, needs = deployment.home, deployment.settings, deployment.needs
    checks: list[tuple[str, Callable[[], Finding | list[Finding]]]] = []
    if home is not None:
        checks.append(("schedules", lambda: check_schedules(gh, where, needs)))
    if tracker is not None:
        checks.append(("token", lambda: check_token(gh, deployment, tracker)))
    if home is not None:
        variables = listed(gh, where, "variables")  # read once: the runners' check needs the shards
        checks.append(("secrets", lambda: check_settings(needs, "secret", listed(gh, where, "secrets"))))
        checks.append(("variables", lambda: check_settings(needs, "variable", variables)))
    if tracker is not None:
        checks.append(("labels", lambda: check_labels(gh, deployment.tracker, settings.tracker.labels, fix)))
    if home is not None:
        shards = (variables or {}).get("TRIAGEBOT_SHARDS")
        checks.append(("data branch", lambda: check_branch(gh, where, settings.store.branch)))
        checks.append(("pages", lambda: check_pages(gh, where, settings.dashboard)))
        checks.append(("runners", lambda: check_runners(gh, where, needs, shards)))
    for name, check in checks:
        try:
            found = check()
        except GitHubError as error:
            if error.status != 403:
                raise
            found = Finding(name, UNSEEN, f"the token may not look: {error}")
        findings.extend(found if isinstance(found, list) else [found])
    return findings
