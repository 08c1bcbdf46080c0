"""The command ledger: what polling has done with each `/rerun-sweep` comment, kept in the store.

One `CommandRecord` per comment under `commands/OWNER/NAME/COMMENT_ID`, so that a poll reads
the ledger once instead of every reaction of every command ever posted, and two jobs writing
records never touch the same file. A comment the ledger does not know is looked at once (its
reactions, for a command the event workflow already handled) and then recorded.

Also here: the rule that one person gets one refusal (or help) per issue per day, however many
commands they post; the others are recorded as `quiet`, with neither a comment nor a reaction.
The rule reads the times GitHub gave the command and the answers, so it decides the same way on
every poll, with or without a ledger.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from triagebot.results import CommandRecord

ANSWER_EVERY = timedelta(days=1)  # one refusal or help answer per person per issue per day
STALE_AFTER = timedelta(hours=6)  # an accepted command with no answer by then is looked after
MAX_ATTEMPTS = 2  # sweeps started for one command before it is answered with a failure


def folder(repo: str) -> str:
    return f"commands/{repo}"


@dataclass
class Ledger:
    repo: str
    records: dict[int, CommandRecord] = field(default_factory=dict)  # comment id -> record
    changed: set[int] = field(default_factory=set)

    @classmethod
    def load(cls, store, repo: str) -> Ledger:
        found = store.records(folder(repo), CommandRecord) if store is not None else {}
        return cls(repo, {record.comment_id: record for record in found.values()})

    def get(self, comment_id: int) -> CommandRecord | None:
        return self.records.get(comment_id)

    def note(self, record: CommandRecord) -> None:
        if self.records.get(record.comment_id) != record:
            self.records[record.comment_id] = record
            self.changed.add(record.comment_id)

    def save(self, store) -> None:
        if store is not None and self.changed:
            changed = {str(cid): self.records[cid] for cid in sorted(self.changed)}
            store.put_records(folder(self.repo), changed)
            self.changed.clear()


def answered_recently(
    records: Iterable[CommandRecord],
    issue: int,
    author: str,
    posted: datetime,
    every: timedelta = ANSWER_EVERY,
) -> bool:
    """Whether `author` got a refusal or help answer on `issue` at most `every` before a command
    they `posted` (or any time after it): then that command goes without a word. Measured from
    the command's own time, so the verdict is the same whenever it is made."""
    return any(
        record.issue == issue
        and record.author.lower() == author.lower()
        and record.state in ("refused", "answered")
        and record.attempts == 0  # a rerun's result is not a refusal or help
        and aware(record.at) >= aware(posted) - every
        for record in records
    )


def aware(moment: datetime | None) -> datetime | None:
    """`moment` with UTC attached where it came without a time zone (as PyGithub gives times)."""
    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment


def edited(comment: Any) -> bool:
    """Whether a PyGithub comment was edited after it was posted (its text may not be the one
    the bot read then)."""
    created, updated = aware(comment.created_at), aware(comment.updated_at)
    return bool(created and updated and updated > created)


def parse_time(value: Any) -> datetime | None:
    """A GitHub time stamp (`2026-04-10T08:00:00Z`), or None when absent or unreadable."""
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None
    except ValueError:
        return None


def now() -> datetime:
    return datetime.now(UTC)
