"""Ask before building: the newest nightly on the index (or the one asked for), and whether the
store has it already, as the workflow's `sweep=true|false`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from packaging.version import Version

from triagebot.errors import PackageIndexError
from triagebot.nightlies.client import PackageIndex, Target, version_of
from triagebot.results import Wheel


@dataclass(frozen=True)
class NightlyCheck:
    """The answer: the build the night would sweep, where it is stored (if it is), and why."""

    build: Wheel
    stored_as: str | None
    sweep: bool
    reason: str

    def outputs(self) -> dict[str, str]:
        """The step outputs: `sweep`, `version` (what the image installs) and `date`."""
        return {
            "sweep": "true" if self.sweep else "false",
            "version": self.build.version,
            "date": self.build.date.isoformat() if self.build.date else "",
        }


def check_newest(
    index: PackageIndex,
    target: Target,
    stored: Callable[[str], str | None],
    *,
    version: str | None = None,
    force: bool = False,
) -> NightlyCheck:
    """Whether tonight has something to sweep. `stored(version)` is the store's key of a
    snapshot of that torch version, or None; `version` picks one nightly instead of the newest
    (`2.12.0.dev20260408` finds `2.12.0.dev20260408+cu128`); `force` sweeps it even if stored."""
    build = _pinned(index, target, version) if version else index.newest("torch", target)
    key = stored(build.version)
    when = f" ({build.date.isoformat()})" if build.date else ""
    if force:
        return NightlyCheck(build, key, True, f"torch {build.version}{when}: a sweep is forced")
    if key is not None:
        reason = f"torch {build.version}{when} is stored already (snapshot {key}): nothing to sweep"
        return NightlyCheck(build, key, False, reason)
    return NightlyCheck(
        build, None, True, f"torch {build.version}{when} is not in the store: it needs a sweep"
    )


def _pinned(index: PackageIndex, target: Target, version: str) -> Wheel:
    wanted = version_of(version)
    for build in reversed(index.builds("torch", target)):
        found = Version(build.version)
        if found == wanted or (not wanted.local and found.public == wanted.public):
            return build
    raise PackageIndexError(f"{index.url}torch/ lists no torch {version} for {target.describe()}")
