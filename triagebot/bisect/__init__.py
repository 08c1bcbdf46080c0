"""Bisection: which nightly (or transformers release) first raised a crash group's verified
reproduction. This package imports no torch; it installs builds into cached environments and
runs torch only there, in child processes.

Public API, for cli, the workflow and `/rerun-sweep`:

- `request_between(good_env, bad_env, reproduction) -> BisectRequest`: the request for a crash
  seen in a sweep of `bad` and not of `good` (two `results.Environment`s): torch nightlies with
  transformers held at the good sweep's version, or transformers releases under one torch
  build when torch did not change but transformers did.
- `BisectRequest(reproduction, good, bad, axis, pinned, again)`: ends are versions or days.
- `Bisector(torch_index, releases, envs, target, runs=, timeout=, budget=)`:
  `bisect(request, store) -> results.Bisection`. The store's answer is returned when it has one
  for that (signature, range); one the budget cut short goes on where it stopped; a new one is
  stored (`store.keep_bisection`).
- `describe(bisection) -> list[str]`: the answer in a few lines (first bad, commit range,
  skipped builds, flakiness, what was held fixed).
- `bisect_command(options, store, read_snapshot)`: `triagebot bisect`, ends given as stored
  snapshots, versions or days; `bisect_all(options, requests, store)`: several within one
  budget.
- `owed_bisections(snapshot, previous, store)`: the bisections a night owes (crashes new since
  a stored nightly more than a day older); `crash_request(store, model, flag)`: the one
  `/rerun-sweep bisect MODEL` asks for (`owed`); a baseline graph-count regression is owed one
  too, with a script that counts the model's graphs, run first by `verify_requests` with the
  night's torch (`graphs`); `graph_change_request(good, bad, model)`: a model's baseline graph
  count between two sweeps, more graphs a regression and fewer an improvement (`bisect --graphs`).
- `EnvironmentCache(root, installer=)`, `Installer` (uv or pip; `Installer.find(python, choice)`
  is the one place that chooses), `Pin`: the cached environments.
- `run_search(Search(builds), probe)`: the search alone, for any ordered builds and probe.

A probe is good only after `runs` clean runs (a flaky reproduction raises on some runs only),
bad when a run raises the signature, and skip when the build cannot be installed or imported,
the script raises another error, or a run times out (never good or bad).
"""

from triagebot.bisect.command import BisectOptions, bisect_all, bisect_command, choose_reproduction
from triagebot.bisect.engine import (
    Bisector,
    BisectRequest,
    describe,
    request_between,
    resolve_end,
    resumable,
)
from triagebot.bisect.envs import EnvironmentCache, Installer, InstallFailed, Pin
from triagebot.bisect.graphs import graph_change_request, graph_count_reproduction, verify_requests
from triagebot.bisect.owed import adjacent, crash_request, owed_bisections
from triagebot.bisect.probe import Deadline, Prober
from triagebot.bisect.search import OutOfTime, Search, run_search

__all__ = [
    "BisectOptions",
    "BisectRequest",
    "Bisector",
    "Deadline",
    "EnvironmentCache",
    "InstallFailed",
    "Installer",
    "OutOfTime",
    "Pin",
    "Prober",
    "Search",
    "adjacent",
    "bisect_all",
    "bisect_command",
    "choose_reproduction",
    "crash_request",
    "describe",
    "graph_change_request",
    "graph_count_reproduction",
    "owed_bisections",
    "request_between",
    "resolve_end",
    "resumable",
    "run_search",
    "verify_requests",
]
