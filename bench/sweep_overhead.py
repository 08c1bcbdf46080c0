"""What isolation costs: one fixed list of (model, config) runs, three ways, on this machine.

(a) `triagebot sweep --jobs 2`: the real command (a fresh `python -m triagebot`), workers
    forked from the warm parent, wall time from start to exit;
(b) the lower bound: the same runs in one process (`torch._dynamo.reset()` between runs, one
    untimed warm-up run first), the sum of their run seconds (build, eager run, compile and the
    accuracy check) divided by the worker count;
(c) the naive harness of existing sweep scripts: a fresh `python` per (model, config), two at a
    time, wall time.

The three make the same runs with the same checks: (a)'s `triagebot.toml` (`config_text`) runs every
flag on every model (`when = "always"`), confirms nothing and climbs no backend ladder, and
(b) and (c) make the check it leaves on, accuracy, as every run of a night does
(`plan.checks_for` of that one config). The benchmark compares what each way made, run by run
(model, config, status, checks: `summary.runs_made`), and exits 1 naming the runs that differ.
It states the accuracy check's share of (b)'s run seconds, and with `--ladder` sweeps (a) again
with the backend ladder a night climbs (its rungs are no runs of (b)'s list) to state its cost.

The runs: the sentinels that compile (not the ones that segfault or hang) and real transformers
models, each under the baseline and both default flags. `--list wide` (the default): the smoke
corpus (every stratum, with the corpus's own tiny configs and inputs, resolved beforehand) and
fourteen small text models (the tiny configs below); `--list small`: those fourteen only;
`--list sentinels`: the sentinels alone (a check that the benchmark runs end to end, not a
measurement). Targets on a 2-core machine with 2 workers: (a)/(b) <= 1.3 and (c)/(a) >= 2.5.
The last line is machine-readable: `overhead=<(a)/(b)> naive_speedup=<(c)/(a)>`.

    python bench/sweep_overhead.py [--jobs 2] [--list wide|small|sentinels] [--models N]
                                   [--ladder] [--skip-naive] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from triagebot.config import DEFAULT_FLAGS, Config, parse_config  # noqa: E402
from triagebot.results import BASELINE, Check, InputSpec, ModelSpec  # noqa: E402
from triagebot.sweep.plan import checks_for  # noqa: E402
from triagebot.sweep.summary import RunMade  # noqa: E402

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
    `small` (fourteen small text models), `wide` (those and the smoke corpus: every stratum,
    the corpus's own tiny configs) or `sentinels` (none). `models` keeps the first N
    transformers models."""
    stored = os.environ.get("SWEEP_OVERHEAD_SPECS")
    if stored:
        return [ModelSpec.model_validate(item) for item in json.loads(Path(stored).read_text())]
    from triagebot.corpus import load_corpus

    chosen = [s for s in load_corpus("sentinels") if s.model in SENTINELS]
    real = _small(list(TRANSFORMERS)) if corpus != "sentinels" else []
    if corpus == "wide":
        smoke = _smoke()
        names = {spec.model for spec in smoke}
        real = smoke + [spec for spec in real if spec.model not in names]
    return chosen + real[: models or len(real)]


def config_text(ladder: bool = False) -> str:
    """(a)'s `triagebot.toml`: every flag on every model (`when = "always"`), as (b) and (c) run
    them; no confirmation, which they do not make; accuracy checked, as every run of a night is;
    and no backend ladder (`backends = []`, and no recompile rung: `recompiles = "none"`), whose
    rungs are no runs of theirs. `ladder`: the ladder as a night climbs it, for its cost alone."""
    sweep = "[sweep]\nconfirm = 0\naccuracy = true\n"
    if not ladder:
        sweep += 'backends = []\nrecompiles = "none"\n'
    flags = ""
    for name, flag in DEFAULT_FLAGS.items():
        patch = ", ".join(f"{key} = {json.dumps(value)}" for key, value in flag.patch.items())
        flags += f'\n[flags.{name}]\npatch = {{ {patch} }}\nwhen = "always"\n'
    return sweep + flags


def settings(ladder: bool = False) -> Config:
    return parse_config(config_text(ladder), "sweep_overhead.py")


