"""One night analysed once: the `Night` record every report, body and page is rendered from.

`choose_history` is the one rule for what a nightly is compared with, used by `run`, `report`,
`publish` and `site` alike; `night` computes everything else from the snapshots it is given.
A nightly of the history may be given whole (a `Snapshot`) or as the `NightSummary` it reduces
to (`summarise`): a night needs only each earlier nightly's trend points and crash signatures,
and the snapshot of the one it is diffed against.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from triagebot.analysis.call_time import call_time
from triagebot.analysis.compile_time import baseline_compile_seconds, compile_time
from triagebot.analysis.compiler_wrong import baseline_letters, compiler_wrong_night
from triagebot.analysis.diff import diff
from triagebot.analysis.effects import classify, crash_groups, no_evidence_of_help, real_rows
from triagebot.analysis.figures import flag_figures, verdict
from triagebot.analysis.health import health_of, health_points
from triagebot.analysis.recurrence import (
    CRASH,
    UNKNOWN,
    continued,
    crash_run_start,
    group_rate,
    news,
    recurrence,
    settled,
)
from triagebot.analysis.rotation import coverage, ladder_points, latest_evidence
from triagebot.analysis.sentinels import behaved_as_built
from triagebot.analysis.stats import flag_stats, trend_point
from triagebot.results import (
    BASELINE,
    COMPILER_WRONG_ISSUE,
    LADDER_WINDOW,
    Accuracy,
    Check,
    Effect,
    FlagNight,
    FlagStats,
    ModelEffect,
    Night,
    NightSummary,
    Recurrence,
    RungCoverage,
    Snapshot,
    SnapshotDiff,
    suite_of,
    users_backends,
)

# Effects that say nothing of whether the flag still crashes the model: it was not run through.
NO_VERDICT = frozenset(
    {Effect.untestable, Effect.engine_error, Effect.timeout, Effect.signal, Effect.both_crash}
)

CcRule = Callable[[str, list[str]], list[str]]
"""(flag, its confirmed wrong-result then crash signatures, largest group first) -> people to cc
on its issue."""


def summarise(snapshot: Snapshot, rows: Sequence[ModelEffect] | None = None) -> NightSummary:
    """`snapshot` as the history of a later night reads it; `rows` are `classify(snapshot)`
    when already computed."""
    rows = classify(snapshot) if rows is None else rows
    by_flag: dict[str, list[ModelEffect]] = {flag: [] for flag in snapshot.flags}
    for row in real_rows(snapshot, rows):  # a sentinel's crash opens and keeps open no issue
        if row.flag in by_flag:
            by_flag[row.flag].append(row)
    return NightSummary(
        key=snapshot.key,
        created=snapshot.created,
        environment=snapshot.environment,
        trend={
            flag: trend_point(snapshot.key, mine, no_evidence_of_help(snapshot, flag))
            for flag, mine in by_flag.items()
        },
        crash_signatures={
            flag: [group.signature for group in crash_groups(mine, flag, Effect.crashes)]
            for flag, mine in by_flag.items()
        },
        crashing={
            flag: [row.model for row in mine if row.effect == Effect.crashes]
            for flag, mine in by_flag.items()
        },
        crash_signature_of={
            flag: {row.model: row.signature for row in mine if row.effect == Effect.crashes and row.signature}
            for flag, mine in by_flag.items()
        },
        flaky={
            flag: [row.model for row in mine if row.effect == Effect.flaky] for flag, mine in by_flag.items()
        },
        unran={
            flag: [row.model for row in mine if row.effect in NO_VERDICT] for flag, mine in by_flag.items()
        },
        swept=[result.model for result in snapshot.results],
        skipped_suites=list(snapshot.corpus.skipped),
        wrong={
            flag: [row.model for row in mine if row.effect == Effect.wrong_result]
            for flag, mine in by_flag.items()
        },
        outputs_compared=Check.accuracy in snapshot.checks,
        unjudged={flag: _unjudged(snapshot, flag, mine) for flag, mine in by_flag.items()},
        wrong_signatures={
            flag: [group.signature for group in crash_groups(mine, flag, Effect.wrong_result)]
            for flag, mine in by_flag.items()
        },
        health=health_points(snapshot),
        baseline_wrong=baseline_letters(snapshot),
        ladder=ladder_points(snapshot),
        compile_seconds=baseline_compile_seconds(snapshot),
    )


def _unjudged(snapshot: Snapshot, flag: str, mine: Sequence[ModelEffect]) -> list[str]:
    """The models that ran under `flag` to a verdict whose outputs were not judged right or wrong."""
    judged = {Accuracy.match, Accuracy.mismatch}
    results = {result.model: result for result in snapshot.results}
    unjudged = []
    for row in mine:
        outcomes = results[row.model].outcomes
        check, baseline = outcomes[flag].accuracy, outcomes[BASELINE]
        judged_right = check is not None and check.verdict in judged and not baseline.mismatched
        if row.effect not in (Effect.wrong_result, Effect.flaky) and not judged_right:
            unjudged.append(row.model)
    return unjudged


def choose_history(
    snapshot: Snapshot, stored: Sequence[Snapshot | NightSummary], previous: Snapshot | None = None
) -> tuple[list[Snapshot | NightSummary], Snapshot | NightSummary | None]:
    """The nightlies `snapshot` is compared with: (history oldest first, previous).

    `stored` is the store's history up to `snapshot` (oldest first, as `Store.history` gives
    it), whole or summarised; `snapshot` itself and other nightlies of its build are left out.
    Without `previous`, the newest of the rest is the previous nightly. With one (`--previous
    OLD`), the history ends with it: the stored nightlies before it, then it, so that closing
    and trends read the nightly the diff was made against, whether or not it is in the store.
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
    history: Sequence[Snapshot | NightSummary] = (),
    previous: Snapshot | None = None,
    *,
    previous_rows: Sequence[ModelEffect] | None = None,
    cc: CcRule | None = None,
    issue_urls: dict[str, str] | None = None,
    dashboard_url: str | None = None,
    close_after: int = 2,
    compile_time_blocks: float | None = None,
    ladder_window: int = LADDER_WINDOW,
) -> Night:
    """Analyse `snapshot` once. `history` and `previous` come from `choose_history`; `history`
    (oldest first, snapshots or their summaries) fills each crash group's first nightly, each
    flag's trend and the corpus's health trend; `previous` is what the diff (and the health's
    baseline regressions) is made against (`previous_rows`: its rows, when the caller has them).
    Every snapshot given is classified once, the diff made once from those rows, the health
    computed once. `close_after`: the clean nightlies closing waits for, which a fix waits for
    before it is said (`recurrence.news`). `compile_time_blocks`: the median compile-time ratio
    past which a flag is not ready (None: compile time never blocks). `ladder_window`: the
    nightlies within which the ladder's evidence on a changed model counts (`FlagFigures.coverage`)."""
    rows = classify(snapshot)
    summaries, previous_rows = _summaries(history, previous, previous_rows)
    change = None
    before = None  # the previous nightly's summary
    if previous is not None:
        if previous_rows is None:
            previous_rows = classify(previous)
        change = diff(previous, snapshot, old_rows=previous_rows, new_rows=rows)
        last = summaries[-1] if summaries else None
        before = last if last is not None and last.key == previous.key else summarise(previous, previous_rows)
    nights = [*summaries, summarise(snapshot, rows)]
    urls = issue_urls or {}
    compile_blocks = compile_time_blocks
    evidence = latest_evidence(nights)  # tonight last: its own evidence is age 0
    return Night(
        key=snapshot.key,
        snapshot=snapshot,
        previous_key=previous.key if previous is not None else None,
        history=[old.key for old in summaries],
        diff=change,
        flags={
            flag: _flag_night(
                snapshot,
                flag,
                rows,
                nights,
                change,
                before,
                cc,
                urls.get(flag),
                close_after,
                compile_blocks,
                coverage(flag, real_rows(snapshot, rows), evidence, users_backends(), ladder_window),
            )
            for flag in snapshot.flags
        },
        dashboard_url=dashboard_url,
        health=health_of(snapshot, [old.health for old in summaries], previous, change),
        compiler_wrong=compiler_wrong_night(
            snapshot, nights, cc, urls.get(COMPILER_WRONG_ISSUE), close_after
        ),
        sentinels_built=behaved_as_built(snapshot.results, rows),
    )


