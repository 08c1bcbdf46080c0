"""The words for a night's numbers, in one place: every surface (issue title and body, step
summary, report folder, the site's pages) says a flag's figures, its verdict and where a crash
lives in these words, so that no two of them can disagree.

- `percent(value)`, `plural(count, word)`: 9.1%, "1 model", "2 crashes";
- `population(figures)`: the denominator's name, "models it could affect" (some runs were
  skipped) or "testable models";
- `of(count, figures)`: "1 of 11 models it could affect (9.1%)", a share always beside its
  denominator;
- `device(environment)`: where a night ran ("cpu", "cuda (NVIDIA H100, CUDA 12.8)"), and
  `measured_on(environment)`: what a verdict measured on the CPU does not cover;
- `reach(group)` and `checked(group, device)`: where a crash group fails beyond the counting
  backend ("also aot_eager", "Dynamo (counting backend) only", "not checked") and on which
  backends and device its first model was run; `recurred(group)`: how often an intermittent
  one crashed ("intermittent: crashed on 3 of the last 7 nights it ran");
- `not_measured(snapshot, figures)`: what a night (or one flag's runs) did not measure, from
  its own record;
- `verdict_sentence(figures, verdict)`: the one sentence at the top of a flag's issue and page,
  with the models whose outputs could not be judged (`not_judged_clause`, `NOT_JUDGED_RULE`,
  `wrong_results_none`); `sentinels_built(behaviour)`: the night's sentinels on a line of their
  own, how many behaved as built;
- `compile_time(figures)`: what the flag costs in compile time against the night's noise floor,
  `riser(model)`: one model's compile seconds before and after, `rung_compile(model)`: on the
  highest compiled rung it climbed, `times(ratio)`: "1.08x";
- `call_time(figures)`: what the flag does to the compiled model's time per call on the
  ladder's compiled rungs; `backward(figures)`: what the backward rung found under the flag;
- `library_verdict(finding)`, `cross_check(finding, check)`, `library_repro(finding)`: a
  library finding (eager disagreeing with itself) in words, never "wrong result"; `sides(...)`:
  which side of a genuine wrong result is wrong, as its cross-checks showed;
- `headline(figures)` and `title_values(figures, key)` (its key in words, `key_words`): what the
  issue title says.

Everything returned is plain text: the caller escapes it for Markdown or HTML. Error names come
from `analysis` (`[A-Za-z0-9_]` only); nothing else here is untrusted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from triagebot.analysis.call_time import timed_calls
from triagebot.analysis.figures import plural, share
from triagebot.report import safety
from triagebot.results import (
    BACKWARD_RUNG,
    CALL_BAND,
    COUNTING_BACKEND,
    SKIPPED_BECAUSE,
    WRONG_RESULT,
    CompileRiser,
    CompileTime,
    CrossCheck,
    Environment,
    FailureGroup,
    FlagFigures,
    FlagStats,
    FlagVerdict,
    IssueTitle,
    LadderRow,
    LibraryFinding,
    Reduction,
    RungCoverage,
    SentinelBehaviour,
    Snapshot,
    SuiteCount,
    VerdictRow,
    failures_only,
    key_versions,
    rotated,
    users_backends,
)
from triagebot.results import rungs_said as rungs_said  # the templates place each rung by it

SENTINELS_HELPED = (
    "Sentinels with fewer graphs, as they were built to have: they show the detector works and "
    "are not counted as help"
)
"""What the issue and the flag page say before naming `FlagStats.sentinels_helped`."""

LIBRARY_NOT_JUDGED = (
    "Not judged the compiler's, eager disagrees with itself across attention implementations "
    "(library findings, in the corpus's health)"
)
"""What the issue and the flag page say before naming `FlagStats.eager_inconsistent`."""

NONDETERMINISTIC_NOT_JUDGED = "Not judged, their two eager runs already differ (nondeterministic)"
"""What the issue and the flag page say before naming `FlagStats.nondeterministic`."""

NOT_JUDGED_RULE = (
    'Fewer graphs can be real, "safe" cannot: a model whose outputs could not be judged is never '
    "counted as help, nor as evidence that the flag is ready."
)
"""The one rule for a model whose outputs could not be judged (`analysis.effects.not_judged`),
said beside every list of them."""

SENTINELS_APART = (
    "Sentinels, triagebot's own test models each built to behave one known way, are in none of "
    "the flag's figures, counts or failure groups, nor keep its issue open"
)
"""What the issue and the flag page say before naming the sentinels the flag ran on, each with
its effect, on a line of their own."""


def sentinels_built(behaviour: SentinelBehaviour) -> str:
    """The night's sentinels on a line of their own (`analysis.sentinels`): "Sentinels: 7 of 7
    behaved as built"; each that did not is named after it, by the template."""
    return f"Sentinels: {behaviour.behaved} of {len(behaviour.judged)} behaved as built"


SHOWN_ERRORS = 3  # error names a title or a sentence lists before "and N more"
HEADLINE_LIMIT = 150  # characters of a title's headline, well within GitHub's 256 for a title

