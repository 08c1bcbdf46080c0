"""What changed between two snapshots, with the commit range that holds the cause."""

from __future__ import annotations

import re
from collections.abc import Sequence

from triagebot.analysis.effects import RAN_EFFECTS, model_effect
from triagebot.analysis.figures import suite_counts
from triagebot.results import (
    BASELINE,
    Effect,
    Environment,
    FlagDiff,
    ModelChange,
    ModelEffect,
    ModelResult,
    Snapshot,
    SnapshotDiff,
    Status,
    suite_of,
)

COMPARE_URL = "https://github.com/pytorch/pytorch/compare/{old}...{new}"
TRANSFORMERS_COMPARE = "https://github.com/huggingface/transformers/compare/v{old}...v{new}"
_SHA = re.compile(r"[0-9a-f]{7,40}\Z")


def compare_url(old_git_version: str, new_git_version: str) -> str | None:
    """The GitHub commit range between two builds, or None when a hash is unknown (or not a hash)
    or they are one build."""
    hashes = _SHA.match(old_git_version) and _SHA.match(new_git_version)
    if not hashes or old_git_version == new_git_version:
        return None
    return COMPARE_URL.format(old=old_git_version, new=new_git_version)


def transformers_compare_url(old_version: str, new_version: str) -> str:
    """The changes between two transformers releases on GitHub."""
    return TRANSFORMERS_COMPARE.format(old=old_version, new=new_version)


def moved_between(old: Environment, new: Environment) -> tuple[list[str], bool, str | None]:
    """What moved between two builds, in words (`torch A → B`, `transformers X → Y`, and so the
    other suites' libraries both recorded), whether torch did, and the range of changes a reader
    follows: torch's commit range when torch moved, else the transformers releases' when
    transformers did."""
    torch_moved = not old.same_torch(new)
    new_versions = new.library_versions()
    libraries = [
        (library, version, new_versions[library])
        for library, version in old.library_versions().items()
        if new_versions.get(library, version) != version
    ]
    moved = [f"torch {old.torch_version} → {new.torch_version}"] if torch_moved else []
    moved += [f"{library} {before} → {after}" for library, before, after in libraries]
    transformers_moved = any(library == "transformers" for library, _, _ in libraries)
    if torch_moved:
        return moved, True, compare_url(old.torch_git_version, new.torch_git_version)
    if transformers_moved:
        return moved, False, transformers_compare_url(old.transformers_version, new.transformers_version)
    return moved, False, None


def _by_name(snapshot: Snapshot) -> dict[str, ModelResult]:
    return {result.model: result for result in snapshot.results}


def _graph_change(
    model: str, stratum: str, old: ModelResult, new: ModelResult, config: str
) -> ModelChange | None:
    before, after = old.outcomes.get(config), new.outcomes.get(config)
    if before is None or after is None or before.status != Status.ok or after.status != Status.ok:
        return None
    if before.graphs == after.graphs:
        return None
    return ModelChange(model=model, stratum=stratum, old_graphs=before.graphs, new_graphs=after.graphs)


def _rows_by_model(rows: Sequence[ModelEffect] | None, flag: str) -> dict[str, ModelEffect] | None:
    return None if rows is None else {row.model: row for row in rows if row.flag == flag}


def _left_failing(
    old_by_name: dict[str, ModelResult],
    old_effects: dict[str, ModelEffect] | None,
    flag: str,
    removed: Sequence[str],
) -> list[ModelChange]:
    """The `removed` models (in the old snapshot only) that crashed or gave a wrong result under
    `flag`: they left the corpus, which is not a fix."""
    left = []
    for model in removed:
        gone = old_effects.get(model) if old_effects is not None else model_effect(old_by_name[model], flag)
        if gone is not None and gone.effect in (Effect.crashes, Effect.wrong_result):
            stratum = old_by_name[model].stratum
            left.append(
                ModelChange(
                    model=model, stratum=stratum, old_effect=gone.effect, old_signature=gone.signature
                )
            )
    return left


