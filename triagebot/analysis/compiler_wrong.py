"""Wrong results of `torch.compile` at the default config: the night's first news.

A model whose compiled output at baseline differs from eager's beyond tolerance, on a second run
too, eager agreeing with itself, is a compiler bug on a real model at the config users run: every
surface names it first, and it has its own tracking issue. A model whose eager run disagrees
with itself across attention implementations is the library's (`library`), never one of these;
so is a nondeterministic model (two eager runs differ: not judged). Its figures come from the
accuracy check's words (the compiled output's RMSE to the float64 run beside eager's); where it
happens comes from its repro's reduction (`Reproduction.locus`), by which several group.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from triagebot.results import (
    BASELINE,
    COMPILER_WRONG_ISSUE,
    WRONG_RESULT,
    Check,
    CompilerWrong,
    CompilerWrongNight,
    FailureGroup,
    ModelResult,
    NightSummary,
    Reproduction,
    Snapshot,
    error_signature,
    suite_of,
    wrong_result_signature,
)

_RMSES = re.compile(
    r"RMSE to float64 (?P<compiled>[-+0-9.e]+|nan|inf), eager's (?P<eager>[-+0-9.e]+|nan|inf)"
)


def confirmed_wrong(result: ModelResult) -> bool:
    """`result`'s baseline gave a wrong result, and so did every rerun of it."""
    baseline = result.outcomes.get(BASELINE)
    if baseline is None or not baseline.mismatched:
        return False
    return all(rerun.mismatched for rerun in result.confirmations.get(BASELINE, []))


def rmses(detail: str | None) -> tuple[float | None, float | None]:
    """(compiled, eager) RMSE to the float64 run, as the accuracy check wrote them (None: absent)."""
    found = _RMSES.search(detail or "")
    if found is None:
        return None, None
    return float(found["compiled"]), float(found["eager"])


def _repro(snapshot: Snapshot, model: str, signature: str) -> Reproduction | None:
    mine = (r for r in snapshot.reproductions if r.flag == BASELINE and r.model == model)
    return next((repro for repro in mine if repro.signature == signature), None)


def finding(snapshot: Snapshot, result: ModelResult) -> CompilerWrong | None:
    """`result`'s wrong result at baseline, or None when it has no confirmed one."""
    if not confirmed_wrong(result):
        return None
    check = result.outcomes[BASELINE].accuracy
    assert check is not None  # `mismatched` says it was checked
    where = check.where or "output"
    signature = wrong_result_signature(where)
    compiled, eager = rmses(check.detail)
    return CompilerWrong(
        model=result.model,
        suite=suite_of(result.model),
        stratum=result.stratum,
        where=where,
        detail=check.detail,
        compiled_rmse=compiled,
        eager_rmse=eager,
        signature=signature,
        repro=_repro(snapshot, result.model, signature),
    )


def compiler_wrong_results(snapshot: Snapshot) -> list[CompilerWrong]:
    """Tonight's wrong results at the default config, by model."""
    found = (finding(snapshot, result) for result in sorted(snapshot.results, key=lambda r: r.model))
    return [item for item in found if item is not None]


def wrong_at_baseline(snapshot: Snapshot) -> list[str] | None:
    """The models with a confirmed wrong result at baseline; None when outputs were not compared."""
    if Check.accuracy not in snapshot.checks:
        return None
    return [result.model for result in snapshot.results if confirmed_wrong(result)]


def group_signature(item: CompilerWrong) -> str:
    """What groups wrong results: the op and code line a reduction found, else the output."""
    locus = item.locus
    if locus is not None and (locus.op or locus.line):
        return error_signature(WRONG_RESULT, locus.where)
    return item.signature


def groups_of(findings: Sequence[CompilerWrong]) -> list[FailureGroup]:
    """The findings grouped by `group_signature`, largest group first, then by signature."""
    members: dict[str, list[CompilerWrong]] = {}
    for item in findings:
        members.setdefault(group_signature(item), []).append(item)
    groups = [
        FailureGroup(
            flag=BASELINE,
            signature=signature,
            error_type=WRONG_RESULT,
            error=f"{items[0].where}: {items[0].detail}",
            models=[item.model for item in items],
        )
        for signature, items in members.items()
    ]
    return sorted(groups, key=lambda group: (-len(group.models), group.signature))


def compiler_wrong_night(
    snapshot: Snapshot,
    nights: Sequence[NightSummary],
    cc: Callable[[str, list[str]], list[str]] | None = None,
    issue_url: str | None = None,
) -> CompilerWrongNight:
    """Tonight's wrong results at baseline, grouped, with their trend over `nights` (the
    history's summaries, oldest first, tonight's last) and the people on their issue."""
    findings = compiler_wrong_results(snapshot)
    groups = groups_of(findings)
    return CompilerWrongNight(
        findings=findings,
        groups=groups,
        keys=[night.key for night in nights],
        trend=[len(night.wrong_at_baseline or []) for night in nights],
        cc=cc(COMPILER_WRONG_ISSUE, [group.signature for group in groups]) if cc is not None else [],
        issue_url=issue_url,
    )