RULE = (
    "A flag is ready to be on by default when it ran on at least one model it could affect and "
    "nothing blocks it. Under it, no model may crash or give a wrong result (both confirmed), nor "
    "fail on a backend-ladder rung that its baseline passes, nor may a crash not yet over go "
    "unverified tonight (its suite not swept, an engine error). At least one of them must have had "
    "its outputs judged: a model whose outputs could not be judged shows that graphs can be fewer, "
    "never that the flag is safe, and is never counted as help. Every model the flag changes must "
    "have been checked under it on every backend users run, Inductor included, within the window "
    "of nightlies the backend ladder rotates over: with fewer, the flag is not judged yet, never "
    "ready. More graphs, more recompiles and engine errors do not block: they stand beside the "
    "verdict, to be weighed against the models it helps."
)
"""The verdict's rule (`analysis.figures.verdict`) in words: the issue, the site and the README say it."""

CRASH_TO_BENEFIT = "Crash-to-benefit ratio"
"""The name of a flag's confirmed crashes per model it helps (`FlagStats.crash_to_benefit`), as the
hand-written reports named it: the issue and the site say it in these words."""


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


def by_suite(counts: Sequence[SuiteCount], noun: str = "models") -> str:
    """A figure per suite (`analysis.figures.suite_counts`): "12 of 180 transformers models, 3 of
    40 diffusers models"; empty for a night of one suite."""
    return ", ".join(f"{count.count} of {count.total} {count.suite} {noun}" for count in counts)


def of_recompiled(count: int, figures: FlagFigures) -> str:
    """`count` of the models called again on a second shape, with its share."""
    checked = figures.recompile_checked
    return (
        f"{count} of {plural(checked, 'model')} called on a second shape ({percent(share(count, checked))})"
    )


def not_run(ladder: Sequence[str]) -> list[str]:
    """The backends users run that a night's ladder (`Snapshot.ladder`) did not climb."""
    return [backend for backend in users_backends() if backend not in ladder]


def verdict_share(what: VerdictRow, models: int, figures: FlagFigures) -> str:
    """A verdict row's count with its denominator: recompiles over the models called on a
    second shape, ladder failures over the models that climbed it, compile-time rises over the
    models timed both ways, engine errors as a count, the rest over the population."""
    if what == VerdictRow.recompile_more:
        return of_recompiled(models, figures) if figures.recompile_checked else "not checked"
    if what == VerdictRow.ladder_failures:  # over the models that climbed it under the flag
        return f"{models} of {plural(figures.laddered, 'model')} that climbed the ladder under the flag"
    if what == VerdictRow.engine_errors:
        return plural(models, "model")
    if what == VerdictRow.compile_slower and figures.compile_time is not None:
        return compile_share(models, figures.compile_time)
    return of(models, figures)


# --- what a flag costs in compile time ---


def times(ratio: float | None) -> str:
    """A ratio of seconds: "1.08x" ("n/a" for none)."""
    return "n/a" if ratio is None else f"{ratio:.2f}x"


COMPILE_TIMED = "Dynamo tracing with the counting backend and the first call; no Inductor compilation"
"""What a flag's compile seconds time (`analysis.compile_time`), said beside every such figure."""


def compile_share(models: int, cost: CompileTime) -> str:
    """The verdict row's count of the models slower beyond the floor, of those timed both ways,
    with the faster ones beside it and the median ratio: "1 of 10 models timed at baseline and
    under the flag, slower beyond the floor (2 faster beyond it; median 0.76x)"; no count
    without a noise floor."""
    timed = f"{plural(cost.models, 'model')} timed at baseline and under the flag"
    if cost.noise_floor is None:
        return f"not measurable (no noise floor tonight); {timed} (median {times(cost.median)})"
    beside = f"{cost.fell} faster beyond it; median {times(cost.median)}"
    return f"{models} of {timed}, slower beyond the floor ({beside})"


def noise(cost: CompileTime) -> str:
    """The night's noise floor in words: "1.10x (5 baselines run twice tonight)"."""
    if cost.noise_floor is None:
        return "not measured tonight (no baseline was run twice)"
    return f"{times(cost.noise_floor)} ({plural(cost.noise_models, 'baseline')} run twice tonight)"


def compile_time(figures: FlagFigures) -> str | None:
    """What the flag costs in compile time, in one sentence; a median inside the night's noise
    floor is "no measurable change", never a finding. None for a night without the figures."""
    cost = figures.compile_time
    if cost is None:
        return None
    if not cost.models or cost.median is None:
        return "Compile time: no model compiled both at baseline and under the flag."
    spread = f"10th-90th percentile {times(cost.low)} to {times(cost.high)}"
    over = f"median over {plural(cost.models, 'model')}; {spread}"
    whose = " of the sentinels alone, no real model timed" if cost.sentinels_only else ""
    said = (
        f"Compile time{whose} under the flag ({COMPILE_TIMED}): {times(cost.median)} the baseline's ({over})"
    )
    said += f", noise floor {noise(cost)}"
    if not cost.measurable:
        return f"{said}: no measurable change.{own_noise(cost)}"
    direction = "slower" if cost.median > 1 else "faster"
    both = f"{plural(cost.rose, 'model')} slower and {cost.fell} faster"
    return f"{said}: compilation is {direction}; beyond the floor, {both}.{own_noise(cost)}"


