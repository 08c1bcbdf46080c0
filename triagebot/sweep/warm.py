"""Imported once by the warm parent (the forkserver) before it forks any child.

Everything here is an import or a pure-Python cache, except a warm-up compile on the CPU with
one thread: neither CUDA nor torch's intra-op thread pool is initialised in the parent (numpy's
BLAS pool is kept from starting by OPENBLAS_NUM_THREADS=1 in the parent's environment; the pool
tests check that the parent has exactly one thread when it forks).

The module list is what a first `torch.compile` with a custom backend imports lazily on torch
2.13 (measured: 0.52 s of a first compile of a small module, against 0.07 s warm). Names that
a torch build lacks are skipped. The classes of the models about to be swept (`module:Class`,
sent by the pool) are resolved too, which imports transformers' modeling modules. Last, for a
sweep, one tiny model is compiled (`_warm_compile`): the one step that runs torch ops, on the
CPU and with one thread.

The order of the imports is the point: the source helper is forked before anything but the
standard library is imported, so torch (and every module that imports it) is imported at the
bottom of this module, or inside the functions `warm()` calls after it.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import importlib.util
import inspect
import json
import linecache
import os
import pickle
import select
import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from triagebot.results import Suite

LAZY_MODULES = (
    "sympy",
    "transformers",
    "transformers.modeling_utils",
    "transformers.masking_utils",
    "transformers.cache_utils",
    "transformers.integrations.sdpa_attention",
    "torch._dynamo.backends.common",
    "torch._dynamo.backends.debugging",
    "torch._dynamo.backends.inductor",
    "torch._dynamo.backends.distributed",
    "torch._dynamo.backends.cudagraphs",
    "torch._dynamo.backends.onnxrt",
    "torch._dynamo.backends.tensorrt",
    "torch._dynamo.backends.torchxla",
    "torch._dynamo.backends.tvm",
    "torch._dynamo.debug_utils",
    "torch._dynamo.repro.after_dynamo",
    "torch._dynamo.testing",
    "torch._dynamo.precompile_context",
    "torch._dynamo.dce_extra_outputs",
    "functorch.compile",
    "torch._functorch.aot_autograd",
    "torch._functorch.partitioners",
    "torch._functorch.compilers",
    "torch._functorch.compile_utils",
    "torch._functorch.fx_minifier",
    "torch._functorch.python_key",
    "torch._functorch._aot_autograd.autograd_cache",
    "torch._functorch._aot_autograd.graph_capture",
    "torch._functorch._aot_autograd.graph_compile",
    # The backward rung's: AOTAutograd's partitioner imports these on a first joint graph
    # (measured: a tiny model's first backward rung 1.0-1.1 s in a child, 0.25-0.36 s with them).
    "torch._inductor.decomposition",
    "torch._inductor.fx_passes.joint_graph",
    "torch._inductor.compile_fx",
    "torch._functorch._aot_autograd.subclass_codegen",
    "torch._functorch._activation_checkpointing.remat_using_tags_for_fwd_loss_bwd_graph_pass",
    "torch._export.passes",
    "torch._export.passes._node_metadata_hook",
    "torch._export.non_strict_utils",
    "torch._export.serde",
    "torch._export.db",
    "torch.export._trace",
    "torch.export._unlift",
    "torch._higher_order_ops.passes",
    "torch._higher_order_ops.passes.inline_invoke_subgraph",
    "torch._inductor.codecache",
    "torch._inductor.compiler_bisector",
    "torch.distributed.tensor.experimental",
    "torch._inductor.output_code",
    "torch._inductor.sizevars",
    "torch._inductor.virtualized",
    "torch._subclasses.schema_check_mode",
    "torch.fx.experimental.validator",
    "torch.fx.passes._tensorify_python_scalars",
    "torch.fx._graph_pickler",
    "torch.nn.attention.flex_attention",
    "torch.utils.flop_counter",
    "torch.utils._sympy.reference",
    "networkx",
    "triagebot.corpus",
    "triagebot.sweep.worker",  # a child's side: the run, its checks, validation, the environment
)


# Source files Dynamo reads while tracing a transformers model: `linecache` for stack
# summaries, and `funcname_cache`, which tokenizes a whole file to name the function at a line
# (0.5 s of a first Llama compile in a fresh process). Both caches are plain dicts.
SOURCE_MODULES = (
    "torch._compile",
    "torch._dynamo.bytecode_transformation",
    "torch._dynamo.convert_frame",
    "torch._dynamo.eval_frame",
    "torch._dynamo.output_graph",
    "torch._dynamo.polyfills",
    "torch._dynamo.polyfills.builtins",
    "torch._dynamo.symbolic_convert",
    "torch._subclasses.fake_tensor",
    "torch._utils_internal",
    "torch.random",
    "torch.cuda.random",
    "torch.mtia",
    "torch.xpu",
    "torch.xpu.random",
    "torch.utils._contextlib",
    "torch.nn.modules.module",
    "torch.nn.modules.container",
    "torch.nn.modules.linear",
    "torch.nn.modules.sparse",
    "torch.nn.modules.activation",
    "torch.nn.modules.dropout",
    "torch.nn.modules.normalization",
    "torch.nn.modules.conv",
    "torch.nn.functional",
    "transformers.activations",
    "transformers.cache_utils",
    "transformers.configuration_utils",
    "transformers.integrations.sdpa_attention",
    "transformers.masking_utils",
    "transformers.modeling_layers",
    "transformers.modeling_rope_utils",
    "transformers.modeling_utils",
    "transformers.pytorch_utils",
    "transformers.utils.generic",
    "transformers.utils.import_utils",
    "transformers.utils.output_capturing",
    "triagebot.corpus",
    "triagebot.corpus.hf",
    "triagebot.corpus.sentinels",
    "triagebot.sweep.calls",
    "triagebot.sweep.run",
    "triagebot.sweep.recompiles",
    "triagebot.sweep.worker",
)


def _module_path(name: str) -> str | None:
    """A module's file, found without importing it (nor its package)."""
    top, *rest = name.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if not rest or not spec.submodule_search_locations:
        return spec.origin
    base = os.path.join(next(iter(spec.submodule_search_locations)), *rest)
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.exists(candidate):
            return candidate
    return None


