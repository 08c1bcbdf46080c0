"""Isolation: a run forked from the warm parent records what a fresh interpreter records.

The warm parent (the forkserver) has imported torch, transformers and what a first compile
imports, and filled pure-Python caches; it must hold no CUDA context and no thread pool when it
forks. These tests compare the records of the warm path with those of a fresh `python` per run,
run by run, on the sentinels and on real transformers models from the smoke corpus.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from triagebot.config import DEFAULT_FLAGS
from triagebot.corpus import UnknownCorpus, load_corpus
from triagebot.results import BASELINE, Outcome
from triagebot.sweep import SweepPlan, run_sweep
from triagebot.sweep import parent as parent_module
from triagebot.sweep.pool import Pool
from triagebot.sweep.tasks import RunKey, Task, run_task

pytestmark = pytest.mark.torch

# A fresh interpreter running one (model, config) with plain Dynamo: the sweep's backend module
# skips Dynamo's guard-latency measurement, so the fresh path puts it back.
FRESH = r"""
import json, sys
import torch._dynamo.guards as guards
measure = guards.profile_guard_manager
from triagebot.results import ModelSpec
from triagebot.sweep import run
guards.profile_guard_manager = measure
outcome, _ = run.run_one(ModelSpec.model_validate_json(sys.argv[1]), json.loads(sys.argv[2]), "cpu")
print(outcome.model_dump_json())
"""
# Real models of the smoke corpus: a plain encoder, and one whose graph breaks a flag removes.
REAL_MODELS = ("BertModel", "LlavaForConditionalGeneration")
# The sentinels whose records depend on the flag: a break one removes, and a crash one causes.
SENTINELS = ("ItemBreak", "NonzeroGuardCrash")


def real_models():
    try:
        specs = [s for s in load_corpus("smoke") if s.source == "transformers"]
    except UnknownCorpus:
        specs = []
    chosen = [s for s in specs if s.model in REAL_MODELS]
    return chosen if len(chosen) >= 2 else specs[: len(REAL_MODELS)]


def essence(outcome: Outcome) -> tuple:
    return (
        outcome.status.value,
        outcome.graphs,
        outcome.ops,
        outcome.break_reasons,
        outcome.error_type,
        outcome.signature,
    )


def fresh(spec, patch) -> Outcome:
    done = subprocess.run(
        [sys.executable, "-c", FRESH, spec.model_dump_json(), json.dumps(patch)],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return Outcome.model_validate_json(done.stdout.strip().splitlines()[-1])


def test_warm_path_records_equal_fresh_interpreters_run_by_run(tmp_path):
    specs = [s for s in load_corpus("sentinels") if s.model in SENTINELS] + real_models()
    assert len(specs) >= len(SENTINELS) + 2, "the smoke corpus has fewer than two transformers models"
    configs = {BASELINE: {}, **{name: flag.patch for name, flag in DEFAULT_FLAGS.items()}}
    always = {name: flag.model_copy(update={"when": "always"}) for name, flag in DEFAULT_FLAGS.items()}
    warm = run_sweep(SweepPlan(specs, always, tmp_path / "warm.jsonl", device="cpu", jobs=2, timeout=300))
    warm_by_run = {(r.model, r.config): essence(r.outcome) for r in warm.records if r.attempt == 0}

    runs = [(spec, config, patch) for spec in specs for config, patch in configs.items()]
    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(lambda run: fresh(run[0], run[2]), runs))
    fresh_by_run = {
        (spec.model, config): essence(o) for (spec, config, _), o in zip(runs, outcomes, strict=True)
    }

    assert warm_by_run.keys() == fresh_by_run.keys()
    for run in fresh_by_run:
        assert warm_by_run[run] == fresh_by_run[run], run
    # the comparison means something: graph breaks, a flag that removes them, and a crash
    statuses = {essence[0] for essence in fresh_by_run.values()}
    assert statuses == {"ok", "crash"}
    assert any(e[1] and e[1] > 1 for e in fresh_by_run.values())


def test_warm_parent_forks_with_one_thread_and_no_cuda():
    specs = [s for s in load_corpus("sentinels") if s.model == "ItemBreak"]
    tasks = [Task(probe={"device": "cpu", "flags": {}})]
    tasks += [run_task(RunKey(specs[0].model, BASELINE), specs[0], {}) for _ in range(2)]
    parent_module.stop_parent()  # a parent of its own, started for a sweep: with its warm-up compile
    with Pool(device="cpu", jobs=2, timeout=120, warm_compile=True) as pool:
        results = list(pool.run(tasks))
    assert len(results) == 3
    for result in results:
        fork = result.message["fork"]
        assert fork == {"parent_threads": 1, "cuda_initialized": False, "warm_compiled": True}
    runs = [r for r in results if r.outcome is not None]
    assert [r.outcome.graphs for r in runs] == [2, 2]


# A driver script's model: one tiny BERT, built from its config in the children.
TINY_BERT = """
from triagebot.results import InputSpec, ModelSpec
spec = ModelSpec(
    model="TinyBert",
    class_path="transformers:BertModel",
    config={"hidden_size": 32, "intermediate_size": 64, "num_attention_heads": 2, "num_hidden_layers": 1,
            "vocab_size": 64},
    inputs=[InputSpec(name="input_ids", shape=[1, 8], dtype="int64", kind="randint", high=64)],
)"""


def test_the_driver_process_never_imports_torch(tmp_path):
    script = f"""