def own_noise(cost: CompileTime) -> str:
    """The sentence after a compile-time figure on each model's own spread over the stored
    nightlies ("Against each model's own spread ...: 2 of 30 slower beyond it, 0 faster; 5
    models have no history yet"), or that no model has one yet; nothing for an older night."""
    if not cost.history_nights:  # a night older than the figures
        return ""
    wanting = f"fewer than {cost.history_nights} stored nightlies"
    if not cost.history_models:
        return f" No model has a compile-time history of its own yet ({wanting})."
    said = (
        f" Against each model's own spread over the stored nightlies (Tukey's fences on the "
        f"interquartile range): {cost.history_rose} of {cost.history_models} slower beyond it, "
        f"{cost.history_fell} faster"
    )
    if cost.no_history:
        said += f"; {plural(cost.no_history, 'model has', 'models have')} no history yet ({wanting})"
    return said + "."


# --- what a flag does to the compiled model's calls, and to its backward pass ---

OVERHEAD = (
    "Tiny models measure the overhead around the kernels (guards, graph breaks, Python), not the kernels."
)
"""Said beside every time-per-call figure."""


def call_time(figures: FlagFigures) -> str | None:
    """What the flag does to the compiled model's time per call, in one sentence or two, the
    fewer-graphs models first; None for a night without the figures."""
    calls = figures.call_time
    if calls is None:
        return None
    if not calls.models or calls.median is None:
        return "Time per call: no model ran a compiled rung of the ladder at baseline and under the flag."
    band = f"beyond {times(CALL_BAND)} either way"
    said = (
        f"Time per call on the ladder's compiled rungs (warm, median of a few calls): "
        f"{times(calls.median)} the baseline's (median over {plural(calls.models, 'model')} that climbed)"
    )
    if calls.helped:
        said += (
            f"; of the {plural(calls.helped, 'model')} with fewer graphs, {calls.helped_faster} faster and "
            f"{calls.helped_slower} slower {band}"
        )
    others = calls.models - calls.helped
    if others:
        faster, slower = calls.faster - calls.helped_faster, calls.slower - calls.helped_slower
        said += (
            f"; of the {plural(others, 'model')} not counted as helped, {faster} faster and {slower} slower"
        )
    return f"{said}. {OVERHEAD}"


BACKWARD_WORDS = {"wrong": "wrong gradients", "crash": "crashes", "timeout": "times out", "signal": "dies"}


def backward(figures: FlagFigures) -> str | None:
    """What the backward rung found under the flag, in one sentence; None when the night's
    ladder had no backward rung."""
    ran = figures.backward_ran
    if ran is None:
        return None
    where = f"Backward pass ({BACKWARD_RUNG}, train mode, gradients against eager's)"
    if not ran:
        return f"{where}: no model climbed to it under the flag."
    failing = figures.backward_failures
    if not failing:
        return f"{where}: {ran} of {plural(ran, 'model')} that climbed to it under the flag ran clean."
    named = listed([f"{model} ({BACKWARD_WORDS.get(word, word)})" for model, word in failing.items()])
    fail = "fails" if len(failing) == 1 else "fail"
    climbed = f"{len(failing)} of {plural(ran, 'model')} that climbed to it under the flag"
    return f"{where}: {climbed} {fail} there, where the baseline passes: {named}."


def riser(model: CompileRiser) -> str:
    """One model's compile seconds before and after: "GPT2LMHeadModel: 1.20 s -> 3.40 s (2.83x)"."""
    before, after = f"{model.baseline_seconds:.2f} s", f"{model.flag_seconds:.2f} s"
    return f"{model.model}: {before} -> {after} ({times(model.ratio)})"


def rung_compile(model: CompileRiser) -> str:
    """A riser's compile seconds on the highest compiled rung of the ladder it compiled under the
    flag, where a backend compiles too: "aot_eager: 0.34 s -> 0.72 s (2.14x)", "aot_eager: 18.16 s
    with the flag (its baseline did not climb it)", or "none climbed"."""
    after, before = model.rung_flag_seconds, model.rung_baseline_seconds
    if model.rung is None or after is None:
        return "none climbed"
    if not before:
        return f"{model.rung}: {after:.2f} s with the flag (its baseline did not climb it)"
    return f"{model.rung}: {before:.2f} s -> {after:.2f} s ({times(after / before)})"


def listed(names: Sequence[str], limit: int = SHOWN_ERRORS) -> str:
    """Names joined by commas, the first `limit`, then "and N more"."""
    shown = ", ".join(names[:limit])
    return f"{shown} and {len(names) - limit} more" if len(names) > limit else shown


# --- where a crash group lives ---


def reach(group: FailureGroup) -> str:
    """Where a group of the sweep fails beyond Dynamo's counting backend, in a few words: every
    backend it fails under ("also aot_eager and inductor"), and those users run that it was not
    run under ("also aot_eager (inductor not run)")."""
    if group.reach is None:
        return "not checked beyond the counting backend"
    if group.reach == COUNTING_BACKEND:
        return "Dynamo (counting backend) only"
    text = f"also {' and '.join(group.fails_under or [group.reach])}"
    unrun = [backend for backend in users_backends() if backend in group.unchecked]
    return f"{text} ({' and '.join(unrun)} not run)" if unrun else text