def _start_source_helper(modules: tuple[str, ...]) -> tuple[int, int] | None:
    """Read and tokenize the sources in a helper process while this one imports torch (the two
    take about as long, and the machine has a core for each). Forked before anything but the
    standard library is imported; it sends both caches back through a pipe and exits."""
    paths = [p for p in map(_module_path, modules) if p]
    namer = _module_path("torch._dynamo.funcname_cache")
    if not paths or not namer:
        return None
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the helper
        try:
            os.close(read)
            spec = importlib.util.spec_from_file_location("_triagebot_funcname_cache", namer)
            funcnames = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(funcnames)  # it imports only `tokenize`
            for path in paths:
                funcnames._add_file(path)
                linecache.getlines(path)
            lines = {p: linecache.cache[p] for p in paths if p in linecache.cache}
            with os.fdopen(write, "wb") as out:
                out.write(pickle.dumps((funcnames.cache, lines)))
        finally:
            os._exit(0)
    os.close(write)
    return pid, read


def _finish_source_helper(helper: tuple[int, int] | None) -> bool:
    if helper is None:
        return False
    pid, read = helper
    try:
        with os.fdopen(read, "rb") as pipe:
            data = pipe.read()
        os.waitpid(pid, 0)
        funcnames, lines = pickle.loads(data)
    except Exception:
        return False
    from torch._dynamo import funcname_cache

    for path, table in funcnames.items():
        funcname_cache.cache.setdefault(path, table)
    for path, entry in lines.items():
        linecache.cache.setdefault(path, entry)
    return True


def _warm_sources(modules: tuple[str, ...]) -> None:
    try:
        from torch._dynamo import funcname_cache
    except ImportError:
        funcname_cache = None
    for name in modules:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if not path:
            continue
        linecache.getlines(path)
        if funcname_cache is not None and path not in funcname_cache.cache:
            with contextlib.suppress(Exception):
                funcname_cache._add_file(path)


def _unbound_bytecode_memo() -> None:
    """Dynamo decodes and cleans the bytecode of each function it inlines, memoised per code
    object in an LRU of 128 entries: fewer than one transformers model inlines, so a child would
    evict what the warm-up compile cleaned for the shared helpers. The function is pure: its
    memo is made unbounded."""
    try:
        from torch._dynamo import bytecode_transformation as bt

        clean = bt._cached_cleaned_instructions.__wrapped__
    except AttributeError:
        return
    bt._cached_cleaned_instructions = functools.lru_cache(maxsize=None)(clean)


def _request() -> dict:
    """What to warm for the sweep about to run: `classes` (`module:Class` to resolve) and
    `compile` (whether to run a warm-up compile: sweeps do, eager-only checks do not). From
    $TRIAGEBOT_WARM, or, for a parent started before the models were known, one JSON line read
    from the FIFO at $TRIAGEBOT_WARM_FIFO (given up when the process that started this one goes
    away)."""
    text = os.environ.get("TRIAGEBOT_WARM", "")
    fifo = os.environ.get("TRIAGEBOT_WARM_FIFO")
    if fifo:
        starter, data = os.getppid(), b""
        try:
            fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            fd = None
        while fd is not None and not data.endswith(b"\n"):
            if select.select([fd], [], [], 0.5)[0]:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                data += chunk
            elif os.getppid() != starter:
                break
        if fd is not None:
            os.close(fd)
        text = data.decode().strip()
    try:
        request = json.loads(text) if text else {}
    except ValueError:
        request = {}
    return request if isinstance(request, dict) else {}


# A tiny dense decoder, shrunk by the corpus rules: the shapes most corpus models share.
WARM_UP_MODEL = ("transformers:LlamaForCausalLM", "LlamaConfig")


