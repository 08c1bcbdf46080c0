"""Sentinel modules: tiny `nn.Module`s whose Dynamo behaviour on current PyTorch is known.

They prove the sweep engine end to end without a HuggingFace model: each one exercises one
path (a graph break a flag removes, a crash a flag causes, an eager failure, a build failure,
a segfault, a hang, and beyond Dynamo: a failure only from AOTAutograd or only under Inductor, a
wrong result, a nondeterministic output, a recompile on every new shape). Behaviour verified on
torch 2.13.0 (CPU), with the counting backend and `fullgraph=False`, under `torch.no_grad()`:

| model                | baseline              | capture_scalar_outputs | capture_dynamic_output_shape_ops |
| -------------------- | --------------------- | ---------------------- | -------------------------------- |
| `Plain`              | 1 graph               | 1 graph                | 1 graph                          |
| `ItemBreak`          | 2 graphs, `.item()`   | 1 graph                | 2 graphs, `.item()`              |
| `NonzeroBreak`       | 2 graphs, `nonzero`   | 2 graphs, `nonzero`    | 1 graph                          |
| `NonzeroGuardCrash`  | 2 graphs, `nonzero`   | 2 graphs, `nonzero`    | crash: GuardOnDataDependentSymNode |
| `ItemMatmul`         | 2 graphs, `.item()`   | 1 graph                | 2 graphs, `.item()`              |
| `AliasingCustomOp`   | 2 graphs, `.item()`   | 1 graph                | 2 graphs, `.item()`              |
| `BatchNormOut`       | 1 graph               | 1 graph                | 1 graph                          |
| `OwnGenerator`       | 1 graph               | 1 graph                | 1 graph                          |
| `RangeLoop`          | 1 graph               | 1 graph                | 1 graph                          |
| `WrongUnderScalarCapture` | 2 graphs, `.item()` | 1 graph, wrong result | 2 graphs, `.item()`          |
| `SlowUnderScalarCapture` | 1 graph, `.item()` | 1 graph, compiled about 4x slower | 1 graph, `.item()` |
| `WrongGradUnderScalarCapture` | 2 graphs, `.item()` | 1 graph | 2 graphs, `.item()`    |
| `EagerError`         | eager_error           | eager_error            | eager_error                      |
| `BuildError`         | create_error          | create_error           | create_error                     |
| `Segfault`           | signal SIGSEGV        | signal SIGSEGV         | signal SIGSEGV                   |
| `HangUnderCompile`   | timeout (eager is ok) | timeout                | timeout                          |

Beyond Dynamo, verified the same way with the `aot_eager` and `inductor` backends, outputs
compared with eager's, and a second and a third input shape (the batch rule: 8, 9, 10 elements):

- `ItemMatmul`: runs under both backends at baseline; under `capture_scalar_outputs` it runs
  under `aot_eager` and crashes under `inductor` (InductorError: LoweringException:
  GuardOnDataDependentSymNode), a benefit that does not survive the full stack. Outputs match;
  the second shape recompiles 2 frames at baseline, 1 with the flag, dynamically.
- `AliasingCustomOp`: crashes under `aot_eager` (and so under `inductor`) under every config
  (BackendCompilerFailed: RuntimeError: Found a custom (non-ATen) operator whose output has
  alias annotations), at baseline too. Outputs match with the counting backend; the second shape
  recompiles 2 frames at baseline, 1 with the flag, dynamically.
- `BatchNormOut`: runs under `aot_eager`, crashes under `inductor` under every config
  (BackendCompilerFailed: AssertionError in a graph pass). Outputs match; eager fails on the
  second shape, so it has none.
- `OwnGenerator`: runs everywhere; two eager runs differ, so it is nondeterministic, not judged.
- `RangeLoop`: runs everywhere, outputs match; the second shape recompiles, and so does the
  third (overspecialisation).
- `WrongUnderScalarCapture`: runs everywhere; its outputs differ from eager's under
  `capture_scalar_outputs` with every backend, and match otherwise.
- `WrongGradUnderScalarCapture`: runs everywhere and its outputs match; on the backward rung
  (train mode, `loss.backward()` under `aot_eager`) its gradients differ from eager's under
  `capture_scalar_outputs`, and match at baseline: a failure of the backward pass alone.

Every spec carries its module's source (`ModelSpec.code`) so that a repro script can inline it,
and literal inputs (`kind="values"`) so that the data-dependent paths are deterministic.
"""

