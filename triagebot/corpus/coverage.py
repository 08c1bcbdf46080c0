"""Coverage of a corpus check: which models build and run eagerly, and why the others do not.

Reads the `RunRecord`s of a build+eager-only check (no torch needed here). A model is
- `covered`: it ran on a full-modality recipe;
- `partial`: a multimodal model that only ran on a text recipe (not covered);
- `missing_dependency`: it needs an optional package that is not installed (timm, PIL,
  torchvision, ...), reported apart because it is not a failure of the corpus;
- `failed`: no recipe ran it, it crashed while building (a spec that does not survive the round
  trip to JSON is such a crash, naming the key that differs), it timed out, or its worker died.

The summary also lists the family fixes of the shrink rules whose family the installed
transformers no longer has (`shrink.stale_fixes()`, passed in by the caller).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable
from typing import Any

from triagebot.results import ModelSpec, RunRecord, Status

COVERED = "covered"
PARTIAL = "partial"
MISSING_DEPENDENCY = "missing_dependency"
FAILED = "failed"

_MISSING = re.compile(
    r"MissingDependency|requires the (\w+) library|No module named|pip install|is not installed|"
    r"requires? `?(timm|PIL|Pillow|torchvision|torchaudio|librosa|scipy|detectron2|natten|"
    r"pytesseract|sentencepiece|tokenizers|accelerate)",
    re.IGNORECASE,
)


def status_of(record: RunRecord) -> str:
    outcome = record.outcome
    if outcome.status == Status.ok:
        return PARTIAL if record.spec is not None and record.spec.partial else COVERED
    text = f"{outcome.error_type or ''}: {outcome.error or ''}"
    if outcome.status == Status.create_error and _MISSING.search(text):
        return MISSING_DEPENDENCY
    return FAILED


def reason_of(record: RunRecord) -> str | None:
    outcome = record.outcome
    if outcome.status == Status.ok:
        return "ran on a text-only recipe" if record.spec is not None and record.spec.partial else None
    detail = outcome.error or ""
    kind = outcome.error_type or outcome.status.value
    return f"{outcome.status.value}: {kind}: {detail}".rstrip(": ")[:500]


def summarize(
    records: Iterable[RunRecord],
    specs: Iterable[ModelSpec],
    stale_fixes: Iterable[str] = (),
    left_out: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The coverage object `corpus check --json` prints: counts over the population, one entry per
    model, the stale family fixes (one line each), and the library's names the corpus leaves out
    with why (`corpus.left_out`)."""
    by_model = {record.model: record for record in records}
    entries = []
    for spec in specs:
        record = by_model.get(spec.model)
        if record is None:
            entries.append(_entry(spec, FAILED, None, "no result: the check did not run it"))
            continue
        completed = record.spec or spec
        entries.append(_entry(completed, status_of(record), record.outcome.seconds, reason_of(record)))
    counts = Counter(entry["status"] for entry in entries)
    strata: dict[str, Counter] = {}
    for entry in entries:
        strata.setdefault(entry["stratum"], Counter())[entry["status"]] += 1
    params = [
        entry["params"] for entry in entries if entry["params"] is not None and entry["status"] == COVERED
    ]
    population = len(entries)
    return {
        "library_classes": population + len(left_out or {}),
        "population": population,
        "covered": counts[COVERED],
        "partial": counts[PARTIAL],
        "missing_dependency": counts[MISSING_DEPENDENCY],
        "failed": counts[FAILED],
        "covered_percent": round(100.0 * counts[COVERED] / population, 1) if population else 0.0,
        "by_stratum": {stratum: dict(sorted(c.items())) for stratum, c in sorted(strata.items())},
        "median_params": int(statistics.median(params)) if params else None,
        "max_params": max(params) if params else None,
        "recipes": dict(
            Counter(e["recipe"] for e in entries if e["recipe"] and e["status"] == COVERED).most_common()
        ),
        "entries": entries,
        "stale_fixes": list(stale_fixes),
        "left_out": dict(sorted((left_out or {}).items())),
    }


def _entry(spec: ModelSpec, status: str, seconds: float | None, reason: str | None) -> dict[str, Any]:
    return {
        "model": spec.model,
        "stratum": spec.stratum,
        "modality": spec.modality,
        "status": status,
        "recipe": spec.recipe,
        "reason": reason,
        "params": spec.params,
        "seconds": seconds,
    }


def render(summary: dict[str, Any]) -> str:
    """Coverage as plain text: totals, a row per stratum, then every model that is not covered."""
    population = summary["population"]
    left_out = summary.get("left_out") or {}
    library = [
        f"classes in the library {population + len(left_out)}: left out {len(left_out)}, swept {population}"
    ]
    lines = [
        *(library if left_out else []),
        f"population {population}: covered {summary['covered']} ({summary['covered_percent']}%), "
        f"partial {summary['partial']}, missing dependency {summary['missing_dependency']}, "
        f"failed {summary['failed']}",
        f"parameters of covered models: median {summary['median_params']}, max {summary['max_params']}",
        "",
        f"{'stratum':<16} {COVERED:>8} {PARTIAL:>8} {'missing':>8} {FAILED:>8}",
    ]
    for stratum, counts in summary["by_stratum"].items():
        lines.append(
            f"{stratum:<16} {counts.get(COVERED, 0):>8} {counts.get(PARTIAL, 0):>8} "
            f"{counts.get(MISSING_DEPENDENCY, 0):>8} {counts.get(FAILED, 0):>8}"
        )
    others = [entry for entry in summary["entries"] if entry["status"] != COVERED]
    if others:
        lines += ["", "not covered:"]
        for entry in sorted(others, key=lambda e: (e["status"], e["model"])):
            lines.append(f"  {entry['model']} [{entry['stratum']}] {entry['status']}: {entry['reason']}")
    lines += _left_out_lines(summary.get("left_out") or {})
    stale = summary.get("stale_fixes") or []
    if stale:
        lines += ["", f"family fixes to remove ({len(stale)}: their family is gone from this transformers):"]
        lines += [f"  {line}" for line in stale]
    return "\n".join(lines)


# Up to this many left-out names are listed one a line; more (timm's 1,190 variants) are counted
# by reason, and `--json` lists each.
_LISTED = 40


def _left_out_lines(left_out: dict[str, str]) -> list[str]:
    if not left_out:
        return []
    lines = ["", f"left out of the sweep: {len(left_out)} names of the library"]
    if len(left_out) <= _LISTED:
        return lines + [f"  {name}: {reason}" for name, reason in left_out.items()]
    reasons = Counter(left_out.values())
    return [*lines, f"  ({len(reasons)} reasons; --json lists each name with its reason)"]
