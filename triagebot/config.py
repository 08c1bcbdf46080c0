"""`triagebot.toml`: what to sweep, where to store it, where and how to publish.

Read with pydantic; every table forbids unknown keys so that a typo is an error naming the
key rather than a silently ignored setting. Dynamo config names in `[flags.*]` are checked
against the installed torch by the sweep (this module must not import torch).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from triagebot.errors import ConfigError
from triagebot.results import BASELINE

DEFAULT_FLAGS: dict[str, dict[str, Any]] = {
    "capture_scalar_outputs": {"capture_scalar_outputs": True},
    "capture_dynamic_output_shape_ops": {"capture_dynamic_output_shape_ops": True},
}




_BACKEND_NAME = re.compile(r"[A-Za-z_][\w.]*(?::[A-Za-z_]\w*)?")


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SweepSettings(Section):
    corpus: str = "smoke"
    device: Literal["auto", "cpu", "cuda"] = "auto"
    jobs: int = Field(default=2, ge=1)
    timeout: float = Field(default=300.0, gt=0)  # seconds per (model, config) run
    memory_limit_gb: float | None = Field(default=8.0, gt=0)  # per worker address space
    confirm: int = Field(default=1, ge=0)  # extra runs of each crash before it is reported
    # The backend ladder after the sweep: None climbs aot_eager and inductor on CUDA, aot_eager
    # on the CPU; [] climbs none. Names of torch._dynamo.list_backends(), or "module:function".
    backends: list[str] | None = None
    ladder_sample: int = Field(default=20, ge=0)  # models beyond those a flag changes that climb it
    accuracy: bool = True  # compare every compiled call's outputs with eager's
    # Where the compiled model is called again on a second input shape: on the ladder's
    # selection (a rung of its own), on every run, or nowhere.
    recompiles: Literal["selection", "all", "none"] = "selection"


    @field_validator("backends")
    @classmethod
    def _backend_names(cls, names: list[str] | None) -> list[str] | None:
        for name in names or []:
            if not _BACKEND_NAME.fullmatch(name):
                raise ValueError(f"backend {name!r} is neither a backend name nor module:function")
        return names


class CorpusSettings(Section):
    sample: int | None = Field(default=None, ge=1)
    seed: int = 0
    strata: dict[str, int] = Field(default_factory=dict)  # stratum -> models, overrides proportion
    only_breaking_in: str | None = None  # snapshot key: sample only models that break there


class StoreSettings(Section):
    path: str = ".triagebot/snapshots"
    branch: str | None = None  # git data branch, e.g. "triagebot-data"; None: local folder only
    remote: str = "origin"


class CcRoute(Section):
    pattern: str  # regular expression matched against crash signatures
    people: list[str]


class TrackerSettings(Section):
    repo: str | None = None  # OWNER/NAME the tracking issues live in
    labels: list[str] = Field(default_factory=lambda: ["module: dynamo", "triagebot"])
    title: str = "[triagebot] torch._dynamo.config.{flag}: {crashes} of {testable} models crash"
    close_after: int = Field(default=2, ge=1)
    max_writes: int = Field(default=50, ge=1)
    cc: dict[str, list[str]] = Field(default_factory=dict)  # flag -> people
    cc_routes: list[CcRoute] = Field(default_factory=list)
    commands_on_edited: bool = False
    dashboard_url: str | None = None
    health_issue: bool = False  # keep a tracking issue of the corpus's health (its own marker)


class Config(Section):
    flags: dict[str, dict[str, Any]] = Field(default_factory=lambda: dict(DEFAULT_FLAGS))
    sweep: SweepSettings = Field(default_factory=SweepSettings)
    corpus: CorpusSettings = Field(default_factory=CorpusSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    tracker: TrackerSettings = Field(default_factory=TrackerSettings)

    @field_validator("flags")
    @classmethod
    def _flags_are_patches(cls, flags: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for name, patch in flags.items():
            if name == BASELINE:
                raise ValueError(f"'{BASELINE}' is reserved for the default config")
            if not patch:
                raise ValueError(f"flag '{name}' patches nothing")
        return flags

    def select_flags(self, names: list[str] | None) -> dict[str, dict[str, Any]]:
        """The configured flags named in `names` (all when None); unknown names are errors."""
        if not names:
            return dict(self.flags)
        unknown = [n for n in names if n not in self.flags]
        if unknown:
            known = ", ".join(self.flags)
            raise ConfigError(f"unknown flag {unknown[0]!r} (configured: {known})")
        return {n: self.flags[n] for n in names}


def _describe(error: ValidationError, source: str) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(top level)"
    if first["type"] == "extra_forbidden":
        return f"{source}: unknown key '{where}'"
    return f"{source}: '{where}': {first['msg']}"


def parse_config(text: str, source: str = "triagebot.toml") -> Config:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: not valid TOML: {error}") from None
    try:
        return Config.model_validate(data)
    except ValidationError as error:
        raise ConfigError(_describe(error, source)) from None


def load_config(path: str | Path | None = None) -> Config:
    """Read `path`, or `./triagebot.toml` when present, or the defaults."""
    if path is None:
        path = Path("triagebot.toml")
        if not path.exists():
            return Config()
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    return parse_config(text, str(path))
