"""A sweep's JSON Lines stream, and merging streams (one per shard) into one snapshot.

Line 1 is a `SweepHeader`; every other line is a `RunRecord`, appended and flushed as each run
finishes, or an `UnreachedPair` the ladder wrote when it ended (a pair a bound kept from
climbing). A torn last line (the sweep was killed mid-write) is ignored on reading and cut off
when the stream is resumed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

from triagebot.errors import StreamError
from triagebot.results import (
    BASELINE,
    BASELINE_AGAIN,
    Environment,
    KeyScheme,
    ModelResult,
    ModelSpec,
    Record,
    RunRecord,
    Snapshot,
    SweepHeader,
    UnreachedPair,
    When,
    snapshot_key,
)

_LINE = TypeAdapter(Annotated[RunRecord | UnreachedPair, Field(discriminator="kind")])


def run_key(record: RunRecord) -> tuple[str, str, int]:
    return record.model, record.config, record.attempt


def read_stream(path: str | Path) -> tuple[SweepHeader, list[RunRecord]]:
    """The header and the complete records of a stream; a torn last line is skipped."""
    stream = _read(Path(path))
    return stream.header, stream.records


@dataclass
class _Stream:
    header: SweepHeader
    records: list[RunRecord] = field(default_factory=list)
    unreached: list[UnreachedPair] = field(default_factory=list)
    complete: int = 0  # the byte length of the complete lines (where a resume appends)


def _read(path: Path) -> _Stream:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise StreamError(f"{path}: cannot read: {error.strerror}") from None
    lines = data.split(b"\n")
    body = lines[:-1]  # a last line without its newline is torn: the run is redone
    if not body:
        raise StreamError(f"{path}: empty stream (no header)")
    try:
        stream = _Stream(SweepHeader.model_validate_json(body[0]), complete=len(data) - len(lines[-1]))
    except ValidationError:
        raise StreamError(f"{path}: line 1 is not a sweep header") from None
    for number, line in enumerate(body[1:], start=2):
        if not line.strip():
            continue
        try:
            item = _LINE.validate_json(line)
        except ValidationError:
            raise StreamError(f"{path}: line {number} is not a run record") from None
        (stream.records if isinstance(item, RunRecord) else stream.unreached).append(item)
    return stream


class StreamWriter:
    """Appends records to a stream, one flushed line each."""

    def __init__(self, file: IO[str]) -> None:
        self.file = file

    @classmethod
    def create(cls, path: str | Path, header: SweepHeader) -> StreamWriter:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        writer = cls(open(path, "w", encoding="utf-8"))  # noqa: SIM115
        writer._line(header.model_dump_json())
        return writer

    @classmethod
    def resume(cls, path: str | Path, header: SweepHeader) -> tuple[StreamWriter, list[RunRecord]]:
        """Reopen a stream to finish it; refuses a stream of another build, flag set or shard."""
        path = Path(path)
        old = _read(path)
        _same_sweep(old.header, header, path, "cannot resume")
        with open(path, "r+b") as raw:
            raw.truncate(old.complete)
        return cls(open(path, "a", encoding="utf-8")), old.records

    def write(self, record: Record) -> None:
        self._line(record.model_dump_json(exclude_none=True))

    def _line(self, text: str) -> None:
        self.file.write(text + "\n")
        self.file.flush()

    def close(self) -> None:
        self.file.close()


# Runners of one GPU pool differ in their host kernel string; nothing that can change a result may.
_HOST_ONLY = {"platform"}


def _compared(environment: Environment, other: Environment) -> dict[str, Any]:
    """`environment` as two streams' environments are compared: without the host's kernel
    string, nor a suite library (besides transformers) that `other` does not record, as a
    stream written before environments recorded them does not (a stored night's flags added
    later): where both record one, it must be the same."""
    one_sided = set(environment.libraries) ^ set(other.libraries)
    compared = environment.model_dump(exclude=_HOST_ONLY)
    compared["libraries"] = {k: v for k, v in environment.libraries.items() if k not in one_sided}
    return compared


def _same_sweep(old: SweepHeader, new: SweepHeader, path: Path, what: str) -> None:
    if _compared(old.environment, new.environment) != _compared(new.environment, old.environment):
        raise StreamError(
            f"{what} {path}: it was written by another environment "
            f"(torch {old.environment.torch_version} on {old.environment.device})"
        )
    if old.flags != new.flags:
        raise StreamError(f"{what} {path}: it sweeps other flags ({', '.join(old.flags) or 'none'})")
    old_when, new_when = when_of(old), when_of(new)
    if old_when != new_when:
        flag = next(f for f in old_when if old_when[f] != new_when.get(f))
        raise StreamError(
            f"{what} {path}: it runs flag {flag!r} with when = {old_when[flag]!r}, not {new_when.get(flag)!r}"
        )
    if old.shard != new.shard:
        raise StreamError(f"{what} {path}: it is shard {old.shard}, not {new.shard}")
    if old.corpus.name != new.corpus.name:
        raise StreamError(f"{what} {path}: it sweeps corpus {old.corpus.name!r}")


def when_of(header: SweepHeader) -> dict[str, When]:
    """Each flag's `when`; a stream older than the field ran every flag on every model."""
    return {flag: header.when.get(flag, "always") for flag in header.flags}


