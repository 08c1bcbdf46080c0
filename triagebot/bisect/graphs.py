"""A baseline graph-count regression as a reproduction a bisection can run.

A model that compiles to more graphs at baseline than it did in an earlier nightly raises
nothing: its script is the model's baseline reproduction (`report.repro_script`: the model, its
inputs, the counting backend) whose `main` counts the graphs and raises `MoreGraphs` when there
are more than the earlier nightly's. Its signature names the model, not the count, so every
bad build raises the same one. It is verified like any reproduction, with the torch installed
here (the night's), before it is bisected (`verify_requests`).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

from triagebot.bisect.engine import BisectRequest
from triagebot.bisect.probe import Deadline
from triagebot.bisect.search import OutOfTime
from triagebot.errors import ReproError
from triagebot.report.repro import repro_script
from triagebot.reproduce import run_script
from triagebot.results import BASELINE, Reproduction, Snapshot, error_signature

MORE_GRAPHS = "MoreGraphs"
_MAIN_CALL = '\n\nif __name__ == "__main__":\n    main()\n'
_COUNT = '''

# The baseline regression under bisection: a build is bad when the model compiles to more
# graphs than GRAPH_LIMIT, what it compiled to in the last good nightly.
MODEL_NAME = {model!r}
GRAPH_LIMIT = {limit!r}


class MoreGraphs(AssertionError):
    """The model compiles to more graphs at baseline than it did."""


def main():  # replaces the main() above: counts the graphs instead of expecting an error
    model = build_model().to(DEVICE)
    inputs = build_inputs()
    backend = CountingBackend()
    with torch.no_grad():
        torch.compile(model, backend=backend, fullgraph=False)(**inputs)
    if backend.graphs > GRAPH_LIMIT:
        raise MoreGraphs(f"{{MODEL_NAME}} compiles to more than {{GRAPH_LIMIT}} graphs at baseline")
    print(f"{{backend.graphs}} graphs")


if __name__ == "__main__":
    main()
'''


def more_graphs_signature(model: str, limit: int) -> str:
    """What the script of `model` raises on a bad build (the count and digits normalised)."""
    return error_signature(MORE_GRAPHS, f"{model} compiles to more than {limit} graphs at baseline")


def graph_count_reproduction(snapshot: Snapshot, model: str, limit: int) -> Reproduction:
    """The (unverified) reproduction of `model` compiling to more than `limit` graphs at
    baseline, from `snapshot`; a `ReproError` when the model's script cannot be made."""
    base = repro_script(snapshot, BASELINE, model)
    if not base.endswith(_MAIN_CALL):
        raise ReproError(f"the reproduction script of {model} does not end by calling main()")
    script = base[: -len(_MAIN_CALL)] + _COUNT.format(model=model, limit=limit)
    return Reproduction(
        flag=BASELINE, signature=more_graphs_signature(model, limit), model=model, script=script
    )


def verify_requests(
    requests: list[BisectRequest],
    *,
    python: str = sys.executable,
    timeout: float = 600.0,
    deadline: Deadline | None = None,
    say: Callable[[str], None] = print,
) -> list[BisectRequest]:
    """`requests` with every unverified reproduction (a graph count's) run with `python` (the
    night's torch): verified when it raises its signature; left out, and said, when not. Each
    run counts against `deadline` (the bisections' budget): once it is spent, the requests not
    verified yet are left for the next night."""
    kept = []
    for done, request in enumerate(requests):
        repro = request.reproduction
        if not repro.verified:
            try:
                limit = deadline.limit(timeout) if deadline is not None else timeout
            except OutOfTime as spent:
                left = sum(not r.reproduction.verified for r in requests[done:])
                say(f"{spent} while verifying: {left} graph count(s) left for the next night")
                return kept
            try:
                observed = run_script(repro.script, python, limit)
            except subprocess.TimeoutExpired:
                observed = f"timed out after {limit:.0f} s"
            if observed != repro.signature:
                say(
                    f"{repro.model}: its reproduction does not raise its signature here ({observed}):"
                    " not bisected"
                )
                continue
            request.reproduction = repro.model_copy(update={"verified": True, "observed": observed})
        kept.append(request)
    return kept
