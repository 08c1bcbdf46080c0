"""The base of every record: unknown fields are errors."""

from __future__ import annotations

from pydantic import AliasChoices, BaseModel, ConfigDict


class Record(BaseModel):
    """Base for all records: unknown fields are errors, so a typo never passes silently."""

    model_config = ConfigDict(extra="forbid")


def formerly(name: str, old: str) -> AliasChoices:
    """The validation alias of a renamed field: its name, or `old` in a record stored before the
    rename (an earlier night's data file, a night.json), so that stored data keeps loading
    without a migration; a record is always written under the field's name."""
    return AliasChoices(name, old)