def other_half(group: FailureGroup) -> str | None:
    """What a crash of the counting backend alone leaves users of the real backends: "under
    aot_eager the flag compiles M to 12 graphs (18 at baseline), outputs matching eager's; ...".
    None when the group fails beyond counting too, or no backend ran clean."""
    if group.reach != COUNTING_BACKEND or not group.clean_under:
        return None
    parts = []
    for rung in group.clean_under:
        text = f"under {rung.backend} it compiles to {plural(rung.graphs or 0, 'graph')}"
        if rung.baseline_graphs is not None:
            where = "" if rung.baseline_backend == rung.backend else " with the counting backend"
            text += f" ({rung.baseline_graphs} at baseline{where})"
        parts.append(text + (", outputs matching eager's" if rung.outputs_match else ""))
    fewer = [
        rung for rung in group.clean_under if rung.graphs is not None and rung.baseline_graphs is not None
    ]
    fewer = [rung for rung in fewer if rung.graphs < rung.baseline_graphs]  # type: ignore[operator]
    alike = [rung.backend for rung in fewer if rung.baseline_backend == rung.backend]
    unlike = [rung.backend for rung in fewer if rung.baseline_backend != rung.backend]
    said = (
        f"{group.models[0]} crashes with the counting backend alone ({DYNAMO_ONLY_WHY}); {'; '.join(parts)}"
    )
    if alike:
        said += f": for users of {' and '.join(alike)} the flag helps this model"
    if unlike:
        said += (
            f"{'; ' if alike else ': '}fewer graphs than the counting backend's baseline, but the baseline "
            f"was not run under {' and '.join(unlike)}, so whether the flag helps users of "
            f"{'it' if len(unlike) == 1 else 'them'} is not measured"
        )
    return said


DYNAMO_ONLY_WHY = (
    "raised inside Dynamo as it traces, before any backend is called; the sweep does not record "
    "why the traces under the other backends did not meet it"
)
"""Why a crash of the counting backend alone is said to live in Dynamo although a backend users
run passes: said in `other_half`."""


def sentence_cut(text: str) -> str:
    """`text` (a stored signature, cut at its length bound) ending at its last whole sentence,
    with an ellipsis where it was cut, never mid-sentence."""
    if text.endswith((".", "!", "?", ")")):
        return text
    ends = [found.end() for found in _SENTENCE_END.finditer(text)]
    return f"{text[: ends[-1]].rstrip()} …" if ends else f"{text} …"


_SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z])")  # not "e.g. 'x'" nor "torch.ops"


def reduction_said(reduction: Reduction) -> str | None:
    """What a repro's reduction saved ("Reduced from 128 to 40 lines, 6.3 s to 2.1 s a run"):
    only what it made smaller; None when it saved nothing worth saying."""
    parts = []
    if reduction.lines_after < reduction.lines_before:
        parts.append(f"from {reduction.lines_before} to {reduction.lines_after} lines")
    if round(reduction.seconds_after, 1) < round(reduction.seconds_before, 1):
        parts.append(f"{reduction.seconds_before:.1f} s to {reduction.seconds_after:.1f} s a run")
    return f"Reduced {', '.join(parts)}" if parts else None


# Why a rung of the ladder was not run (`LadderRow.not_run`, and `not_on_ladder`: a backend
# users run that tonight's ladder did not have).
NOT_RUN = {
    "budget": "beyond the time budget",
    "pairs": "beyond the pair limit",
    "after_failure": "a rung below failed",
    "failures_only": "failures only",
    "not_on_ladder": "not on tonight's ladder",
    # Neither bounded nor after a failure: another member represented the group on the ladder
    "not_chosen": "not chosen to climb",
}


def answer(value: bool | int | None) -> str:
    """A yes-or-no or a count in a table's cell: "yes", "no", the number, or "—" when not known
    (the call crashed, or was not made)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def why_not_run(reason: str, cell: bool = False) -> str:
    """A rung not run, and why (`NOT_RUN`): "not run: failures only" in a table's `cell`,
    "not run (failures only)" in a sentence."""
    why = NOT_RUN.get(reason)
    if why is None:
        return "not run"
    return f"not run: {why}" if cell else f"not run ({why})"


def rung_cell(row: LadderRow, rung: str) -> str:
    """A ladder table's cell: what the rung did, or that it was not run and why."""
    return row.rungs.get(rung) or why_not_run(row.not_run.get(rung, "not_chosen"), cell=True)


def rung_heading(rung: str) -> str:
    """A ladder table's column heading: the rung's name with room to wrap at its `+`
    ("`aot_eager` + `backward`"), which a code span has not: GitHub's column is too narrow for
    the backward rung's whole name beside a long model name and four rungs."""
    return " + ".join(safety.cell(part) for part in rung.split("+"))


def rung_against_baseline(row: LadderRow, rung: str) -> str:
    """An issue's ladder cell: what the rung did under the flag (`rung_cell`), and at baseline
    where that differs ("wrong (ok at baseline)"). An issue has no room for a column of the
    baseline's rungs beside the four of the flag's, as the site's tables have."""
    word, before = rung_cell(row, rung), row.baseline_rungs.get(rung)
    return f"{word} ({before} at baseline)" if before is not None and before != word else word


