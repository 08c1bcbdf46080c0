"""What the driver hands a child: a `Task`, which is a run (a `RunRequest`, known by its `RunKey`)
or the environment probe. `run_task` is the one way a run's task is made.

A request crosses to the child through the pool's pipe (`message`, `from_message`): its spec as
JSON, as a stream stores it, so that the child builds the very spec a record keeps.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from triagebot.results import Check, ModelSpec, Outcome, RunRecord


@dataclass(frozen=True)
class RunKey:
    """Which run a task is, and the record it becomes: a (model, config) pair, its attempt (0 for
    the sweep, 1.. for confirmation reruns) and, on the backend ladder, its rung."""

    model: str
    config: str  # BASELINE, a flag name, or the eager-only check's config
    attempt: int = 0
    rung: str | None = None  # a ladder run's rung (counting, aot_eager, inductor); None: the sweep

    def record(self, outcome: Outcome, spec: ModelSpec | None) -> RunRecord:
        """The stream's record of this run."""
        return RunRecord(
            model=self.model,
            config=self.config,
            attempt=self.attempt,
            outcome=outcome,
            spec=spec,
            backend=self.rung,
        )


@dataclass(frozen=True)
class RunRequest:
    """What a child runs (`run.run_one`): `spec` built and run eagerly, then, unless `eager_only`,
    compiled under `patch` with `backend` behind the graph counter (None: counting only),
    making `checks`."""

    spec: ModelSpec
    patch: dict[str, Any]
    checks: frozenset[Check] = frozenset()
    backend: str | None = None
    eager_only: bool = False

    def message(self) -> dict[str, Any]:
        """The request as it crosses the pipe: its spec as JSON, the rest as it is."""
        return {**vars(self), "spec": self.spec.model_dump(mode="json")}

    @classmethod
    def from_message(cls, message: dict[str, Any]) -> RunRequest:
        return cls(**{**message, "spec": ModelSpec.model_validate(message["spec"])})


@dataclass(frozen=True)
class Task:
    """One unit of work for a child: a run (`key`, `request`), or the environment probe (`probe`:
    what it checks, `validation.probe`'s payload)."""

    key: RunKey | None = None
    request: RunRequest | None = None
    probe: dict[str, Any] | None = None

    @property
    def kind(self) -> str:
        return "run" if self.request is not None else "probe"

    @property
    def spec(self) -> ModelSpec | None:
        """The spec a run was asked to build (a lost run's record keeps it)."""
        return self.request.spec if self.request is not None else None

    def message(self) -> dict[str, Any]:
        """What the child receives."""
        if self.request is not None:
            return self.request.message()
        return self.probe or {}


def run_task(
    key: RunKey,
    spec: ModelSpec,
    patch: dict[str, Any],
    checks: Collection[Check] = (),
    *,
    backend: str | None = None,
    eager_only: bool = False,
) -> Task:
    """The task of one run: `spec` under `patch`, making `checks` (see `RunRequest`)."""
    request = RunRequest(spec, patch, frozenset(checks), backend, eager_only)
    return Task(key=key, request=request)
