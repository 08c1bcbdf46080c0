"""Which runs a sweep makes and in what order: baselines longest first, a model's flag runs when
its baseline finishes (to the front of the queue), a flag's run skipped where it cannot matter."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from triagebot.results import BASELINE, FlagSettings, ModelSpec, Outcome, RunRecord, Status, named_in_break
from triagebot.sweep.pool import Result, Task

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


def run_task(
    spec: ModelSpec, config: str, patch: dict[str, Any], attempt: int = 0, compile: bool = True
) -> Task:
    """The task of one counting run (`attempt` > 0: a confirmation rerun)."""
    return Task(
        key=(spec.model, config, attempt),
        payload={"spec": spec.model_dump(mode="json"), "patch": patch, "compile": compile},
        spec=spec,
    )


def run_record(result: Result) -> RunRecord:
    """A finished run's record. A flag run or a confirmation rerun is made only when its baseline
    built and ran eagerly, with the spec that baseline completed: if it cannot do the same, the
    sweep failed to rebuild the model, an `engine_error` (its error and traceback kept), never
    an untestable model."""
    model, config, attempt = result.task.key
    outcome = result.outcome
    assert outcome is not None
    if config != CHECK_CONFIG and (config != BASELINE or attempt > 0) and outcome.untestable:
        outcome = outcome.model_copy(update={"status": Status.engine_error})
    return RunRecord(model=model, config=config, attempt=attempt, outcome=outcome, spec=result.spec)


class Schedule:
    """The runs still to do. A model's flag runs are queued when its baseline finishes, with the
    spec the baseline completed (its config, recipe and inputs), so that no flag run repeats the
    recipe ladder and every config runs on the very same inputs. A baseline that could not build
    or run eagerly makes every flag untestable too (the Dynamo patch applies only to the compiled
    call): its outcome is recorded for each flag rather than run again. A flag that cannot matter
    on the model (`can_matter`) gets a `skipped` record, made here: no child is forked for it."""

    def __init__(
        self, specs: Sequence[ModelSpec], flags: dict[str, FlagSettings], recorded: Sequence[RunRecord]
    ) -> None:
        self.specs = {spec.model: spec for spec in specs}
        self.flags = flags
        self.recorded = {(r.model, r.config) for r in recorded}
        self.tasks: deque[Task] = deque()
        self.copies: list[RunRecord] = []

    def start(self, order: Sequence[ModelSpec], baselines: Mapping[str, RunRecord]) -> None:
        """Queue every baseline not yet recorded, in `order`; the flags of those recorded follow."""
        for spec in order:
            if spec.model in baselines:
                self.after_baseline(baselines[spec.model])
            else:
                self.tasks.append(run_task(spec, BASELINE, {}))

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
        # to the front: a model's runs stay together, and its flags start while it is fresh
        self.tasks.extendleft(run_task(spec, flag, self.flags[flag].patch) for flag in reversed(run))

    def take_copies(self) -> list[RunRecord]:
        copies, self.copies = self.copies, []
        return copies