def baseline_rungs(row: LadderRow, ladder: Sequence[str]) -> str:
    """The site's "At baseline" cell, the same model's rungs without the flag: "ok" where every
    rung it climbed passed, else the others by name ("aot_eager: crash, others ok"). An issue
    says the baseline inside each rung's cell instead (`rung_against_baseline`)."""
    climbed = [(rung, row.baseline_rungs[rung]) for rung in ladder if rung in row.baseline_rungs]
    if all(word == "ok" for _, word in climbed):
        return "ok" if climbed else ""
    said = ", ".join(f"{rung}: {word}" for rung, word in climbed if word != "ok")
    return said + (", others ok" if any(word == "ok" for _, word in climbed) else "")


def ladder_intro(stats: FlagStats, device: str) -> str:
    """The ladder section's first sentences: which models climbed what, and how."""
    unrun = not_run(stats.ladder)
    text = (
        f"{plural(len(stats.ladder_rows), 'model')} climbed the backend ladder under the flag on {device} "
        f"({' → '.join(stats.ladder)}). A pair stops at its first failing rung, except a failure's "
        "representative, which climbs every rung"
    )
    only = [rung for rung in stats.ladder if rung in failures_only(device)]
    lifted = [rung for rung in only if rung in rotated(device)]
    if lifted:
        text += (
            f"; on {device}, {' and '.join(lifted)} is climbed by the failures' representatives and, "
            "in rotation over the nightlies, the models a flag changes"
        )
    if kept := [rung for rung in only if rung not in lifted]:
        text += f"; on {device}, {' and '.join(kept)} is climbed by the failures' representatives only"
    if unrun:
        text += f"; {' and '.join(unrun)} {'was' if len(unrun) == 1 else 'were'} not on tonight's ladder"
    return text + "."


def survival(stats: FlagStats) -> str | None:
    """How many helped models keep their benefit on the rungs each ran, and how many ran each."""
    if not stats.helped_laddered:
        return None
    ran = ", ".join(f"{rung}: {stats.helped_rungs.get(rung, 0) or 'none'}" for rung in stats.ladder)
    helped = stats.helps
    left = ""
    if helped > stats.helped_laddered:  # the ladder's bounds (`ladder_seconds`, `ladder_max_pairs`)
        left = (
            f" {stats.helped_laddered} of the {helped} helped models climbed it; the others did not "
            "tonight, the ladder being bounded in time and pairs."
        )
    return (
        f"Of the helped models that climbed it, the benefit of {stats.helped_survive} of "
        f"{stats.helped_laddered} survives every rung each ran on (helped models that ran each rung: {ran})."
        + left
    )


def recurred(group: FailureGroup) -> str:
    """How often an intermittent crash group crashed ("intermittent: crashed on 3 of the last 7
    nights it ran"); nothing for one that crashed on every night it ran."""
    if not group.intermittent:
        return ""
    nights = plural(group.nights_ran or 0, "night")
    return f"intermittent: crashed on {group.nights_crashed} of the last {nights} it ran"


def checked(group: FailureGroup, device: str) -> str:
    """The backends its first model was run under and what each did, on `device`: no rung is
    named as passed or failed unless it was run."""
    said = {
        "ok": "ran clean",
        "crash": "crashed",
        "wrong": "gave a wrong result",
        "flaky": "failed once, not again",
    }
    # The counting backend's rung in the same words as the others: a group failed there.
    parts = [f"counting backend: {said['wrong' if group.error_type == WRONG_RESULT else 'crash']}"]
    parts += [
        f"{rung}: {said.get(word, word)}" for rung, word in group.ladder.items() if rung != COUNTING_BACKEND
    ]
    parts += [
        f"{backend}: {why_not_run(group.not_run.get(backend, 'not_on_ladder'))}"
        for backend in group.unchecked
    ]
    return f"{group.models[0]} on {device}: " + "; ".join(parts)


def _crash_clause(figures: FlagFigures, groups: Sequence[FailureGroup]) -> str:
    """The crashes in the verdict's sentence: "1 model crashes (PendingUnbackedSymbolNotFound,
    Dynamo (counting backend) only)"."""
    text = plural(figures.crashes, "model crashes", "models crash")
    if figures.new_crashes:
        text += f", {figures.new_crashes} new tonight"
    # A night of several suites says them first: "(2 of 10 transformers models, 1 of 5 timm models; ...)".
    suites = f"{by_suite(figures.crash_suites)}; " if figures.crash_suites else ""
    if len(groups) == 1:
        return f"{text} ({suites}{groups[0].name or groups[0].error_type}, {reach(groups[0])})"
    places = list(dict.fromkeys(reach(group) for group in groups))
    if len(places) == 1:
        every = "both" if len(groups) == 2 else "all"
        return f"{text} ({suites}{len(groups)} errors, {every} {places[0]})"
    counted = [f"{sum(reach(group) == place for group in groups)} {place}" for place in places]
    return f"{text} ({suites}{len(groups)} errors: {', '.join(counted)})"


