"""Where each finished record goes: the stream, the list of the sweep's records, the progress
display; and the ladder's unreached pairs, which go to the stream only."""

from __future__ import annotations

from dataclasses import dataclass

from triagebot.results import RunRecord, UnreachedPair
from triagebot.sweep.progress import Progress
from triagebot.sweep.stream import StreamWriter


@dataclass
class Keeper:
    writer: StreamWriter
    records: list[RunRecord]
    progress: Progress

    def __call__(self, record: RunRecord) -> RunRecord:
        self.writer.write(record)
        self.records.append(record)
        self.progress.update(record)
        return record

    def unreached(self, pairs: list[UnreachedPair]) -> None:
        for pair in pairs:
            self.writer.write(pair)
