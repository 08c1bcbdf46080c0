"""A small store for the dashboard site's tests: the two fixture nightlies and a third after them.

The third nightly (2.12.0.dev20260410) is a later build in which T5 stops crashing under
capture_dynamic_output_shape_ops and GPT-2 starts to (so that the night has both notices),
Mistral's baseline loses a graph, a model joins whose crash
text carries markup, a mention and an issue reference (all of which the pages must show as
text), and a model with a name no file can carry as it is. Llama's eager disagrees with itself
across attention implementations at baseline (a library finding, with a verified no-compile
repro whose script carries markup).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from tests.snapshots import DYNAMIC, SCALAR, crash, model, new_snapshot, ok, old_snapshot
from triagebot.results import (
    BASELINE,
    Accuracy,
    AccuracyCheck,
    CrossCheck,
    ModelResult,
    Reproduction,
    Snapshot,
)
from triagebot.store import LocalStore

HOSTILE = "OddModel</td><script>alert(1)</script>"
HOSTILE_ERROR = "<img src=x onerror=alert(1)> @maintainer see #123 | `tick`"
THIRD_KEY = "2.12.0.dev20260410+cu128"
LIBRARY = "LlamaForCausalLM"  # eager disagrees with itself in the third nightly
INCONSISTENT = AccuracyCheck(
    verdict=Accuracy.eager_inconsistent,
    where="logits",
    detail="largest difference 2.79 above tolerance 0.001",
    cross_checks=[
        CrossCheck(
            name="eager_other_attention", implementation="eager", agrees=False, detail="2.79 </li><b>x"
        ),
        CrossCheck(name="compiled_vs_other_attention", implementation="eager", agrees=True),
    ],
)
LIBRARY_REPRO = Reproduction(
    flag=BASELINE,
    model=LIBRARY,
    signature="EagerInconsistent: logits",
    script="raise EagerInconsistent('</code></pre><script>alert(1)</script>')\n",
    verified=True,
)


def timed(results: dict[str, ModelResult]) -> None:
    """Compile seconds on every run that ran, the flags' slower on some models than the baseline's,
    and two baselines run twice (the night's noise floor: 1.1x)."""
    for index, result in enumerate(results.values()):
        for config, outcome in result.outcomes.items():
            if outcome.ran:
                rise = 1.0 if config == BASELINE else 1.0 + (index % 4) * 0.3
                outcome.stage_seconds = {"build": 0.2, "compile": round(2.0 * rise, 3)}
        if index < 2:
            result.baseline_again = ok(3).model_copy(
                update={"stage_seconds": {"compile": 2.2 if index else 1.9}}
            )


def third_snapshot() -> Snapshot:
    snapshot = new_snapshot()
    results = {result.model: result for result in snapshot.results}
    results["T5ForConditionalGeneration"].outcomes[DYNAMIC] = ok(5)  # fixed
    results["MistralForCausalLM"].outcomes[BASELINE] = ok(3)  # one graph fewer at baseline
    regression = crash("RuntimeError", "nonzero is not supported for meta tensors here")
    results["GPT2LMHeadModel"].outcomes[DYNAMIC] = regression  # newly crashing, confirmed
    results["GPT2LMHeadModel"].confirmations[DYNAMIC] = [regression]
    results["ScriptyModel"] = model(
        "ScriptyModel",
        "decoder",
        ok(3),
        crash("RuntimeError", HOSTILE_ERROR),
        ok(3),
        confirmations={SCALAR: [crash("RuntimeError", HOSTILE_ERROR)]},
    )
    results[HOSTILE] = model(HOSTILE, "vision", ok(2), ok(1), ok(2))
    library = results[LIBRARY].outcomes[BASELINE]
    results[LIBRARY].outcomes[BASELINE] = library.model_copy(update={"accuracy": INCONSISTENT})
    timed(results)
    return snapshot.model_copy(
        update={
            "key": THIRD_KEY,
            "created": datetime(2026, 4, 10, 6, 0, tzinfo=UTC),
            "environment": snapshot.environment.model_copy(
                update={
                    "torch_version": THIRD_KEY,
                    "torch_git_version": "0123456789abcdef0123456789abcdef01234567",
                }
            ),
            "results": list(results.values()),
            "corpus": snapshot.corpus.model_copy(update={"models": list(results)}),
            "reproductions": [*snapshot.reproductions, LIBRARY_REPRO],
        }
    )


def nightlies() -> list[Snapshot]:
    return [old_snapshot(), new_snapshot(), third_snapshot()]


def make_store(path: Path) -> LocalStore:
    store = LocalStore(path)
    for snapshot in nightlies():
        store.put(snapshot)
    return store
