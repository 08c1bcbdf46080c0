"""A flag's effect on each model, against the same model's baseline run, and the models that
failed alike grouped by signature."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from triagebot.results import (
    BASELINE,
    WRONG_RESULT,
    Accuracy,
    Effect,
    FailureGroup,
    ModelEffect,
    ModelResult,
    Outcome,
    Snapshot,
    Status,
    wrong_result_signature,
)

# Effects that put a model in a crash group: the flag's own confirmed crash, or its flaky one.
CRASH_EFFECTS = frozenset({Effect.crashes, Effect.flaky})
# Effects under which the flag run finished and its graphs mean something.
RAN_EFFECTS = frozenset({Effect.reduces_graphs, Effect.no_effect, Effect.increases_graphs})
# A wrapper names the error it wraps first in its message: `PendingUnbackedSymbolNotFound: ...`.
_WRAPPED_NAME = re.compile(
    r"^(?P<name>[A-Z][A-Za-z0-9_]*(?:Error|Exception|Exc|NotFound|Node|Unsupported)\w*): "
)


# Verdicts of a run whose outputs could not be judged: eager disagrees with itself across
# attention implementations (the library's finding), or two eager runs differ.
NOT_JUDGED = frozenset({Accuracy.eager_inconsistent, Accuracy.nondeterministic})


def not_judged(snapshot: Snapshot, flag: str) -> list[str]:
    """The models whose outputs under `flag` could not be judged (`NOT_JUDGED`), in the snapshot's
    order. The one rule for them: fewer graphs can be real, "safe" cannot; so they are no
    evidence that the flag helps (`no_evidence_of_help`), nor that it is safe (`analysis.verdict`)."""
    return [
        result.model
        for result in snapshot.results
        if (run := result.outcomes.get(flag)) is not None
        and run.accuracy is not None
        and run.accuracy.verdict in NOT_JUDGED
    ]


def real_rows(snapshot: Snapshot, rows: Iterable[ModelEffect]) -> list[ModelEffect]:
    """`rows` less the sentinels' (`Snapshot.sentinels`): the one rule that keeps the bot's own
    test models out of every real figure, denominator and group, and out of an issue's lifecycle
    (its trend and recurrence). A sentinel's crash is its canary, never news about real models:
    `analysis.sentinels` says on a line of its own whether each behaved as built."""
    sentinels = snapshot.sentinels
    return [row for row in rows if row.model not in sentinels]


def no_evidence_of_help(snapshot: Snapshot, flag: str) -> frozenset[str]:
    """The models whose fewer graphs under `flag` count as no help: the sentinels (built to have
    them) and the models whose outputs could not be judged (`not_judged`)."""
    return snapshot.sentinels | frozenset(not_judged(snapshot, flag))


def _repeated(confirmations: list[Outcome]) -> bool:
    """A crash counts only if every rerun crashed again; no reruns means none were asked for."""
    return all(rerun.status == Status.crash for rerun in confirmations)


def _repeated_mismatch(confirmations: list[Outcome]) -> bool:
    """A wrong result counts only if every rerun gave a wrong result again."""
    return all(rerun.mismatched for rerun in confirmations)


def effect_of(result: ModelResult, flag: str) -> Effect | None:
    """The effect of `flag` on one model, or None when the model has no run for the flag or baseline.

    Untestable (the baseline could not build or run eagerly) wins over everything. A flag run
    that could not build or run eagerly though its baseline did is the sweep's fault, an
    `engine_error`, never untestable. Then a skipped flag run, a hang, a death, so a timeout or
    a signal never reads as `no_effect`. A crash whose rerun ran clean is `flaky`. A flag run
    whose outputs differ from eager's is `wrong_result` once every rerun differs too (`flaky`
    when one does not), whatever its graph counts, unless the baseline's outputs differ too
    (confirmed): then the flag is judged on its graphs, as where both crash.
    """
    baseline = result.outcomes.get(BASELINE)
    flagged = result.outcomes.get(flag)
    if baseline is None or flagged is None:
        return None
    if baseline.untestable or baseline.status in (Status.skipped, Status.engine_error):
        return Effect.untestable
    if flagged.untestable or flagged.status == Status.engine_error:
        return Effect.engine_error
    if flagged.status == Status.skipped:
        return Effect.skipped
    if Status.timeout in (baseline.status, flagged.status):
        return Effect.timeout
    if Status.signal in (baseline.status, flagged.status):
        return Effect.signal
    baseline_crashed = baseline.status == Status.crash
    flag_crashed = flagged.status == Status.crash
    if baseline_crashed and flag_crashed:
        return Effect.both_crash
    if flag_crashed:
        return Effect.crashes if _repeated(result.confirmations.get(flag, [])) else Effect.flaky
    # A wrong answer, whatever its graph counts; but one the baseline gives too (confirmed) is not
    # the flag's doing: the health reports it, and the flag is judged on its graphs.
    baseline_wrong = baseline.mismatched and _repeated_mismatch(result.confirmations.get(BASELINE, []))
    if flagged.mismatched and not baseline_wrong:
        return Effect.wrong_result if _repeated_mismatch(result.confirmations.get(flag, [])) else Effect.flaky
    if baseline_crashed:
        # A baseline crash that did not repeat says nothing about what the flag fixed.
        return Effect.fixes_crash if _repeated(result.confirmations.get(BASELINE, [])) else Effect.flaky
    if baseline.graphs is not None and flagged.graphs is not None:
        if flagged.graphs < baseline.graphs:
            return Effect.reduces_graphs
        if flagged.graphs > baseline.graphs:
            return Effect.increases_graphs
    return Effect.no_effect


def model_effect(result: ModelResult, flag: str) -> ModelEffect | None:
    """One `triagebot effects` row; the error shown is the flag's when it crashed, else the baseline's."""
    effect = effect_of(result, flag)
    if effect is None:
        return None
    baseline = result.outcomes[BASELINE]
    flagged = result.outcomes[flag]
    error: tuple[str | None, str | None, str | None] = (None, None, None)  # signature, type, first line
    if flagged.mismatched and effect in (Effect.wrong_result, Effect.flaky) and flagged.accuracy is not None:
        where = flagged.accuracy.where
        error = (wrong_result_signature(where), WRONG_RESULT, f"{where}: {flagged.accuracy.detail}")
    else:
        failed = flagged if flagged.status != Status.ok else baseline
        if failed.status != Status.ok:
            error = (failed.signature, failed.error_type, failed.error)
    return ModelEffect(
        model=result.model,
        stratum=result.stratum,
        flag=flag,
        effect=effect,
        baseline_graphs=baseline.graphs,
        flag_graphs=flagged.graphs,
        signature=error[0],
        error_type=error[1],
        error=error[2],
    )


def classify(snapshot: Snapshot) -> list[ModelEffect]:
    """Every (model, flag) effect of a snapshot, models in snapshot order, flags in config order.

    A model without a baseline or flag outcome (a rerun of a subset) gets no row for that flag.
    """
    rows = []
    for result in snapshot.results:
        for flag in snapshot.flags:
            row = model_effect(result, flag)
            if row is not None:
                rows.append(row)
    return rows


def error_name(error_type: str | None, error: str | None) -> str | None:
    """The name a reader knows an error by: the exception a wrapper's message names first
    (`InternalTorchDynamoError` with `PendingUnbackedSymbolNotFound: ...` is
    `PendingUnbackedSymbolNotFound`), else its type."""
    wrapped = _WRAPPED_NAME.match(error or "")
    return wrapped.group("name") if wrapped else error_type


def crash_groups(rows: Iterable[ModelEffect], flag: str, effect: Effect) -> list[FailureGroup]:
    """Rows of `flag` with `effect` grouped by signature, largest group first."""
    grouped: dict[str, list[ModelEffect]] = defaultdict(list)
    for row in rows:
        if row.flag == flag and row.effect == effect:
            grouped[row.signature or f"{row.error_type or 'unknown'}: (no message)"].append(row)
    groups = [
        FailureGroup(
            flag=flag,
            signature=signature,
            error_type=members[0].error_type,
            error=members[0].error,
            name=error_name(members[0].error_type, members[0].error),
            models=sorted(member.model for member in members),
            confirmed=effect != Effect.flaky,
        )
        for signature, members in grouped.items()
    ]
    return sorted(groups, key=lambda group: (-len(group.models), group.signature))
