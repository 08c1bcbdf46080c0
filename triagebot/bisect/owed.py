"""Which bisections a night owes, and the one a `/rerun-sweep bisect MODEL` asks for.

A crash that appears between two stored nightlies more than a day apart (nights were missed,
or their sweeps were never stored) may have started in any build between them: its first bad
nightly is owed a bisection. Between adjacent nightlies none is owed: the diff's commit range is
the answer already. When torch did not change but transformers did, the releases between are
bisected instead (`request_between`), whatever the days. A crash is bisected with its group's
verified reproduction (a reproduction that runs on the counting backend: failures met only on
the backend ladder are not bisected), and never again once the store has an answer for it. A
model that compiles to more graphs at baseline than in the earlier nightly (a Dynamo regression
whatever the flags do) is owed one too, with a script that counts its graphs (`graphs`),
verified with the night's torch before it is bisected: one per graph-break reason the risen
models newly hit, not one per model. A wrong result at the default config new since the earlier
nightly is owed one as a crash is, with its verified model-level repro.

- `owed_bisections(snapshot, previous, store)`: tonight's, the largest groups first, then the
  baseline graph-count regressions. A model whose run in `previous` gave no verdict is judged by
  the last stored nightly that ran it (`good_end`): a steady crash behind an engine-error night
  owes nothing.
- `crash_request(store, model, flag)`: a model's crash in the newest stored nightly, between
  the last stored nightly it ran in and the first of the nightlies it has crashed in since.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import date

from triagebot.analysis import (
    RAN_EFFECTS,
    bisectable_reproduction,
    crash_group_of,
    diff,
    flag_stats,
    model_effect,
)
from triagebot.analysis.breaks import reason_lines
from triagebot.analysis.compiler_wrong import baseline_letters, compiler_wrong_results
from triagebot.bisect.engine import BisectRequest, request_between
from triagebot.bisect.graphs import graph_change_request
from triagebot.errors import BisectError
from triagebot.results import BASELINE, Effect, Environment, ModelChange, Snapshot
from triagebot.store import Store, find_bisection, key_order

_NIGHT = re.compile(r"\.dev(?P<day>\d{8})")


def night_of_version(version: str) -> date | None:
    """The day of a nightly from its version (`2.12.0.dev20260408+cu128`), None for a release."""
    found = _NIGHT.search(version)
    if found is None:
        return None
    try:
        return date(int(found["day"][:4]), int(found["day"][4:6]), int(found["day"][6:]))
    except ValueError:
        return None


def adjacent(old: Environment, new: Environment) -> bool:
    """Whether no nightly can lie between the builds of two sweeps: consecutive days, the
    transformers the same (a release without a day is never adjacent to anything)."""
    first, second = night_of_version(old.torch_version), night_of_version(new.torch_version)
    if first is None or second is None or old.transformers_version != new.transformers_version:
        return False
    return (second - first).days <= 1 and not old.same_build(new)


def answered(store: Store | None, request: BisectRequest) -> bool:
    """Whether the store already has an answer for `request` (never bisected twice)."""
    if store is None:
        return False
    found = find_bisection(store, request.axis, request.reproduction.signature, request.good, request.bad)
    return found is not None and found.first_bad is not None and found.conclusive


def owed_bisections(
    snapshot: Snapshot, previous: Snapshot | None, store: Store | None
) -> list[BisectRequest]:
    """The bisections tonight owes (see the module docstring): one per crash group with a model
    newly crashing since `previous`, largest group first."""
    if previous is None or adjacent(previous.environment, snapshot.environment):
        return []
    if previous.environment.same_build(snapshot.environment) and (
        previous.environment.transformers_version == snapshot.environment.transformers_version
    ):
        return []
    change = diff(previous, snapshot)
    owed: list[BisectRequest] = []
    for flag, moved in change.flags.items():
        newly = {row.model for row in moved.newly_crashing}
        for group in flag_stats(snapshot, flag).crash_groups:
            repro = bisectable_reproduction(snapshot, flag, group)
            if repro is None:
                continue
            goods = [
                good_end(store, previous, model, flag, group.signature)
                for model in sorted(newly & set(group.models))
            ]
            known = [good for good in goods if good is not None]
            if not known:
                continue
            good = max(known, key=lambda found: key_order(found.key))  # the narrowest range
            if adjacent(good.environment, snapshot.environment):
                continue
            request = request_between(good.environment, snapshot.environment, repro)
            if not answered(store, request):
                owed.append(request)
    owed += wrong_results(snapshot, previous, store)
    return owed + graph_regressions(snapshot, previous, change.baseline_graph_changes, store)


def good_end(
    store: Store | None, previous: Snapshot, model: str, flag: str, signature: str
) -> Snapshot | None:
    """The nightly a model newly crashing since `previous` last ran in without the crash:
    `previous` when it ran there, else (its run there gave no verdict: an engine error, a
    timeout) the newest stored one before it that ran it; None when that one crashed with it
    too (a steady crash behind a night without a verdict: nothing new to bisect) or none did."""
    state = crashed_with(previous, model, flag, signature)
    if state is not None or store is None:
        return previous if state is False else None
    for key in reversed(store.keys()):
        if key_after(key, previous):
            continue
        earlier = store.readable(key)
        state = crashed_with(earlier, model, flag, signature) if earlier is not None else None
        if state is not None:
            return earlier if state is False else None
    return None


def wrong_results(snapshot: Snapshot, previous: Snapshot, store: Store | None) -> list[BisectRequest]:
    """The wrong results at the default config new since `previous` (whose outputs it judged
    right there), each with its verified model-level repro, bisected as a crash is: the repro
    raises `WrongResult` on a bad build and finishes on a good one."""
    before = baseline_letters(previous)
    if before is None:  # `previous` compared no outputs: nothing is known to be new
        return []
    swept = {result.model for result in previous.results}
    owed = []
    for item in compiler_wrong_results(snapshot):
        repro = item.repro
        if item.model not in swept or item.model in before or repro is None or not repro.verified:
            continue
        request = request_between(previous.environment, snapshot.environment, repro)
        if not answered(store, request):
            owed.append(request)
    return owed


def graph_regressions(
    snapshot: Snapshot, previous: Snapshot, changes: list[ModelChange], store: Store | None
) -> list[BisectRequest]:
    """The models that compile to more graphs at baseline than in `previous`, grouped by what
    changed (`what_changed`): one bisection per group, not per model, so that one Dynamo change
    that adds a graph everywhere owes one. Each group is bisected with the graph-count
    reproduction of its first model (by name) whose script can be made (unverified:
    `graphs.verify_requests` runs it first)."""
    risen = [c for c in changes if c.old_graphs is not None and c.new_graphs is not None]
    risen = sorted((c for c in risen if c.new_graphs > c.old_graphs), key=lambda c: c.model)
    groups: dict[str, list[ModelChange]] = {}
    for change, reason in zip(risen, what_changed(snapshot, previous, [c.model for c in risen]), strict=True):
        groups.setdefault(reason, []).append(change)
    owed = []
    for members in groups.values():
        for change in members:
            try:
                request = graph_change_request(previous, snapshot, change.model)
            except BisectError:
                continue  # no spec to rebuild it from: the group's next model
            if not answered(store, request):
                owed.append(request)
            break
    return owed


def what_changed(snapshot: Snapshot, previous: Snapshot, models: list[str]) -> list[str]:
    """For each of `models`, the baseline graph-break reason it hits now and did not before,
    the one most of `models` newly hit (ties by name); "" when it hits none new (the nightly
    changed something the break reasons do not name)."""
    new = [_baseline_reasons(snapshot, model) - _baseline_reasons(previous, model) for model in models]
    counted = Counter(reason for reasons in new for reason in reasons)
    return [min(reasons, key=lambda r: (-counted[r], r)) if reasons else "" for reasons in new]


def _baseline_reasons(snapshot: Snapshot, model: str) -> set[str]:
    result = snapshot.result(model)
    baseline = result.outcomes.get(BASELINE) if result is not None else None
    return reason_lines(baseline.break_reasons) if baseline is not None else set()


def crash_request(store: Store, model: str, flag: str) -> BisectRequest:
    """The bisection of `model`'s crash under `flag` in the newest stored nightly (see the module
    docstring); a one-line `BisectError` when there is none to make."""
    newest = store.latest()
    if newest is None:
        raise BisectError("the store holds no nightly")
    group = crash_group_of(newest, flag, model)
    if group is None:
        raise BisectError(
            f"{model} has no confirmed crash under {flag} in the newest stored nightly {newest.key}"
        )
    repro = bisectable_reproduction(newest, flag, group)
    if repro is None:
        raise BisectError(
            f"the crash group of {model} under {flag} has no verified reproduction in {newest.key}"
        )
    first_bad = newest
    for key in reversed(store.keys()):
        earlier = store.readable(key)
        if earlier is None or key == newest.key or earlier.environment.same_build(first_bad.environment):
            continue
        if key_after(key, first_bad):
            continue
        state = crashed_with(earlier, model, flag, group.signature)
        if state is None:  # not swept there: look further back
            continue
        if state:
            first_bad = earlier
            continue
        return request_between(earlier.environment, first_bad.environment, repro)
    raise BisectError(
        f"no stored nightly before {first_bad.key} in which {model} ran under {flag}: nothing to bisect from"
    )


def key_after(key: str, snapshot: Snapshot) -> bool:
    """Whether stored nightly `key` comes at or after `snapshot` in the store's order."""
    return key_order(key) >= key_order(snapshot.key)


def crashed_with(snapshot: Snapshot, model: str, flag: str, signature: str) -> bool | None:
    """Whether `model` crashed with `signature` under `flag` in `snapshot` (True), or ran there
    (False; a run skipped because the flag had nothing to act on counts as run); None when it
    was not swept there or its run says nothing (another error, flaky, a timeout)."""
    result = snapshot.result(model)
    row = model_effect(result, flag) if result is not None and flag in snapshot.flags else None
    if row is None:
        return None
    if row.effect == Effect.crashes:
        return True if row.signature == signature else None
    return False if row.effect in RAN_EFFECTS or row.effect == Effect.skipped else None
