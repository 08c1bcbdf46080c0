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
    CrossCheck,
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


def finding_title(model: str, attention: str, checks: list[CrossCheck]) -> str:
    """A library finding's title, as a transformers issue would name it: the cause its
    cross-checks point to, then the evidence in brackets. Said on every surface (the summary,
    the health issue, the site, the repro's docstring).

    The checks show that plain eager under `attention` is the odd one out: eager under the other
    implementation differs from it, and the compiled outputs (the same model, `attention` too,
    but traced) agree with that other one. For `sdpa` the one branch transformers takes only
    outside tracing is the mask builders' skip (`_ignore_causal_mask_sdpa`,
    `_ignore_bidirectional_mask_sdpa`: no mask, the pattern left to the module's `is_causal`), so
    sdpa ignoring the mask it builds is the cause the evidence names. Whether the mask asked for
    was causal no check shows, so the title does not say; nor which output differs, since the
    checks may first differ in different ones (the cross-checks' details say)."""
    other = checks[0].implementation if checks else OTHER_ATTENTION.get(attention, "eager")
    agreed = any(check.name == "compiled_vs_other_attention" and check.agrees for check in checks)
    follows = f"compiled {attention} agrees with {other} attention" if agreed else "compiled not compared"
    evidence = f"{' and '.join(sorted((attention, other)))} attention disagree in plain eager; {follows}"
    if attention == "sdpa" and agreed:
        cause = "sdpa attention ignores the attention mask it builds"
    else:
        cause = f"{attention} attention disagrees with {other} attention"
    return f"transformers: {model}'s {cause} ({evidence})"


def finding_of(snapshot: Snapshot, model: str) -> LibraryFinding | None:
    """`model`'s library finding in `snapshot`, or None: what its repro's docstring is titled by."""
    result = snapshot.result(model)
    return _finding(result, snapshot) if result is not None else None


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
        title=finding_title(result.model, attention, check.cross_checks),
        repro=_repro(snapshot, result.model, signature),
    )


def library_findings(snapshot: Snapshot) -> list[LibraryFinding]:
    """Tonight's library findings, by model."""
    found = (_finding(result, snapshot) for result in sorted(snapshot.results, key=lambda r: r.model))
    return [finding for finding in found if finding is not None]