def _summaries(
    history: Sequence[Snapshot | NightSummary],
    previous: Snapshot | None,
    previous_rows: Sequence[ModelEffect] | None,
) -> tuple[list[NightSummary], Sequence[ModelEffect] | None]:
    """`history` summarised, each whole snapshot classified once; and the rows of `previous`,
    kept when it is one of them."""
    summaries: list[NightSummary] = []
    for old in history:
        if isinstance(old, Snapshot):
            old_rows = previous_rows if old is previous and previous_rows is not None else classify(old)
            if old is previous:
                previous_rows = old_rows
            summaries.append(summarise(old, old_rows))
        else:
            summaries.append(old)
    return summaries, previous_rows


def _crashing_since(recurred: Recurrence) -> dict[str, str]:
    """Each model crashing under the flag tonight -> the first nightly of its current run of
    crashes: a night that did not run it, or on which its crash did not repeat, continues the
    run (`crash_run_start`)."""
    return {
        model: recurred.keys[crash_run_start(letters)]
        for model, letters in recurred.states.items()
        if letters.endswith(CRASH)
    }


def _with_since(
    stats: FlagStats, since: dict[str, str], key: str, previous: NightSummary | None
) -> FlagStats:
    """`stats` with each crash group's members' first nightly of their current run of crashes,
    and the members new tonight: swept in the `previous` nightly without crashing (a model that
    joined the corpus tonight is not a new crash; a first night has none)."""

    def new(model: str) -> bool:
        if previous is None or since.get(model, key) != key:
            return False
        return previous.swept is None or model in previous.swept

    groups = [
        group.model_copy(
            update={
                "since": {model: since.get(model, key) for model in group.models},
                "new": [model for model in group.models if new(model)],
            }
        )
        for group in stats.crash_groups
    ]
    return stats.model_copy(update={"crash_groups": groups})


