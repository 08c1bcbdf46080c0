"""How a flag's crashes recur from nightly to nightly: what tells an intermittent crash, a
returning one and a fixed one apart, so that noise neither closes an issue nor says "fixed".

A model's states (`Recurrence.states`) are one letter a nightly: `C` a confirmed crash, `F` a
crash that did not repeat, `?` no verdict (its flag run errored, timed out or died, its suite
was not swept, or the model was not in the corpus that night), `.` it ran without a crash; for a wrong result
(`Recurrence.wrong`) `W` a confirmed one, and `?` also where the night did not judge its outputs.
Whether a night is evidence is decided once (`_Nightly.ran`), and every rule reads only the
`evidence`: a night that did not run (or check) a model says nothing either way, so it neither
counts toward closing nor breaks a run of failures. A model that left the corpus (not swept for
`LEFT_AFTER` nightlies, though its suite was) has no live failure: the issue stops counting it.
The rules read a
failure's `episode`: its evidence from the first failure that no `LOOKBACK` of clean evidence
separates from the last.

- `intermittent`: it failed, ran without a confirmed failure, then failed again; or one of its
  failures did not repeat when run again;
- `rate`: on how many of the last `WINDOW` nights that ran it it crashed ("3 of the last 7");
- `steady`: it failed on every night it ran since its episode began, for a `WINDOW` at least (and
  `close_after` nights): a younger failure cannot be told from an intermittent one;
- `settled`: its failure is over: on some night since its last failure its last nights that ran
  were clean, `close_after` of them for a steady failure, else the whole `WINDOW`, or three times
  the `longest_gap` it went without failing when that is longer (a flaky night is not clean);
  once over, over until a confirmed failure returns;
- `is_new`: it crashes tonight, starts its episode, and did not crash even unconfirmed in the
  `WINDOW` before;
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
    suite_of,
)

WINDOW = 7
"""Nightlies an intermittent crash is judged over: a week of nightlies."""

LOOKBACK = 4 * WINDOW
"""Nights that ran a model without a confirmed failure which end its crash's run (`episode`): a
failure within that many of the one before it returns (it is not new, and the gap between them
counts); one after it starts afresh."""

LEFT_AFTER = WINDOW
"""Nightlies in a row a model must be missing from its suite, swept each night, to have left the
corpus: one back within a week was away (a catalog that failed to list it), not removed."""

CRASH, WRONG, FLAKY, UNKNOWN, CLEAN = "C", "W", "F", "?", "."
FAILED = CRASH + WRONG
_GAP = re.compile(rf"[{FAILED}][{CLEAN}{FLAKY}]+[{FAILED}]")


class _Nightly:
    """One nightly as the letters read it: its lists as sets, made once."""

    def __init__(self, nightly: NightSummary, flag: str) -> None:
        self.crashing = set(nightly.crashing.get(flag, ()))
        self.flaky = set(nightly.flaky.get(flag, ()))
        self.unran = set(nightly.unran.get(flag, ()))
        self.swept = set(nightly.swept) if nightly.swept is not None else None
        self.skipped_suites = set(nightly.skipped_suites)
        self.ran_flag = flag in nightly.trend
        self.wrong = set(nightly.wrong.get(flag, ()))
        self.compared = nightly.outputs_compared
        self.unjudged = set(nightly.unjudged.get(flag, ()))

    def letter(self, model: str) -> str:
        """Its letter for a crash."""
        if model in self.crashing:
            return CRASH
        if model in self.flaky:
            return FLAKY
        return CLEAN if self.ran(model) else UNKNOWN

    def wrong_letter(self, model: str) -> str:
        """Its letter for a wrong result: a night that did not judge its outputs is no evidence."""
        if model in self.wrong:
            return WRONG
        if model in self.flaky:
            return FLAKY
        judged = self.compared and model not in self.unjudged and model not in self.crashing
        return CLEAN if judged and self.ran(model) else UNKNOWN

    def left(self, model: str) -> bool:
        """Whether `model` was missing from this nightly: not swept, though its suite was."""
        absent = self.swept is not None and model not in self.swept
        return absent and suite_of(model) not in self.skipped_suites

    def ran(self, model: str) -> bool:
        """Whether the nightly ran `model` under its flag to a verdict: the one rule of evidence."""
        absent = self.swept is not None and model not in self.swept
        return self.ran_flag and not absent and model not in self.unran


def recurrence(flag: str, nights: Sequence[NightSummary], close_after: int = 2) -> Recurrence:
    """The states of every model whose crash (or wrong result) under `flag` is still live in
    `nights` (oldest first, tonight last): it failed (confirmed) within `LOOKBACK` nights that
    ran it, or its failure was not over before tonight. The states go back as far as the oldest
    of their `episode`s needs, and a week of nights that ran it before that."""
    nights = list(nights)
    read = [_Nightly(nightly, flag) for nightly in nights]
    crashed = sorted({model for nightly in read for model in nightly.crashing})
    wronged = sorted({model for nightly in read for model in nightly.wrong})
    letters = {model: "".join(nightly.letter(model) for nightly in read) for model in crashed}
    wrong = {model: "".join(nightly.wrong_letter(model) for nightly in read) for model in wronged}
    # A model that left the corpus (removed, or renamed) has no failure the issue counts: said
    # once as removed, never fixed; a model whose suite was not swept tonight still counts.
    gone = {model for model in (*crashed, *wronged) if all(n.left(model) for n in read[-LEFT_AFTER:])}
    live = {m: states for m, states in letters.items() if m not in gone and _live(states, close_after)}
    live_wrong = {m: states for m, states in wrong.items() if m not in gone and _live(states, close_after)}
    needed = [_needed_from(states) for states in (*live.values(), *live_wrong.values())]
    start = min(needed, default=len(nights))
    signatures: dict[str, str] = {}
    for nightly in nights[start:-1]:  # oldest first: each model's last crash is the one kept
        signatures.update(nightly.crash_signature_of.get(flag, {}))
    return Recurrence(
        keys=[nightly.key for nightly in nights[start:]],
        states={model: states[start:] for model, states in live.items()},
        wrong={model: states[start:] for model, states in live_wrong.items()},
        signatures={model: signature for model, signature in signatures.items() if model in live},
    )


def _live(states: str, close_after: int) -> bool:
    """Whether a model's crash still matters tonight: a failure within `LOOKBACK` nights that ran
    it, or a crash not over before tonight."""
    known = evidence(states)
    recent = any(letter in FAILED for letter in known[-LOOKBACK:])
    return recent or not settled(states[:-1], close_after)


def _needed_from(states: str) -> int:
    """The first of `states` its rules read: a `WINDOW` of nights that ran it before its episode."""
    ran = [i for i, letter in enumerate(states) if letter != UNKNOWN]
    first = len(evidence(states)) - len(episode(states))
    return ran[max(0, first - WINDOW)] if ran else len(states)


def evidence(states: str) -> str:
    """The letters of the nights that ran the model to a verdict: a night that did not (`?`) is
    no evidence either way, so every rule reads this and never the nightlies themselves."""
    return states.replace(UNKNOWN, "")


def episode(states: str) -> str:
    """The `evidence` of its crash's current run: from its first failure that no stretch of
    `LOOKBACK` nights without one separates from its last failure; empty when it never failed."""
    known = evidence(states)
    failures = [i for i, letter in enumerate(known) if letter in FAILED]
    if not failures:
        return ""
    first = failures[-1]
    for earlier in reversed(failures[:-1]):
        if first - earlier - 1 >= LOOKBACK:
            break
        first = earlier
    return known[first:]


def intermittent(states: str) -> bool:
    """In its episode, it failed, ran without a confirmed failure, and failed again, or a failure
    of it did not repeat when run again."""
    run = episode(states)
    return _GAP.search(run) is not None or FLAKY in run


def rate(states: str, window: int = WINDOW) -> tuple[int, int]:
    """(nights it failed, nights it ran) over the last `window` nights that ran it, from the first
    on which it failed: a crash new this week is not intermittent for the nights before it."""
    recent = evidence(states)[-window:]
    first = min((recent.find(letter) for letter in FAILED if letter in recent), default=-1)
    known = recent[first:] if first >= 0 else ""
    return sum(letter in FAILED for letter in known), len(known)


def steady(states: str, close_after: int, window: int = WINDOW) -> bool:
    """In its episode, it failed on every night that ran it, on `close_after` nights and a whole
    `window` at least: a failure younger than that cannot be told from an intermittent one."""
    run = episode(states)
    failed = sum(letter in FAILED for letter in run)
    return not intermittent(states) and failed >= max(close_after, window)


def longest_gap(states: str) -> int:
    """The most nights that ran it in a row without a confirmed failure between two failures of
    its episode."""
    runs = re.split(f"[{FAILED}]", episode(states).strip(CLEAN + FLAKY))
    return max((len(run) for run in runs), default=0)


def _over_by(run: str, close_after: int, window: int) -> bool:
    """Whether an episode's letters up to one night end in enough clean nights to call it over."""
    longer = max(close_after, window, 3 * longest_gap(run))
    wait = close_after if steady(run, close_after, window) else longer
    tail = run[-wait:]
    return len(tail) == wait and set(tail) == {CLEAN}


