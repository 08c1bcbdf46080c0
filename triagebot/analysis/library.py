"""The library's findings of a night: models whose compiled outputs differ from eager's only
because eager disagrees with itself across attention implementations (`eager_inconsistent`).

They are transformers bugs, not the compiler's: each is reported with the cross-checks that show
it, a title a transformers maintainer would recognise, and a repro that compiles nothing
(`report.repro`, `other_attention`), and never as a torch.compile wrong result, against a flag,
or in a flag's verdict. Only the baseline's runs are read: a flag cannot change eager.
"""

from __future__ import annotations

from triagebot.results import (
    BASELINE,
    EAGER_INCONSISTENT,
    OTHER_ATTENTION,
    LibraryFinding,
    ModelResult,
    Reproduction,
    Snapshot,
    error_signature,
)


def library_signature(where: str | None) -> str:
    """What a library finding's repro raises, normalised as errors are: `EagerInconsistent: logits`."""
    return error_signature(EAGER_INCONSISTENT, (where or "output").removeprefix("second call: "))


def _repro(snapshot: Snapshot, model: str, signature: str) -> Reproduction | None:
    mine = (r for r in snapshot.reproductions if r.flag == BASELINE and r.model == model)
    return next((repro for repro in mine if repro.signature == signature), None)


def _finding(result: ModelResult, snapshot: Snapshot) -> LibraryFinding | None:
    outcome = result.outcomes.get(BASELINE)
    if outcome is None or not outcome.eager_inconsistent or outcome.accuracy is None:
        return None
    check = outcome.accuracy
    other = check.cross_checks[0].implementation if check.cross_checks else "eager"
    attention = OTHER_ATTENTION.get(other, "sdpa")
    where = check.where or "output"
    signature = library_signature(where)
    class_path = result.spec.class_path if result.spec is not None else ""
    return LibraryFinding(
        model=result.model,
        class_path=class_path,
        attention=attention,
        other_attention=other,
        where=where,
        detail=check.detail,
        cross_checks=check.cross_checks,
        signature=signature,
        title=(
            f"{result.model}: eager outputs differ between attn_implementation="
            f'"{attention}" and "{other}" ({where})'
        ),
        repro=next(
            (
                r
                for r in snapshot.reproductions
                if r.flag == BASELINE and r.signature == signature and r.model == result.model
            ),
            None,
        ),
    )


def library_findings(snapshot: Snapshot) -> list[LibraryFinding]:
    """Tonight's library findings, by model."""
    found = (_finding(result, snapshot) for result in sorted(snapshot.results, key=lambda r: r.model))
    return [finding for finding in found if finding is not None]