def _with_recurrence(stats: FlagStats, recurred: Recurrence) -> FlagStats:
    """`stats` with each crash group's rate over its window, and the signature it continues when
    its message was reworded since its members last crashed."""
    groups = []
    for group in stats.crash_groups:
        crashed, ran = group_rate(group, recurred.states)
        continues = continued(group, recurred.signatures)
        groups.append(
            group.model_copy(update={"nights_crashed": crashed, "nights_ran": ran, "continues": continues})
        )
    return stats.model_copy(update={"crash_groups": groups})


def _unverified(
    snapshot: Snapshot, recurred: Recurrence, rows: Sequence[ModelEffect], close_after: int
) -> dict[str, str]:
    """The models whose crash is not over (so the issue stays open) that tonight gave no
    verdict -> why: its suite not swept, not in the corpus tonight, or its flag run's effect."""
    by_model = {row.model: row for row in rows}
    found = {}
    for model, letters in recurred.states.items():
        if not letters.endswith(UNKNOWN) or settled(letters, close_after):
            continue
        row, suite = by_model.get(model), suite_of(model)
        if row is not None:
            found[model] = f"no verdict tonight: {row.effect.value.replace('_', ' ')}"
        elif suite in snapshot.corpus.skipped:
            found[model] = "its suite not swept tonight"  # why: said once, on the issue's own line
        else:
            found[model] = "not in the corpus tonight"
    return found


def _flag_night(
    snapshot: Snapshot,
    flag: str,
    rows: Sequence[ModelEffect],
    nights: Sequence[NightSummary],
    change: SnapshotDiff | None,
    before: NightSummary | None,
    cc: CcRule | None,
    issue_url: str | None,
    close_after: int,
    compile_time_blocks: float | None = None,
    covered: Sequence[RungCoverage] = (),
) -> FlagNight:
    """One flag's part of the night; `nights`: the history's summaries, then tonight's;
    `covered`: what the ladder's evidence covers of what the flag changes, per rung users run."""
    seen: dict[str, str] = {}
    for nightly in nights:
        for signature in nightly.crash_signatures.get(flag, []):
            seen.setdefault(signature, nightly.key)
    stats = flag_stats(snapshot, flag, rows, first_seen=seen)
    earlier = nights[-2] if len(nights) > 1 else None
    recurred = recurrence(flag, nights, close_after)
    stats = _with_since(stats, _crashing_since(recurred), snapshot.key, earlier)
    flag_change = change.flags.get(flag) if change is not None else None
    stats = _with_recurrence(stats, recurred)
    mine = [row for row in rows if row.flag == flag]
    history: dict[str, list[float]] = {}
    for nightly in nights[:-1]:  # the stored nightlies, not tonight
        for model, seconds in nightly.compile_seconds.items():
            history.setdefault(model, []).append(seconds)
    cost = compile_time(snapshot, flag, rows, blocks_above=compile_time_blocks, history=history)
    checked = "accuracy" in snapshot.checks
    calls = call_time(snapshot, flag, rows)
    figures = flag_figures(
        stats,
        flag_change,
        outputs_checked=checked,
        compile_time=cost,
        call_time=calls,
        sentinels=snapshot.sentinels,
    )
    unverified = _unverified(snapshot, recurred, mine, close_after)
    figures = figures.model_copy(
        update={"unverified": len(unverified), "unverified_crashes": unverified, "coverage": list(covered)}
    )
    # What the issue tracks (wrong results, then crashes) routes its people.
    signatures = [group.signature for group in (*stats.wrong_result_groups, *stats.crash_groups)]
    return FlagNight(
        flag=flag,
        stats=stats,
        figures=figures,
        verdict=verdict(figures),
        effects=mine,
        trend=[nightly.trend[flag] for nightly in nights if flag in nightly.trend],
        diff=flag_change,
        cc=list(cc(flag, signatures)) if cc is not None else [],
        issue_url=issue_url,
        recurrence=recurred,
        news=news(flag_change, recurred, mine, snapshot.key, close_after),
        previous_signatures=(
            [*before.wrong_signatures.get(flag, []), *before.crash_signatures[flag]]
            if before is not None and flag in before.crash_signatures
            else None
        ),
    )