def checks() -> frozenset[Check]:
    """What every run of (b) and (c) checks: what (a)'s sweep asks of each of its runs."""
    return checks_for(settings().sweep)


def _configs() -> dict[str, dict]:
    """The configs every model runs under: the baseline and (a)'s flags, the default ones."""
    return {BASELINE: {}, **{name: flag.patch for name, flag in settings().flags.items()}}


def differences(one: list[RunMade], other: list[RunMade], names: tuple[str, str]) -> list[str]:
    """The runs that one way made and the other did not make so (another status, other checks),
    a line each, at most ten per side; [] when the two lists are the same."""
    lines = []
    for mine, theirs, name in ((one, other, names[0]), (other, one, names[1])):
        left = Counter(mine) - Counter(theirs)
        listed = sorted(left.elements())
        lines += [f"  only in {name}: {' '.join(map(str, run))}" for run in listed[:10]]
        if len(listed) > 10:
            lines.append(f"  and {len(listed) - 10} more only in {name}")
    return lines


def same_runs(one: list[RunMade], other: list[RunMade], names: tuple[str, str]) -> str:
    """A line saying that the two ways made the same runs; exits 1 naming the runs when not."""
    found = differences(one, other, names)
    if found:
        sys.exit(
            f"{names[0]} and {names[1]} did not make the same runs with the same checks:\n" + "\n".join(found)
        )
    return f"    {names[0]} and {names[1]} made the same {len(one)} runs with the same checks"


# (a): the real command, with this file's list registered as a corpus in the driver process.
_CLI = f"""
import sys
sys.path.insert(0, {str(ROOT / "bench")!r})
from triagebot.results.suites import MIXED_CORPORA
MIXED_CORPORA[{CORPUS!r}] = "sweep_overhead"
from triagebot.cli import main
sys.argv = ["triagebot", *sys.argv[1:]]
main()
"""


def way_a(out: Path, listed: Path, jobs: int, ladder: bool = False) -> tuple[float, float, list]:
    """Wall seconds of the command, seconds until its first run started, and its records."""
    name = "a-ladder" if ladder else "a"
    stream, config = out / f"{name}.jsonl", out / f"{name}.toml"
    config.write_text(config_text(ladder))
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
        sys.exit(f"({name}) failed:\n{done.stderr[-3000:]}")
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
checks = bench.checks()
runs = [(s, c, p) for s in bench.specs() for c, p in bench._configs().items()]
run_one(runs[0][0], runs[0][2], "cpu", fresh=True, checks=checks)  # untimed warm-up
stages, made = {}, []
for spec, config, patch in runs:
    outcome, _ = run_one(spec, patch, "cpu", fresh=True, checks=checks)
    for stage, seconds in outcome.stage_seconds.items():
        stages[stage] = stages.get(stage, 0.0) + seconds
    made.append([spec.model, config, outcome.status.value, outcome.checks_made])
