"""One night analysed once: the `Night` record every report, body and page is rendered from.

`choose_history` is the one rule for what a nightly is compared with, used by `run`, `report`
and `publish` alike; `night` computes everything else from the snapshots it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from triagebot.analysis.diff import diff
from triagebot.analysis.effects import classify
from triagebot.analysis.health import health_of
from triagebot.analysis.stats import crash_groups, first_seen, flag_stats, trend
from triagebot.results import Effect, FlagNight, ModelEffect, Night, Snapshot

CcRule = Callable[[str, list[str]], list[str]]
"""(flag, its confirmed wrong-result then crash signatures, largest group first) -> people to cc
on its issue."""


def choose_history(
    snapshot: Snapshot, stored: Sequence[Snapshot], previous: Snapshot | None = None
) -> tuple[list[Snapshot], Snapshot | None]:
    """The nightlies `snapshot` is compared with: (history oldest first, previous).

    `stored` is the store's history up to `snapshot` (oldest first, as `Store.history` gives
    it); `snapshot` itself and other snapshots of its build are left out. Without `previous`,
    the newest of the rest is the previous nightly. With one (`--previous OLD`), the history
    ends with it: the stored nightlies before it, then it, so that closing and trends read the
    nightly the diff was made against, whether or not it is in the store.
    """
    older = [
        candidate
        for candidate in stored
        if candidate.key != snapshot.key and not candidate.environment.same_build(snapshot.environment)
    ]
    if previous is None:
        return older, (older[-1] if older else None)
    keys = [candidate.key for candidate in older]
    if previous.key in keys:
        before = older[: keys.index(previous.key)]
    else:
        before = [candidate for candidate in older if candidate.created < previous.created]
    return [*before, previous], previous


def night(
    snapshot: Snapshot,
    history: Sequence[Snapshot] = (),
    previous: Snapshot | None = None,
    *,
    cc: CcRule | None = None,
    issue_urls: dict[str, str] | None = None,
    dashboard_url: str | None = None,
) -> Night:
    """Analyse `snapshot` once. `history` and `previous` come from `choose_history`; `history`
    (oldest first) fills each crash group's first nightly, each flag's trend and the corpus's
    health trend; `previous` is what the diff (and the health's baseline regressions) is made
    against. Every snapshot is classified once, the diff made once, the health computed once."""
    rows = classify(snapshot)
    past = list(history)
    past_rows = [classify(old) for old in past]
    change = diff(previous, snapshot) if previous is not None else None
    previous_rows = None
    if previous is not None:
        previous_rows = past_rows[-1] if past and past[-1] is previous else classify(previous)
    flags = {}
    for flag in snapshot.flags:
        stats = flag_stats(snapshot, flag, rows)
        seen = first_seen([*past, snapshot], flag, [*past_rows, rows])
        for group in stats.crash_groups:
            group.first_seen = seen.get(group.signature, snapshot.key)
        # What the issue tracks (wrong results, then crashes) routes its people.
        signatures = [group.signature for group in (*stats.wrong_result_groups, *stats.crash_groups)]
        mine: list[ModelEffect] = [row for row in rows if row.flag == flag]
        flags[flag] = FlagNight(
            flag=flag,
            stats=stats,
            effects=mine,
            trend=trend([*past, snapshot], flag, [*past_rows, rows]),
            diff=change.flags.get(flag) if change is not None else None,
            cc=list(cc(flag, signatures)) if cc is not None else [],
            issue_url=(issue_urls or {}).get(flag),
            previous_signatures=(
                [
                    group.signature
                    for effect in (Effect.wrong_result, Effect.crashes)
                    for group in crash_groups(previous_rows, flag, effect)
                ]
                if previous is not None and previous_rows is not None and flag in previous.flags
                else None
            ),
        )
    return Night(
        key=snapshot.key,
        snapshot=snapshot,
        previous_key=previous.key if previous is not None else None,
        history=[old.key for old in past],
        diff=change,
        flags=flags,
        dashboard_url=dashboard_url,
        health=health_of(snapshot, past, previous, change),
    )
