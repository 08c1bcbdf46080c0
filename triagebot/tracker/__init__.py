"""GitHub: tracking issues kept true from the store, and `/rerun-sweep` commands.

One small module per behaviour, as rust-lang/triagebot's handlers, each configured by
`[tracker]` in triagebot.toml:

- `desired`: the desired state of each flag's issue (title, body, labels, open, notices owed)
- `closing`: open/closed from the confirmed-crash history (`close_after`)
- `cc`: cc lists per flag plus routing rules on crash signatures (`cc`, `cc_routes`), and the
  comment that reaches people a body edit added
- `plan` / `remote` / `publish`: read GitHub, plan, apply only the difference, dry run, the
  write cap (`max_writes`) that turns a flood into one alert; a failed write does not stop
  the others
- `memory`: what the store remembers of each flag's issue (its number first, then its marker)
- `people`: an issue a person closed stays closed until a new crash signature appears
- `commands` / `rerun`: the `/rerun-sweep` grammar, permissions, reactions, answers, polling
  (`commands_on_edited`)
- `github`: the PyGithub connection with retries, rate limits and injectable sleep
- `answer`, `polling`, `dispatch`: the rerun's answer, polling for commands, the `command`
  subcommand's wiring
- markers of every kind live in `report.markers`

Public entry points: `publish_night` (the `publish` command and the nightly pipeline) and
the functions of `rerun` (the `command` command).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from triagebot.config import Config
from triagebot.errors import TrackerError
from triagebot.results import Night


class PublishIncomplete(TrackerError):
    """Some planned writes failed (each already said); the rest were applied. Running the
    publish again applies what is missing, without duplicates."""


def issue_url(repo: str, number: int) -> str:
    """The web address of an issue; `GITHUB_SERVER_URL` (set by Actions) for Enterprise Server."""
    server = os.environ.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
    return f"{server}/{repo}/issues/{number}"


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
    say=print,
) -> Published:
    """Publish `night` to the tracking issues of `repo` (default `tracker.repo`); prints the
    plan through `say`. Without a token, or with `dry_run`, nothing is written to GitHub: the
    plan and bodies go to `out_dir`. `store`: where the tracker remembers each flag's issue
    (none: markers alone). When some writes failed, the others are still applied, each failure
    is said, and `PublishIncomplete` says how many."""
    from triagebot.tracker.desired import desired_issues
    from triagebot.tracker.github import connect
    from triagebot.tracker.memory import IssueMemory, night_facts
    from triagebot.tracker.plan import Verb
    from triagebot.tracker.publish import publish, relink_bodies
    from triagebot.tracker.remote import tracked_issue_numbers

    repo = repo or config.tracker.repo or ""
    cap = max_writes if max_writes is not None else config.tracker.max_writes
    token = token or os.environ.get("GITHUB_TOKEN") or None
    gh = connect(token) if token and repo else None
    memory = IssueMemory.load(store, repo) if repo else IssueMemory(repo)
    remembered = memory.numbers(list(night.flags))
    numbers = tracked_issue_numbers(gh, repo, night.flags, remembered) if gh else {}

    def linked() -> Night:
        urls = {flag: issue_url(repo, number) for flag, number in numbers.items()}
        return night.linked(urls, author=gh.login if gh else None)

    current = linked()
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
    failures = [missing.reason for missing in publication.not_applied]
    created = {
        done.action.flag: done.number
        for done in publication.applied
        if done.action.verb == Verb.create and done.number
    }
    if created and gh is not None:
        # Issues opened just now were not linked from their siblings' bodies: link them in this
        # run, by number (a fresh listing may not show them yet), so the next run writes nothing.
        numbers.update(created)
        current = linked()
        relinked, relink_failures = relink_bodies(
            gh, repo, desired, desired_issues(current, config.tracker), numbers
        )
        failures += relink_failures
        say(f"linked {relinked} issue(s) to the ones opened now")
    if gh is not None and not dry_run:
        memory.save(store)
    if publication.held:
        say(f"held: {publication.held_writes} changes planned, over the limit of {cap}; alerting instead")
    for line in publication.plan.describe():
        say(f"plan: {line}")
    writes = len(publication.plan.writes)
    if gh is None or dry_run:
        why = "dry run" if gh is not None else "no token or repository: GitHub not read"
        return Published(f"{why}; {writes} change(s) planned, bodies in {out_dir}", current)
    for reason in failures:
        say(f"not applied: {reason}")
    held = " (held: alert only)" if publication.held else ""
    line = f"applied {len(publication.applied)} of {writes} change(s) to {repo}{held}"
    if failures:
        raise PublishIncomplete(f"{line}; {len(failures)} failed, first: {failures[0]}")
    return Published(line, current)
