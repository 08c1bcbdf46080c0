"""The reductions of a night: each verified reproduction made as small as its time allows.

For one reproduction (`reduce_one`), within its group's time:
1. its config without the settings equal to its class's defaults (`towers.parts_of`, a child);
2. delta debugging over the edits of `edits.py` (`search.search`);
3. one sub-model of a composite alone (a text decoder, a vision tower) with the edits kept that
   apply to it, the first that still raises the signature: last, when the probes are cheap,
   since a crash in the composite's own code is the common case;
4. for a failure in a backend, the graph-level repro of PyTorch's minifier (`graph.py`), given
   at least half of the group's time.
Each candidate is rendered by `report.repro.repro_script`, as the unreduced script is, and run
in a child Python (`reproduce.timed_run`); a candidate is kept only when its run raised the very
signature, so the script kept is verified by the run that kept it. No probe is started that the
time left cannot hold (the last kept script's seconds). The reproduction then carries the
smallest script, its run seconds, and a `Reduction`: what changed, the lines and seconds before
and after.

`reduce_reproductions` does this for every verified reproduction of a snapshot, as many at once
as the sweep has workers, each bounded by `group_seconds` and all together by `night_seconds`
of wall time; what the night's time does not reach stays as it was.
"""

from __future__ import annotations

import functools
import logging
import sys
import time
from dataclasses import dataclass

from triagebot.reduce.edits import apply_edits, within
from triagebot.reduce.graph import graph_repro, minifier_stages
from triagebot.reduce.search import Search, search
from triagebot.reduce.towers import parts_of
from triagebot.report.repro import repro_script
from triagebot.report.words import plural
from triagebot.reproduce import DEFAULT_TIMEOUT, in_lanes, timed_run
from triagebot.reproduce.verify import Steps
from triagebot.results import WRONG_RESULT, ModelSpec, Reduction, Reproduction, Snapshot

log = logging.getLogger(__name__)

# A group with less than this left is not reduced: a probe costs more.
MIN_SECONDS = 10.0


@dataclass(frozen=True)
class Bounds:
    """How long reducing may take: per group (the minifier's part included) and per night."""

    group_seconds: float
    night_seconds: float
    probe_timeout: float = DEFAULT_TIMEOUT  # one candidate script's run


class Prober:
    """Renders a candidate spec's script as the reproduction's own was rendered and runs it;
    keeps the last script that raised the signature, with its run seconds."""

    def __init__(
        self, snapshot: Snapshot, reproduction: Reproduction, python: str, timeout: float, deadline: float
    ):
        self.snapshot, self.reproduction, self.python = snapshot, reproduction, python
        self.timeout, self.deadline = timeout, deadline  # one run's limit; the search's end (monotonic)
        self.script, self.seconds = reproduction.script, reproduction.seconds or 0.0

    def render(self, spec: ModelSpec) -> str:
        repro = self.reproduction
        result = self.snapshot.result(repro.model)
        assert result is not None  # the reproduction was rendered from it
        one = self.snapshot.model_copy(update={"results": [result.model_copy(update={"spec": spec})]})
        wrong = repro.signature.startswith(f"{WRONG_RESULT}:")
        return repro_script(one, repro.flag, repro.model, repro.signature, backend=repro.backend, wrong=wrong)

    def out_of_time(self) -> bool:
        """Whether a probe as long as the last kept script's run no longer fits."""
        return time.monotonic() + self.seconds >= self.deadline

    def __call__(self, spec: ModelSpec) -> bool:
        script = self.render(spec)
        run = timed_run(script, self.python, min(self.timeout, max(1.0, self.deadline - time.monotonic())))
        kept = run.observed == self.reproduction.signature
        log.info("%s probe (%.1f s): %s", "kept" if kept else "refused", run.seconds, run.observed)
        if kept:
            self.script, self.seconds = script, run.seconds
        return kept


def reduce_one(
    snapshot: Snapshot,
    reproduction: Reproduction,
    bounds: Bounds,
    python: str = sys.executable,
    kept: Reduction | None = None,
) -> Reproduction:
    """`reproduction` with its smallest verified script, its `reduction` and, for a failure in a
    backend, its `graph` repro (see the module); within `bounds.group_seconds`. `kept`: the
    same group's reduction on an earlier nightly (`kept_from`), rendered again and tried first,
    kept when it still raises the signature."""
    start = time.monotonic()
    end = start + bounds.group_seconds
    share = 0.5 if minifier_stages(reproduction.backend) else 1.0  # the minifier's half
    probe = Prober(snapshot, reproduction, python, bounds.probe_timeout, start + bounds.group_seconds * share)
    result = snapshot.result(reproduction.model)
    update: dict = {}
    if kept is not None and probe(kept.spec):
        update = {
            "script": probe.script,
            "seconds": probe.seconds,
            "reduction": kept.model_copy(
                update={
                    "lines_before": len(reproduction.script.splitlines()),
                    "lines_after": len(probe.script.splitlines()),
                    "seconds_before": reproduction.seconds or 0.0,
                    "seconds_after": probe.seconds,
                    "probes": 1,
                    "seconds": round(time.monotonic() - start, 2),
                }
            ),
        }
    elif result is not None and result.spec is not None:
        found = _search(result.spec, probe)
        if found.probes:
            update = {
                "script": probe.script,
                "seconds": probe.seconds,
                "reduction": _reduction(found, reproduction, probe, start),
            }
    if (
        reproduction.backend
        and minifier_stages(reproduction.backend)
        and end - time.monotonic() >= MIN_SECONDS
    ):
        script = update.get("script", reproduction.script)
        update["graph"] = graph_repro(
            script, reproduction.backend, reproduction.signature, python=python, deadline=end
        )
    return reproduction.model_copy(update=update)


