"""Publishing one night: the `publish` command's and the nightly pipeline's entry point.

connect (with a token and a repository) -> find each flag's issue (the store's memory, then
markers) -> link the night to those issues -> search the upstream repository's issues for its
failure groups (`upstream`, once per night and signature) -> its desired issues (`desired`) ->
plan and apply (`publish`) -> link the issues opened just now from their siblings -> remember
(`memory`) -> one line saying what was done. Without a token or a repository, or with `dry_run`, GitHub is
not written: the plan and bodies go to a folder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from triagebot.analysis.triage import with_searches
from triagebot.config import Config, TrackerSettings
from triagebot.errors import TrackerError
from triagebot.results import Night, TrackedIssue
from triagebot.tracker.actions import issue_url
from triagebot.tracker.desired import desired_issues
from triagebot.tracker.github import GitHub, connect
from triagebot.tracker.memory import IssueMemory, night_facts
from triagebot.tracker.plan import Verb
from triagebot.tracker.publish import Publication, publish, relink_bodies
from triagebot.tracker.remote import tracked_issue_numbers
from triagebot.tracker.upstream import search_night
from triagebot.tracker.upstream_memory import keep_searches, stored_searches


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


def publish_night(
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
    gh = connect(token) if token and repo else None
    memory = IssueMemory.load(store, repo) if repo else IssueMemory(repo)
    remembered = memory.numbers(list(night.flags))
    numbers = tracked_issue_numbers(gh, repo, night.flags, remembered) if gh else {}
    current = linked(night, repo, numbers, gh)
    if gh is not None and config.tracker.upstream:
        current = searched(current, gh, config.tracker, numbers, store, keep=not dry_run, say=say)
    desired = desired_issues(current, config.tracker)
    publication = publish(
        desired,
        key=night.key,
        repo=repo or "(no repository)",
        gh=gh,
        max_writes=cap,
        dry_run=dry_run,
        out_dir=out_dir,
        memory=memory,
        facts=night_facts(current, config.tracker, author=gh.login if gh else None),
    )
    failures = [missing.reason for missing in publication.failed]
    opened = opened_now(publication)
    if gh is not None and opened:
        current, relinked, not_relinked = relink(
            gh, repo, current, {**numbers, **opened}, desired, config.tracker
        )
        failures += not_relinked
        say(f"linked {relinked} issue(s) to the ones opened now")
    written = gh is not None and not dry_run
    if written:
        memory.save(store)
    return outcome(
        publication, current, failures, repo=repo, written=written, cap=cap, out_dir=out_dir, say=say
    )


def linked(night: Night, repo: str, numbers: dict[str, int], gh: GitHub | None) -> Night:
    """`night` with the addresses of its flags' issues, and the bot left out of its cc lines."""
    urls = {flag: issue_url(repo, number) for flag, number in numbers.items()}
    return night.linked(urls, author=gh.login if gh else None)


def searched(
    night: Night,
    gh: GitHub,
    settings: TrackerSettings,
    numbers: dict[str, int],
    store,
    *,
    keep: bool,
    say: Callable[[str], None],
) -> Night:
    """`night` with tonight's searches of the upstream repository's issues for its failure
    groups: made once per night and signature, kept in `store` when `keep` (not in a dry run)."""
    upstream = settings.upstream or ""
    own = list(numbers.values()) if upstream == settings.repo else []
    stored = stored_searches(store, upstream)
    made, pace = search_night(
        gh,
        upstream,
        night,
        stored,
        own=own,
        cap=settings.upstream_searches_per_night,
        keep=(lambda search: keep_searches(store, [search])) if keep else (lambda search: None),
        say=say,
    )
    if made:
        say(f"searched the issues of {upstream} for {len(made)} signature(s): {pace.requests} request(s)")
    return with_searches(night, {**stored, **{search.signature: search for search in made}})


def opened_now(publication: Publication) -> dict[str, int]:
    """flag -> the number of the issue this publication opened for it."""
    return {
        done.action.flag: done.number
        for done in publication.applied
        if done.action.verb == Verb.create and done.number
    }


def relink(
    gh: GitHub,
    repo: str,
    night: Night,
    numbers: dict[str, int],
    written: list[TrackedIssue],
    settings: TrackerSettings,
) -> tuple[Night, int, list[str]]:
    """Issues opened just now were not linked from their siblings' bodies: link them in this
    run, by number (a fresh listing may not show them yet), so the next run writes nothing.
    Returns the night as published, how many bodies were edited, and the one-line reason of
    each edit that failed."""
    current = linked(night, repo, numbers, gh)
    relinked, failures = relink_bodies(gh, repo, written, desired_issues(current, settings), numbers)
    return current, relinked, failures


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
