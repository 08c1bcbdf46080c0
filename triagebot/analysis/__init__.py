"""Effects, error signatures, statistics and diffs: records in, records out (imports results;
`history` alone reads the store).

Public API, for report/, tracker/ and cli:

- `night(snapshot, history, previous, *, cc, issue_urls, dashboard_url) -> Night`: the one
  analysis of a nightly that every report, issue body, notice, step summary and page is
  rendered from; `choose_history(snapshot, stored, previous) -> (history, previous)` is the
  one rule for what it is compared with. The history may be given as `NightSummary` records
  (`summarise(snapshot, rows)`: trend points and crash signatures per flag) instead of whole
  snapshots.
- `classify(snapshot) -> list[ModelEffect]`: one row per (model, flag), models in snapshot
  order. Untestable (build or eager failed) is `untestable`; a timeout or a signal in either
  run is `timeout` / `signal`, never `no_effect`; a flag crash whose confirmation rerun ran
  clean is `flaky` and is never counted as a crash.
- `effect_of(model_result, flag) -> Effect | None`, `model_effect(...) -> ModelEffect | None`.
- `flag_stats(snapshot, flag) -> FlagStats`: counts, and percentages over the models the flag
  could affect (testable, every model but `untestable`, less those whose run was `skipped`),
  per stratum, crash-to-benefit ratio, mean graph reduction over the models helped, crash
  groups by signature (`crash_groups`; confirmed, and flaky apart, each with the traceback tail
  of its first model), overlap of crashing models with every other flag, top baseline
  graph-break reasons (`breaks`: how many each place keeps, one home), and the ladder's figures.
  All over real models (`effects.real_rows`): the sentinels' rows are in no figure, group or
  trend (their groups apart, `sentinel_groups`, reproduced as any), and `night` says whether
  each behaved as built (`sentinels.behaved_as_built`, `Night.sentinels_built`).
- `trend_point(key, rows) -> TrendPoint`: one nightly's confirmed crashes and models helped
  under one flag, from that flag's rows.
- `flag_figures(stats, change) -> FlagFigures` and `verdict(figures) -> FlagVerdict`
  (`figures`): the numbers every surface prints for a flag, and the one rule that says whether
  it is ready to be on by default; `night` puts both in each `FlagNight`, with each crash
  group's members' first nightly of their current run of crashes and those new tonight.
- `call_time(snapshot, flag, rows) -> CallTime` (`call_time`): the flag's time per call on the
  ladder's compiled rungs, against its baseline's, for the models that climbed.
- `compile_time(snapshot, flag, rows) -> CompileTime` (`compile_time`): the flag's compile
  seconds against its baseline's, model by model, beside the night's noise floor.
- Where a crash starts (`frames`): `pattern_of(traceback)` (the innermost model and compiler
  frames of a stored traceback tail), `crash_patterns(...)` (a group's distinct patterns); and
  where it fails beyond the counting backend (`ladder.reach`), both on every crash group.
- `diff(old, new) -> SnapshotDiff`: per flag newly crashing, fixed, signature changes, graph
  changes and other effect changes; baseline graph changes; models and flags added or
  removed; `same_build` (one torch git hash and one transformers: not news); `compare_url`,
  the pytorch commit range.
- Error signatures are `triagebot.results.error_signature` (shared with the sweep).
- The backend ladder (`ladder`): `ladder_pairs(results, flags, sample)` (what climbs it),
  `lives_in(rung)`; `flag_stats` fills each flag's wrong-result groups, nondeterministic models,
  ladder columns and groups, helped models that survive the full stack, and its effect on
  recompiles.
- What earlier nights stored (`history`, imported on its own): `read_history(store, cache)`
  reads every stored nightly's compact data once (`compact.NightData`, a `NightSummary`),
  cached in a site's data files; `earlier(snapshot, store, ...)` is what a night is compared
  with, from it or from the store.
- `corpus_health(snapshot, history=()) -> CorpusHealth` (`health`): Dynamo's health on the corpus
  at baseline, overall and per stratum, with its trend and the baseline graph regressions.
"""

from triagebot.analysis.breaks import top_break_reasons
from triagebot.analysis.call_time import call_time
from triagebot.analysis.compile_time import compile_time
from triagebot.analysis.diff import compare_url, diff
from triagebot.analysis.effects import (
    CRASH_EFFECTS,
    RAN_EFFECTS,
    classify,
    crash_groups,
    effect_of,
    model_effect,
)
from triagebot.analysis.figures import flag_figures, verdict
from triagebot.analysis.health import corpus_health
from triagebot.analysis.ladder import ladder_pairs, lives_in
from triagebot.analysis.night_analysis import CcRule, choose_history, night, summarise
from triagebot.analysis.stats import bisectable_reproduction, crash_group_of, flag_stats, trend_point

__all__ = [
    "CRASH_EFFECTS",
    "RAN_EFFECTS",
    "CcRule",
    "bisectable_reproduction",
    "call_time",
    "choose_history",
    "classify",
    "compare_url",
    "compile_time",
    "corpus_health",
    "crash_group_of",
    "crash_groups",
    "diff",
    "effect_of",
    "flag_figures",
    "flag_stats",
    "ladder_pairs",
    "lives_in",
    "model_effect",
    "night",
    "summarise",
    "top_break_reasons",
    "trend_point",
    "verdict",
]
