"""How a flag's crashes recur from nightly to nightly: what tells an intermittent crash, a
returning one and a fixed one apart, so that noise neither closes an issue nor says "fixed".

A model's states over the last `LOOKBACK` nightlies (`Recurrence.states`) are one letter a
nightly: `C` a confirmed crash, `F` a crash that did not repeat, `?` no verdict (its flag run
errored, timed out or died, or the model was not in the corpus that night), `.` it ran without
a crash. A night that ran nothing of a model says nothing of its crash: `?` is skipped by every
rule here. Each rule is one function:

- `intermittent`: it crashed, ran without a confirmed crash, then crashed again; or one of its
  crashes did not repeat when run again;
- `rate`: on how many of the last `WINDOW` nights it ran it crashed ("3 of the last 7 nights");
- `steady`: it crashed on every night it ran since it first crashed, for a `WINDOW` at least (and
  `close_after` nights): a younger crash cannot be told from an intermittent one;
- `settled`: its crash is over: its last nights that ran were clean, `close_after` of them for a
  steady crash, else the whole `WINDOW`, or three times the `longest_gap` it went without crashing
  when that is longer (a flaky night is not clean);
- `is_new`: it crashes tonight and did not crash, even unconfirmed, in the `WINDOW` before;
- `continued`: the signature a reworded crash group had before (its members' last crashes were
  all under that one);
- `news`: what the notices say: the crashes new by `is_new`, the fixes by `settled_tonight`, each
  with the range of nightlies it came with (`first_builds`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from triagebot.results import (
    Effect,
    FailureGroup,
    FirstBuild,
    FlagDiff,
    FlagNews,
    ModelChange,
    ModelEffect,
    NightSummary,
    Recurrence,
)

WINDOW = 7
"""Nightlies an intermittent crash is judged over: a week of nightlies."""

LOOKBACK = 4 * WINDOW
"""Nightlies a model's states go back: far enough to have seen an intermittent crash come back."""

CRASH, FLAKY, UNKNOWN, CLEAN = "C", "F", "?", "."
_GAP = re.compile(rf"{CRASH}[{CLEAN}{FLAKY}]+{CRASH}")


def state_of(model: str, flag: str, nightly: NightSummary) -> str:
    """`model`'s letter under `flag` in one nightly."""
    if model in nightly.crashing.get(flag, ()):
        return CRASH
    if model in nightly.flaky.get(flag, ()):
        return FLAKY
    absent = nightly.swept is not None and model not in nightly.swept
    if absent or model in nightly.unran.get(flag, ()) or flag not in nightly.trend:
        return UNKNOWN
    return CLEAN


def recurrence(flag: str, nights: Sequence[NightSummary]) -> Recurrence:
    """The states of every model that crashed (confirmed) under `flag` in the last `LOOKBACK`
    of `nights` (oldest first, tonight last)."""
    recent = list(nights)[-LOOKBACK:]
    crashed = sorted({model for nightly in recent for model in nightly.crashing.get(flag, ())})
    signatures: dict[str, str] = {}
    for nightly in recent[:-1]:  # oldest first: each model's last crash is the one kept
        signatures.update(nightly.crash_signature_of.get(flag, {}))
    return Recurrence(
        keys=[nightly.key for nightly in recent],
        states={model: "".join(state_of(model, flag, nightly) for nightly in recent) for model in crashed},
        signatures={model: signature for model, signature in signatures.items() if model in crashed},
    )


def _known(states: str) -> str:
    return states.replace(UNKNOWN, "")


def intermittent(states: str) -> bool:
    """It crashed, ran without a confirmed crash, and crashed again (nights without a verdict
    skipped), or a crash of it did not repeat when run again."""
    known = _known(states)
    return _GAP.search(known) is not None or (CRASH in known and FLAKY in known)


def rate(states: str, window: int = WINDOW) -> tuple[int, int]:
    """(nights it crashed, nights it ran) over the last `window` nightlies, from the first on
    which it crashed: a crash new this week is not intermittent for the nights before it."""
    recent = states[-window:]
    first = recent.find(CRASH)
    known = _known(recent[first:]) if first >= 0 else ""
    return known.count(CRASH), len(known)


def steady(states: str, close_after: int, window: int = WINDOW) -> bool:
    """It crashed on every night it ran since its crash first showed, on `close_after` nights
    and a whole `window` at least: a crash younger than that cannot be told from an
    intermittent one."""
    return not intermittent(states) and _known(states).count(CRASH) >= max(close_after, window)


def longest_gap(states: str) -> int:
    """The most nights it ran in a row without a confirmed crash between two crashes."""
    runs = _known(states).strip(CLEAN + FLAKY).split(CRASH)
    return max((len(run) for run in runs), default=0)


