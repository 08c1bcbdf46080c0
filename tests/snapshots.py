"""Fixture snapshots shaped like the hand-written reports: two nightlies, two flags, ten models.

`python -m tests.snapshots` rewrites tests/data/*.json from these builders; tests load the
committed files so that a change here shows up in review as a JSON diff.
"""

from __future__ import annotations

from datetime import UTC, datetime

from tests.builders import DATA, DYNAMIC, SCALAR, flag_patches
from tests.builders import crash as crashed
from tests.builders import ok as ran
from triagebot.results import (
    BASELINE,
    CorpusSelection,
    Environment,
    InputSpec,
    ModelResult,
    ModelSpec,
    Outcome,
    Snapshot,
    Status,
)

FLAGS = flag_patches(SCALAR, DYNAMIC)

GUARD = (
    "Could not guard on data-dependent expression Eq({u}, 0) (unhinted: Eq({u}, 0)).  "
    "(Size-like symbols: {u})"
)
PENDING = (
    "Pending unbacked symbols {syms} not in returned outputs FakeTensor(..., size=({first},)) ((1,), 0)."
)

# The sentinel corpus's NonzeroGuardCrash (triagebot/corpus/sentinels.py), as a spec carries it:
# a branch on nonzero(...).numel() that guards on an unbacked symbol under the flag.
SENTINEL_CODE = """import torch
from torch import nn


class NonzeroGuardCrash(nn.Module):
    def forward(self, x):
        idx = torch.nonzero(x > 0)
        if idx.numel():
            return x.new_zeros(idx.numel(), 2)
        return x
"""
# The message torch 2.13 raises for it, as the sweep records it.
SENTINEL_MESSAGE = (
    "Could not guard on data-dependent expression Ne(u0, 0) (unhinted: Ne(u0, 0)).  "
    "(Size-like symbols: u0)\n\n"
    "consider using data-dependent friendly APIs such as guard_or_false, guard_or_true and "
    "statically_known_true.\n"
    "Caused by: if idx.numel():  # orpus/sentinels.py:80 in forward "
    "(_dynamo/symbolic_convert.py:962 in inner)\n"
    'For more information, run with TORCH_LOGS="dynamic"\n\n'
    "from user code:\n"
    '   File "/work/main/triagebot/corpus/sentinels.py", line 80, in forward\n'
    "    if idx.numel():\n"
)


def ok(graphs: int, reasons: tuple[str, ...] = ()) -> Outcome:
    return ran(graphs, reasons, ops=graphs * 10, seconds=1.5)


def crash(error_type: str, message: str, function: str | None = None) -> Outcome:
    full = message + (
        f'\n\nfrom user code:\n   File "/x/modeling.py", line 7, in {function}\n' if function else ""
    )
    traceback = f"Traceback (most recent call last):\n  ...\n{error_type}: {message}"
    return crashed(error_type, full, error=message.splitlines()[0], traceback=traceback, seconds=2.0)


def guard(u: str) -> Outcome:
    return crash("GuardOnDataDependentSymNode", GUARD.format(u=u), "get_rope_index")


def pending(syms: str, first: str) -> Outcome:
    return crash("PendingUnbackedSymbolNotFound", PENDING.format(syms=syms, first=first))


def sentinel_crash() -> Outcome:
    return crash("GuardOnDataDependentSymNode", SENTINEL_MESSAGE)


ITEM = "Tensor.item() call with capture_scalar_outputs=False"
NONZERO = "Dynamic shape operator (aten.nonzero.default); Operator does not have a meta kernel"


def model(
    name: str, stratum: str, baseline: Outcome, scalar: Outcome | None, dynamic: Outcome | None, **extra
):
    outcomes = {BASELINE: baseline}
    if scalar is not None:
        outcomes[SCALAR] = scalar
    if dynamic is not None:
        outcomes[DYNAMIC] = dynamic
    return ModelResult(model=name, stratum=stratum, outcomes=outcomes, **extra)


def sentinel_spec() -> ModelSpec:
    values = [1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 4.0, -4.0]
    return ModelSpec(
        model="NonzeroGuardCrash",
        source="sentinel",
        class_path="triagebot.corpus.sentinels:NonzeroGuardCrash",
        stratum="sentinel",
        inputs=[InputSpec(name="x", shape=[8], dtype="float32", kind="values", values=values)],
        seed=0,
        code=SENTINEL_CODE,
    )


