"""A baseline graph-count change as a reproduction a bisection can run.

A model that compiles to more graphs at baseline than it did in an earlier nightly raises
nothing: its script is the model's baseline reproduction (`report.repro_script`: the model, its
inputs, the counting backend) whose `main` counts the graphs and raises `MoreGraphs` when there
are more than the earlier nightly's. Its signature names the model, not the count, so every
bad build raises the same one. It is verified like any reproduction, with the torch installed
here (the night's), before it is bisected (`verify_requests`).

A model that compiles to fewer graphs is bisected the same way as an improvement
(`graph_change_request`): its script raises `FewerGraphs` below the earlier count, and the
first build that raises it is the first improved one.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace

from triagebot.bisect.engine import BisectRequest, request_between
from triagebot.bisect.probe import Deadline
from triagebot.bisect.search import OutOfTime
from triagebot.errors import BisectError, ReproError
from triagebot.report.repro import repro_script
from triagebot.reproduce import run_script
from triagebot.results import BASELINE, Reproduction, Snapshot, error_signature

MORE_GRAPHS = "MoreGraphs"
FEWER_GRAPHS = "FewerGraphs"
_MAIN_CALL = '\n\nif __name__ == "__main__":\n    main()\n'
_COUNT = '''

# The baseline graph-count change under bisection: a build shows it when the model compiles to
# {words} than GRAPH_LIMIT graphs, what it compiled to in the earlier nightly.
MODEL_NAME = {model!r}
GRAPH_LIMIT = {limit!r}


class {error}(AssertionError):
    """The model compiles to {words} graphs at baseline than it did."""


def main():  # replaces the main() above: counts the graphs instead of expecting an error
    model = build_model().to(DEVICE)
    inputs = build_inputs()
    backend = CountingBackend()
    with torch.no_grad():
        torch.compile(model, backend=backend, fullgraph=False)(**inputs)
    if backend.graphs {compare} GRAPH_LIMIT:
        raise {error}(f"{{MODEL_NAME}} compiles to {words} than {{GRAPH_LIMIT}} graphs at baseline")
    print(f"{{backend.graphs}} graphs")


if __name__ == "__main__":
    main()
'''


# Each direction of a change: the error its script raises, its words, the comparison that shows it
_DIRECTIONS = {False: (MORE_GRAPHS, "more", ">"), True: (FEWER_GRAPHS, "fewer", "<")}


def graph_count_signature(model: str, limit: int, *, fewer: bool = False) -> str:
    """What the script of `model` raises on a build that shows the change (the count and digits
    normalised)."""
    error, words, _ = _DIRECTIONS[fewer]
    return error_signature(error, f"{model} compiles to {words} than {limit} graphs at baseline")


def graph_count_reproduction(
    snapshot: Snapshot, model: str, limit: int, *, fewer: bool = False
) -> Reproduction:
    """The (unverified) reproduction of `model` compiling to more than `limit` graphs at
    baseline (`fewer`: fewer than `limit`), from `snapshot`; a `ReproError` when the model's
    script cannot be made."""
    base = repro_script(snapshot, BASELINE, model)
    if not base.endswith(_MAIN_CALL):
        raise ReproError(f"the reproduction script of {model} does not end by calling main()")
    error, words, compare = _DIRECTIONS[fewer]
    count = _COUNT.format(model=model, limit=limit, error=error, words=words, compare=compare)
    return Reproduction(
        flag=BASELINE,
        signature=graph_count_signature(model, limit, fewer=fewer),
        model=model,
        script=base[: -len(_MAIN_CALL)] + count,
    )


def graph_change_request(good: Snapshot, bad: Snapshot, model: str) -> BisectRequest:
    """The bisection of the change in `model`'s baseline graph count from the sweep `good` to
    the sweep `bad`: a regression when it rose, an improvement when it fell (the script raises
    where the count is the new one); a one-line `BisectError` when it did not change or was not
    counted in both. The reproduction is unverified (`verify_requests`)."""
    counts = [_baseline_graphs(snapshot, model) for snapshot in (good, bad)]
    for snapshot, count in zip((good, bad), counts, strict=True):
        if count is None:
            raise BisectError(f"{model} has no baseline graph count in {snapshot.key}")
    old, new = counts
    if old == new:
        raise BisectError(
            f"{model} compiles to {old} graphs at baseline in both {good.key} and {bad.key}: "
            "nothing to bisect"
        )
    fewer = new < old
    try:
        repro = graph_count_reproduction(bad, model, old, fewer=fewer)
    except ReproError as error:
        raise BisectError(str(error)) from None
    request = request_between(good.environment, bad.environment, repro)
    return replace(request, change="improvement" if fewer else "regression")


def _baseline_graphs(snapshot: Snapshot, model: str) -> int | None:
    result = snapshot.result(model)
    baseline = result.outcomes.get(BASELINE) if result is not None else None
    return baseline.graphs if baseline is not None and baseline.ran else None


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