def _warm_compile() -> None:
    """Run one tiny model through the sweep's own `run_one`, under the baseline config.

    A forked child starts with what its parent holds, and a first compile fills pure caches that
    every later one reuses: Dynamo's lazy imports and tables, the bytecode memo, FakeTensorMode's
    dispatch cache (keyed by op, shapes, dtypes and device). Measured on the benchmark's list:
    children's compiles 11% faster for 0.7 s of parent start; a warm-up under each flag too
    cost more than it saved. It runs on the CPU with one thread, so no thread pool is started
    (the pool tests check the parent's thread count), and ends with `torch._dynamo.reset()`: no
    compiled code or guard outlives it. The isolation tests check that the records of children
    forked after it equal those of fresh interpreters."""
    from triagebot.results import ModelSpec
    from triagebot.sweep.run import run_one

    class_path, config_class = WARM_UP_MODEL
    spec = ModelSpec(
        model="warm-up", class_path=class_path, config_class=config_class, modality="text", stratum="warm-up"
    )
    torch.set_num_threads(1)
    try:
        run_one(spec, {}, "cpu", fresh=True)
    finally:
        torch._dynamo.reset()
        torch._dynamo.utils.counters.clear()


def _gpu_visible() -> bool:
    """Whether a GPU is visible, asked of NVML (the parent's PYTORCH_NVML_BASED_CUDA_CHECK), which
    leaves the CUDA driver untouched. Where one is, the parent compiles nothing: running a model
    reaches the driver in more places than can be hidden (Dynamo reads the CUDA RNG state around
    every traced frame; transformers asks whether a CUDA stream is capturing), and a parent whose
    driver was initialised forks children that cannot use CUDA at all ("CUDA error:
    initialization error"). Seen on an H100 runner with torch 2.11."""
    try:
        return torch.cuda.is_available()
    except Exception:
        return True  # unsure: a lost warm-up costs seconds, a poisoned parent costs the night


def _thread_lock_for_tqdm() -> None:
    """tqdm makes a multiprocessing lock on first use, and torch.fx's Interpreter makes a (hidden)
    bar on every AOTAutograd compile: made in a child, the lock's semaphore outlives it (a child
    ends with `os._exit`, which skips the lock's cleanup) and the resource tracker warns of one
    leaked semaphore per such run when the sweep exits. A child runs one thread: a threading
    lock, set here before any fork, is all tqdm needs."""
    with contextlib.suppress(ImportError):
        import threading

        import tqdm

        tqdm.tqdm.set_lock(threading.RLock())


def _import_suites(suites: Iterable[Suite]) -> list[str]:
    """Import each suite's corpus module; returns the names that failed."""
    failed = []
    for name in sorted({suite.module for suite in suites}):
        try:
            importlib.import_module(name)
        except Exception:
            failed.append(name)
    return failed


def warm() -> list[str]:
    """Import what a first compile would import; returns the names that failed."""
    failed = []
    for name in LAZY_MODULES:
        try:
            importlib.import_module(name)
        except Exception:
            failed.append(name)
    from triagebot.results import SUITES, Suite

    # The shipped suites' modules before the request: a parent started early (`start_parent`)
    # imports them while the driver still loads its corpus.
    failed += _import_suites(SUITES.values())
    if not _finish_source_helper(_HELPER):
        _warm_sources(SOURCE_MODULES)
    request = _request()
    carried = [Suite.from_fields(fields) for fields in request.get("suites", [])]
    carried = [suite for suite in carried if suite.source not in SUITES]
    for suite in carried:  # the driver's registry is its children's (a test's suite)
        SUITES[suite.source] = suite
    failed += _import_suites(carried)
    model_modules = []
    for path in request.get("classes", []):
        module, _, attribute = path.partition(":")
        try:  # getattr on transformers imports the class's modeling module
            model_modules.append(getattr(importlib.import_module(module), attribute).__module__)
        except Exception:
            failed.append(path)
    with contextlib.suppress(Exception):  # a pure-Python table built on the first torch-function call
        torch.overrides.get_overridable_functions()
    _warm_sources(tuple(model_modules))
    _unbound_bytecode_memo()
    # inspect's file -> module table, which Dynamo's first lookup of a code object builds by
    # resolving the path of every loaded module
    inspect.getmodule(warm.__code__)
    _thread_lock_for_tqdm()
    if request.get("compile") and not _gpu_visible():
        try:
            _warm_compile()
        except Exception:
            failed.append("warm-up compile")
    return failed


_HELPER = _start_source_helper(SOURCE_MODULES)

import torch  # noqa: E402
import torch._dynamo  # noqa: E402
import torch.fx  # noqa: E402

FAILED = warm()
# Everything imported so far lives as long as the parent: move it out of the collector's reach,
# so that a child's collections do not walk (and copy-on-write) the parent's objects.
gc.collect()
gc.freeze()
# The parent was started ignoring Ctrl-C (`pool._spawn`: the driver handles it and says where
# the finished runs are). Its children get Python's default back, so that a run dies with the
# driver instead of outliving it: the forkserver hands them the handler it finds here.
signal.signal(signal.SIGINT, signal.default_int_handler)
