"""The watchdog: when no nightly has been stored for `tracker.stale_after_days` days (a broken
runner, an image that does not build, an index without a new nightly), the bot says so where
people look, because a silent tracker reads as "nothing changed":

- the step summary of every scheduled job that looks (`triagebot command --poll`), while the
  silence lasts;
- one comment on a tracking issue per silence (its marker names the last stored nightly, so a
  rerun or the next poll never posts it twice): the corpus-health issue when the store
  remembers one, else the first configured flag's;
- the dashboard, which shows the same rule from its newest nightly's time (`silence_of` is the
  rule; `Silence.line` the words).

`silence_of` is pure; `watch` reads the store's memory and writes to GitHub.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from triagebot.report.markers import silence_marker
from triagebot.results import HEALTH_ISSUE, Snapshot
from triagebot.tracker.actions import run_url, step_summary
from triagebot.tracker.github import GitHub
from triagebot.tracker.ledger import aware
from triagebot.tracker.memory import IssueMemory
from triagebot.tracker.remote import bot_comment_bodies, carries, post_comment
from triagebot.tracker.render import render


@dataclass(frozen=True)
class Silence:
    """No nightly stored since `key` (stored at `since`), for `days` whole days, over `limit`."""

    key: str
    since: datetime
    days: int
    limit: int

    def line(self) -> str:
        return (
            f"no nightly stored for {self.days} days (over {self.limit}): the last is {self.key}, "
            f"stored {self.since:%Y-%m-%d}; the nightly workflow may be failing"
        )


def silence_of(latest: Snapshot | None, now: datetime, limit: int) -> Silence | None:
    """The silence since `latest` (the newest stored nightly) at `now`, when it has lasted
    `limit` days or more; None when it has not, when `limit` is 0 (off), or when nothing was
    ever stored (a new installation has nothing to be silent about)."""
    if latest is None or limit <= 0:
        return None
    since = aware(latest.created) or now
    quiet = aware(now) - since
    if quiet < timedelta(days=limit):
        return None
    return Silence(key=latest.key, since=since, days=quiet.days, limit=limit)


def issue_to_tell(memory: IssueMemory, flags: Sequence[str]) -> int | None:
    """The tracking issue the watchdog comments on: the corpus-health issue when the store
    remembers one, else the first of `flags` whose issue it remembers."""
    numbers = memory.numbers([HEALTH_ISSUE, *flags])
    for name in (HEALTH_ISSUE, *flags):
        if name in numbers:
            return numbers[name]
    return None


def watch(
    gh: GitHub,
    repo: str,
    store,
    latest: Snapshot | None,
    *,
    flags: Sequence[str],
    limit: int,
    now: datetime | None = None,
    say: Callable[[str], None] = print,
) -> Silence | None:
    """Say a silence (see the module docstring) in the step summary and the log, and once on a
    tracking issue of `repo`; returns it, or None when there is none."""
    silence = silence_of(latest, now or datetime.now(UTC), limit)
    if silence is None:
        return None
    say(f"watchdog: {silence.line()}")
    step_summary(f"**triagebot watchdog:** {silence.line()}.")
    number = issue_to_tell(IssueMemory.load(store, repo), flags)
    if number is None:
        say(f"watchdog: no tracking issue of {repo} is remembered to say it on")
        return silence
    marker = silence_marker(silence.key)
    if any(carries(body, marker) for body in bot_comment_bodies(gh, repo, number)):
        return silence  # said already
    body = render(
        "tracker-silence.md.j2",
        marker=marker,
        days=silence.days,
        key=silence.key,
        when=f"{silence.since:%Y-%m-%d}",
        run_url=run_url(),
    )
    post_comment(gh, repo, number, marker, body, what=f"say the silence on {repo}#{number}")
    return silence