from __future__ import annotations

import inspect
import os
import signal
import time

import torch
from torch import nn

from triagebot.corpus import Built
from triagebot.corpus.inputs import materialize_inputs
from triagebot.results import BASELINE, InputSpec, ModelSpec

# Four positive and four negative values: nonzero(x > 0) has four rows, so every
# data-dependent branch below is taken the same way on every run.
_X = [1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 4.0, -4.0]

_HEADER = "import os\nimport signal\nimport time\n\nimport torch\nfrom torch import nn\n\n\n"


class Plain(nn.Module):
    """No graph break anywhere: one graph under every config."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.linear(x)) + 1


class ItemBreak(nn.Module):
    """`.item()` breaks the graph unless `capture_scalar_outputs` is set."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        scale = x.abs().sum().item()
        return self.linear(x) * scale + 1


class NonzeroBreak(nn.Module):
    """`nonzero` breaks the graph unless `capture_dynamic_output_shape_ops` is set."""

    def forward(self, x):
        idx = torch.nonzero(x > 0)
        return idx.float().sum() + x.sum()


class NonzeroGuardCrash(nn.Module):
    """A branch on `nonzero(...).numel()` that feeds an allocation: under
    `capture_dynamic_output_shape_ops` the branch guards on an unbacked symbol and Dynamo raises
    GuardOnDataDependentSymNode; without the flag, `nonzero` just breaks the graph."""

    def forward(self, x):
        idx = torch.nonzero(x > 0)
        if idx.numel():
            return x.new_zeros(idx.numel(), 2)
        return x


class ItemMatmul(nn.Module):
    """A product whose size is a tensor's value: `.item()` breaks the graph unless
    `capture_scalar_outputs` is set; with it, one graph holds a matmul over an unbacked size,
    which Dynamo and AOTAutograd take but Inductor's lowering cannot guard on. A benefit of the
    flag that does not survive the full stack."""

    def forward(self, x):
        n = (x > 0).sum().item()
        return (torch.ones(1, n, 4) @ torch.ones(1, 4, n)).sum() + x


class AliasingCustomOp(nn.Module):
    """A custom operator whose schema returns a view of its input (`Tensor(a) -> Tensor(a)`):
    Dynamo traces it through its Meta kernel, AOTAutograd refuses to functionalize an operator
    with an aliased output. Fails from `aot_eager` on (so Inductor too), under every config. Its
    `.item()` break, which `capture_scalar_outputs` removes, makes it a model the flag changes:
    one whose benefit the full stack does not keep, through no fault of the flag."""

    library = None  # the operator's definition, made once per process

    def __init__(self):
        super().__init__()
        if AliasingCustomOp.library is None:
            library = torch.library.Library("triagebot_sentinel", "DEF")
            library.define("view_of(Tensor(a) x) -> Tensor(a)")
            for key in ("CPU", "CUDA", "Meta"):
                library.impl("view_of", lambda x: x.view(-1), key)
            AliasingCustomOp.library = library

    def forward(self, x):
        scale = x.abs().sum().item()
        return torch.ops.triagebot_sentinel.view_of(x) * scale


class BatchNormOut(nn.Module):
    """`native_batch_norm`'s out= variant: Dynamo and AOTAutograd run it, Inductor's graph passes
    assert on the copies into the out= buffers. Fails only under Inductor, under every config."""

    def forward(self, x):
        x = x.view(2, 4, 1)
        weight, bias = torch.ones(4), torch.zeros(4)
        mean, var = torch.zeros(4), torch.ones(4)
        out = (torch.empty(2, 4, 1), torch.empty(4), torch.empty(4))
        torch.native_batch_norm(x, weight, bias, mean, var, True, 0.5, 1e-5, out=out)
        return out[0] + 1


class OwnGenerator(nn.Module):
    """Draws noise from a generator of its own, which reseeding the global one does not reset:
    two eager runs differ, so its outputs are nondeterministic and never judged."""

    def __init__(self):
        super().__init__()
        self.generator = torch.Generator().manual_seed(0)

    def forward(self, x):
        return x + torch.randn(x.shape, generator=self.generator)