def unverified_clause(figures: FlagFigures) -> str:
    """The crashes not verified tonight that keep the issue open, each with why: "1 crash not
    verified tonight (diffusers/UNet2DModel: its suite not swept tonight)"."""
    unverified = figures.unverified_crashes.items()
    said = "; ".join(f"{safety.plain(model[:80])}: {why}" for model, why in unverified)
    return f"{plural(figures.unverified, 'crash', 'crashes')} not verified tonight ({said})"


def _no_crash_clause(figures: FlagFigures) -> str:
    """The verdict's clause without a confirmed crash tonight: what keeps the issue open when a
    crash could not be verified."""
    if not figures.unverified:
        return "no model crashes"
    return f"no crash confirmed tonight, but {unverified_clause(figures)}, so the issue stays open"


def verdict_clause(figures: FlagFigures, verdict: FlagVerdict, groups: Sequence[FailureGroup]) -> str:
    """The verdict's reasons, after its word; `groups`: the flag's confirmed crash groups, in order.
    Not judged yet, they start with what the awaited rungs checked: "3 of 5 checked; ..."."""
    if not figures.affectable:
        return "the flag was not run on any model it could affect."
    awaited = verdict_word(verdict).startswith("Not judged yet")
    checked = f"{awaited_share(verdict.awaiting)}; " if awaited else ""
    parts = [
        _crash_clause(figures, groups) if figures.crashes else _no_crash_clause(figures),
        plural(figures.wrong_results, "wrong result") if figures.outputs_checked else "outputs not compared",
    ]
    if figures.ladder_failures:
        parts.append(plural(figures.ladder_failures, "model fails", "models fail") + " on the backend ladder")
    if figures.recompile_checked:
        parts.append(plural(figures.recompile_more, "model recompiles", "models recompile") + " more")
    if figures.increases_graphs:
        parts.append(plural(figures.increases_graphs, "model has", "models have") + " more graphs")
    helps = f"helps {figures.helped} of the {figures.affectable} {population(figures)}"
    helps += f" ({percent(share(figures.helped, figures.affectable))})"
    return f"{checked}{', '.join(parts)}; {helps}{not_judged_clause(figures)}."


def not_judged_clause(figures: FlagFigures) -> str:
    """The verdict's words for the models whose outputs could not be judged, after its "helps":
    "; 2 models' outputs could not be judged, counted neither as help nor as safe"."""
    if not figures.not_judged:
        return ""
    whose = "1 model's outputs" if figures.not_judged == 1 else f"{figures.not_judged} models' outputs"
    return f"; {whose} could not be judged, counted neither as help nor as safe"


def wrong_results_none(figures: FlagFigures) -> str:
    """What the issue and the flag page say when outputs were compared and none is a confirmed
    wrong result: every output judged, or only those that could be."""
    if not figures.not_judged:
        return "every compiled call's outputs judged match eager's within tolerance"
    return (
        f"every compiled call's outputs that could be judged match eager's within tolerance; "
        f"{plural(figures.not_judged, 'model')} could not be judged"
    )


def _cuda_build_on_cpu(environment: Environment) -> str | None:
    """ "torch built for CUDA 13.0" when a CUDA build of torch ran on the CPU (a CUDA wheel
    imports and compiles on a machine without a GPU); None for a CPU build or on a GPU."""
    if environment.device != "cpu" or not environment.cuda_version:
        return None
    return f"torch built for CUDA {environment.cuda_version}"


def device(environment: Environment) -> str:
    """The device a night ran on, as every surface names it: "cpu", "cpu (torch built for CUDA
    13.0)", "cuda (NVIDIA H100, CUDA 12.8)". Snapshots recorded before the CUDA version was kept
    on the CPU too read "cpu"."""
    details = [_cuda_build_on_cpu(environment)]
    if environment.device == "cuda":
        cuda = f"CUDA {environment.cuda_version}" if environment.cuda_version else None
        details = [environment.gpu_name, cuda]
    said = [detail for detail in details if detail]
    return f"{environment.device} ({', '.join(said)})" if said else environment.device


def libraries(environment: Environment) -> str:
    """The suites' libraries a night built its models with, as every surface names them:
    "transformers 5.23.0, diffusers 0.42.0, timm 1.0.31"; empty where none is recorded."""
    return ", ".join(f"{library} {version}" for library, version in environment.library_versions().items())


def libraries_beyond_transformers(environment: Environment) -> str:
    """`libraries`, for the surfaces that never named transformers alone (the summary, the
    health, the step summary): said only where the night swept another suite's library, so that
    a transformers night reads as before."""
    return libraries(environment) if set(environment.library_versions()) - {"transformers"} else ""


def measured_on(environment: Environment) -> str | None:
    """What a verdict measured on the CPU alone does not cover; None on a GPU."""
    if environment.device != "cpu":
        return None
    build = _cuda_build_on_cpu(environment)
    where = f"the CPU only, with {build}" if build else "the CPU only"
    return f"Measured on {where}: nothing here ran on a GPU (Inductor's Triton kernels, CUDA)."