def _reduction(found: Search, reproduction: Reproduction, probe: Prober, start: float) -> Reduction:
    return Reduction(
        spec=found.spec,
        steps=found.steps,
        lines_before=len(reproduction.script.splitlines()),
        lines_after=len(probe.script.splitlines()),
        seconds_before=reproduction.seconds or 0.0,
        seconds_after=probe.seconds,
        probes=found.probes,
        seconds=round(time.monotonic() - start, 2),
        complete=found.complete,
    )


def _described(reduction: Reduction | None) -> str:
    if reduction is None:
        return "nothing to reduce"
    if reduction.kept_from:
        return f"the reduction of {reduction.kept_from} still raises it: {reduction.lines_after} lines"
    return (
        f"{'; '.join(reduction.steps) or 'not reduced'}: {reduction.lines_before} -> {reduction.lines_after} "
        f"lines, {reduction.seconds_before} -> {reduction.seconds_after} s "
        f"({plural(reduction.probes, 'probe')}, {reduction.seconds} s)"
    )


def _search(spec: ModelSpec, probe: Prober) -> Search:
    """Defaults left out, delta debugging, then one sub-model alone: each kept only where a
    probe reproduced it."""
    parts = parts_of(spec, probe.python, max(1.0, probe.deadline - time.monotonic()))
    found = Search(spec)
    if parts.config is not None and parts.config != spec.config and not probe.out_of_time():
        found.probes += 1
        if probe(plain := spec.model_copy(update={"config": parts.config})):
            found.spec = plain
            found.steps.append("settings equal to the config class's defaults left out")
    edited = search(found.spec, probe, probe.out_of_time)
    found.spec, found.edits, found.steps = edited.spec, edited.edits, found.steps + edited.steps
    found.probes += edited.probes
    for key, tower in parts.towers.items():
        if probe.out_of_time():
            found.complete = False
            break
        alone = apply_edits(tower, within(found.edits, key))
        found.probes += 1
        if probe(alone):
            found.spec = alone
            found.steps.append(f"{key} alone: {tower.class_path.partition(':')[2]}")
            break
    found.complete = found.complete and edited.complete
    return found


def reduce_reproductions(
    snapshot: Snapshot,
    reproductions: list[Reproduction],
    bounds: Bounds,
    python: str = sys.executable,
    progress: Steps | None = None,
    earlier: Snapshot | None = None,
    lanes: int = 1,
) -> list[Reproduction]:
    """Every verified reproduction reduced (`reduce_one`), `lanes` at once, within `bounds`:
    each group's time (less what locating a wrong result took, `reduce.wrong`), and what is left
    of the night's when its reduction starts; unverified
    ones, and those the night's time does not reach, as they were. `earlier`: the previous
    stored nightly, whose reductions of the same groups are tried first (one probe each), so
    that a night's time goes to the groups not yet reduced. `progress` is told the verified
    ones first, then each as it is done."""
    night_end = time.monotonic() + bounds.night_seconds
    reduced_before = _reductions_of(earlier) if earlier is not None else {}
    # Groups reduced before first: one probe each, so the night's time cannot run out on them.
    order = [
        index
        for index in sorted(
            range(len(reproductions)), key=lambda i: _group_of(reproductions[i]) not in reduced_before
        )
        if reproductions[index].verified
    ]
    if progress is not None:
        progress.phase("reductions", len(order))

    def reduce_at(index: int) -> tuple[Reproduction, str]:
        reproduction = reproductions[index]
        # A wrong result's group spent part of its time already, locating it (`reduce.wrong`).
        located = reproduction.locus.seconds if reproduction.locus is not None else 0.0
        left = min(bounds.group_seconds - located, night_end - time.monotonic())
        if left < MIN_SECONDS:
            spent = "its group's" if located else "the night's"
            return reproduction, f"{spent} reduction time is spent"
        one = Bounds(left, left, bounds.probe_timeout)
        done = reduce_one(snapshot, reproduction, one, python, reduced_before.get(_group_of(reproduction)))
        said = _described(done.reduction)
        log.info("%s under %s: %s", reproduction.model, reproduction.flag, said)
        return done, said

    reduced = list(reproductions)
    done = in_lanes([functools.partial(reduce_at, index) for index in order], lanes)
    for index, (reproduction, said) in zip(order, done, strict=True):
        reduced[index] = reproduction
        if progress is not None:
            progress.step(f"{reproduction.model} under {reproduction.flag}: {said}")
    return reduced


def _reductions_of(earlier: Snapshot) -> dict[tuple[str, str, str | None, str], Reduction]:
    """The verified reductions of the nightly `earlier` by group, each naming the nightly that
    found it."""
    found = {}
    for repro in earlier.reproductions:
        if repro.verified and repro.reduction is not None:
            night = repro.reduction.kept_from or earlier.key
            found[_group_of(repro)] = repro.reduction.model_copy(update={"kept_from": night})
    return found


def _group_of(reproduction: Reproduction) -> tuple[str, str, str | None, str]:
    """What makes two nights' reproductions the same one: the group (flag, signature, backend)
    and the model its script builds."""
    return reproduction.flag, reproduction.signature, reproduction.backend, reproduction.model
