"""The words for a night's numbers, in one place: every surface (issue title and body, step
summary, report folder, the site's pages) says a flag's figures, its verdict and where a crash
lives in these words, so that no two of them can disagree.

- `percent(value)`, `plural(count, word)`: 9.1%, "1 model", "2 crashes";
- `population(figures)`: the denominator's name, "models it could affect" (some runs were
  skipped) or "testable models";
- `of(count, figures)`: "1 of 11 models it could affect (9.1%)", a share always beside its
  denominator;
- `reach(group)` and `checked(group, device)`: where a crash group fails beyond the counting
  backend ("also aot_eager", "Dynamo (counting backend) only", "not checked") and on which
  backends and device its first model was run;
- `verdict_sentence(figures, verdict)`: the one sentence at the top of a flag's issue and page;
- `headline(figures)` and `title_values(figures, key)`: what the issue title says.

Everything returned is plain text: the caller escapes it for Markdown or HTML. Error names come
from `analysis` (`[A-Za-z0-9_]` only); nothing else here is untrusted.
"""

from __future__ import annotations

from collections.abc import Sequence

from triagebot.analysis.figures import plural, share
from triagebot.analysis.ladder import USER_BACKENDS
from triagebot.report import safety
from triagebot.results import (
    COUNTING_BACKEND,
    SKIPPED_BECAUSE,
    WRONG_RESULT,
    FailureGroup,
    FlagFigures,
    FlagVerdict,
)

SHOWN_ERRORS = 3  # error names a title or a sentence lists before "and N more"
HEADLINE_LIMIT = 150  # characters of a title's headline, well within GitHub's 256 for a title

RULE = (
    "A flag is ready to be on by default when it ran on at least one model it could affect and no "
    "model crashes under it (confirmed), none gives a wrong result (confirmed) and none fails under "
    "it on a backend-ladder rung that its baseline passes; more graphs, more recompiles and engine "
    "errors do not block, they stand beside the verdict to be weighed against the models it helps."
)
"""The verdict's rule (`analysis.figures.verdict`) in words: the issue, the site and the README say it."""

CRASH_TO_BENEFIT = "Crash-to-benefit ratio"
"""The name of a flag's confirmed crashes per model it helps (`FlagStats.crash_to_benefit`), as the
hand-written reports named it: the issue and the site say it in these words."""

VERDICT_ROWS = {
    "crashes": "Crashes (confirmed)",
    "wrong_results": "Wrong results (confirmed)",
    "ladder_failures": "Failures on the backend ladder, not at baseline",
    "recompile_more": "More recompiles",
    "more_graphs": "More graphs",
    "engine_errors": "Engine errors (the flag untested there)",
    "helped": "Fewer graphs (helped)",
}
"""A verdict's rows, by `VerdictLine.what`."""


def percent(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.0f}%" if value == int(value) else f"{value:.1f}%"


def population(figures: FlagFigures) -> str:
    """The name of the models every share of a flag is over."""
    return "models it could affect" if figures.skipped else "testable models"


def skipped_because(figures: FlagFigures) -> str:
    """Why the skipped models were not compiled with the flag, by its `when`, with the setting
    that says so: "their baseline ... (`when = "named_in_breaks"`)"."""
    return f'{SKIPPED_BECAUSE.get(figures.when, "the flag is not run on them")} (`when = "{figures.when}"`)'


def of(count: int, figures: FlagFigures) -> str:
    """`count` of the flag's population, named, with its share: "1 of 11 models it could affect (9.1%)"."""
    return (
        f"{count} of {figures.affectable} {population(figures)} ({percent(share(count, figures.affectable))})"
    )


def of_recompiled(count: int, figures: FlagFigures) -> str:
    """`count` of the models called again on a second shape, with its share."""
    checked = figures.recompile_checked
    return (
        f"{count} of {plural(checked, 'model')} called on a second shape ({percent(share(count, checked))})"
    )


def not_run(ladder: Sequence[str]) -> list[str]:
    """The backends users run that a night's ladder (`Snapshot.ladder`) did not climb."""
    return [backend for backend in USER_BACKENDS if backend not in ladder]


def verdict_share(what: str, models: int, figures: FlagFigures) -> str:
    """A verdict row's count with its denominator: recompiles over the models called on a
    second shape, engine errors and ladder failures as counts, the rest over the population."""
    if what == "recompile_more":
        return of_recompiled(models, figures) if figures.recompile_checked else "not checked"
    if what in ("engine_errors", "ladder_failures"):
        return plural(models, "model")
    return of(models, figures)


def listed(names: Sequence[str], limit: int = SHOWN_ERRORS) -> str:
    """Names joined by commas, the first `limit`, then "and N more"."""
    shown = ", ".join(names[:limit])
    return f"{shown} and {len(names) - limit} more" if len(names) > limit else shown


# --- where a crash group lives ---


