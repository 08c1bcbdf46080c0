"""Effects, error signatures, statistics and diffs: records in, records out (imports results only).

Public API, for report/, tracker/ and cli:

- `classify(snapshot) -> list[ModelEffect]`: one row per (model, flag), models in snapshot
  order. Untestable (build or eager failed) is `create_error`; a timeout or a signal in either
  run is `timeout` / `signal`, never `no_effect`; a flag crash whose confirmation rerun ran
  clean is `flaky` and is never counted as a crash.
- `effect_of(model_result, flag) -> Effect | None`, `model_effect(...) -> ModelEffect | None`.
- `flag_stats(snapshot, flag) -> FlagStats`: counts and percentages over testable models
  (every model but `create_error`), per stratum, crash-to-benefit ratio, mean graph reduction
  over the models helped, crash groups by signature (confirmed, and flaky apart), overlap of
  crashing models with every other flag, top baseline graph-break reasons.
- `analyse(snapshot, history=()) -> SnapshotAnalysis`: effects plus every flag's stats, with
  each crash group's `first_seen` key taken from `history` (older snapshots, oldest first).
- `trend(snapshots, flag) -> list[TrendPoint]`: confirmed crashes and models helped per snapshot.
- `first_seen(snapshots, flag) -> dict[signature, key]`.
- `diff(old, new) -> SnapshotDiff`: per flag newly crashing, fixed, signature changes, graph
  changes and other effect changes; baseline graph changes; models and flags added or
  removed; `same_build` (one torch git hash: not news); `compare_url`, the pytorch commit range.
- Error signatures are `triagebot.results.error_signature` (shared with the sweep).
- The rest of the stack (`stack`): `ladder_pairs(results, flags, sample)` (what climbs the
  backend ladder), `lives_in(rung)`; `flag_stats` fills each flag's wrong-result groups,
  nondeterministic models, ladder columns and groups, helped models that survive the full stack,
  and its effect on recompiles.
- `corpus_health(snapshot, history=()) -> CorpusHealth` (`health`): Dynamo's health on the corpus
  at baseline, overall and per stratum, with its trend and the baseline graph regressions.
"""

from triagebot.analysis.diff import compare_url, diff
from triagebot.analysis.effects import CRASH_EFFECTS, RAN_EFFECTS, classify, effect_of, model_effect
from triagebot.analysis.health import corpus_health
from triagebot.analysis.stack import ladder_pairs, lives_in
from triagebot.analysis.stats import analyse, crash_groups, first_seen, flag_stats, top_break_reasons, trend

__all__ = [
    "CRASH_EFFECTS",
    "RAN_EFFECTS",
    "analyse",
    "classify",
    "compare_url",
    "corpus_health",
    "crash_groups",
    "diff",
    "effect_of",
    "first_seen",
    "flag_stats",
    "ladder_pairs",
    "lives_in",
    "model_effect",
    "top_break_reasons",
    "trend",
]
