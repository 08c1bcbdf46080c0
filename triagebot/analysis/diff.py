"""What changed between two snapshots, with the commit range that holds the cause."""

from __future__ import annotations

from triagebot.analysis.effects import RAN_EFFECTS, model_effect
from triagebot.results import (
    BASELINE,
    Effect,
    FlagDiff,
    ModelChange,
    ModelResult,
    Snapshot,
    SnapshotDiff,
    Status,
)

COMPARE_URL = "https://github.com/pytorch/pytorch/compare/{old}...{new}"


def compare_url(old_git_version: str, new_git_version: str) -> str | None:
    """The GitHub commit range between two builds, or None when a hash is unknown or they are one build."""
    if not old_git_version or not new_git_version or old_git_version == new_git_version:
        return None
    return COMPARE_URL.format(old=old_git_version, new=new_git_version)


def _graph_change(
    model: str, stratum: str, old: ModelResult, new: ModelResult, config: str
) -> ModelChange | None:
    before, after = old.outcomes.get(config), new.outcomes.get(config)
    if before is None or after is None or before.status != Status.ok or after.status != Status.ok:
        return None
    if before.graphs == after.graphs:
        return None
    return ModelChange(model=model, stratum=stratum, old_graphs=before.graphs, new_graphs=after.graphs)


def diff_flag(old: Snapshot, new: Snapshot, flag: str, models: list[str]) -> FlagDiff:
    """How `flag` moved on the models both snapshots have."""
    result = FlagDiff(flag=flag)
    for model in models:
        old_result, new_result = old.result(model), new.result(model)
        assert old_result is not None and new_result is not None
        before, after = model_effect(old_result, flag), model_effect(new_result, flag)
        if before is None or after is None:
            continue
        change = ModelChange(
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
        if after.effect == Effect.crashes and before.effect != Effect.crashes:
            result.newly_crashing.append(change)
        elif after.effect == Effect.wrong_result and before.effect != Effect.wrong_result:
            result.newly_wrong.append(change)
        elif before.effect == Effect.crashes and after.effect in RAN_EFFECTS:
            result.fixed.append(change)
        elif before.effect == after.effect == Effect.crashes:
            if before.signature != after.signature:
                result.signature_changes.append(change)
        elif before.effect != after.effect:
            result.effect_changes.append(change)
        graphs = _graph_change(model, new_result.stratum, old_result, new_result, flag)
        if graphs is not None:
            result.graph_changes.append(graphs)
    return result


def diff(old: Snapshot, new: Snapshot) -> SnapshotDiff:
    """Every change from `old` to `new`: per flag, at baseline, and in the corpus itself."""
    old_models = [result.model for result in old.results]
    new_models = [result.model for result in new.results]
    old_set = set(old_models)
    common = [model for model in new_models if model in old_set]
    baseline_changes = []
    for model in common:
        old_result, new_result = old.result(model), new.result(model)
        assert old_result is not None and new_result is not None
        change = _graph_change(model, new_result.stratum, old_result, new_result, BASELINE)
        if change is not None:
            baseline_changes.append(change)
    shared_flags = [flag for flag in new.flags if flag in old.flags]
    return SnapshotDiff(
        old_key=old.key,
        new_key=new.key,
        old_git_version=old.environment.torch_git_version,
        new_git_version=new.environment.torch_git_version,
        same_build=old.environment.same_build(new.environment),
        compare_url=compare_url(old.environment.torch_git_version, new.environment.torch_git_version),
        models_added=[model for model in new_models if model not in old_set],
        models_removed=[model for model in old_models if model not in set(new_models)],
        baseline_graph_changes=baseline_changes,
        flags={flag: diff_flag(old, new, flag, common) for flag in shared_flags},
        flags_added=[flag for flag in new.flags if flag not in old.flags],
        flags_removed=[flag for flag in old.flags if flag not in new.flags],
    )