def settled(states: str, close_after: int, window: int = WINDOW) -> bool:
    """Its failure is over: on some night since its last failure the last nights that ran it were
    clean, `close_after` of them for a steady failure; else (an intermittent one, or one too
    young to tell) `window` of them, or three times its longest gap between two failures when
    that is longer. Once over, over until a confirmed failure returns: a flaky night, a night
    that did not run it or a failure leaving the lookback never undoes it."""
    run = episode(states)
    last = max(run.rfind(letter) for letter in FAILED)
    return not run or any(
        _over_by(run[:end], close_after, window)
        for end in range(last + 2, len(run) + 1)
        if run[end - 1] == CLEAN
    )


def settled_tonight(states: str, close_after: int, window: int = WINDOW) -> bool:
    """Its crash became over tonight: settled now, not the nightly before."""
    return settled(states, close_after, window) and not settled(states[:-1], close_after, window)


def is_new(states: str, window: int = WINDOW) -> bool:
    """It crashes tonight (confirmed) and starts its `episode` (no failure in the `LOOKBACK`
    nights that ran it before), and did not crash even once unconfirmed in the `window` nights
    that ran it before: a crash that returns is not new."""
    before = evidence(states[:-1])[-window:]
    return states.endswith(CRASH) and episode(states) == CRASH and FLAKY not in before


def crash_run_start(states: str) -> int:
    """The index in `states` of the first night of its current run of confirmed crashes (it
    crashes on the last): a night that did not run it (`?`) or whose crash did not repeat (`F`)
    neither ends nor starts the run; a clean night ends it."""
    start = len(states) - 1
    for index in range(len(states) - 2, -1, -1):
        if states[index] == CLEAN:
            break
        if states[index] == CRASH:
            start = index
    return start


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
