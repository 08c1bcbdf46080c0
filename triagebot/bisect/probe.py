"""One probe: a build installed in its cached environment and the reproduction run in it.

A run that raises the crash group's signature makes the build bad at once. A clean run is
repeated until `runs` runs were clean before the build counts as good, because a reproduction
can be flaky (it raises on some runs only): a build that raised on a later run after clean
ones is bad and its probe says it was flaky. Everything else is a skip, never a verdict: the
build could not be installed, torch could not be imported, the script raised another error
(the crash under test may hide behind it), or a run outlived its time.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from triagebot.bisect.envs import EnvironmentCache, InstallFailed, Pin
from triagebot.bisect.search import OutOfTime
from triagebot.reproduce import run_script, scrubbed_environment
from triagebot.results import Change, Probe, Reproduction, Verdict, verdict_word

# What was installed, read in the environment itself: also the check that torch imports.
_BUILD = (
    "import json, torch;"
    "print(json.dumps({'version': torch.__version__,"
    " 'git_version': getattr(torch.version, 'git_version', '') or ''}))"
)


@dataclass
class Deadline:
    """The bisection's time budget: `left()` seconds remain; `clock` is monotonic."""

    seconds: float
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self.end = self.clock() + self.seconds

    def left(self) -> float:
        return self.end - self.clock()

    def limit(self, timeout: float) -> float:
        """`timeout`, cut to what the budget has left; `OutOfTime` when nothing is left."""
        left = self.left()
        if left <= 0:
            raise OutOfTime(f"the time budget of {self.seconds:.0f} s ran out")
        return min(timeout, left)


@dataclass
class Prober:
    """Probes of one reproduction: `probe(version, pins)` gives the build's verdict."""

    reproduction: Reproduction
    envs: EnvironmentCache
    deadline: Deadline
    runs: int = 3
    timeout: float = 600.0  # per run of the script, and per install step
    say: Callable[[str], None] = print
    change: Change = "regression"  # the words a verdict is said in

    def probe(self, version: str, pins: Sequence[Pin]) -> Probe:
        started = time.monotonic()
        found = self._verdict(version, pins)
        found.seconds = round(time.monotonic() - started, 3)
        self.say(f"  {version}: {verdict_word(self.change, found.verdict)} ({found.reason})")
        return found

    def _verdict(self, version: str, pins: Sequence[Pin]) -> Probe:
        try:
            python, _ = self.envs.python_for(pins, self.deadline.limit(self.timeout))
        except InstallFailed as error:
            return Probe(version=version, verdict=Verdict.skip, reason=str(error))
        except subprocess.TimeoutExpired:
            self.deadline.limit(self.timeout)  # raises OutOfTime when it was the budget that ran out
            return Probe(version=version, verdict=Verdict.skip, reason="the install timed out")
        try:
            build = read_build(python, self.deadline.limit(self.timeout), self.envs.child_environment())
            if isinstance(build, str):
                return Probe(version=version, verdict=Verdict.skip, reason=build)
            return self._runs(version, python, build["git_version"])
        finally:
            self.envs.done_with(pins)  # never probed again by this bisection: free to prune

    def _runs(self, version: str, python: Path, git_version: str) -> Probe:
        expected = self.reproduction.signature
        for run in range(1, self.runs + 1):
            limit = self.deadline.limit(self.timeout)
            try:
                observed = run_script(
                    self.reproduction.script, str(python), limit, env=self.envs.child_environment()
                )
            except subprocess.TimeoutExpired:
                reason = f"run {run} timed out after {limit:.0f} s"
                return Probe(
                    version=version, verdict=Verdict.skip, reason=reason, runs=run, git_version=git_version
                )
            if observed == expected:
                reason = "raised it" if run == 1 else f"raised it on run {run} after {run - 1} clean: flaky"
                return Probe(
                    version=version,
                    verdict=Verdict.bad,
                    reason=reason,
                    runs=run,
                    raised=1,
                    git_version=git_version,
                )
            if observed is not None:
                reason = f"raised another error instead: {observed[:200]}"
                return Probe(
                    version=version, verdict=Verdict.skip, reason=reason, runs=run, git_version=git_version
                )
        reason = f"ran clean {self.runs} time{'s' if self.runs > 1 else ''}"
        return Probe(
            version=version, verdict=Verdict.good, reason=reason, runs=self.runs, git_version=git_version
        )


def read_build(python: Path, timeout: float, env: dict[str, str] | None = None) -> dict[str, str] | str:
    """torch's version and git hash in the environment of `python` (run with `env` besides
    `scrubbed_environment()`), or why torch cannot be imported there (a build that cannot be
    tested)."""
    try:
        done = subprocess.run(
            [str(python), "-c", _BUILD],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=scrubbed_environment(env),
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"importing torch took more than {timeout:.0f} s"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return f"cannot import torch: {last[:200]}"
    return json.loads(done.stdout.strip().splitlines()[-1])
