"""What a GitHub Actions step is handed, and what it hands back: the one reader of its environment.

- `github_token`: the token a command was given, else `$GITHUB_TOKEN`;
- `write_outputs`: step outputs, `name=value` lines appended to `$GITHUB_OUTPUT` (or a file);
- `step_summary`: Markdown appended to the job's summary (`$GITHUB_STEP_SUMMARY`);
- `issue_url`, `run_url`: addresses on the GitHub server (`$GITHUB_SERVER_URL`, set on
  Enterprise Server too) of an issue and of this workflow run.

Outside Actions every one of them is simply absent: no token (a dry run), no outputs file, no
run address. Standard library only, so that the command line reads it without PyGithub.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

DEFAULT_SERVER = "https://github.com"


def github_token(given: str | None = None) -> str | None:
    """The token to write with: `given` (`--token`), else `$GITHUB_TOKEN`; None when neither is set."""
    return given or os.environ.get("GITHUB_TOKEN") or None


def write_outputs(values: Mapping[str, str], path: Path | None = None) -> None:
    """Step outputs: `name=value` lines appended to `path`, else to `$GITHUB_OUTPUT` when run in
    GitHub Actions (elsewhere, without `path`, nothing is written)."""
    target = path or os.environ.get("GITHUB_OUTPUT")
    if not target:
        return
    with open(target, "a", encoding="utf-8") as handle:
        handle.writelines(f"{name}={value}\n" for name, value in values.items())


def step_summary(markdown: str) -> None:
    """Append `markdown` to the job's summary page, when run in GitHub Actions."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(markdown + "\n")


def server_url() -> str:
    """The web address of the GitHub server (github.com, or an Enterprise Server's)."""
    return os.environ.get("GITHUB_SERVER_URL", DEFAULT_SERVER).rstrip("/")


def issue_url(repo: str, number: int) -> str:
    """The web address of issue `number` of repository OWNER/NAME."""
    return f"{server_url()}/{repo}/issues/{number}"


def run_url() -> str | None:
    """This workflow run's page, when running in GitHub Actions."""
    names = ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")
    server, repo, run = (os.environ.get(name) for name in names)
    return f"{server.rstrip('/')}/{repo}/actions/runs/{run}" if server and repo and run else None


def notice(line: str) -> str:
    """`line` as a GitHub Actions notice (an annotation on the run), plain outside Actions."""
    return f"::notice::{line}" if os.environ.get("GITHUB_ACTIONS") == "true" else line
