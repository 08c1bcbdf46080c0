"""The base of every record: unknown fields are errors."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Record(BaseModel):
    """Base for all records: unknown fields are errors, so a typo never passes silently."""

    model_config = ConfigDict(extra="forbid")