def diff_flag(
    old: Snapshot,
    new: Snapshot,
    flag: str,
    models: list[str],
    old_rows: Sequence[ModelEffect] | None = None,
    new_rows: Sequence[ModelEffect] | None = None,
    *,
    removed: Sequence[str] = (),
) -> FlagDiff:
    """How `flag` moved on the models both snapshots have, and which of the `removed` models
    (in `old` only) crashed or gave a wrong result under it; `old_rows` and `new_rows` are
    `classify(old)` and `classify(new)` when the caller has them already."""
    result = FlagDiff(flag=flag)
    # By name once, not `Snapshot.result` per model: that scan made a corpus-wide diff quadratic.
    old_by_name, new_by_name = _by_name(old), _by_name(new)
    old_effects, new_effects = _rows_by_model(old_rows, flag), _rows_by_model(new_rows, flag)
    result.removed = _left_failing(old_by_name, old_effects, flag, removed)
    for model in models:
        old_result, new_result = old_by_name.get(model), new_by_name.get(model)
        assert old_result is not None and new_result is not None
        before = old_effects.get(model) if old_effects is not None else model_effect(old_result, flag)
        after = new_effects.get(model) if new_effects is not None else model_effect(new_result, flag)
        if before is None or after is None:
            continue
        kind = None
        if after.effect == Effect.crashes and before.effect != Effect.crashes:
            kind = result.newly_crashing
        elif after.effect == Effect.wrong_result and before.effect != Effect.wrong_result:
            kind = result.newly_wrong
        elif before.effect == Effect.crashes and after.effect in RAN_EFFECTS:
            kind = result.fixed
        elif before.effect == after.effect == Effect.crashes:
            if before.signature != after.signature:
                kind = result.signature_changes
        elif before.effect != after.effect:
            kind = result.effect_changes
        if kind is not None:
            kind.append(
                ModelChange(
                    model=model,
                    stratum=new_result.stratum,
                    old_effect=before.effect,
                    new_effect=after.effect,
                    old_signature=before.signature,
                    new_signature=after.signature,
                    old_graphs=before.flag_graphs,
                    new_graphs=after.flag_graphs,
                    error=after.error if after.effect in (Effect.crashes, Effect.wrong_result) else None,
                )
            )
        graphs = _graph_change(model, new_result.stratum, old_result, new_result, flag)
        if graphs is not None:
            result.graph_changes.append(graphs)
    result.newly_crashing_suites = suite_counts((change.model for change in result.newly_crashing), models)
    return result


def diff(
    old: Snapshot,
    new: Snapshot,
    *,
    old_rows: Sequence[ModelEffect] | None = None,
    new_rows: Sequence[ModelEffect] | None = None,
) -> SnapshotDiff:
    """Every change from `old` to `new`: per flag, at baseline, and in the corpus itself.
    `old_rows`/`new_rows`: `classify(old)`/`classify(new)`, when already computed."""
    old_models = [result.model for result in old.results]
    new_models = [result.model for result in new.results]
    old_set = set(old_models)
    common = [model for model in new_models if model in old_set]
    baseline_changes = []
    old_by_name, new_by_name = _by_name(old), _by_name(new)
    for model in common:
        old_result, new_result = old_by_name.get(model), new_by_name.get(model)
        assert old_result is not None and new_result is not None
        change = _graph_change(model, new_result.stratum, old_result, new_result, BASELINE)
        if change is not None:
            baseline_changes.append(change)
    shared_flags = [flag for flag in new.flags if flag in old.flags]
    # A model of a suite not swept tonight (its library not installed) did not leave the corpus.
    skipped = new.corpus.skipped
    removed = [model for model in old_models if model not in new_by_name and suite_of(model) not in skipped]
    moved, torch_moved, changes = moved_between(old.environment, new.environment)
    # A flag moves on its real models alone (`effects.real_rows`): a sentinel's crash is no news.
    sentinels = old.sentinels | new.sentinels
    real = [model for model in common if model not in sentinels]
    real_removed = [model for model in removed if model not in sentinels]
    return SnapshotDiff(
        old_key=old.key,
        new_key=new.key,
        old_git_version=old.environment.torch_git_version,
        new_git_version=new.environment.torch_git_version,
        same_build=old.environment.same_build(new.environment),
        compare_url=changes,
        moved=moved,
        torch_moved=torch_moved,
        models_added=[model for model in new_models if model not in old_set],
        models_removed=removed,
        baseline_graph_changes=baseline_changes,
        flags={
            flag: diff_flag(old, new, flag, real, old_rows, new_rows, removed=real_removed)
            for flag in shared_flags
        },
        flags_added=[flag for flag in new.flags if flag not in old.flags],
        flags_removed=[flag for flag in old.flags if flag not in new.flags],
    )