def settled(states: str, close_after: int, window: int = WINDOW) -> bool:
    """Its crash is over: the last nights it ran were clean, `close_after` of them for a steady
    crash; else (an intermittent crash, or one too young to tell) `window` of them, or
    three times its longest gap between two crashes when that is longer."""
    longer = max(close_after, window, 3 * longest_gap(states))
    wait = close_after if steady(states, close_after, window) else longer
    tail = _known(states)[-wait:]
    return len(tail) == wait and set(tail) == {CLEAN}


def settled_tonight(states: str, close_after: int, window: int = WINDOW) -> bool:
    """Its crash became over tonight: settled now, not the nightly before."""
    return settled(states, close_after, window) and not settled(states[:-1], close_after, window)


def is_new(states: str, window: int = WINDOW) -> bool:
    """It crashes tonight (confirmed) and did not crash, not even once unconfirmed, in the
    `window` nightlies before: a crash that returns is not new."""
    before = states[:-1][-window:]
    return states.endswith(CRASH) and CRASH not in before and FLAKY not in before


def group_rate(group: FailureGroup, states: dict[str, str], window: int = WINDOW) -> tuple[int, int]:
    """`rate` of `group`: a night counts as crashed when one of its members crashed, as run when
    one of them ran (its members' letters are of the same nightlies)."""
    rows = [states[model] for model in group.models if model in states]
    if not rows:
        return 0, 0
    merged = "".join(
        CRASH if CRASH in night else (UNKNOWN if set(night) == {UNKNOWN} else CLEAN)
        for night in zip(*rows, strict=True)
    )
    return rate(merged, window)


def continued(group: FailureGroup, previous: dict[str, str]) -> str | None:
    """The signature `group` had before in other words: the last crash of each of its members
    that crashed before was under that one other signature, of the same error (`previous`:
    model -> the signature of its last crash before tonight)."""
    before = {previous[model] for model in group.models if model in previous}
    if len(before) != 1:
        return None
    (signature,) = before
    if signature == group.signature:
        return None
    return signature if _error(signature) == _error(group.signature) else None


def _error(signature: str) -> str:
    """The error a signature names: what comes before its message."""
    return signature.split(": ", 1)[0]


def news(
    change: FlagDiff | None, recurred: Recurrence, rows: Sequence[ModelEffect], key: str, close_after: int
) -> FlagNews | None:
    """What a flag's notices say tonight (None without a previous nightly): the models of
    `change` that newly crash (`is_new`), those whose crash is over as of tonight
    (`settled_tonight`, by the rule that closes an issue: never a model tonight did not run),
    each range with the build it came with (`first_builds`)."""
    if change is None:
        return None
    states = recurred.states
    new = [c for c in change.newly_crashing if is_new(states.get(c.model, CRASH))]
    known = {c.model: c for c in change.fixed}
    by_model = {row.model: row for row in rows}
    fixed = [
        known.get(model)
        or ModelChange(
            model=model,
            stratum=row.stratum,
            old_effect=Effect.crashes,
            new_effect=row.effect,
            old_signature=recurred.signatures.get(model),
            new_graphs=row.flag_graphs,
        )
        for model, letters in states.items()
        if (row := by_model.get(model)) is not None and settled_tonight(letters, close_after)
    ]
    return FlagNews(
        new=new,
        fixed=fixed,
        new_builds=first_builds(new, recurred, key, fixed=False),
        fixed_builds=first_builds(fixed, recurred, key, fixed=True),
    )


def first_builds(
    changes: Sequence[ModelChange], recurred: Recurrence, key: str, *, fixed: bool
) -> list[FirstBuild]:
    """The range of stored nightlies each change came with, one entry per range: for a new
    crash, the last nightly it ran without it and tonight; for a fix, the last nightly with the
    crash and the first it ran clean after it. (A bisection's answer is the night's triage.)"""
    found: dict[tuple[str | None, str | None, str], FirstBuild] = {}
    for change in changes:
        letters = recurred.states.get(change.model, "")
        if fixed:
            signature, crashed = change.old_signature, letters.rfind(CRASH)
            after = next((i for i in range(crashed + 1, len(letters)) if letters[i] == CLEAN), None)
            before = recurred.keys[crashed] if crashed >= 0 else None
            first = recurred.keys[after] if after is not None else key
        else:
            signature = change.new_signature
            clean = letters[:-1].rfind(CLEAN)
            before, first = (recurred.keys[clean] if clean >= 0 else None), key
        entry = found.setdefault(
            (signature, before, first), FirstBuild(models=[], signature=signature, before=before, after=first)
        )
        entry.models.append(change.model)
    return list(found.values())
