"""Records as the sweep and the analysis write them, for tests: each builder spells out what a
test is about and fills the rest the way most tests need it.

- `ok`, `crash`: one run's outcome; `record`: one run as a sweep streams it.
- `result`: a model's outcomes, its crashes and wrong results confirmed by their rerun.
- `snapshot`: one sweep of one build; `nightly`: a nightly in which only the named runs crash.
- `night_of`: the analysed night of a snapshot, as every command builds it.
- `fixture_nightlies`: the two committed nightlies of tests/data (see tests/snapshots.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from triagebot import pipeline
from triagebot.config import Config
from triagebot.results import (
    BASELINE,
    Accuracy,
    AccuracyCheck,
    CorpusSelection,
    CrossCheck,
    Environment,
    ModelResult,
    Night,
    Outcome,
    RunRecord,
    Snapshot,
    Status,
    error_signature,
)
from triagebot.store import MemoryStore, read_snapshot

# The two flags of the default config: each patches the torch._dynamo.config option of its name.
SCALAR = "capture_scalar_outputs"
DYNAMIC = "capture_dynamic_output_shape_ops"
REPO = "pytorch/pytorch"

DATA = Path(__file__).parent / "data"
OLD_NIGHTLY = DATA / "2.12.0.dev20260408+cu128.json"
NEW_NIGHTLY = DATA / "2.12.0.dev20260409+cu128.json"

GUARD_ERROR = "GuardOnDataDependentSymNode"
GUARD_MESSAGE = "Could not guard on data-dependent expression Eq(u0, 0)"


def fixture_nightlies() -> tuple[Snapshot, Snapshot]:
    """The older and the newer committed fixture nightly, read afresh."""
    return read_snapshot(OLD_NIGHTLY), read_snapshot(NEW_NIGHTLY)


def flag_patches(*flags: str) -> dict[str, dict[str, bool]]:
    """Each flag turning on the torch._dynamo.config option of its own name."""
    return {flag: {flag: True} for flag in flags}


def ok(graphs: int, reasons: Iterable[str] = (), **fields) -> Outcome:
    """A run that compiled to `graphs` graphs, breaking for `reasons`."""
    return Outcome(status=Status.ok, graphs=graphs, break_reasons=list(reasons), **fields)


def crash(error_type: str = GUARD_ERROR, message: str = GUARD_MESSAGE, **fields) -> Outcome:
    """A run that raised `error_type: message`, with the signature the sweep gives it."""
    fields.setdefault("error", message.splitlines()[0])
    fields.setdefault("signature", error_signature(error_type, message))
    return Outcome(status=Status.crash, error_type=error_type, **fields)


def record(model: str, config: str = BASELINE, outcome: Outcome | None = None, **fields) -> RunRecord:
    """One (model, config) run as a sweep streams it (by default a clean one-graph run)."""
    return RunRecord(model=model, config=config, outcome=outcome or ok(1), **fields)


def result(
    model: str,
    baseline: Outcome,
    flagged: Mapping[str, Outcome],
    *,
    reruns: Mapping[str, Outcome] | None = None,
    **fields,
) -> ModelResult:
    """`model` at baseline and under each flag of `flagged`. A flag's crash or wrong result is
    confirmed (its rerun did the same) unless `reruns` gives what the rerun did instead."""
    confirmations = {
        flag: [outcome]
        for flag, outcome in flagged.items()
        if outcome.status == Status.crash or outcome.mismatched
    }
    confirmations |= {flag: [rerun] for flag, rerun in (reruns or {}).items()}
    fields.setdefault("confirmations", confirmations)
    return ModelResult(model=model, outcomes={BASELINE: baseline, **flagged}, **fields)


def snapshot(
    results: Sequence[ModelResult],
    *,
    key: str = "2.13.0",
    git: str = "",
    flags: Iterable[str] | Mapping[str, dict] = (SCALAR,),
    corpus: str | CorpusSelection = "test",
    **fields,
) -> Snapshot:
    """A sweep of torch `key` (built from commit `git`) over exactly the models of `results`.
    `flags`: names (each patching the option of its name) or the flag table itself."""
    if isinstance(corpus, str):
        corpus = CorpusSelection(name=corpus, models=[result.model for result in results])
    return Snapshot(
        key=key,
        environment=Environment(torch_version=key, torch_git_version=git),
        flags=dict(flags) if isinstance(flags, Mapping) else flag_patches(*flags),
        corpus=corpus,
        results=list(results),
        **fields,
    )


def nightly(
    key: str,
    crashes: Mapping[str, Mapping[str, Outcome]],
    models: Iterable[str],
    *,
    flags: Sequence[str] = (SCALAR, DYNAMIC),
    reruns: Mapping[str, Mapping[str, Outcome]] | None = None,
    **options,
) -> Snapshot:
    """A nightly of `models` with three graphs at baseline and two under every flag, except
    `crashes` (flag -> model -> its crash), each confirmed unless `reruns` (flag -> model ->
    what its rerun gave) says otherwise. `options` go to `snapshot`."""
    reruns = reruns or {}
    results = [
        result(
            model,
            ok(3),
            {flag: crashes.get(flag, {}).get(model) or ok(2) for flag in flags},
            reruns={flag: reruns[flag][model] for flag in flags if model in reruns.get(flag, {})},
        )
        for model in models
    ]
    return snapshot(results, key=key, flags=flags, **options)


def night_of(tonight: Snapshot, stored: Iterable[Snapshot] = (), config: Config | None = None) -> Night:
    """The night of `tonight`, analysed once against a store holding `stored`, as `run`,
    `report`, `publish` and `site` build it."""
    return pipeline.night_of(tonight, MemoryStore(list(stored)), config or Config())


def eager_inconsistent() -> AccuracyCheck:
    """An accuracy check whose eager run disagrees with itself under the other attention
    implementation while compiled agrees with it: the library's finding (the SDPA-mask models)."""
    return AccuracyCheck(
        verdict=Accuracy.eager_inconsistent,
        where="last_hidden_state",
        detail="largest difference 2.79 above tolerance 0.001",
        cross_checks=[
            CrossCheck(name="eager_other_attention", implementation="eager", agrees=False, detail="far"),
            CrossCheck(name="compiled_vs_other_attention", implementation="eager", agrees=True),
        ],
    )
