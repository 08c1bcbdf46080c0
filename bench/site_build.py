"""The dashboard site at corpus scale: build time and page weights on a synthetic store.

Makes a store of `--nights` nightly snapshots (default 90) of `--models` models (default
1,000) under the baseline and two flags (3 configs), shaped like real sweeps: a tiny config
and inputs per model, statuses of every kind (build and eager errors, crashes confirmed and
flaky, timeouts, signals), graph and op counts, multi-line graph-break reasons, crash
signatures with unbacked symbols, verified reproductions, and a corpus that changes a little
each night (graph counts move, crashes come and go, models join). Then builds the site from
it `--repeat` times as `triagebot site` does (the newest nightly analysed into its night, the
others summarised) and prints the wall time of each build, the index page's weight and the
whole site's. Targets: a build under 30 s, an index under 2 MB.

The store is written once into `--store` (default a folder under the system's temp folder)
and reused while its parameters match; `--cache` also times a second build into the same
folder (the per-night summaries are then read back instead of the earlier snapshots).

    python bench/site_build.py [--models 1000] [--nights 90] [--repeat 3] [--readers N] [--cache]
                               [--store DIR] [--out DIR]

The last line is machine-readable: `build_s=<best> index_bytes=<n> site_bytes=<n>`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from triagebot.results import BASELINE, Snapshot, error_signature  # noqa: E402

FLAGS = {
    "capture_scalar_outputs": {"capture_scalar_outputs": True},
    "capture_dynamic_output_shape_ops": {"capture_dynamic_output_shape_ops": True},
}
SCALAR, DYNAMIC = FLAGS
FORMAT = 2  # of the synthetic store: one made by an older version of this script is made again
STRATA = {"decoder_llm": 0.45, "encoder_decoder": 0.15, "vl_multimodal": 0.2, "vision_other": 0.2}
FAMILIES = [
    "Llama", "Mistral", "Qwen2", "Qwen3", "Gemma", "Phi", "Falcon", "Bloom", "GPTNeoX", "Olmo",
    "Bert", "Roberta", "T5", "Bart", "Whisper", "Llava", "Idefics", "Qwen2VL", "Siglip", "ViT",
    "Detr", "Swin", "ConvNext", "Mamba", "Jamba", "Mixtral", "DeepseekV3", "Granite", "Cohere", "Blip",
]  # fmt: skip
HEADS = {
    "decoder_llm": ["ForCausalLM", "Model", "ForSequenceClassification", "ForTokenClassification"],
    "encoder_decoder": ["ForConditionalGeneration", "Model", "ForQuestionAnswering"],
    "vl_multimodal": ["ForConditionalGeneration", "Model", "ForImageTextToText"],
    "vision_other": ["Model", "ForImageClassification", "ForObjectDetection"],
}
_HINT = (
    "\n  Hint: Enable tracing of {what} with `torch._dynamo.config.{flag} = True`\n\n"
    "  Developer debug context: {op}\n\n"
    " For more details about this graph break, please visit: "
    "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb{number:04d}.html"
)
BREAKS = [
    (f"Data dependent operator\n  Explanation: Operator `{op}` has a non-Tensor output whose value "
     "is dependent on the data of Tensor inputs." + _HINT.format(
         what="data-dependent output operators", flag=SCALAR, op=op, number=33), SCALAR)
    for op in ("aten._local_scalar_dense.default", "aten.item.default")
] + [
    (f"Dynamic shape operator\n  Explanation: Operator `{op}`'s output shape depends on input Tensor "
     "data." + _HINT.format(what="dynamic shape operators", flag=DYNAMIC, op=op, number=36), DYNAMIC)
    for op in ("aten.nonzero.default", "aten.repeat_interleave.Tensor", "aten.unique.default",
               "aten.masked_select.default")
] + [
    (f"{what}\n  Explanation: Dynamo does not know how to trace {what.lower()}.\n"
     f"  Hint: Avoid calling it in the compiled region.\n\n  Developer debug context: {what}\n", None)
    for what in ("Unsupported builtin print", "Call to torch._dynamo.graph_break()",
                 "Attempted to call function marked as skipped", "Unsupported context manager",
                 "Failed to trace generator", "Unsupported method call on a user-defined object",
                 "Data-dependent branching", "Attempted to inline a function with *args unpacking",
                 "Unsupported Tensor.tolist() call", "Encountered graph break when attempting to "
                 "trace CALL: a call to a compiled function", "Unsupported: non-constant dict key",
                 "Logger not supported for non-export cases", "torch.* op returned non-Tensor",
                 "Observed exception", "Unsupported Tensor.backward() call")]  # fmt: skip
CRASHES = {
    SCALAR: [
        ("PendingUnbackedSymbolNotFound", "Pending unbacked symbols {{u{a}}} not in returned outputs "
         "FakeTensor(..., size=(u{a},)) ((1,), 0)."),
        ("InternalTorchDynamoError", "AttributeError: 'SymInt' object has no attribute 'size'"),
        ("RuntimeError", "Runtime assertion failed for expression Eq(Mod(u{a}, 2), 0) on node 'eq_{b}'"),
    ],
    DYNAMIC: [
        ("GuardOnDataDependentSymNode", "Could not guard on data-dependent expression Eq(u{a}, 0) "
         "(unhinted: Eq(u{a}, 0)).  (Size-like symbols: u{a})"),
        ("GuardOnDataDependentSymNode", "Could not guard on data-dependent expression Ne(u{a}, {b}) "
         "(unhinted: Ne(u{a}, {b})).  (Size-like symbols: u{a})"),
        ("DataDependentOutputException", "aten.equal.default has data-dependent output"),
        ("UserError", "Could not extract specialized integer from data-dependent expression u{a}"),
    ],
    BASELINE: [
        ("Unsupported", "call_function UserDefinedClassVariable() [] {{}}"),
        ("TorchRuntimeError", "Dynamo failed to run FX node with fake tensors: call_function "
         "<built-in function mul>(*(FakeTensor(..., size=(s{a}, {b})),), **{{}})"),
    ],
}  # fmt: skip


def _outcome(status: str, rng: random.Random, **fields) -> dict:
    return {"status": status, "seconds": round(rng.uniform(0.5, 20.0), 2), **fields}


def _crash(config: str, variant: int, rng: random.Random) -> dict:
    error_type, template = CRASHES[config][variant % len(CRASHES[config])]
    message = template.format(a=rng.randrange(40), b=rng.randrange(1, 9))
    function = ("get_rope_index", "forward", "_merge_input_ids", None)[variant % 4]
    full = message + (
        f'\n\nfrom user code:\n   File "/opt/transformers/modeling.py", line 7, in {function}\n'
        if function
        else ""
    )
    return {
        "status": "crash",
        "error_type": error_type,
        "error": message,
        "signature": error_signature(error_type, full),
        "traceback": "Traceback (most recent call last):\n"
        + "".join(f'  File "/opt/torch/_dynamo/frame_{i}.py", line {i * 17}, in step\n' for i in range(12))
        + f"{error_type}: {message}",
        "seconds": round(rng.uniform(1.0, 30.0), 2),
        "stage_seconds": {"build": 0.2, "eager": 0.05, "compile": 1.5},
    }


class Model:
    """One synthetic model's state, which drifts a little from night to night."""

    def __init__(self, name: str, stratum: str, rng: random.Random) -> None:
        self.name, self.stratum = name, stratum
        roll = rng.random()
        self.untestable = "create_error" if roll < 0.03 else "eager_error" if roll < 0.05 else None
        self.hang = "timeout" if 0.05 <= roll < 0.06 else "signal" if 0.06 <= roll < 0.065 else None
        self.baseline_crash = rng.randrange(2) if 0.065 <= roll < 0.1 else None
        self.breaks = sorted(rng.sample(range(len(BREAKS)), rng.choice([0, 0, 0, 1, 1, 2, 3, 4])))
        self.graphs = 1 + sum(rng.randint(1, 6) for _ in self.breaks)
        self.ops = rng.randint(40, 900)
        self.crash = {flag: (rng.randrange(4) if rng.random() < 0.07 else None) for flag in FLAGS}
        self.flaky = {flag: rng.random() < 0.1 for flag in FLAGS}
        self.spec = self._spec(rng)

    def _spec(self, rng: random.Random) -> dict:
        config = {
            "vocab_size": 512, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "hidden_act": "silu",
            "max_position_embeddings": 512, "initializer_range": 0.02, "rms_norm_eps": 1e-06,
            "use_cache": False, "tie_word_embeddings": False, "rope_theta": 10000.0,
            "attention_bias": False, "attention_dropout": 0.0, "pad_token_id": 0, "bos_token_id": 1,
            "eos_token_id": 2, "output_hidden_states": False, "return_dict": True,
            "id2label": {"0": "LABEL_0", "1": "LABEL_1"}, "label2id": {"LABEL_0": 0, "LABEL_1": 1},
        }  # fmt: skip
        if self.stratum == "vl_multimodal":
            config["vision_config"] = {"hidden_size": 32, "num_hidden_layers": 1, "patch_size": 4}
        return {
            "model": self.name,
            "class_path": f"transformers:{self.name}",
            "config_class": self.name.split("For")[0] + "Config",
            "model_type": self.name.split("For")[0].lower(),
            "stratum": self.stratum,
            "modality": "image_text" if self.stratum == "vl_multimodal" else "text",
            "config": config,
            "recipe": "text" if self.stratum != "vl_multimodal" else "image_text",
            "inputs": [
                {"name": "input_ids", "shape": [2, 16], "dtype": "int64", "kind": "randint", "high": 512},
                {"name": "attention_mask", "shape": [2, 16], "dtype": "int64", "kind": "ones"},
            ],
            "params": rng.randint(10_000, 2_000_000),
        }

    def _stable(self, config: str) -> random.Random:
        """The same message for the same model and bug every night, as a real crash repeats."""
        return random.Random(f"{self.name}/{config}")

    def drift(self, rng: random.Random) -> None:
        """What one night of torch changes moves: rarely, and one thing at a time."""
        roll = rng.random()
        if roll < 0.01 and self.breaks:
            self.breaks.pop(rng.randrange(len(self.breaks)))
            self.graphs = max(1, self.graphs - rng.randint(1, 3))
        elif roll < 0.015:
            self.breaks = sorted({*self.breaks, rng.randrange(len(BREAKS))})
            self.graphs += rng.randint(1, 3)
        elif roll < 0.022:
            flag = rng.choice(list(FLAGS))
            self.crash[flag] = None if self.crash[flag] is not None else rng.randrange(4)
        elif roll < 0.025:
            self.ops += rng.randint(-20, 20)

    def result(self, rng: random.Random) -> dict:
        outcomes: dict[str, dict] = {}
        confirmations: dict[str, list[dict]] = {}
        if self.untestable:
            error = _outcome(self.untestable, rng, error_type="ValueError", error="vocab_size must be set")
            outcomes = {config: error for config in (BASELINE, *FLAGS)}
        elif self.hang:
            hung = _outcome(self.hang, rng, error_type="Timeout" if self.hang == "timeout" else "SIGSEGV",
                            stage="compile")  # fmt: skip
            outcomes = {config: hung for config in (BASELINE, *FLAGS)}
        else:
            reasons = [BREAKS[index][0] for index in self.breaks]
            if self.baseline_crash is not None:
                outcomes[BASELINE] = _crash(BASELINE, self.baseline_crash, self._stable(BASELINE))
                confirmations[BASELINE] = [outcomes[BASELINE]]
            else:
                outcomes[BASELINE] = _outcome(
                    "ok", rng, graphs=self.graphs, ops=self.ops, break_reasons=reasons,
                    stage_seconds={"build": 0.2, "eager": 0.05, "compile": 3.0},
                )  # fmt: skip
            for flag in FLAGS:
                if self.crash[flag] is not None:
                    outcomes[flag] = _crash(flag, self.crash[flag], self._stable(flag))
                    rerun = _outcome("ok", rng, graphs=self.graphs) if self.flaky[flag] else outcomes[flag]
                    confirmations[flag] = [rerun]
                    continue
                helped = [index for index in self.breaks if BREAKS[index][1] == flag]
                kept = [BREAKS[index][0] for index in self.breaks if BREAKS[index][1] != flag]
                graphs = max(1, self.graphs - 2 * len(helped)) if self.baseline_crash is None else 2
                outcomes[flag] = _outcome("ok", rng, graphs=graphs, ops=self.ops + 5 * len(helped),
                                          break_reasons=kept)  # fmt: skip
        return {
            "model": self.name,
            "stratum": self.stratum,
            "outcomes": outcomes,
            "confirmations": confirmations,
            "spec": self.spec,
        }


