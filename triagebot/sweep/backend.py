"""The sweep's own Dynamo backend, which counts the FX graphs it receives, and the ladder's
backends it can hand them on to."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable
from typing import Any

import torch
import torch._dynamo
from torch._dynamo import guards
from torch._dynamo.backends.registry import lookup_backend
from torch._inductor import config as inductor_config

from triagebot.results import rung_backend

CALL_OPS = frozenset({"call_function", "call_method", "call_module"})


def _skip_guard_latency_profile() -> None:
    """Dynamo times every new guard set after flushing the CPU cache with a large fresh
    buffer, only to log the latency: in a freshly forked child that is ~50 ms of page faults
    per graph. The sweep reports no guard latency, so the measurement is skipped (what is
    compiled, and every record, stays the same: the isolation tests compare them)."""
    if hasattr(guards, "profile_guard_manager"):
        guards.profile_guard_manager = lambda *args, **kwargs: 0.0


_skip_guard_latency_profile()


class CountingBackend:
    """A Dynamo backend that counts the FX graphs it receives and their call nodes, and notes which
    took symbolic sizes; it runs each graph as it is, or hands it on to `inner` (a ladder backend)."""

    def __init__(self, inner: Callable[..., Any] | None = None) -> None:
        self.inner = inner
        self.graphs = 0
        self.ops = 0
        self.dynamic: list[bool] = []  # per graph, in order

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Any]):
        self.graphs += 1
        self.ops += sum(1 for node in gm.graph.nodes if node.op in CALL_OPS)
        self.dynamic.append(_symbolic(gm))
        return self.inner(gm, example_inputs) if self.inner is not None else gm.forward


def _symbolic(gm: torch.fx.GraphModule) -> bool:
    """Whether a graph takes a symbolic size: a SymInt input, or a tensor with a symbolic dimension."""
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        value = node.meta.get("example_value")
        if isinstance(value, torch.SymInt):
            return True
        if isinstance(value, torch.Tensor) and any(isinstance(size, torch.SymInt) for size in value.shape):
            return True
    return False


def resolve_backend(name: str) -> Callable[..., Any]:
    """A ladder backend by name: one of `torch._dynamo.list_backends()`, or `module:function`;
    a backward rung's name (`rung_backend`) resolves to the backend it compiles with."""
    backend = rung_backend(name)[0]
    module, _, function = backend.partition(":")
    if function:
        return getattr(importlib.import_module(module), function)
    return lookup_backend(backend)


def counting_backend(backend: str | Callable[..., Any] | None) -> CountingBackend:
    """The graph counter for a run: counting only (None), or in front of a ladder backend."""
    if backend is None:
        return CountingBackend()
    return CountingBackend(resolve_backend(backend) if isinstance(backend, str) else backend)


def backend_settings(
    backend: str | Callable[..., Any] | None, judged: bool
) -> contextlib.AbstractContextManager:
    """Settings a backend runs under: the benchmark harness's rule that Inductor draws random
    numbers as eager does when its outputs are judged."""
    if judged and backend == "inductor":
        return inductor_config.patch(fallback_random=True)
    return contextlib.nullcontext()