def reach(group: FailureGroup) -> str:
    """Where a group of the sweep fails beyond Dynamo's counting backend, in a few words."""
    if group.reach is None:
        return "not checked beyond the counting backend"
    if group.reach == COUNTING_BACKEND:
        return "Dynamo (counting backend) only"
    return f"also {group.reach}"


def checked(group: FailureGroup, device: str) -> str:
    """The backends its first model was run under and what each did, on `device`: no rung is
    named as passed or failed unless it was run."""
    said = {
        "ok": "ran clean",
        "crash": "crashed",
        "wrong": "gave a wrong result",
        "flaky": "failed once, not again",
    }
    parts = [f"counting backend: {'wrong result' if group.error_type == WRONG_RESULT else 'crashed'}"]
    parts += [
        f"{rung}: {said.get(word, word)}" for rung, word in group.ladder.items() if rung != COUNTING_BACKEND
    ]
    parts += [f"{backend}: not run" for backend in group.unchecked]
    return f"{group.models[0]} on {device}: " + "; ".join(parts)


def _crash_clause(figures: FlagFigures, groups: Sequence[FailureGroup]) -> str:
    """The crashes in the verdict's sentence: "1 model crashes (PendingUnbackedSymbolNotFound,
    Dynamo (counting backend) only)"."""
    text = plural(figures.crashes, "model crashes", "models crash")
    if figures.new_crashes:
        text += f", {figures.new_crashes} new tonight"
    if len(groups) == 1:
        return f"{text} ({groups[0].name or groups[0].error_type}, {reach(groups[0])})"
    places = list(dict.fromkeys(reach(group) for group in groups))
    if len(places) == 1:
        every = "both" if len(groups) == 2 else "all"
        return f"{text} ({len(groups)} errors, {every} {places[0]})"
    counted = [f"{sum(reach(group) == place for group in groups)} {place}" for place in places]
    return f"{text} ({len(groups)} errors: {', '.join(counted)})"


def verdict_clause(figures: FlagFigures, verdict: FlagVerdict, groups: Sequence[FailureGroup]) -> str:
    """The verdict's reasons, after its word; `groups`: the flag's confirmed crash groups, in order."""
    if not figures.affectable:
        return "the flag was not run on any model it could affect."
    parts = [
        _crash_clause(figures, groups) if figures.crashes else "no model crashes",
        plural(figures.wrong, "wrong result") if figures.outputs_checked else "outputs not compared",
    ]
    if figures.ladder_failures:
        parts.append(plural(figures.ladder_failures, "model fails", "models fail") + " on the backend ladder")
    if figures.recompile_checked:
        parts.append(plural(figures.recompile_more, "model recompiles", "models recompile") + " more")
    if figures.hurt:
        parts.append(plural(figures.hurt, "model has", "models have") + " more graphs")
    helps = f"helps {figures.helped} of the {figures.affectable} {population(figures)}"
    return f"{', '.join(parts)}; {helps} ({percent(share(figures.helped, figures.affectable))})."


def verdict_word(verdict: FlagVerdict) -> str:
    return "Ready" if verdict.ready else "Not ready"


def verdict_sentence(figures: FlagFigures, verdict: FlagVerdict, groups: Sequence[FailureGroup]) -> str:
    """The verdict in one sentence: "Not ready: 1 model crashes (...), ...; helps 6 of the 11 ..."."""
    return f"{verdict_word(verdict)}: {verdict_clause(figures, verdict, groups)}"


# --- the issue title ---


def headline(figures: FlagFigures) -> str:
    """What the title says of a flag: "15 models crash, 2 new (PendingUnbackedSymbolNotFound)".
    It names as many errors as fit in `HEADLINE_LIMIT` characters (GitHub cuts a title at 256),
    then says how many more."""
    wrong = f", {plural(figures.wrong, 'wrong result')}" if figures.wrong else ""
    if not figures.crashes:
        return "no model crashes" + wrong
    text = plural(figures.crashes, "model crashes", "models crash")
    if figures.new_crashes:
        text += f", {figures.new_crashes} new"
    # A title is plain text, but an error's name comes from a snapshot: letters, digits, `_.:-`,
    # at most 80 of them, so that one name always fits.
    names = [safety.plain(name[:80]) for name in figures.new_errors or figures.errors]
    for limit in range(min(len(names), SHOWN_ERRORS), 1, -1):
        named = f"{text} ({listed(names, limit)}){wrong}"
        if len(named) <= HEADLINE_LIMIT:
            return named
    return f"{text} ({listed(names, 1)}){wrong}"


def title_values(figures: FlagFigures, key: str) -> dict[str, object]:
    """The placeholders of `[tracker] title` (`config.TITLE_FIELDS`), filled in."""
    return {
        "flag": figures.flag,
        "crashes": figures.crashes,
        "wrong": figures.wrong,
        "testable": figures.testable,
        "affectable": figures.affectable,
        "flaky": figures.flaky,
        "helps": figures.helped,
        "new": figures.new_crashes,
        "headline": headline(figures),
        "key": key,
    }