print(json.dumps({"stages": stages, "made": made}))
"""
# A run's seconds, stage by stage: the float64 reference is timed within `accuracy` as well.
RUN_STAGES = ("build", "eager", "compile")
CHECK_STAGES = ("accuracy", "eager_again", "recompile")


def way_b(listed: Path, jobs: int) -> tuple[float, dict[str, float], list[RunMade]]:
    """The lower bound (run seconds over `jobs`), the run seconds per stage, what was made."""
    threads = max(1, len(os.sched_getaffinity(0)) // jobs)
    command = [sys.executable, "-c", _INPROCESS, str(threads), str(ROOT / "bench")]
    env = {**os.environ, "SWEEP_OVERHEAD_SPECS": str(listed)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode:
        sys.exit(f"(b) failed:\n{done.stderr[-3000:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    stages = {stage: found["stages"].get(stage, 0.0) for stage in (*RUN_STAGES, *CHECK_STAGES)}
    return sum(stages.values()) / jobs, stages, sorted(_made(run) for run in found["made"])


def _made(run: list) -> RunMade:
    model, config, status, made = run
    return model, config, status, tuple(made)


# (c): a fresh interpreter per run, `jobs` at a time.
_NAIVE = """
import json, sys
from triagebot.results import Check, ModelSpec
from triagebot.sweep.run import run_one
spec = ModelSpec.model_validate_json(sys.argv[1])
checks = [Check(name) for name in json.loads(sys.argv[3])]
outcome, _ = run_one(spec, json.loads(sys.argv[2]), "cpu", checks=checks)
print(json.dumps([outcome.status.value, outcome.checks_made]))
"""


def way_c(chosen: list[ModelSpec], jobs: int) -> tuple[float, list[RunMade]]:
    runs = [(s, c, p) for s in chosen for c, p in _configs().items()]
    checked = json.dumps(sorted(checks()))

    def one(run) -> RunMade:
        spec, config, patch = run
        command = [sys.executable, "-c", _NAIVE, spec.model_dump_json(), json.dumps(patch), checked]
        done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=True)
        return _made([spec.model, config, *json.loads(done.stdout.strip().splitlines()[-1])])

    start = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        made = list(pool.map(one, runs))
    return time.perf_counter() - start, sorted(made)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--list", choices=("small", "wide", "sentinels"), default="wide", help="models: see specs()"
    )
    parser.add_argument("--models", type=int, default=None, help="only the first N transformers models")
    parser.add_argument("--out", type=Path, default=None, help="keep the (a) stream here")
    parser.add_argument("--ladder", action="store_true", help="sweep (a) again with a night's ladder")
    parser.add_argument("--skip-naive", action="store_true", help="leave (c) out (no last line)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="sweep-overhead-"))
    out.mkdir(parents=True, exist_ok=True)
    chosen = specs(args.models, args.list)
    listed = out / "specs.json"
    listed.write_text(json.dumps([spec.model_dump(mode="json") for spec in chosen]))
    runs = len(chosen) * len(_configs())
    checked = ", ".join(sorted(checks())) or "none"
    print(f"{runs} runs ({len(chosen)} models x {len(_configs())} configs), {args.jobs} workers", end="")
    print(f", checks: {checked}")

    from triagebot.sweep.summary import run_seconds, runs_made

    a, startup, records = way_a(out, listed, args.jobs)
    bad = [f"{r.model}[{r.config}]: {r.outcome.status.value}" for r in records if r.outcome.status != "ok"]
    note = "; not ok: " + ", ".join(bad) if bad else ""
    print(f"(a) triagebot sweep:        {a:7.1f} s  ({len(records)} records{note})")
    b, stages, made = way_b(listed, args.jobs)
    print(f"(b) in-process lower bound: {b:7.1f} s  (run seconds / {args.jobs})")
    print(same_runs(runs_made(records), made, ("(a)", "(b)")))
    # What isolation costs, split: the warm parent's start (imports, warm-up compile) is paid
    # once per sweep; the rest scales with the runs.
    runs_part = a - startup
    print(f"    (a) = {startup:.1f} s to the first run + {runs_part:.1f} s of runs = {runs_part / b:.2f} (b)")
    total = sum(stages.values())
    check = sum(stages[stage] for stage in CHECK_STAGES)
    print(
        f"    of (b)'s {total:.1f} run seconds: "
        + ", ".join(f"{s} {stages[s]:.1f}" for s in RUN_STAGES)
        + f"; the checks {check:.1f} ({check / total:.1%}: "
        + ", ".join(f"{s} {stages[s]:.1f}" for s in CHECK_STAGES if stages[s])
        + ")"
    )
    if args.ladder:  # the ladder a night climbs: (a) again, with its rungs after the same runs
        climbed, _, rungs = way_a(out, listed, args.jobs, ladder=True)
        print(same_runs(runs_made(rungs), made, ("(a) with the ladder", "(b)")))
        rung_seconds = sum(run_seconds(r) for r in rungs if r.backend is not None)
        climbs = sum(1 for r in rungs if r.backend is not None)
        print(
            f"(a) with the ladder:        {climbed:7.1f} s  = (a) + {climbed - a:.1f} s "
            f"({(climbed - a) / a:.1%}); {climbs} rungs, {rung_seconds:.1f} run s"
        )
    if args.skip_naive:
        print(f"overhead={a / b:.2f}")
        return
    c, naive = way_c(chosen, args.jobs)
    print(f"(c) fresh python per run:   {c:7.1f} s")
    print(same_runs(naive, made, ("(c)", "(b)")))
    print(f"overhead={a / b:.2f} naive_speedup={c / a:.2f}")


if __name__ == "__main__":
    main()
