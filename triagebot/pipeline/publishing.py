"""Publishing a stored night, so that a night counts as published only once its writes are done.

- `writes_github`: the one rule for whether publishing writes to GitHub (a token, a repository
  and no `--dry-run`); otherwise the plan and bodies go to a folder.
- `owe` / `owed`: a nightly stored to be published is owed to GitHub until its writes are done;
  the nightlies still owed.
- `publish_under_lock`: the real publisher of `run` and `publish`: the tracker's
  `publish_tracking_issues`, holding the store's lock on the repository's tracking state
  (`store.tracking_lock`), so that two publishers take turns and the second finds the first
  one's issues.
- `publish_recorded`: one publisher call with the store's record of the night around it:
  `pending` until every write is done, then `published`; a failure leaves it pending, with why.
- `publish_stored`: `triagebot publish`: the two above together.
- `publish_owed`: the nights an earlier run stored but could not publish (a revoked token,
  GitHub down), oldest first, each from the store; `run` publishes them before its own night,
  or alone when its build is stored already. One that failed again stops the rest, so that the
  issues never step back to an older night.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from triagebot.config import Config
from triagebot.errors import TrackerError
from triagebot.pipeline.analysing import night_of
from triagebot.results import Night
from triagebot.store import Store, key_order, mark_night, owed_nights, tracking_lock
from triagebot.tracker.publish_night import publish_tracking_issues

# night, config, token, dry run, folder for the plan and bodies -> (one line, the night as published)
Publisher = Callable[[Night, Config, str | None, bool, Path], "tuple[str, Night]"]


def writes_github(config: Config, token: str | None, dry_run: bool) -> bool:
    """Whether publishing writes to GitHub: with a token and a repository, unless a dry run."""
    return bool(token and config.tracker.repo and not dry_run)


def owe(store: Store, config: Config, writes: bool, key: str) -> None:
    """Record nightly `key`, about to be stored, as owed to GitHub when it is to be published
    (`writes`: `writes_github`): a run that dies before its writes are done leaves it for the
    next run to publish (a night owed counts only once it is stored: `store.owed_nights`)."""
    if writes and config.tracker.repo:
        mark_night(store, config.tracker.repo, key, "pending")


def owed(store: Store, config: Config) -> list[str]:
    """The nightlies stored but not yet published to `tracker.repo`, oldest first."""
    return owed_nights(store, config.tracker.repo)[0] if config.tracker.repo else []


def owed_outputs(unpublished: list[str]) -> dict[str, str]:
    """The step outputs that say a stored night still waits to be published (`owed(...)`, oldest
    first): `publish=true` and `owed`, the newest of them, which the workflow publishes; none
    when nothing is owed."""
    return {"publish": "true", "owed": unpublished[-1]} if unpublished else {}


def publish_under_lock(
    night: Night,
    config: Config,
    token: str | None,
    dry_run: bool,
    out: Path,
    *,
    store: Store | None = None,
    say: Callable[[str], None] = print,
) -> tuple[str, Night]:
    """Publish `night` (`tracker.publish_night.publish_tracking_issues`): one line saying what was
    done, and the night as published (its issue links filled in). `store` remembers each flag's
    issue, and its lock on the repository is held while GitHub is read and written."""
    repo = config.tracker.repo
    if store is None or not writes_github(config, token, dry_run) or repo is None:
        published = publish_tracking_issues(night, config, token, dry_run, out, store=store, say=say)
        return published.line, published.night
    with tracking_lock(store, repo):
        published = publish_tracking_issues(night, config, token, dry_run, out, store=store, say=say)
    return published.line, published.night


def publish_recorded(
    night: Night,
    config: Config,
    token: str | None,
    dry_run: bool,
    out: Path,
    *,
    publisher: Publisher,
    store: Store,
) -> tuple[str, Night]:
    """`publisher`'s publication of `night`, recorded in `store` when it writes to GitHub:
    pending until it returns, published then; a `TrackerError` leaves it pending and is raised."""
    repo = config.tracker.repo
    if not writes_github(config, token, dry_run) or repo is None:
        return publisher(night, config, token, dry_run, out)
    mark_night(store, repo, night.key, "pending")
    try:
        line, published = publisher(night, config, token, dry_run, out)
    except TrackerError as error:
        mark_night(store, repo, night.key, "pending", str(error))
        raise
    mark_night(store, repo, night.key, "published", line)
    return line, published


def publish_stored(
    night: Night, config: Config, token: str | None, dry_run: bool, out: Path, *, store: Store
) -> str:
    """`triagebot publish`: `night` published by the real publisher and recorded; its line."""
    publisher = functools.partial(publish_under_lock, store=store)
    return publish_recorded(night, config, token, dry_run, out, publisher=publisher, store=store)[0]


def publish_owed(
    store: Store,
    config: Config,
    token: str | None,
    dry_run: bool,
    out: Path,
    *,
    publisher: Publisher,
    before: str | None = None,
    say: Callable[[str], None] = print,
) -> list[str]:
    """Publish the nights stored but not published to the configured repository, oldest first
    (only those ordered before `before`, when given), each into `out`/KEY; one line per night
    (none in a dry run). A night a newer published one superseded is said and set aside."""
    repo = config.tracker.repo
    if not writes_github(config, token, dry_run) or repo is None:
        return []
    pending, superseded = owed_nights(store, repo)
    for key in superseded:
        say(f"nightly {key} was never published to {repo}, and a newer one was: its notices are not posted")
        mark_night(store, repo, key, "superseded")
    lines = []
    for key in pending:
        if key == before or (before is not None and key_order(key) > key_order(before)):
            continue
        night = night_of(store.get(key), store, config)
        line, _ = publish_recorded(night, config, token, False, out / key, publisher=publisher, store=store)
        lines.append(f"{key} (stored earlier, published now): {line}")
        say(f"published {lines[-1]}")
    return lines
