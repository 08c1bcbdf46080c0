"""What isolation costs: one fixed list of (model, config) runs, three ways, on this machine.

(a) `triagebot sweep --jobs 2`: the real command (a fresh `python -m triagebot`), workers
    forked from the warm parent, wall time from start to exit;
(b) the lower bound: the same runs in one process (`torch._dynamo.reset()` between runs, one
    untimed warm-up run first), the sum of their build+eager+compile seconds divided by the
    worker count;
(c) the naive harness of existing sweep scripts: a fresh `python` per (model, config), two at a
    time, wall time.

The runs: the sentinels that compile (not the ones that segfault or hang) and real transformers
models, each under the baseline and both default flags. `--list wide` (the default): the smoke
corpus (seventeen models of every stratum, with the corpus's own tiny configs and inputs,
resolved beforehand) and fourteen small text models (the tiny configs below); `--list small`:
those fourteen only. Targets on a 2-core machine with 2
workers: (a)/(b) <= 1.3 and (c)/(a) >= 2.5. The last line is machine-readable:
`overhead=<(a)/(b)> naive_speedup=<(c)/(a)>`.

    python bench/sweep_overhead.py [--jobs 2] [--list wide|small] [--models N] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from triagebot.config import DEFAULT_FLAGS  # noqa: E402
from triagebot.results import BASELINE, InputSpec, ModelSpec  # noqa: E402

SENTINELS = ("Plain", "ItemBreak", "NonzeroBreak", "NonzeroGuardCrash")
_TEXT = [
    InputSpec(name="input_ids", shape=[2, 16], dtype="int64", kind="randint", low=0, high=96),
    InputSpec(name="attention_mask", shape=[2, 16], dtype="int64", kind="ones"),
]
_SMALL = {"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, "vocab_size": 128}
_LAYERS = {"num_hidden_layers": 2}
TRANSFORMERS: dict[str, dict] = {
    "LlamaForCausalLM": {**_SMALL, **_LAYERS, "num_key_value_heads": 2},
    "BertModel": {**_SMALL, **_LAYERS},
    "MistralForCausalLM": {**_SMALL, **_LAYERS, "num_key_value_heads": 2},
    "Qwen2ForCausalLM": {**_SMALL, **_LAYERS, "num_key_value_heads": 2},
    "GemmaForCausalLM": {**_SMALL, **_LAYERS, "num_key_value_heads": 2, "head_dim": 16},
    "GPT2LMHeadModel": {"n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 128},
    "OPTForCausalLM": {
        "hidden_size": 64,
        "ffn_dim": 128,
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "vocab_size": 128,
        "word_embed_proj_dim": 64,
    },
    "GPTNeoXForCausalLM": {**_SMALL, **_LAYERS},
    "RobertaModel": {**_SMALL, **_LAYERS, "pad_token_id": 1},
    "AlbertModel": {**_SMALL, **_LAYERS, "embedding_size": 32},
    "ElectraModel": {**_SMALL, **_LAYERS, "embedding_size": 32},
    "DistilBertModel": {"dim": 64, "hidden_dim": 128, "n_heads": 4, "n_layers": 2, "vocab_size": 128},
    "BloomForCausalLM": {"hidden_size": 64, "n_head": 4, "n_layer": 2, "vocab_size": 128},
    "PhiForCausalLM": {**_SMALL, **_LAYERS},
}
CORPUS = "sweep-overhead"


def _small(names: list[str]) -> list[ModelSpec]:
    return [
        ModelSpec(
            model=name,
            class_path=f"transformers:{name}",
            config_class=f"{name.removesuffix('ForCausalLM').removesuffix('LMHeadModel')}Config",
            stratum="bench",
            config=TRANSFORMERS[name],
            recipe="text",
            inputs=_TEXT,
        )
        for name in names
    ]


_RESOLVE = """
import json, sys
from triagebot.corpus import build, load_corpus
print(json.dumps([build(spec, "cpu").spec.model_dump(mode="json") for spec in load_corpus("smoke")]))
"""


def _smoke() -> list[ModelSpec]:
    """The smoke corpus, resolved beforehand (tiny config, recipe, inputs), so that every way
    runs the same inputs and none pays the recipe ladder."""
    done = subprocess.run([sys.executable, "-c", _RESOLVE], capture_output=True, text=True, check=True)
    return [ModelSpec.model_validate(item) for item in json.loads(done.stdout.strip().splitlines()[-1])]


def specs(models: int | None = None, corpus: str = "small") -> list[ModelSpec]:
    """The benchmark's list (registered as a corpus for the (a) run, where it is read from the
    JSON the benchmark wrote, as a stored corpus would be): the sentinels that compile, then
    `small` (fourteen small text models) or `wide` (those and the smoke corpus: every stratum,
    the corpus's own tiny configs). `models` keeps the first N transformers models."""
    stored = os.environ.get("SWEEP_OVERHEAD_SPECS")
    if stored:
        return [ModelSpec.model_validate(item) for item in json.loads(Path(stored).read_text())]
    from triagebot.corpus import load_corpus

    chosen = [s for s in load_corpus("sentinels") if s.model in SENTINELS]
    real = _small(list(TRANSFORMERS))
    if corpus == "wide":
        smoke = _smoke()
        names = {spec.model for spec in smoke}
        real = smoke + [spec for spec in real if spec.model not in names]
    return chosen + real[: models or len(real)]


def _configs() -> dict[str, dict]:
    return {BASELINE: {}, **{name: flag.patch for name, flag in DEFAULT_FLAGS.items()}}


# (a) runs every flag on every model, as (b) and (c) do, and confirms nothing, as they do not
_CONFIG = "[sweep]\nconfirm = 0\n" + "".join(
    f"\n[flags.{name}]\npatch = {{ {', '.join(f'{k} = {json.dumps(v)}' for k, v in flag.patch.items())} }}\n"
    'when = "always"\n'
    for name, flag in DEFAULT_FLAGS.items()
)


# (a): the real command, with this file's list registered as a corpus in the driver process.
_CLI = f"""
import sys
sys.path.insert(0, {str(ROOT / "bench")!r})
import triagebot.corpus as corpus
corpus.CORPORA[{CORPUS!r}] = "sweep_overhead"
from triagebot.cli import main
sys.argv = ["triagebot", *sys.argv[1:]]
main()
"""


def way_a(out: Path, listed: Path, jobs: int) -> tuple[float, float, list]:
    """Wall seconds of the command, seconds until its first run started, and its records."""
    stream, config = out / "a.jsonl", out / "triagebot.toml"
    config.write_text(_CONFIG)
    env = {**os.environ, "SWEEP_OVERHEAD_SPECS": str(listed)}
    command = [
        sys.executable,
        "-c",
        _CLI,
        "sweep",
        "--corpus",
        CORPUS,
        "--jobs",
        str(jobs),
        "--config",
        str(config),
    ]
    command += ["--device", "cpu", "--timeout", "600", "--out", str(stream)]
    launched = time.time()
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"(a) failed:\n{done.stderr[-3000:]}")
    from triagebot.sweep import read_stream

    header, records = read_stream(stream)
    return seconds, header.started.timestamp() - launched, records