import sys
from triagebot.sweep import SweepPlan, run_sweep, merge
{TINY_BERT}
result = run_sweep(SweepPlan([spec], {{}}, {str(tmp_path / "one.jsonl")!r}, device="cpu", jobs=1))
assert result.records[0].outcome.status == "ok", result.records[0].outcome
merge([result.path])
assert "torch" not in sys.modules, "the driver imported torch"
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_parent_that_sees_a_gpu_compiles_nothing_and_never_reaches_cuda():
    """On a GPU runner a model run reaches the CUDA driver (Dynamo reads the CUDA RNG state around
    every traced frame), and a parent holding the driver forks children that cannot use CUDA.
    Here torch is told a GPU exists and CUDA's initialisation fails loudly: the parent's warm-up,
    asked for a compile, must not compile and must not reach CUDA."""
    script = """
import os, json
os.environ["TRIAGEBOT_WARM"] = json.dumps({"classes": [], "compile": True})
import torch
torch.cuda.is_available = lambda: True
def refuse():
    raise SystemExit("the warm parent reached CUDA")
torch.cuda._lazy_init = torch.cuda.random._lazy_init = refuse
torch.cuda.get_rng_state = torch.cuda.random.get_rng_state = lambda *args: refuse()
torch.cuda.is_current_stream_capturing = lambda: refuse()
from triagebot.sweep import warm
from torch._subclasses.fake_tensor import FakeTensorMode
assert not FakeTensorMode.cache, "the parent compiled although a GPU is visible"
print("ok", warm.FAILED)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().startswith("ok")


def test_a_parent_started_early_imports_the_suites_modules_before_it_waits_for_its_request(tmp_path):
    """`start_parent` starts the parent before the models are known, so that its imports overlap
    with the driver's loading of its corpus: the suites' corpus modules (transformers', diffusers')
    are imported before the parent waits on its FIFO for the request."""
    script = f"""
import json, os, sys, threading, time
fifo = {str(tmp_path / "request")!r}
os.mkfifo(fifo)
fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # held open as the driver holds it
os.environ["TRIAGEBOT_WARM_FIFO"] = fifo
imported = []
def answer():  # the driver: its request once the parent imported the suites, or after 60 s
    deadline = time.monotonic() + 60
    while "triagebot.corpus.hf" not in sys.modules and time.monotonic() < deadline:
        time.sleep(0.05)
    imported.append("triagebot.corpus.hf" in sys.modules)
    os.write(fd, json.dumps({{"classes": [], "compile": False}}).encode() + b"\\n")
threading.Thread(target=answer, daemon=True).start()
from triagebot.sweep import warm
print(imported)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[True]"


def test_children_that_compile_with_aot_autograd_leave_no_semaphore_behind(tmp_path):
    """torch.fx's Interpreter opens a tqdm bar on every AOTAutograd compile, and tqdm makes a
    multiprocessing lock on first use: made in each child, the resource tracker warned of one
    leaked semaphore per run when the sweep exited (37 after `make run`)."""
    script = f"""
from triagebot.sweep import SweepPlan, run_sweep
from triagebot.sweep.ladder import Ladder
{TINY_BERT}
ladder = Ladder(choose=lambda results, flags: [("TinyBert", "baseline")], backends=["aot_eager"])
plan = SweepPlan([spec], {{}}, {str(tmp_path / "one.jsonl")!r}, device="cpu", jobs=2, ladder=ladder)
result = run_sweep(plan)
assert [(r.backend, r.outcome.status) for r in result.records] == [(None, "ok"), ("aot_eager", "ok")]
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "leaked semaphore" not in done.stderr, done.stderr[-2000:]
