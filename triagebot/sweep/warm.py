"""Imported once by the warm parent (the forkserver) before it forks any child.

Everything here is an import or a pure-Python cache: no tensor is made and no torch op runs,
so neither CUDA nor torch's intra-op thread pool is initialised in the parent (numpy's BLAS
pool is kept from starting by OPENBLAS_NUM_THREADS=1 in the parent's environment; the pool
tests check that the parent has exactly one thread when it forks).

The module list is what a first `torch.compile` with a custom backend imports lazily on torch
2.13 (measured: 0.52 s of a first compile of a small module, against 0.07 s warm). Names that
a torch build lacks are skipped. The classes of the models about to be swept (`module:Class`,
in $TRIAGEBOT_WARM_CLASSES, set by the pool) are resolved too, which imports transformers'
modeling modules.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os

import torch
import torch._dynamo
import torch.fx

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
    "triagebot.sweep.worker",
    "triagebot.sweep.environment",
)


def warm() -> list[str]:
    """Import what a first compile would import; returns the names that failed."""
    failed = []
    for name in LAZY_MODULES:
        try:
            importlib.import_module(name)
        except Exception:
            failed.append(name)
    from triagebot import corpus

    for name in set(corpus.BUILDERS.values()):
        try:
            importlib.import_module(name)
        except Exception:
            failed.append(name)
    for path in filter(None, os.environ.get("TRIAGEBOT_WARM_CLASSES", "").split(",")):
        module, _, attribute = path.partition(":")
        try:  # getattr on transformers imports the class's modeling module
            getattr(importlib.import_module(module), attribute)
        except Exception:
            failed.append(path)
    with contextlib.suppress(Exception):  # a pure-Python table built on the first torch-function call
        torch.overrides.get_overridable_functions()
    # inspect's file -> module table, which Dynamo's first lookup of a code object builds by
    # resolving the path of every loaded module
    inspect.getmodule(warm.__code__)
    return failed


FAILED = warm()
