"""What one sweep does, as one value: `SweepPlan`, and the plan `[sweep]` asks for (`plan_for`).

`plan_for` is the one place where `triagebot.toml` becomes a sweep's choices: the selection's
models and shard, the flags, the pool's limits, the confirmation reruns, what every run checks,
and the backend ladder after the sweep (its choice of pairs is the analysis's
`ladder_pairs`, so that the engine itself stays free of the analysis and of the config).

- `accuracy = true`: every compiled call's outputs are compared with eager's.
- `recompiles`: `"selection"` climbs a `counting` rung first on the ladder's pairs, where the
  compiled model is called again on a second input shape; `"all"` makes that second call in
  every run of the sweep; `"none"` nowhere.
- `backends` and `ladder_sample`: the ladder's backends (None: by device) and how many more
  models, a seeded stratified sample of the whole selection (every shard draws the same one),
  climb it at baseline beside those a flag changes; `ladder_max_pairs` bounds the pairs that
  climb, in `ladder_pairs`' order of priority, and `ladder_seconds` the run seconds they take.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from triagebot.analysis import ladder_pairs
from triagebot.analysis.rotation import Evidences, by_staleness, rotation_pairs
from triagebot.config import Config, Jobs, SweepSettings
from triagebot.corpus.sampling import sample
from triagebot.corpus.selection import Selected
from triagebot.results import Check, CorpusSelection, FlagSettings, ModelSpec, default_rungs
from triagebot.sweep.ladder import Ladder
from triagebot.sweep.schedule import noise_models

Flags = Mapping[str, FlagSettings | dict[str, Any]]
"""Flag name -> its settings, or a bare `torch._dynamo.config` patch (`when` by `default_when`)."""


@dataclass(frozen=True)
class SweepPlan:
    """One sweep: `specs` under the baseline and every flag, streamed to `out`.

    `corpus`: the selection the specs come from (a name, or the whole `CorpusSelection`). `device`
    "auto" resolves in a child. `jobs="auto"`: the cores this process may use (and on CUDA, what
    the GPU's memory holds at `memory_limit_gb` per worker). `timeout`: seconds per run.
    `resume`: keep the runs already in `out` and make only the missing ones. `shard`: "i/n", the
    slice of the sweep `specs` are (recorded in the stream's header). `confirm`: reruns of each
    crash and each wrong result (records with `attempt` 1..confirm). `costs` (model -> seconds
    recorded by an earlier sweep) queues the longest models first, after those it has no cost
    for. `checks`: what every run checks (`run.run_one`). `ladder`: the backend ladder's stage
    after the sweep (`triagebot.sweep.ladder`), or None. `noise`: the models whose baseline
    runs a second time, for the night's noise floor of compile times.
    """

    specs: Sequence[ModelSpec]
    flags: Flags
    out: str | Path
    corpus: str | CorpusSelection = "custom"
    device: str = "auto"
    jobs: Jobs = 2
    timeout: float = 300.0
    memory_limit_gb: float | None = 8.0
    resume: bool = False
    shard: str | None = None
    confirm: int = 0
    costs: Mapping[str, float] | None = None
    checks: frozenset[Check] = frozenset()
    ladder: Ladder | None = None
    noise: frozenset[str] = frozenset()  # models whose baseline runs twice (`schedule.noise_models`)

    @property
    def path(self) -> Path:
        return Path(self.out)

    @property
    def settings(self) -> dict[str, FlagSettings]:
        """Every flag as its `FlagSettings`."""
        return {
            name: value if isinstance(value, FlagSettings) else FlagSettings(patch=dict(value))
            for name, value in self.flags.items()
        }

    @property
    def patches(self) -> dict[str, dict[str, Any]]:
        return {name: flag.patch for name, flag in self.settings.items()}

    @property
    def selection(self) -> CorpusSelection:
        """The corpus selection recorded in the header (its models: the specs, when not given)."""
        corpus = self.corpus
        selection = corpus if isinstance(corpus, CorpusSelection) else CorpusSelection(name=corpus)
        if selection.models:
            return selection
        return selection.model_copy(update={"models": [spec.model for spec in self.specs]})


def plan_for(
    config: Config,
    selected: Selected,
    out: str | Path,
    *,
    resume: bool = False,
    evidence: Evidences | None = None,
) -> SweepPlan:
    """The sweep `config` asks for of `selected` (what `triagebot.corpus.selection` chose);
    `evidence`: each pair's latest ladder evidence over the stored nights, which orders the
    ladder's rotation (None: none read, the largest change first)."""
    sweep = config.sweep
    return SweepPlan(
        specs=selected.specs,
        flags=config.flags,
        out=out,
        corpus=selected.selection,
        device=sweep.device,
        jobs=sweep.jobs,
        timeout=sweep.timeout,
        memory_limit_gb=sweep.memory_limit_gb,
        resume=resume,
        shard=selected.shard,
        confirm=sweep.confirm,
        costs=selected.costs,
        checks=checks_for(sweep),
        ladder=ladder_for(sweep, selected.candidates or selected.specs, config.corpus.seed, evidence),
        noise=noise_models(selected.candidates or selected.specs, sweep.noise_sample),
    )


def checks_for(settings: SweepSettings) -> frozenset[Check]:
    """What every run of the sweep checks."""
    asked = {Check.accuracy: settings.accuracy, Check.recompiles: settings.recompiles == "all"}
    return frozenset(check for check, on in asked.items() if on)


def ladder_for(
    settings: SweepSettings, specs: Sequence[ModelSpec], seed: int = 0, evidence: Evidences | None = None
) -> Ladder | None:
    """The backend ladder `settings` ask for, or None; `specs`: the whole selection, every shard
    of it (the ladder's sample is drawn from it); `seed`: the sample's seed; `evidence`: the
    stored nights' ladder evidence, which puts the changed models whose evidence is oldest first
    (`analysis.rotation`)."""
    climb_counting = settings.recompiles == "selection"
    if settings.backends == [] and not climb_counting:
        return None
    sampled: list[str] = []
    if settings.ladder_sample and specs:
        drawn, _ = sample(specs, settings.ladder_sample, seed=seed)
        sampled = [spec.model for spec in drawn]
    rungs = settings.backends if settings.backends is not None else default_rungs()
    order = by_staleness(evidence, rungs) if evidence is not None else None
    return Ladder(
        choose=functools.partial(ladder_pairs, sample=tuple(sampled), order=order),
        rotation=rotation_pairs,
        backends=settings.backends,
        recompiles=climb_counting,
        max_pairs=settings.ladder_max_pairs,
        max_seconds=settings.ladder_seconds,
    )