DYNAMIC_SHAPES = (
    "dynamic shapes asked for (dynamic=True, mark_dynamic: every compile is the default, "
    "sizes made dynamic only on a recompile)"
)
"""What no night measures: the sweep never compiles with `dynamic=True` nor marks a size dynamic."""


def _training(snapshot: Snapshot, figures: FlagFigures | None) -> str | None:
    """Training, when the night's ladder had no backward rung, or (for a flag) none of its real
    models climbed to it."""
    if BACKWARD_RUNG not in snapshot.ladder:
        return "training (every run is inference: the model in eval mode, no gradients)"
    if figures is not None and not figures.backward_ran:
        return "training (no model climbed to the backward rung under the flag)"
    return None


def _speed(snapshot: Snapshot, figures: FlagFigures | None) -> str:
    """Speed: real-size speed where calls were timed (for a flag: where its models' were)."""
    timed = timed_calls(snapshot)
    if figures is not None:
        timed = figures.call_time is not None and bool(figures.call_time.models)
    if timed:
        return (
            "real-size speed (calls timed on the ladder's compiled rungs, tiny models: overhead, not kernels)"
        )
    if figures is not None:
        return "time per call of the compiled model (no model timed both ways under the flag)"
    return "time per call of the compiled model"


def not_measured(snapshot: Snapshot, figures: FlagFigures | None = None) -> str:
    """What was not measured, in one line, from the night's own record: the mode (no backward
    rung on its ladder: inference only), the dtypes of its inputs, its models' sizes, the
    backends users run that its ladder did not climb, outputs when not compared, dynamic shapes
    asked for, and speed. With a flag's `figures`, training and speed are the flag's own: what
    its runs measured, not what any run of the night did."""
    specs = [result.spec for result in snapshot.results if result.spec is not None]
    parts = []
    if training := _training(snapshot, figures):
        parts.append(training)
    floats = sorted(
        {i.dtype for spec in specs for i in spec.inputs if i.dtype.startswith(("float", "bfloat"))}
    )
    if floats:
        parts.append(f"dtypes other than {listed(floats)} (its inputs')")
    sizes = [spec.params for spec in specs if spec.params is not None]
    if sizes:
        parts.append(f"real model sizes (tiny configs, at most {max(sizes):,} parameters)")
    if "accuracy" not in snapshot.checks:
        parts.append("outputs against eager's")
    if unrun := not_run(snapshot.ladder):
        parts.append(f"{' and '.join(unrun)} (not on the backend ladder)")
    parts.append(DYNAMIC_SHAPES)
    parts.append(_speed(snapshot, figures))
    return f"Not measured tonight: {'; '.join(parts)}."


def verdict_word(verdict: FlagVerdict) -> str:
    """ "Ready", "Not ready", or, with nothing blocking but a rung users run not covering what the
    flag changes (`FlagVerdict.awaiting`), "Not judged yet on inductor"."""
    if verdict.ready:
        return "Ready"
    if verdict.awaiting and not verdict.blockers:
        return f"Not judged yet on {' and '.join(rung.rung for rung in verdict.awaiting)}"
    return "Not ready"


def checked_share(rung: RungCoverage) -> str:
    """ "3 of 5 checked", what a rung has checked of what the flag changes, and the failures
    seen on an earlier nightly that wait for their recheck."""
    text = f"{rung.checked} of {rung.changed} checked"
    if rung.failing_earlier:
        text += f", {plural(rung.failing_earlier, 'failure')} on an earlier nightly to recheck"
    return text


def awaited_share(awaiting: Sequence[RungCoverage]) -> str:
    """What the rungs a verdict waits on have checked: "3 of 5 checked", or per rung where they
    differ ("aot_eager 4 of 5, inductor 3 of 5 checked")."""
    if len({(rung.checked, rung.changed, rung.failing_earlier) for rung in awaiting}) == 1:
        return checked_share(awaiting[0])
    return "; ".join(f"{rung.rung} {checked_share(rung)}" for rung in awaiting)


def coverage_line(rung: RungCoverage) -> str:
    """One rung's coverage of what the flag changes: "On inductor under the flag: 180 of 192
    changed models checked within the last 7 nightlies (12 on an earlier nightly, the oldest on
    2.13.0.dev20261130), 2 fail, 12 not yet". Evidence carried from an earlier nightly says its
    build, never tonight's."""
    within = "tonight" if rung.window == 1 else f"within the last {rung.window} nightlies"
    changed = plural(rung.changed, "changed model")
    text = f"On {rung.rung} under the flag: {rung.checked} of {changed} checked {within}"
    if rung.carried:
        earlier = "all" if rung.carried == rung.checked else f"{rung.carried}"
        text += f" ({earlier} on an earlier nightly, the oldest on {rung.oldest})"
    elif rung.checked:
        text += " (all tonight)"
    if rung.failing:
        text += f", {rung.failing} {'fails' if rung.failing == 1 else 'fail'}"
        if rung.failing_earlier:
            text += f" ({rung.failing_earlier} on an earlier nightly, to recheck)"
    return text + (f", {rung.not_yet} not yet" if rung.not_yet else "")


