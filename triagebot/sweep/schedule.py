"""Which runs a sweep makes and in what order: baselines longest first, a model's flag runs when
its baseline finishes (to the front of the queue), a flag's run skipped where it cannot matter."""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from triagebot.results import (
    BASELINE,
    BASELINE_AGAIN,
    Check,
    FlagSettings,
    ModelSpec,
    Outcome,
    RunRecord,
    Status,
    named_in_break,
)
from triagebot.sweep.pool import Result
from triagebot.sweep.tasks import RunKey, Task, run_task

CHECK_CONFIG = "eager"
"""`RunRecord.config` of a check-mode record (build and eager run only)."""


def can_matter(flag: FlagSettings, baseline: Outcome) -> bool:
    """Whether a flag's run could differ from the model's baseline run: always under
    `when="always"`; under `"graph_breaks"`, unless the baseline compiled to exactly one graph
    with no graph-break reason; under `"named_in_breaks"`, only when one of the baseline's break
    reasons names a setting of the flag (`named_in_break`: Dynamo's hint for a break the
    setting would trace through). A baseline that crashed, hung or died is always followed by
    the flag's run: the flag may fix it."""
    if flag.when == "always" or baseline.status != Status.ok:
        return True
    if flag.when == "named_in_breaks":
        return any(named_in_break(flag.patch, reason) for reason in baseline.break_reasons)
    return baseline.graphs != 1 or bool(baseline.break_reasons)


NOISE_RUN_SECONDS = 10.0
"""The longest first baseline run a noise-floor model runs again: the floor costs a fraction of a
percent of a night (the sample's size times this at most), never a long model twice."""


def noise_models(specs: Sequence[ModelSpec], size: int) -> frozenset[str]:
    """A fixed sample of `size` models of the whole selection whose baselines run a second time,
    for the night's noise floor: those first by a hash of their names, so that every night (and
    every shard) draws the same ones while they are in the corpus."""
    names = sorted({spec.model for spec in specs}, key=lambda name: hashlib.sha256(name.encode()).hexdigest())
    return frozenset(names[:size])


def runs_again(baseline: RunRecord, noise: Collection[str]) -> bool:
    """Whether a baseline runs a second time for the noise floor: a model of the sample, whose
    first run compiled and ran within `NOISE_RUN_SECONDS`."""
    outcome = baseline.outcome
    return baseline.model in noise and outcome.ran and outcome.seconds <= NOISE_RUN_SECONDS


def longest_first(specs: Sequence[ModelSpec], costs: Mapping[str, float] | None) -> list[ModelSpec]:
    """The order baselines are queued in: models without a recorded cost first (new or changed
    models, whose cost nobody knows: one of them must not be what the sweep ends on), in the
    order given, then the others by recorded seconds, longest first (ties in the order given).
    Without `costs`, the order given."""
    if not costs:
        return list(specs)
    unknown = [spec for spec in specs if spec.model not in costs]
    known = sorted((spec for spec in specs if spec.model in costs), key=lambda spec: -costs[spec.model])
    return unknown + known


def run_record(result: Result) -> RunRecord:
    """A finished run's record. A flag run or a confirmation rerun is made only when its baseline
    built and ran eagerly, with the spec that baseline completed: if it cannot do the same, the
    sweep failed to rebuild the model, an `engine_error` (its error and traceback kept), never
    an untestable model."""
    key, outcome = result.task.key, result.outcome
    assert key is not None and outcome is not None
    if key.config != CHECK_CONFIG and (key.config != BASELINE or key.attempt > 0) and outcome.untestable:
        outcome = outcome.model_copy(update={"status": Status.engine_error})
    return key.record(outcome, result.spec)


class Schedule:
    """The runs still to do. A model's flag runs are queued when its baseline finishes, with the
    spec the baseline completed (its config, recipe and inputs), so that no flag run repeats the
    recipe ladder and every config runs on the very same inputs. A baseline that could not build
    or run eagerly makes every flag untestable too (the Dynamo patch applies only to the compiled
    call): its outcome is recorded for each flag rather than run again. A flag that cannot matter
    on the model (`can_matter`) gets a `skipped` record, made here: no child is forked for it. A
    baseline of the noise sample (`noise`) runs again after the model's flags (`runs_again`)."""

    def __init__(
        self,
        specs: Sequence[ModelSpec],
        flags: dict[str, FlagSettings],
        recorded: Sequence[RunRecord],
        checks: Collection[Check],
        noise: Collection[str] = (),
    ) -> None:
        self.specs = {spec.model: spec for spec in specs}
        self.noise = noise
        self.flags = flags
        self.checks = checks  # what every run checks
        self.recorded = {(r.model, r.config) for r in recorded}
        self.tasks: deque[Task] = deque()
        self.copies: list[RunRecord] = []
        self.not_again = 0  # second baseline runs counted in `planned` that will not be made

    @property
    def planned(self) -> int:
        """The sweep's runs at most: each model's baseline and flags, and the noise sample's
        second baseline (a model's whose baseline turns out slow or failed is not made:
        `take_not_again`)."""
        return len(self.specs) * (1 + len(self.flags)) + len(self.specs.keys() & set(self.noise))

    def start(self, order: Sequence[ModelSpec], baselines: Mapping[str, RunRecord]) -> None:
        """Queue every baseline not yet recorded, in `order`; the flags of those recorded follow."""
        for spec in order:
            if spec.model in baselines:
                self.after_baseline(baselines[spec.model])
            else:
                self.tasks.append(self._task(spec, BASELINE, {}))

    def after_baseline(self, baseline: RunRecord) -> None:
        spec = baseline.spec or self.specs[baseline.model]
        todo = [flag for flag in self.flags if (baseline.model, flag) not in self.recorded]
        if baseline.outcome.untestable:
            self.copies += [baseline.model_copy(update={"config": flag}, deep=True) for flag in todo]
            return
        run = [flag for flag in todo if can_matter(self.flags[flag], baseline.outcome)]
        self.copies += [
            RunRecord(model=baseline.model, config=flag, outcome=Outcome(status=Status.skipped), spec=spec)
            for flag in todo
            if flag not in run
        ]
        tasks = [self._task(spec, flag, self.flags[flag].patch) for flag in run]
        if (baseline.model, BASELINE_AGAIN) not in self.recorded and baseline.model in self.noise:
            if runs_again(baseline, self.noise):
                tasks.append(self._task(spec, BASELINE_AGAIN, {}))
            else:
                self.not_again += 1
        # to the front: a model's runs stay together, and its flags start while it is fresh
        self.tasks.extendleft(reversed(tasks))

    def _task(self, spec: ModelSpec, config: str, patch: dict[str, Any]) -> Task:
        return run_task(RunKey(spec.model, config), spec, patch, self.checks)

    def take_not_again(self) -> int:
        count, self.not_again = self.not_again, 0
        return count

    def take_copies(self) -> list[RunRecord]:
        copies, self.copies = self.copies, []
        return copies