def old_snapshot() -> Snapshot:
    results = [
        model(
            "Qwen2VLForConditionalGeneration",
            "vl",
            ok(12, (ITEM, NONZERO)),
            pending("{u6}", "u6"),
            guard("u0"),
        ),
        model("LlavaForConditionalGeneration", "vl", ok(8, (ITEM,)), pending("{u1, u0}", "u0"), ok(6)),
        model("LlamaForCausalLM", "decoder", ok(3, (ITEM,)), ok(1), ok(3)),
        model(
            "MistralForCausalLM",
            "decoder",
            ok(4, (NONZERO,)),
            ok(4),
            guard("u8"),
            confirmations={DYNAMIC: [ok(4)]},
        ),
        model("T5ForConditionalGeneration", "encoder_decoder", ok(5), ok(7), ok(5)),
        model(
            "BartModel",
            "encoder_decoder",
            Outcome(status=Status.create_error, error_type="ValueError", error="vocab_size must be set"),
            None,
            None,
        ),
        model(
            "DetrForObjectDetection",
            "vision",
            Outcome(status=Status.timeout, error_type="Timeout", error="run exceeded 300 s"),
            ok(2),
            ok(2),
        ),
        model("ViTModel", "vision", ok(2), Outcome(status=Status.signal, error_type="SIGSEGV"), ok(2)),
        model(
            "WhisperModel",
            "encoder_decoder",
            crash("Unsupported", "call_function UserDefinedClassVariable() [] {}"),
            ok(2),
            crash("Unsupported", "call_function UserDefinedClassVariable() [] {}"),
        ),
        model(
            "NonzeroGuardCrash",
            "sentinel",
            ok(2, (NONZERO,)),
            ok(2, (NONZERO,)),
            sentinel_crash(),
            confirmations={DYNAMIC: [sentinel_crash()]},
            spec=sentinel_spec(),
        ),
    ]
    return Snapshot(
        key="2.12.0.dev20260408+cu128",
        created=datetime(2026, 4, 8, 6, 0, tzinfo=UTC),
        environment=Environment(
            torch_version="2.12.0.dev20260408+cu128",
            torch_git_version="a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
            transformers_version="5.5.0",
            python_version="3.12.3",
            platform="Linux-x86_64",
            device="cuda",
            gpu_name="NVIDIA PG509-210",
            cuda_version="12.8",
        ),
        flags=FLAGS,
        corpus=CorpusSelection(
            name="hf",
            seed=0,
            sample=10,
            strata={"vl": 2, "decoder": 2, "encoder_decoder": 3, "vision": 2, "sentinel": 1},
            models=[result.model for result in results],
        ),
        results=results,
    )


def new_snapshot() -> Snapshot:
    snapshot = old_snapshot()
    results = {result.model: result for result in snapshot.results}
    results["LlavaForConditionalGeneration"].outcomes[SCALAR] = ok(8)  # fixed
    results["T5ForConditionalGeneration"].outcomes[DYNAMIC] = guard("u3")  # regression
    results["LlamaForCausalLM"].outcomes[BASELINE] = ok(2, (ITEM,))  # fewer graphs at baseline
    results["Qwen2VLForConditionalGeneration"].outcomes[DYNAMIC] = crash(
        "RuntimeError", "Runtime assertion failed for expression Eq(Mod(u0, 2), 0) on node 'eq'"
    )
    del results["ViTModel"]
    results["GPT2LMHeadModel"] = model("GPT2LMHeadModel", "decoder", ok(2), ok(2), ok(2))
    return snapshot.model_copy(
        update={
            "key": "2.12.0.dev20260409+cu128",
            "created": datetime(2026, 4, 9, 6, 0, tzinfo=UTC),
            "environment": snapshot.environment.model_copy(
                update={
                    "torch_version": "2.12.0.dev20260409+cu128",
                    "torch_git_version": "f0e1d2c3b4a5968778695a4b3c2d1e0f98765432",
                }
            ),
            "results": list(results.values()),
            "corpus": snapshot.corpus.model_copy(update={"models": list(results)}),
        }
    )


def write_all() -> None:
    for snapshot in (old_snapshot(), new_snapshot()):
        (DATA / f"{snapshot.key}.json").write_text(
            snapshot.model_dump_json(indent=1) + "\n", encoding="utf-8"
        )


if __name__ == "__main__":
    write_all()
