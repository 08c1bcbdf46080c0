"""`triagebot bisect`: the request read from the command line and the store, the bisector built
from its options, and the answer.

An end is a stored snapshot (its key or file: the sweep's environment then tells the versions,
the axis and what to hold fixed), a version, or a day. The reproduction is a verified one of a
snapshot: `--snapshot`, else the bad end's snapshot, else the newest stored.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Literal

from triagebot.bisect.engine import Bisector, BisectRequest, request_between
from triagebot.bisect.envs import DEFAULT_CACHE, EnvironmentCache, Installer
from triagebot.bisect.graphs import graph_change_request, verify_requests
from triagebot.bisect.probe import Deadline
from triagebot.bisect.pruning import DEFAULT_CACHE_GIB
from triagebot.errors import BisectError, TriagebotError
from triagebot.nightlies import NIGHTLY_INDEX, PYPI_INDEX, PackageIndex, Target, nightly_index
from triagebot.results import Bisection, Reproduction, Snapshot
from triagebot.store import Store, keep_bisection


@dataclass
class BisectOptions:
    good: str
    bad: str
    model: str | None = None
    flag: str | None = None
    signature: str | None = None
    snapshot: str | None = None  # the snapshot holding the reproduction
    axis: Literal["auto", "torch", "transformers"] = "auto"
    torch: str | None = None  # torch to hold while transformers moves
    transformers: str | None = None  # transformers to hold while torch moves
    variant: str = "cu128"
    index: str = NIGHTLY_INDEX
    # torch releases on `pypi`'s index (2.13.0, 2.14.0, ...) instead of the nightlies of `index`
    releases: bool = False
    pypi: str = PYPI_INDEX
    python: str | None = None
    platforms: list[str] | None = None
    runs: int = 3
    timeout: float = 600.0
    budget: float = 3600.0
    cache: Path = DEFAULT_CACHE
    cache_gib: float = DEFAULT_CACHE_GIB  # what `cache` may hold; the least recently used go first
    installer: str = "auto"  # uv, pip, or auto: uv where one is found (`Installer.find`)
    again: bool = False
    # `model`'s baseline graph count between the two ends (stored snapshots), not a crash
    graphs: bool = False


def bisect_command(
    options: BisectOptions,
    store: Store,
    read_snapshot: Callable[[str], Snapshot],
    say: Callable[[str], None] = print,
    *,
    keep: Callable[[Bisection], None] | None = None,
) -> Bisection:
    """Bisect as `options` ask, the answer handed to `keep` (default: kept in `store`).
    `read_snapshot(where)` reads a snapshot file, stream or store key."""
    good, bad = (_snapshot_at(end, store, read_snapshot) for end in (options.good, options.bad))
    if options.graphs:
        return _graph_change(options, good, bad, store, say, keep)
    source = read_snapshot(options.snapshot) if options.snapshot else bad or store.latest()
    if source is None:
        raise BisectError("no snapshot to take the reproduction from: give --snapshot")
    reproduction = choose_reproduction(source, options.model, options.flag, options.signature)
    return bisect_all(options, [_request(options, good, bad, reproduction)], store, say, keep=keep)[0]


def bisect_all(
    options: BisectOptions,
    requests: list[BisectRequest],
    store: Store,
    say: Callable[[str], None] = print,
    *,
    each_alone: bool = False,
    keep: Callable[[Bisection], None] | None = None,
) -> list[Bisection]:
    """Each of `requests` in turn, within one time budget (`options.budget`) for them all: a
    bisection the budget stops is kept as far as it got, and the rest wait for the next run.
    Each answer is handed to `keep` as soon as it is found (default: stored in `store`), so a
    job stopped later loses none of those before. `each_alone`: one that fails (an end no
    longer on the index, an install or a write that fails) is said and the next one goes on."""
    keep = keep or partial(keep_bisection, store)
    target = Target.of(options.python, options.platforms)
    installer = Installer.find(choice=options.installer)
    found: list[Bisection] = []
    started = time.monotonic()
    envs = EnvironmentCache(options.cache, installer=installer, budget_gib=options.cache_gib, say=say)
    torch_builds = (
        PackageIndex(options.pypi) if options.releases else nightly_index(options.variant, options.index)
    )
    with torch_builds as torch_index, PackageIndex(options.pypi) as releases:
        for done, request in enumerate(requests):
            left = options.budget - (time.monotonic() - started)
            if left <= 0:
                say(f"the time budget of {options.budget:.0f} s is spent: {len(requests) - done} left")
                break
            bisector = Bisector(
                torch_index,
                releases,
                envs,
                target,
                runs=options.runs,
                timeout=options.timeout,
                budget=left,
                torch_releases=options.releases,
                say=say,
            )
            try:
                answer = bisector.bisect(request, store, keep=False)
                keep(answer)
            except Exception as error:  # one request's failure never costs the others theirs
                if not each_alone:
                    raise
                why = str(error) if isinstance(error, TriagebotError) else f"{type(error).__name__}: {error}"
                say(f"cannot bisect {request.reproduction.signature[:80]!r}: {why}")
                continue
            found.append(answer)
    return found


def _graph_change(
    options: BisectOptions,
    good: Snapshot | None,
    bad: Snapshot | None,
    store: Store,
    say: Callable[[str], None],
    keep: Callable[[Bisection], None] | None,
) -> Bisection:
    """The bisection of `options.model`'s baseline graph count between two stored snapshots, its
    script verified first with this torch within the same budget (as a night's owed ones are)."""
    if options.model is None:
        raise BisectError("--graphs bisects one model's graph count: name it with --model")
    if good is None or bad is None:
        missing = options.good if good is None else options.bad
        raise BisectError(f"--graphs bisects between two stored snapshots: {missing!r} is not one")
    request = graph_change_request(good, bad, options.model)
    request = _with_options(options, request)
    deadline = Deadline(options.budget)
    verified = verify_requests([request], timeout=options.timeout, deadline=deadline, say=say)
    if not verified:
        raise BisectError(
            f"the graph count of {options.model} does not show the change with the torch installed here: "
            f"run the bisection where {bad.key}'s build is installed"
        )
    within = replace(options, budget=max(deadline.left(), 0.0))
    found = bisect_all(within, verified, store, say, keep=keep)
    if not found:
        raise BisectError(f"the time budget of {options.budget:.0f} s ran out before the bisection began")
    return found[0]


def _snapshot_at(end: str, store: Store, read_snapshot: Callable[[str], Snapshot]) -> Snapshot | None:
    """The snapshot an end names (a store key or a file), or None for a version or a day."""
    if Path(end).is_file() or end in store:
        return read_snapshot(end)
    return None


def _request(
    options: BisectOptions, good: Snapshot | None, bad: Snapshot | None, reproduction: Reproduction
) -> BisectRequest:
    if options.axis == "auto" and good is not None and bad is not None:
        request = request_between(good.environment, bad.environment, reproduction)
    else:
        axis = "torch" if options.axis == "auto" else options.axis
        request = BisectRequest(
            reproduction, _end(good, options.good, axis), _end(bad, options.bad, axis), axis
        )
        held = bad if axis == "transformers" else good
        if held is not None:
            other = (
                held.environment.torch_version
                if axis == "transformers"
                else held.environment.transformers_version
            )
            request.pinned = {"torch" if axis == "transformers" else "transformers": other} if other else {}
    return _with_options(options, request)


def _with_options(options: BisectOptions, request: BisectRequest) -> BisectRequest:
    """`request` with what the command line holds fixed (--torch, --transformers) and --again."""
    for name, version in (("torch", options.torch), ("transformers", options.transformers)):
        if version and name != request.axis:
            request.pinned[name] = version
    request.again = options.again
    return request


def _end(snapshot: Snapshot | None, text: str, axis: str) -> str:
    if snapshot is None:
        return text
    environment = snapshot.environment
    return environment.torch_version if axis == "torch" else environment.transformers_version


def choose_reproduction(
    snapshot: Snapshot, model: str | None, flag: str | None, signature: str | None
) -> Reproduction:
    """The one verified reproduction of `snapshot` the options name; none or several is an
    error listing what there is."""
    verified = [repro for repro in snapshot.reproductions if repro.verified]
    chosen = [
        repro
        for repro in verified
        if (model is None or repro.model == model)
        and (flag is None or repro.flag == flag)
        and (signature is None or signature in repro.signature)
    ]
    if len(chosen) == 1:
        return chosen[0]
    listed = "; ".join(f"{r.model} under {r.flag}: {r.signature[:60]}" for r in verified[:6]) or "none"
    if not chosen:
        raise BisectError(
            f"snapshot {snapshot.key} has no verified reproduction that matches (verified: {listed})"
        )
    raise BisectError(
        f"snapshot {snapshot.key} has {len(chosen)} verified reproductions that match: name one with "
        f"--model, --flag or --signature (verified: {listed})"
    )