def model_results(
    records: Iterable[RunRecord], configs: Sequence[str], order: Sequence[str] | None = None
) -> list[ModelResult]:
    """Group run records into one ModelResult per model (sweep runs, then confirmations; the
    backend ladder's runs apart, by config and rung)."""
    outcomes: dict[str, dict[str, RunRecord]] = {}
    confirmations: dict[str, dict[str, list[RunRecord]]] = {}
    ladder: dict[str, dict[str, dict[str, RunRecord]]] = {}
    ladder_reruns: dict[str, dict[str, dict[str, list[RunRecord]]]] = {}
    for record in records:
        if record.backend is not None:
            if record.attempt == 0:
                ladder.setdefault(record.model, {}).setdefault(record.config, {})[record.backend] = record
            else:
                rungs = ladder_reruns.setdefault(record.model, {}).setdefault(record.config, {})
                rungs.setdefault(record.backend, []).append(record)
        elif record.attempt == 0:
            outcomes.setdefault(record.model, {})[record.config] = record
        else:
            confirmations.setdefault(record.model, {}).setdefault(record.config, []).append(record)
    models = list(order) if order else sorted(outcomes)
    results = []
    for model in models:
        runs = outcomes.get(model, {})
        spec = _best_spec([runs[c] for c in configs if c in runs])
        confirmed = {
            config: [r.outcome for r in sorted(reruns, key=lambda r: r.attempt)]
            for config, reruns in sorted(confirmations.get(model, {}).items())
        }
        results.append(
            ModelResult(
                model=model,
                stratum=spec.stratum if spec else "other",
                outcomes={c: runs[c].outcome for c in configs if c in runs},
                baseline_again=runs[BASELINE_AGAIN].outcome if BASELINE_AGAIN in runs else None,
                confirmations=confirmed,
                spec=spec,
                ladder={
                    config: {rung: record.outcome for rung, record in rungs.items()}
                    for config, rungs in ladder.get(model, {}).items()
                },
                ladder_confirmations={
                    config: {
                        rung: [r.outcome for r in sorted(reruns, key=lambda r: r.attempt)]
                        for rung, reruns in rungs.items()
                    }
                    for config, rungs in ladder_reruns.get(model, {}).items()
                },
            )
        )
    return results


def _best_spec(records: list[RunRecord]) -> ModelSpec | None:
    """The spec completed by a build (a run that built) rather than the corpus's bare one."""
    built = [r.spec for r in records if r.spec and r.outcome.status in ("ok", "eager_error", "crash")]
    return built[0] if built else next((r.spec for r in records if r.spec), None)


def merge(paths: Sequence[str | Path], scheme: KeyScheme = "torch") -> Snapshot:
    """Join shard streams (or one whole stream) into a Snapshot keyed as `scheme` (`[store] key`)
    names its night (`snapshot_key`; by default the torch version, as the nightly stream does).

    Refuses streams from different environments, flag sets or corpora, a shard given twice, a
    model in two streams, and a stream with a model that lacks a run of some config.
    """
    if not paths:
        raise StreamError("merge: no streams given")
    streams = [(Path(p), _read(Path(p))) for p in paths]
    first_path, first = streams[0][0], streams[0][1].header
    configs = [BASELINE, *first.flags]
    seen_shards: dict[str, Path] = {}
    owner: dict[str, Path] = {}
    records: list[RunRecord] = []
    unreached: list[UnreachedPair] = []
    for path, stream in streams:
        if path != first_path:
            _same_sweep(first, stream.header.model_copy(update={"shard": first.shard}), path, "cannot merge")
        _check_shard(stream.header, first, path, seen_shards)
        _check_models(stream.records, configs, path, owner)
        records.extend(stream.records)
        unreached.extend(stream.unreached)
    order = [m for m in first.corpus.models if m in owner] + sorted(set(owner) - set(first.corpus.models))
    return Snapshot(
        key=snapshot_key(first.environment, scheme),
        created=max(stream.header.started for _, stream in streams),
        environment=first.environment,
        flags=first.flags,
        when=when_of(first),
        corpus=first.corpus,
        results=model_results(records, configs, order),
        checks=first.checks,
        ladder=first.ladder,
        ladder_unreached=still_unreached(unreached, records),
    )


def _check_shard(header: SweepHeader, first: SweepHeader, path: Path, seen: dict[str, Path]) -> None:
    if not header.shard:
        return
    if header.shard in seen:
        raise StreamError(f"cannot merge: shard {header.shard} given twice ({seen[header.shard]}, {path})")
    if first.shard and header.shard.split("/")[1] != first.shard.split("/")[1]:
        raise StreamError(f"cannot merge {path}: shard {header.shard} of another split than {first.shard}")
    seen[header.shard] = path


def _check_models(runs: list[RunRecord], configs: list[str], path: Path, owner: dict[str, Path]) -> None:
    """Every model of the stream in no other stream, with a first run of every config."""
    have: dict[str, set[str]] = {}
    for r in runs:
        configs_run = have.setdefault(r.model, set())
        if r.attempt == 0 and r.backend is None:
            configs_run.add(r.config)
    for model in sorted(have):
        if model in owner:
            raise StreamError(f"cannot merge: model {model!r} is in both {owner[model]} and {path}")
        owner[model] = path
        missing = [c for c in configs if c not in have[model]]
        if missing:
            raise StreamError(
                f"cannot merge {path}: model {model!r} has no {missing[0]!r} run (finish it: --resume)"
            )


def still_unreached(unreached: Sequence[UnreachedPair], records: Sequence[RunRecord]) -> list[UnreachedPair]:
    """The ladder's unreached pairs as the stream ends: the last word on each pair (a resumed sweep
    writes its own), without the rungs a later run reached."""
    ran = {(r.model, r.config, r.backend) for r in records if r.backend and r.attempt == 0}
    last = {(pair.model, pair.config): pair for pair in unreached}
    kept = []
    for pair in last.values():
        rungs = [rung for rung in pair.rungs if (pair.model, pair.config, rung) not in ran]
        if rungs:
            kept.append(pair.model_copy(update={"rungs": rungs}))
    return kept