# (b): one process, every run in turn.
_INPROCESS = """
import json, sys, torch
torch.set_num_threads(int(sys.argv[1]))
sys.path.insert(0, sys.argv[2])
import sweep_overhead as bench
import triagebot.sweep.warm
from triagebot.sweep.run import run_one
runs = [(s, c, p) for s in bench.specs() for c, p in bench._configs().items()]
run_one(runs[0][0], runs[0][2], "cpu", fresh=True)  # untimed warm-up
total, stages = 0.0, {}
for spec, config, patch in runs:
    outcome, _ = run_one(spec, patch, "cpu", fresh=True)
    total += sum(outcome.stage_seconds.values())
print(json.dumps({"seconds": total, "runs": len(runs)}))
"""


def way_b(listed: Path, jobs: int) -> float:
    threads = max(1, len(os.sched_getaffinity(0)) // jobs)
    command = [sys.executable, "-c", _INPROCESS, str(threads), str(ROOT / "bench")]
    env = {**os.environ, "SWEEP_OVERHEAD_SPECS": str(listed)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode:
        sys.exit(f"(b) failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])["seconds"] / jobs


# (c): a fresh interpreter per run, `jobs` at a time.
_NAIVE = """
import json, sys
from triagebot.results import ModelSpec
from triagebot.sweep.run import run_one
outcome, _ = run_one(ModelSpec.model_validate_json(sys.argv[1]), json.loads(sys.argv[2]), "cpu")
print(outcome.status.value)
"""


def way_c(chosen: list[ModelSpec], jobs: int) -> float:
    runs = [(s, p) for s in chosen for p in _configs().values()]

    def one(run):
        spec, patch = run
        command = [sys.executable, "-c", _NAIVE, spec.model_dump_json(), json.dumps(patch)]
        subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=True)

    start = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, runs))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--list", choices=("small", "wide"), default="wide", help="models: see specs()")
    parser.add_argument("--models", type=int, default=None, help="only the first N transformers models")
    parser.add_argument("--out", type=Path, default=None, help="keep the (a) stream here")
    parser.add_argument("--skip-naive", action="store_true", help="leave (c) out (no last line)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="sweep-overhead-"))
    out.mkdir(parents=True, exist_ok=True)
    chosen = specs(args.models, args.list)
    listed = out / "specs.json"
    listed.write_text(json.dumps([spec.model_dump(mode="json") for spec in chosen]))
    runs = len(chosen) * len(_configs())
    print(f"{runs} runs ({len(chosen)} models x {len(_configs())} configs), {args.jobs} workers")

    a, startup, records = way_a(out, listed, args.jobs)
    bad = [f"{r.model}[{r.config}]: {r.outcome.status.value}" for r in records if r.outcome.status != "ok"]
    note = "; not ok: " + ", ".join(bad) if bad else ""
    print(f"(a) triagebot sweep:        {a:7.1f} s  ({len(records)} records{note})")
    b = way_b(listed, args.jobs)
    print(f"(b) in-process lower bound: {b:7.1f} s  (sum of build+eager+compile / {args.jobs})")
    # What isolation costs, split: the warm parent's start (imports, warm-up compile) is paid
    # once per sweep; the rest scales with the runs.
    runs_part = a - startup
    share = runs_part / b
    print(f"    (a) = {startup:.1f} s to the first run + {runs_part:.1f} s of runs = {share:.2f} (b)")
    if args.skip_naive:
        print(f"overhead={a / b:.2f}")
        return
    c = way_c(chosen, args.jobs)
    print(f"(c) fresh python per run:   {c:7.1f} s")
    print(f"overhead={a / b:.2f} naive_speedup={c / a:.2f}")


if __name__ == "__main__":
    main()
