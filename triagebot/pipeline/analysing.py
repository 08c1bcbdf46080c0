"""The night: a snapshot analysed once against what earlier nights stored.

Data flows one way: the store, then what earlier nights stored (`analysis.history`), then the
night (`analysis.night`), then its renderings and its publication, which only read it.
`night_of` is the one way every command (`run`, `report`, `publish`, `site`) turns a snapshot
and the store into the night it renders, so that they render and close alike; `with_triage`
adds what the store knows of each failure group beyond the crash (labels, upstream pins and
searches, bisections), which the publisher refreshes from GitHub.
"""

from __future__ import annotations

from triagebot import analysis
from triagebot.analysis.history import Earlier, StoredHistory, earlier
from triagebot.analysis.triage import annotate
from triagebot.config import Config
from triagebot.errors import PipelineError
from triagebot.results import COMPILER_WRONG_ISSUE, Night, Snapshot
from triagebot.store import Store, StoreError, bisections_by_signature
from triagebot.store.selection import comparable
from triagebot.tracker.actions import issue_url
from triagebot.tracker.cc import cc_for
from triagebot.tracker.memory import IssueMemory
from triagebot.tracker.upstream_memory import stored_pins, stored_searches


def night_of(
    snapshot: Snapshot,
    store: Store,
    config: Config,
    *,
    previous: Snapshot | None = None,
    stored: StoredHistory | None = None,
) -> Night:
    """The night of `snapshot`, analysed once: compared with `previous` (default: the newest
    stored snapshot of another build and a comparable selection ordered before it,
    `Store.previous_of`: like with like), its history the stored snapshots before that one
    (`analysis.choose_history`), cc lists from `[tracker]`.

    `stored`: what earlier nights stored, already read (`analysis.history.read_history`): when
    `snapshot` is its newest nightly, the history comes from its compact data and only the
    previous nightly is read whole."""
    try:
        before = earlier(snapshot, store, previous=previous, stored=stored)
        last = before.previous
        if previous is None and last is not None and not comparable(last.corpus, snapshot.corpus):
            # Another selection was swept last: compare with the last night of this one, or,
            # without one, it is a first night, with no history either.
            like = store.previous_of(snapshot)
            before = (
                earlier(snapshot, store, previous=like, stored=stored) if like else Earlier([], None, None)
            )
    except StoreError as error:
        raise PipelineError(f"cannot read the stored history: {error}") from None
    tonight = analysis.night(
        snapshot,
        before.history,
        before.previous,
        previous_rows=before.previous_rows,
        cc=lambda flag, signatures: cc_for(flag, signatures, config.tracker),
        dashboard_url=config.tracker.dashboard_url,
        close_after=config.tracker.close_after,
        compile_time_blocks=config.tracker.compile_time_blocks,
        ladder_window=config.sweep.ladder_window,
    )
    return with_triage(tonight, store, config)


def with_triage(night: Night, store: Store | None, config: Config) -> Night:
    """`night` with what the store knows of each failure group beyond the crash: its labels, its
    pin and newest search of the upstream repository (`tracker.upstream`), its bisection."""
    upstream = config.tracker.upstream
    try:
        return annotate(
            night,
            pins=stored_pins(store, upstream),
            links=config.tracker.upstream_links,
            searches=stored_searches(store, upstream),
            bisections=bisections_by_signature(store),
            repo=upstream,
            local=upstream is not None and upstream == config.tracker.repo,
        )
    except StoreError as error:
        raise PipelineError(f"cannot read the store's upstream records: {error}") from None


def newest_night(store: Store, config: Config, stored: StoredHistory, night: Night | None = None) -> Night:
    """The night of the newest stored nightly, which the site renders: `night` when it is that
    one, else analysed here (`night_of`, its history from `stored`) and linked to the tracking
    issues the store remembers for `tracker.repo`."""
    if night is not None and night.key == stored.newest:
        return night
    assert stored.newest is not None
    tonight = night_of(store.get(stored.newest), store, config, stored=stored)
    repo = config.tracker.repo
    if not repo:
        return tonight
    numbers = IssueMemory.load(store, repo).numbers([*tonight.flags, COMPILER_WRONG_ISSUE])
    return tonight.linked({flag: issue_url(repo, number) for flag, number in numbers.items()})