def coverage(figures: FlagFigures) -> str | None:
    """What the backend ladder's rotation has covered of what the flag changes, per rung users
    run, in sentences (None: the flag changes no model)."""
    if not figures.coverage:
        return None
    return " ".join(
        f"{coverage_line(rung)[0].upper()}{coverage_line(rung)[1:]}." for rung in figures.coverage
    )


def verdict_sentence(figures: FlagFigures, verdict: FlagVerdict, groups: Sequence[FailureGroup]) -> str:
    """The verdict in one sentence: "Not ready: 1 model crashes (...), ...; helps 6 of the 11 ..."."""
    return f"{verdict_word(verdict)}: {verdict_clause(figures, verdict, groups)}"


# --- the issue title ---


def headline(figures: FlagFigures) -> str:
    """What the title says of a flag: "15 models crash, 2 new (PendingUnbackedSymbolNotFound)".
    It names as many errors as fit in `HEADLINE_LIMIT` characters (GitHub cuts a title at 256),
    then says how many more."""
    wrong = f", {plural(figures.wrong_results, 'wrong result')}" if figures.wrong_results else ""
    if not figures.crashes:
        if figures.unverified:  # the issue is open for it: never "no model crashes"
            model, why = next(iter(figures.unverified_crashes.items()))
            more = f" and {figures.unverified - 1} more" if figures.unverified > 1 else ""
            # Plain text: the model's name in its suite ("UNet2DModel", not "diffusers/UNet2DModel").
            named = safety.plain(f"{model.rpartition('/')[2][:80]}: {why}", HEADLINE_LIMIT - 60)
            crashes = plural(figures.unverified, "crash", "crashes")
            return f"{crashes} not verified tonight ({named}{more})" + wrong
        return "no model crashes" + wrong
    text = plural(figures.crashes, "model crashes", "models crash")
    if figures.crash_suites:  # a night of several suites: "(2 of 10 transformers models, 1 of 5 timm models)"
        text += f" ({by_suite(figures.crash_suites)})"
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


def title_values(figures: FlagFigures, key: str) -> IssueTitle:
    """The placeholders of `[tracker] title` (`config.TITLE_FIELDS`), filled in."""
    return IssueTitle(
        flag=figures.flag,
        crashes=figures.crashes,
        wrong=figures.wrong_results,
        testable=figures.testable,
        affectable=figures.affectable,
        flaky=figures.flaky,
        helps=figures.helped,
        new=figures.new_crashes,
        headline=headline(figures),
        key=key_words(key),
    )


def key_words(key: str) -> str:
    """A snapshot key as a title says it: `2.13.0+cpu`, or `2.13.0+cpu with transformers 5.23.0`
    for a key that names transformers too (`[store] key = "torch+transformers"`)."""
    torch, transformers = key_versions(key)
    return f"{torch} with transformers {transformers}" if transformers else torch


def library_verdict(finding: LibraryFinding) -> str:
    """Which side is wrong, as the cross-checks show it: eager against itself, and which
    implementation the compiled outputs follow."""
    agreed = any(
        check.name == "compiled_vs_other_attention" and check.agrees for check in finding.cross_checks
    )
    follows = (
        f"compiled agrees with {finding.other_attention} attention" if agreed else "compiled not compared"
    )
    return (
        f"Eager disagrees with itself: {finding.attention} vs {finding.other_attention} attention; "
        f"{follows}. A transformers bug, not torch.compile's, counted against no flag."
    )


def cross_check(finding: LibraryFinding, check: CrossCheck) -> str:
    """One cross-check that ran and what it gave."""
    if check.name == "eager_other_attention":
        what = f"eager with {finding.attention} attention vs eager with {check.implementation} attention"
    else:
        what = f"compiled vs eager with {check.implementation} attention (float64 reference)"
    gave = "agree" if check.agrees else "not made" if check.agrees is None else "differ"
    return f"{what}: {gave}" + (f" ({check.detail})" if check.detail and not check.agrees else "")


def sides(snapshot: Snapshot, flag: str, model: str) -> str:
    """Which side of a wrong result is wrong, as its cross-checks showed (`sweep.sides`): each
    check made and what it gave, and whose the difference is only where eager agreed with itself."""
    result = snapshot.result(model)
    run = result.outcomes.get(flag) if result is not None else None
    checks = run.accuracy.cross_checks if run is not None and run.accuracy is not None else []
    if not checks:
        return "no cross-check made (no other attention implementation to run eager under)"
    said = []
    for check in checks:
        if check.name == "eager_other_attention":
            what = f"eager vs eager with {check.implementation} attention"
        else:
            what = f"compiled vs eager with {check.implementation} attention (float64 reference)"
        gave = "agree" if check.agrees else "not made" if check.agrees is None else "differ"
        said.append(f"{what}: {gave}" + (f" ({check.detail})" if check.detail and not check.agrees else ""))
    eager_agrees = any(check.name == "eager_other_attention" and check.agrees for check in checks)
    whose = "; eager agrees with itself, so the difference is the compiler's" if eager_agrees else ""
    return "; ".join(said) + whose


def library_repro(finding: LibraryFinding) -> str:
    """Whether the finding's no-compile repro was made and raised what it should."""
    if finding.repro is None:
        return "not made"
    return "verified (no torch.compile)" if finding.repro.verified else "made, not reproduced"