def night_key(day: date) -> str:
    return f"2.12.0.dev{day:%Y%m%d}+cu128"


def make_store(path: Path, models: int = 1000, nights: int = 90, seed: int = 0) -> list[Path]:
    """Write `nights` snapshot files into `path` (a LocalStore folder); returns them oldest first."""
    rng = random.Random(seed)
    path.mkdir(parents=True, exist_ok=True)
    names: list[tuple[str, str]] = []
    taken: set[str] = set()
    for stratum, share in STRATA.items():
        for index in range(round(models * share)):
            family = FAMILIES[index % len(FAMILIES)]
            head = HEADS[stratum][index // len(FAMILIES) % len(HEADS[stratum])]
            name = f"{family}{index // (len(FAMILIES) * len(HEADS[stratum])) or ''}{head}"
            version = 2
            while name in taken:
                name, version = f"{family}V{version}{head}", version + 1
            taken.add(name)
            names.append((name, stratum))
    names = names[:models]
    # Five percent of the corpus joins during the window, as transformers adds classes.
    late = set(rng.sample(range(len(names)), len(names) // 20))
    corpus = [Model(name, stratum, rng) for name, stratum in names]
    written = []
    start = date(2026, 1, 1)
    for night in range(nights):
        day = start + timedelta(days=night)
        key = night_key(day)
        for model in corpus:
            model.drift(rng)
        present = [
            model
            for index, model in enumerate(corpus)
            if index not in late or night >= nights * index // len(corpus)
        ]
        results = [model.result(rng) for model in present]
        snapshot = {
            "key": key,
            "created": datetime(day.year, day.month, day.day, 14, 0, tzinfo=UTC).isoformat(),
            "environment": {
                "torch_version": key,
                "torch_git_version": hashlib.sha1(key.encode()).hexdigest(),
                "transformers_version": "5.23.0",
                "python_version": "3.11.7",
                "platform": "Linux-x86_64",
                "device": "cuda",
                "gpu_name": "NVIDIA H100 80GB HBM3",
                "cuda_version": "12.8",
            },
            "flags": FLAGS,
            "corpus": {"name": "transformers", "seed": 0, "models": [model.name for model in present]},
            "results": results,
            "reproductions": _reproductions(results),
        }
        target = path / f"{key}.json"
        target.write_text(json.dumps(snapshot, indent=1) + "\n", encoding="utf-8")
        written.append(target)
    Snapshot.model_validate_json(written[-1].read_text(encoding="utf-8"))  # the shape is the real one
    return written


def _reproductions(results: list[dict]) -> list[dict]:
    """A verified script per (flag, signature), as `triagebot reproduce` leaves them."""
    seen: dict[tuple[str, str], str] = {}
    for result in results:
        for flag in FLAGS:
            outcome = result["outcomes"].get(flag, {})
            if outcome.get("status") == "crash" and (flag, outcome["signature"]) not in seen:
                seen[(flag, outcome["signature"])] = result["model"]
    return [
        {
            "flag": flag,
            "signature": signature,
            "model": model,
            "script": f'"""Reproduces {flag} on {model}."""\nimport torch\n' + "x = 1\n" * 60,
            "verified": True,
            "observed": signature,
        }
        for (flag, signature), model in seen.items()
    ]


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the build's worker processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(what: str, work) -> float:
    """Run `work`; print its wall and CPU seconds and how busy the machine was; return the wall time."""
    load = os.getloadavg()[0]
    began, cpu = time.perf_counter(), cpu_seconds()
    built = work()
    seconds, used = time.perf_counter() - began, cpu_seconds() - cpu
    print(
        f"{what}: {seconds:.1f} s wall, {used:.1f} s CPU; {built.read} nightlies read, "
        f"{built.pages} pages (load average {load:.2f} before, {os.getloadavg()[0]:.2f} after, "
        f"{os.cpu_count()} cores)"
    )
    return seconds


def folder_bytes(path: Path) -> int:
    return sum(item.stat().st_size for item in path.rglob("*") if item.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--nights", type=int, default=90)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--store", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--cache", action="store_true", help="Also time a rebuild into the same folder.")
    parser.add_argument(
        "--readers",
        "--jobs",
        type=int,
        default=None,
        help="Processes reading snapshots (default: the site's own).",
    )
    args = parser.parse_args()

    from triagebot.config import Config
    from triagebot.pipeline import build_site
    from triagebot.store import LocalStore

    default = Path(tempfile.gettempdir()) / f"triagebot-site-bench-{args.models}x{args.nights}"
    store_dir = args.store or default
    stamp = store_dir / ".made"
    wanted = f"{args.models} {args.nights} {FORMAT}"
    if not stamp.is_file() or stamp.read_text() != wanted:
        shutil.rmtree(store_dir, ignore_errors=True)
        began = time.perf_counter()
        files = make_store(store_dir, args.models, args.nights)
        stamp.write_text(wanted)
        print(f"made {len(files)} snapshots in {time.perf_counter() - began:.1f} s: {store_dir}")
    store_bytes = sum(path.stat().st_size for path in store_dir.glob("*.json"))
    print(f"store: {store_dir} ({store_bytes / 1e6:.0f} MB, {len(list(store_dir.glob('*.json')))} snapshots)")

    out = args.out or Path(tempfile.mkdtemp(prefix="triagebot-site-"))
    times = []

    def build():
        return build_site(LocalStore(store_dir), out, Config(), readers=args.readers, say=lambda line: None)

    for attempt in range(args.repeat):
        shutil.rmtree(out, ignore_errors=True)
        times.append(timed(f"build {attempt + 1}", build))
    if args.cache:
        timed("rebuild into the same folder", build)
    index = (out / "index.html").stat().st_size
    site = folder_bytes(out)
    pages = len(list(out.rglob("*.html")))
    print(f"index.html: {index / 1e3:.0f} kB; site: {site / 1e6:.1f} MB in {pages} pages: {out}")
    print(f"build_s={min(times):.1f} index_bytes={index} site_bytes={site}")


if __name__ == "__main__":
    main()
