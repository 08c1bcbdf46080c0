"""The backend ladder's rungs, as data: one `Rung` per rung in one table, `RUNGS`, in order.

The sweep climbs them (`sweep.ladder`: which by default, which on the CPU only for failures,
what each costs), analysis says where a failure first met on one lives and which PT2 label it
gets (`analysis.ladder`, `analysis.triage`), the reducer picks the minifier's stages by it
(`reduce.graph`), and the templates say each rung's place in the stack by looping over it. A new
rung is one entry here (and, for a backend torch does not know, its `module:function`).
"""

from __future__ import annotations

from dataclasses import dataclass

COUNTING_BACKEND = "counting"
"""The name reports use for the sweep's own backend, which counts graphs and runs them as they are."""

LADDER_WINDOW = 28
"""The nightlies within which every model a flag changes must have climbed each rung users run
(`[sweep] ladder_window`): what the rotation covers at the default budget on 2 CPU workers."""

BACKWARD = "+backward"
"""What a ladder rung's name ends with when it runs the backward pass too (`BACKWARD_RUNG`)."""

BACKWARD_RUNG = "aot_eager" + BACKWARD
"""The ladder's backward rung: the model in train mode, forward and `loss.backward()` under
`aot_eager`, its gradients compared with eager's. A night without it measured inference only."""


@dataclass(frozen=True)
class Rung:
    """One rung of the backend ladder and what every part of triagebot says and does of it."""

    name: str  # the stream header's `ladder` entry and the column a table heads
    lives_in: str  # where a failure first met on this rung lives (PyTorch's troubleshooting guide)
    label: str | None = None  # the PT2 rubric's module label of a failure that lives here
    fails_why: str = ""  # why that label, for a failure
    wrong_why: str = ""  # why that label, for a wrong result
    # Its run seconds over the model's longest run in the sweep, and at least `floor` seconds:
    # what the ladder's bounds plan with (`sweep.ladder.estimate`). Measured on the smoke
    # corpus on the CPU (median and mean of each rung's runs): counting 2.1 and 2.8, aot_eager
    # 1.7 and 1.9, inductor 7.5 and 27 (its C++ toolchain's start about 30 s even for a model
    # that compiles in a second); the backward rung 1.6 and 2.4 times Mistral3's longest sweep
    # run, the wrong-gradient sentinel's about 2 s whatever its size.
    cost: float = 3.0
    floor: float = 0.0
    failures_only: frozenset[str] = frozenset()  # devices where only failures' representatives climb it
    # Climbed by the rotation's pairs (every model a flag changes, `analysis.rotation`) even
    # where `failures_only` keeps it for the failures: what users of this device run.
    rotated: bool = False
    minifier: tuple[str, ...] = ()  # where PyTorch's minifier cuts for a failure on it, in order
    default: bool = False  # climbed by default (`[sweep] backends` unset), in this table's order
    users_run: bool = False  # a backend users compile with: a group not run under it says so
    # How the ladder's sentence says a failure first met on it: "first under `inductor` in
    # Inductor", "first on `aot_eager+backward` (train mode, ...) in AOTAutograd's backward pass".
    preposition: str = "under"
    aside: str = ""


RUNGS: dict[str, Rung] = {
    rung.name: rung
    for rung in (
        # A backend that runs Dynamo's graphs as they are: what fails with it is Dynamo's. It
        # calls three shapes (the recompile check), hence a cost above aot_eager's.
        Rung(
            name=COUNTING_BACKEND,
            lives_in="Dynamo",
            label="module: dynamo",
            fails_why="fails while Dynamo traces, with the counting backend",
            wrong_why="wrong already with the counting backend, which runs Dynamo's graphs as they are",
            cost=2.5,
        ),
        Rung(
            name="aot_eager",
            lives_in="AOTAutograd",
            label="module: pt2-dispatcher",
            fails_why="fails under aot_eager, not with the counting backend",
            wrong_why="wrong under aot_eager, right with the counting backend",
            cost=2.0,
            minifier=("dynamo",),
            default=True,
            users_run=True,
        ),
        # On the CPU Inductor compiles C++, too slow for every pair every night; its compile is
        # seconds even for a model that compiles in a second, hence its floor. C++ Inductor is what
        # CPU users run, so the rotation's pairs climb it there too, a window's share a night.
        # After AOTAutograd the minifier only reaches what fails inside Inductor's compile, so
        # Dynamo's graph is tried next.
        Rung(
            name="inductor",
            lives_in="Inductor",
            label="module: inductor",
            fails_why="fails under inductor, not under aot_eager",
            wrong_why="wrong under inductor, right under aot_eager",
            cost=8.0,
            floor=30.0,
            failures_only=frozenset({"cpu"}),
            rotated=True,
            minifier=("aot", "dynamo"),
            default=True,
            users_run=True,
        ),
        # Traces the forward and the backward graphs and runs both.
        Rung(
            name=BACKWARD_RUNG,
            lives_in="AOTAutograd's backward pass",
            cost=3.0,
            floor=2.0,
            default=True,
            preposition="on",
            aside=" (train mode, gradients against eager's)",
        ),
    )
}
"""Every rung by name, in the ladder's order."""


def default_rungs() -> list[str]:
    """The rungs climbed when `[sweep] backends` is unset, in order."""
    return [rung.name for rung in RUNGS.values() if rung.default]


def failures_only(device: str) -> frozenset[str]:
    """The rungs only the failures' representatives climb on `device`."""
    return frozenset(rung.name for rung in RUNGS.values() if device in rung.failures_only)


def rotated(device: str) -> frozenset[str]:
    """The rungs of `failures_only(device)` the rotation's pairs climb all the same."""
    return frozenset(rung.name for rung in RUNGS.values() if device in rung.failures_only and rung.rotated)


def users_backends() -> tuple[str, ...]:
    """The backends users compile with: a group not run under one of them says so."""
    return tuple(rung.name for rung in RUNGS.values() if rung.users_run)


def rungs_said(ladder: list[str]) -> list[Rung]:
    """The rungs beyond counting that a ladder's sentence places in the stack: those users run,
    and any other the night's `ladder` climbed."""
    return [
        rung
        for rung in RUNGS.values()
        if rung.name != COUNTING_BACKEND and (rung.users_run or rung.name in ladder)
    ]
