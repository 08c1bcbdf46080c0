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

from triagebot.analysis.recurrence import FLAKY, UNKNOWN, WRONG, recurrence
from triagebot.results import (
    BASELINE,
    COMPILER_WRONG_ISSUE,
    WRONG_RESULT,
    Accuracy,
    Check,
    CompilerWrong,
    CompilerWrongNight,
    FailureGroup,
    ModelResult,
    NightSummary,
    Reproduction,
    Snapshot,
    TrendPoint,
    suite_of,
    wrong_result_signature,
)

ISSUE = COMPILER_WRONG_ISSUE  # the name its recurrence is read under, as a flag's
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


def baseline_letters(snapshot: Snapshot) -> dict[str, str] | None:
    """model -> its letter for a wrong result at baseline where not judged right (`W` confirmed,
    `F` not repeated, `?` not judged: no verdict, nondeterministic, eager inconsistent, a crash);
    None when the night compared no outputs."""
    if Check.accuracy not in snapshot.checks:
        return None
    letters = {}
    for result in snapshot.results:
        baseline = result.outcomes.get(BASELINE)
        check = baseline.accuracy if baseline is not None else None
        if confirmed_wrong(result):
            letters[result.model] = WRONG
        elif baseline is not None and baseline.mismatched:
            letters[result.model] = FLAKY
        elif baseline is None or not baseline.ran or check is None or check.verdict != Accuracy.match:
            letters[result.model] = UNKNOWN
    return letters


def _as_issue_nightly(nightly: NightSummary) -> NightSummary:
    """`nightly` as `recurrence` reads a flag's (its rule, reused): the wrong-results issue's
    name standing for the flag, its letters for the flag's wrong, flaky and unjudged models."""
    letters = nightly.baseline_wrong
    if letters is None:
        return NightSummary(key=nightly.key, created=nightly.created, environment=nightly.environment)
    named = {
        mark: [model for model, said in letters.items() if said == mark] for mark in (WRONG, FLAKY, UNKNOWN)
    }
    point = TrendPoint(key=nightly.key, crashes=0, helps=0, wrong_results=len(named[WRONG]))
    return NightSummary(
        key=nightly.key,
        created=nightly.created,
        environment=nightly.environment,
        trend={ISSUE: point},
        swept=nightly.swept,
        wrong={ISSUE: named[WRONG]},
        flaky={ISSUE: named[FLAKY]},
        outputs_compared=True,
        unjudged={ISSUE: named[UNKNOWN]},
    )


def group_signature(item: CompilerWrong) -> str:
    """What groups wrong results: the op and code line a reduction found (`WrongResult:
    operator.pow at autoencoder_kl_cosmos.py:207`, the line's source left to the finding), else
    the output that differs."""
    locus = item.locus
    if locus is not None and locus.op and locus.line:
        return f"{WRONG_RESULT}: {locus.op} at {locus.line.partition(' `')[0]}"[:300]
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
    close_after: int = 2,
) -> CompilerWrongNight:
    """Tonight's wrong results at baseline, grouped, with their trend and recurrence over
    `nights` (the history's summaries, oldest first, tonight's last: a flag's rule, `recurrence`)
    and the people on their issue."""
    findings = compiler_wrong_results(snapshot)
    groups = groups_of(findings)
    return CompilerWrongNight(
        findings=findings,
        groups=groups,
        keys=[night.key for night in nights],
        trend=[len(night.wrong_at_baseline) for night in nights],
        recurrence=recurrence(
            COMPILER_WRONG_ISSUE, [_as_issue_nightly(night) for night in nights], close_after
        ),
        cc=cc(COMPILER_WRONG_ISSUE, [group.signature for group in groups]) if cc is not None else [],
        issue_url=issue_url,
    )
