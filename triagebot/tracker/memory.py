"""What the tracker remembers in the store about each flag's tracking issue, and the facts of a
night it compares that memory with.

The store keeps one `IssueRecord` per (repository, flag) under `issues/OWNER/NAME/FLAG`: the
issue's number (found by number first, so an edited or removed marker never leads to a
duplicate), the crash signatures and the people its body last showed, and, while a person
keeps it closed, who closed it and what it showed then. Beside them, under
`labels/OWNER/NAME/refused`, the labels GitHub refused to set there (`RefusedLabels`), which are
not asked for again. Without a store (a dry run from a file) nothing is remembered and the
tracker falls back on markers and the previous snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from triagebot.config import TrackerSettings
from triagebot.results import COMPILER_WRONG_ISSUE, IssueRecord, Night, RefusedLabels
from triagebot.tracker import cc as cc_routing


@dataclass
class FlagFacts:
    """One flag on one night, as far as the issue's people are concerned."""

    flag: str
    signatures: dict[str, int]  # confirmed wrong-result, then crash signature -> models, largest first
    cc: list[str]  # people the body mentions now
    routes: dict[str, list[str]]  # person -> the signatures that routed them here
    previous_signatures: list[str] | None = None  # None: no previous snapshot with this flag
    previous_cc: list[str] | None = None
    dashboard_url: str | None = None  # the site the night's crash groups are on
    # signature -> the signature it continues in other words (torch reworded its message)
    continues: dict[str, str] = field(default_factory=dict)


def night_facts(night: Night, settings: TrackerSettings, author: str | None = None) -> dict[str, FlagFacts]:
    """Each flag's crash signatures and cc list tonight, and on the previous nightly when it had
    the flag, read from the night as analysed. `author`: the bot's login, never cc'd."""
    facts = {}
    for flag, found in night.flags.items():
        signatures = {group.signature: len(group.models) for group in found.tracked}
        before = found.previous_signatures
        facts[flag] = FlagFacts(
            flag=flag,
            signatures=signatures,
            cc=[person for person in found.cc if not author or person.lower() != author.lower()],
            routes=cc_routing.routed(flag, signatures, settings),
            previous_signatures=before,
            previous_cc=None if before is None else cc_routing.cc_for(flag, before, settings, author=author),
            dashboard_url=night.dashboard_url,
            continues={group.signature: group.continues for group in found.tracked if group.continues},
        )
    wrong = night.compiler_wrong
    signatures = {group.signature: len(group.models) for group in wrong.groups}
    facts[COMPILER_WRONG_ISSUE] = FlagFacts(
        flag=COMPILER_WRONG_ISSUE,
        signatures=signatures,
        cc=[person for person in wrong.cc if not author or person.lower() != author.lower()],
        routes=cc_routing.routed(COMPILER_WRONG_ISSUE, signatures, settings),
        dashboard_url=night.dashboard_url,
    )
    return facts


def folder(repo: str) -> str:
    return f"issues/{repo}"


def labels_folder(repo: str) -> str:
    return f"labels/{repo}"


REFUSED = "refused"  # the record of the labels GitHub refused, in `labels_folder`


@dataclass
class IssueMemory:
    """The records of one repository's tracking issues, read once and written back once."""

    repo: str
    records: dict[str, IssueRecord] = field(default_factory=dict)  # flag -> record
    changed: set[str] = field(default_factory=set)
    refused: RefusedLabels | None = None  # labels GitHub refused to set in `repo`
    refused_changed: bool = False

    @classmethod
    def load(cls, store, repo: str) -> IssueMemory:
        if store is None:
            return cls(repo)
        refused = store.records(labels_folder(repo), RefusedLabels).get(REFUSED)
        return cls(repo, store.records(folder(repo), IssueRecord), refused=refused)

    @property
    def refused_labels(self) -> set[str]:
        return set(self.refused.labels) if self.refused is not None else set()

    def refuse_labels(self, labels: Sequence[str], reason: str, key: str) -> None:
        """Remember that GitHub refused `labels` (with `reason`) while publishing `key`."""
        new = [label for label in labels if label not in self.refused_labels]
        if not new:
            return
        if self.refused is None:
            self.refused = RefusedLabels(repo=self.repo, labels=new, reason=reason, key=key)
        else:
            self.refused = self.refused.model_copy(update={"labels": [*self.refused.labels, *new]})
        self.refused_changed = True

    def numbers(self, flags: Sequence[str]) -> dict[str, int]:
        return {flag: self.records[flag].number for flag in flags if flag in self.records}

    def get(self, flag: str) -> IssueRecord | None:
        return self.records.get(flag)

    def remember(self, flag: str, number: int, **fields) -> None:
        """Set `flag`'s issue to `number` with `fields` changed (a new number starts afresh)."""
        old = self.records.get(flag)
        base = old if old is not None and old.number == number else None
        data = base.model_dump() if base is not None else {"repo": self.repo, "flag": flag, "number": number}
        data.update(fields)
        record = IssueRecord.model_validate(data)
        if record != old:
            self.records[flag] = record
            self.changed.add(flag)

    def save(self, store) -> None:
        if store is None:
            return
        if self.changed:
            store.put_records(folder(self.repo), {flag: self.records[flag] for flag in sorted(self.changed)})
            self.changed.clear()
        if self.refused is not None and self.refused_changed:
            store.put_records(labels_folder(self.repo), {REFUSED: self.refused})
            self.refused_changed = False