class RangeLoop(nn.Module):
    """A Python loop over the input's length: Dynamo unrolls it, so a new length recompiles,
    and a third length recompiles again (overspecialisation), whatever the config."""

    def forward(self, x):
        total = x[0] * 0
        for i in range(x.shape[0]):
            total = total + x[i] * i
        return total


class WrongUnderScalarCapture(nn.Module):
    """Computes differently once compiled under `capture_scalar_outputs`, by construction: a
    stand-in for a miscompile a flag causes, so that detecting, confirming and reproducing a
    wrong result is exercised end to end. Right at baseline and under other flags. Its `.item()`
    breaks the graph unless the flag is set, with a reason that names the flag's setting, so that
    the flag runs on it where it runs only on such models (`when = "named_in_breaks"`)."""

    def forward(self, x):
        scale = x.abs().sum().item()
        if torch.compiler.is_compiling() and torch._dynamo.config.capture_scalar_outputs:
            return x * scale + 0.5
        return x * scale + 1


class SlowUnderScalarCapture(nn.Module):
    """Compiles many times slower under `capture_scalar_outputs`, by construction: a stand-in for
    a flag that makes compilation slower, so that the compile-time figures are exercised end to
    end. Its first `.item()` breaks the graph at baseline (with a reason naming the setting), and
    the loop after it, whose `.item()`s break the graph inside the loop, is then left to run
    eagerly; under the flag Dynamo traces the loop, unrolled, an `.item()` in every iteration."""

    def forward(self, x):
        x = x * x.abs().sum().item()
        for i in range(5 * len(x)):  # 40 on its 8 inputs; a longer input makes it slower still
            x = x * 0.5 + x[i % len(x)].item()
        return x


class WrongGradUnderScalarCapture(nn.Module):
    """Right forward everywhere, wrong gradients once compiled under `capture_scalar_outputs`, by
    construction: a stand-in for a flag that breaks only the backward pass, so that the backward
    rung's detecting, confirming and reproducing are exercised end to end. Its `.item()` breaks
    the graph unless the flag is set (a reason naming the setting), so the flag helps it and it
    climbs the ladder."""

    class HalvedGrad(torch.autograd.Function):
        """Doubles its input; its backward, traced with the forward (Dynamo speculates it), halves
        the gradient it should double when traced under `capture_scalar_outputs`."""

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            if torch.compiler.is_compiling() and torch._dynamo.config.capture_scalar_outputs:
                return grad * 0.5
            return grad * 2

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        scale = x.abs().sum().item()
        return self.HalvedGrad.apply(self.linear(x)) * scale


class WrongAtBaseline(nn.Module):
    """Gives a wrong result at the default config through one op, by construction: a stand-in for
    a miscompile at baseline, so that finding it, confirming it and reducing it (to the smallest
    submodule, then to the graph node and the line of model code) are exercised end to end. The
    gain of its `Scale` block reads a state Dynamo changes (`torch.compiler.is_compiling()`), so
    eager and compiled genuinely differ at that one multiplication and nowhere else. Kept out of
    `SENTINELS` (a night of them has no wrong result at baseline); `spec_of` builds its spec."""

    class Shift(nn.Module):
        def forward(self, x):
            return x + 1

    class Scale(nn.Module):
        def forward(self, x):
            gain = 2.0 if torch.compiler.is_compiling() else 1.0
            return x * gain

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.shift = WrongAtBaseline.Shift()
            self.scale = WrongAtBaseline.Scale()

        def forward(self, x):
            return self.scale(self.shift(x)) - 0.5

    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 8)
        self.block = self.Block()

    def forward(self, x):
        return self.block(torch.tanh(self.encoder(x)))


