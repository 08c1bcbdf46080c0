"""`triagebot doctor`: the deployment checked against GitHub with the bot's token, one line per
check (`triagebot.tracker.doctor`), exit 1 when any check finds a problem."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from triagebot.cli.options import ConfigOption, RepoOption, TokenOption
from triagebot.config import config_problems, parse_config
from triagebot.config.settings import OWNER_NAME
from triagebot.errors import ConfigError, UsageError
from triagebot.tracker.actions import github_token
from triagebot.tracker.deployment import workflow_needs

Home = Annotated[
    str | None,
    typer.Option(
        "--home",
        metavar="OWNER/NAME",
        help="The repository whose workflows run (default: $GITHUB_REPOSITORY, else --repo).",
    ),
]
Maintainer = Annotated[
    str | None,
    typer.Option("--maintainer", metavar="LOGIN", help="Who will comment /rerun-sweep (default: none)."),
]
Fix = Annotated[bool, typer.Option("--fix", help="Create the labels the configuration uses where missing.")]
Checkout = Annotated[
    Path,
    typer.Option(
        "--workflows", metavar="DIR", help="The checkout whose .github/workflows and action.yml are read."
    ),
]


def doctor(
    repo: RepoOption = None,
    home: Home = None,
    maintainer: Maintainer = None,
    fix: Fix = False,
    workflows: Checkout = Path("."),
    token: TokenOption = None,
    config: ConfigOption = None,
) -> None:
    """Check the deployment against GitHub: one line per check, ok or the exact fix.

    Reads triagebot.toml and the workflows of the checkout, then asks GitHub, with the token,
    about the repository, its scheduled workflows, the token's account, scopes and role, the
    secrets and variables (names only), the labels, the data branch, Pages and the runners.
    Writes nothing unless --fix. Exit 1 when any check finds a problem."""
    from triagebot.tracker.doctor import OK, PROBLEM, Deployment, Finding, examine  # start-up cost
    from triagebot.tracker.github import connect

    path = config or Path("triagebot.toml")
    try:
        problems = config_problems(path)
    except ConfigError as error:
        problems = [str(error)]
    findings = [Finding("config", PROBLEM, line) for line in problems] or [Finding("config", OK, f"{path}")]
    try:  # a placeholder repository alone still leaves the rest of the file to check against
        settings = parse_config(path.read_text(encoding="utf-8"), str(path))
    except (ConfigError, OSError, UnicodeDecodeError):  # said above: the defaults stand in
        settings = parse_config("", "defaults")
    tracker = repo or settings.tracker.repo
    if tracker is None:
        raise UsageError(f"doctor: no tracker repository: give --repo OWNER/NAME ({'; '.join(problems)})")
    if not OWNER_NAME.match(tracker):
        raise UsageError(f"doctor: --repo {tracker!r} is not OWNER/NAME")
    home = home or os.environ.get("GITHUB_REPOSITORY") or tracker
    secret = github_token(token)
    if not secret:
        raise UsageError("doctor needs the bot's token: --token TOKEN or $GITHUB_TOKEN")
    deployment = Deployment(home, tracker, settings, workflow_needs(workflows), maintainer)
    findings += examine(connect(secret), deployment, fix=fix)
    for finding in findings:
        print(finding.line())
    if any(finding.status == PROBLEM for finding in findings):
        raise typer.Exit(1)
