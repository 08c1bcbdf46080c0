"""Publishing one night: the `publish` command's and the nightly pipeline's entry point.

`publish_tracking_issues`: connect (with a token and a repository) -> find each flag's issue
(the store's memory, then markers) -> link the night to those issues -> search the upstream
repository's issues for its failure groups (`upstream`, once per night and signature) -> its
desired issues (`desired`) -> plan and apply (`publish.plan_and_apply`) -> link the issues
opened just now from their siblings -> remember (`memory`) -> one line saying what was done.
Without a token or a repository, or with `dry_run`, GitHub is not written: the plan and bodies
go to a folder (`destination`: the same path, another writer).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from triagebot.config import Config
from triagebot.errors import TrackerError
from triagebot.results import Night
from triagebot.tracker.actions import issue_url
from triagebot.tracker.desired import desired_issues, retired_issues
from triagebot.tracker.destination import destination
from triagebot.tracker.github import connect
from triagebot.tracker.memory import IssueMemory, night_facts
from triagebot.tracker.plan import Verb
from triagebot.tracker.publish import Publication, plan_and_apply


class PublishIncomplete(TrackerError):
    """Some planned writes failed (each already said); the rest were applied. Running the
    publish again applies what is missing, without duplicates."""


@dataclass
class Published:
    """What publishing did, and the night as published: with the addresses of its tracking
    issues and without the bot's own login in a cc line. Render the report folder from it, so
    that its bodies are the published ones byte for byte."""

    line: str  # one line: dry run, applied N changes, held, ...
    night: Night


def publish_tracking_issues(
    night: Night,
    config: Config,
    token: str | None,
    dry_run: bool,
    out_dir: Path,
    *,
    repo: str | None = None,
    max_writes: int | None = None,
    store=None,
    say: Callable[[str], None] = print,
) -> Published:
    """Publish `night` to the tracking issues of `repo` (default `tracker.repo`); prints the
    plan through `say`. Without a token, or with `dry_run`, nothing is written to GitHub: the
    plan and bodies go to `out_dir`. `store`: where the tracker remembers each flag's issue
    (none: markers alone). When some writes failed, the others are still applied, each failure
    is said, and `PublishIncomplete` says how many."""
    repo = repo or config.tracker.repo or ""
    cap = max_writes if max_writes is not None else config.tracker.max_writes
    github, writer = destination(connect(token) if token and repo else None, dry_run=dry_run, out=out_dir)
    memory = IssueMemory.load(store, repo) if repo else IssueMemory(repo)
    numbers = github.numbers(repo, night.flags, memory.numbers(list(night.flags)))
    current = linked(night, repo, numbers, github.login)
    current = github.searched(current, config.tracker, numbers, store, keep=writer.writes_github, say=say)
    desired = desired_issues(current, config.tracker) + retired_issues(current, list(memory.records))
    publication = plan_and_apply(
        desired,
        key=night.key,
        repo=repo or "(no repository)",
        github=github,
        writer=writer,
        max_writes=cap,
        memory=memory,
        facts=night_facts(current, config.tracker, author=github.login),
    )
    failures = [missing.reason for missing in publication.failed]
    opened = opened_now(publication)
    if opened:
        # Issues opened just now were not linked from their siblings' bodies: link them in this
        # run, by number (a fresh listing may not show them yet), so the next run writes nothing.
        numbers = {**numbers, **opened}
        current = linked(current, repo, numbers, github.login)
        relinked, not_relinked = writer.edit_bodies(
            repo, desired, desired_issues(current, config.tracker), numbers
        )
        failures += not_relinked
        say(f"linked {relinked} issue(s) to the ones opened now")
    writer.keep(memory, store)
    return outcome(
        publication,
        current,
        failures,
        repo=repo,
        written=writer.writes_github,
        cap=cap,
        out_dir=out_dir,
        say=say,
    )


def linked(night: Night, repo: str, numbers: dict[str, int], author: str | None) -> Night:
    """`night` with the addresses of its flags' issues, and the bot (`author`) left out of its
    cc lines."""
    urls = {flag: issue_url(repo, number) for flag, number in numbers.items()}
    return night.linked(urls, author=author)


def opened_now(publication: Publication) -> dict[str, int]:
    """flag -> the number of the issue this publication opened for it."""
    return {
        done.action.flag: done.number
        for done in publication.applied
        if done.action.verb == Verb.create and done.number
    }


def outcome(
    publication: Publication,
    night: Night,
    failures: list[str],
    *,
    repo: str,
    written: bool,
    cap: int,
    out_dir: Path,
    say: Callable[[str], None],
) -> Published:
    """Say the plan and, when GitHub was `written`, what was not applied; the one line of what
    was done (naming what GitHub refused: that is said, never retried into a failure), or
    `PublishIncomplete` when some write failed."""
    if publication.held:
        say(f"held: {publication.held_writes} changes planned, over the limit of {cap}; alerting instead")
    for line in publication.plan.describe():
        say(f"plan: {line}")
    writes = len(publication.plan.writes)
    if not written:
        why = "dry run" if publication.github_read else "no token or repository: GitHub not read"
        return Published(f"{why}; {writes} change(s) planned, bodies in {out_dir}", night)
    for reason in failures:
        say(f"not applied: {reason}")
    refused = [missing.reason for missing in publication.refused]
    for reason in refused:
        say(f"refused by GitHub, not retried: {reason}")
    held = " (held: alert only)" if publication.held else ""
    line = f"applied {len(publication.applied)} of {writes} change(s) to {repo}{held}"
    said = f"; {len(refused)} refused by GitHub, first: {refused[0]}" if refused else ""
    if failures:  # the failure first: it is what a person must fix
        raise PublishIncomplete(f"{line}; {len(failures)} failed, first: {failures[0]}{said}")
    return Published(line + said, night)