class EagerError(nn.Module):
    """Its eager run fails (a shape mismatch), so it is untestable under every config."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(3, 5))

    def forward(self, x):
        return x @ self.weight


class BuildError(nn.Module):
    """Building it fails: a create_error under every config."""

    def __init__(self):
        super().__init__()
        raise RuntimeError("sentinel BuildError cannot be built")

    def forward(self, x):
        return x


class Segfault(nn.Module):
    """Kills its own process with SIGSEGV (in the eager run, so under every config)."""

    def forward(self, x):
        os.kill(os.getpid(), signal.SIGSEGV)
        return x


class HangUnderCompile(nn.Module):
    """Runs eagerly in no time and sleeps for an hour once compiled: the sleep is a graph break
    that the compiled code calls at run time."""

    def forward(self, x):
        if torch.compiler.is_compiling():
            time.sleep(3600)
        return x + 1


SENTINELS: tuple[type[nn.Module], ...] = (
    Plain,
    ItemBreak,
    NonzeroBreak,
    NonzeroGuardCrash,
    ItemMatmul,
    AliasingCustomOp,
    BatchNormOut,
    OwnGenerator,
    RangeLoop,
    WrongUnderScalarCapture,
    SlowUnderScalarCapture,
    WrongGradUnderScalarCapture,
    EagerError,
    BuildError,
    Segfault,
    HangUnderCompile,
)

_SCALAR, _DYNAMIC = "capture_scalar_outputs", "capture_dynamic_output_shape_ops"
# What each sentinel is built to do (`ModelSpec.built_to`, the table above): BASELINE -> its
# run's status or its outputs' verdict, a flag -> its effect. A night says how many behaved as
# built and names any that did not: news that the bot's own machinery, or torch, changed.
BUILT_TO: dict[str, dict[str, str]] = {
    "Plain": {BASELINE: "ok"},
    "ItemBreak": {_SCALAR: "reduces_graphs"},
    "NonzeroBreak": {_DYNAMIC: "reduces_graphs"},
    "NonzeroGuardCrash": {_DYNAMIC: "crashes"},
    "ItemMatmul": {_SCALAR: "reduces_graphs"},
    "AliasingCustomOp": {_SCALAR: "reduces_graphs"},
    "BatchNormOut": {BASELINE: "ok"},
    "OwnGenerator": {BASELINE: "nondeterministic"},
    "RangeLoop": {BASELINE: "ok"},
    "WrongUnderScalarCapture": {_SCALAR: "wrong_result"},
    "SlowUnderScalarCapture": {BASELINE: "ok"},
    "WrongGradUnderScalarCapture": {_SCALAR: "reduces_graphs"},
    "WrongAtBaseline": {BASELINE: "wrong_result"},
    "EagerError": {BASELINE: "eager_error"},
    "BuildError": {BASELINE: "create_error"},
    "Segfault": {BASELINE: "signal"},
    "HangUnderCompile": {BASELINE: "timeout"},
}

# The sentinels that compile and finish (the benchmark's share of the sentinel corpus).
COMPILING: tuple[str, ...] = ("Plain", "ItemBreak", "NonzeroBreak", "NonzeroGuardCrash")
# The sentinels of the rest of the stack: a full-stack failure, a wrong result, a nondeterministic
# output, a recompile on every new shape (the smoke corpus includes them).
STACK: tuple[str, ...] = (
    "ItemMatmul",
    "AliasingCustomOp",
    "BatchNormOut",
    "OwnGenerator",
    "RangeLoop",
    "WrongUnderScalarCapture",
    "WrongGradUnderScalarCapture",
)


def _spec(cls: type[nn.Module]) -> ModelSpec:
    return ModelSpec(
        model=cls.__name__,
        source="sentinel",
        class_path=f"{__name__}:{cls.__name__}",
        stratum="sentinel",
        modality="tensor",
        recipe="values",
        inputs=[InputSpec(name="x", shape=[len(_X)], dtype="float32", kind="values", values=_X)],
        code=_HEADER + inspect.getsource(cls),
        built_to=BUILT_TO[cls.__name__],
    )


def specs() -> list[ModelSpec]:
    return [_spec(cls) for cls in SENTINELS]


def spec_of(name: str) -> ModelSpec:
    """The spec of the sentinel class `name`, one of `SENTINELS` or not (`WrongAtBaseline`)."""
    cls = globals().get(name)
    if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
        raise KeyError(f"no sentinel named {name!r}")
    return _spec(cls)


def build(spec: ModelSpec, device: str) -> Built:
    name = spec.class_path.rpartition(":")[2] or spec.model
    cls = globals().get(name)
    if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
        raise KeyError(f"no sentinel named {name!r}")
    torch.manual_seed(spec.seed)
    model = cls().to(device).eval()
    inputs = materialize_inputs(spec.inputs, spec.seed, device)
    params = sum(p.numel() for p in model.parameters())
    return Built(model, inputs, spec.model_copy(update={"params": params}))
