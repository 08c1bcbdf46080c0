"""Reproduction scripts run in a child Python that has torch, and verified: `run_script`,
`verify`, `reproduce` (see the package docstring)."""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from triagebot.analysis import flag_stats
from triagebot.analysis.compiler_wrong import compiler_wrong_results
from triagebot.analysis.library import library_findings
from triagebot.errors import ReproError
from triagebot.report.repro import repro_script
from triagebot.results import (
    BASELINE,
    WRONG_RESULT,
    CompilerWrong,
    FailureGroup,
    LibraryFinding,
    Reproduction,
    Snapshot,
    error_signature,
)

DEFAULT_TIMEOUT = 300.0

T = TypeVar("T")

# Runs a script under test without its `__main__` block (or, with `__main__` as the second
# argument, as a script of its own, as PyTorch's minifier writes them) and reports the exception
# as type and message in one JSON line on stderr, so that the signature is computed as the sweep
# computes it.
_HARNESS = """
import json, runpy, sys
if sys.argv[2] == "__main__":
    def target():
        sys.argv = sys.argv[1:2]  # as if run as `python SCRIPT`: it may parse its arguments
        runpy.run_path(sys.argv[0], run_name="__main__")
else:
    target = runpy.run_path(sys.argv[1], run_name="triagebot_repro")["main"]
try:
    target()
except BaseException as error:
    report = {"type": type(error).__name__, "message": str(error)}
    sys.stderr.write("\\nTRIAGEBOT-ERROR " + json.dumps(report) + "\\n")
    sys.exit(1)
"""
_ERROR_PREFIX = "TRIAGEBOT-ERROR "

REPRO_FILE = "triagebot_repro.py"  # not repro.py: PyTorch's minifier writes that one

# What a child (a repro script, an installer, a torch build under test) never inherits: the
# workflow's tokens and git's credential helper (GIT_CONFIG_*), and every GITHUB_*/ACTIONS_*
# variable, among them the files that set a later step's outputs and environment.
_SECRET = re.compile(
    r"^(GITHUB_|ACTIONS_|GIT_)|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_KEY|^SSH_AUTH_SOCK$",
    re.IGNORECASE,
)


SECRET_FILE = "_FILE"
"""`NAME_FILE`: the file a job hands the secret `NAME` in (see `adopt_secret_files`)."""


def adopt_secret_files(names: Sequence[str]) -> None:
    """Take each secret `NAME` from the file `$NAME_FILE` names, then delete the file, and keep
    it in this process's environment for the children that need it (git's credential helper),
    never in the job's (its scrubbed children, probes included, could read an ancestor's
    environment at `/proc/<pid>/environ`: a value set here is not there, that shows only what a
    process started with). `ReproError` when a named file cannot be read."""
    for name in names:
        where = os.environ.pop(name + SECRET_FILE, None)
        if not where:
            continue
        try:
            os.environ[name] = Path(where).read_text(encoding="utf-8").strip()
            Path(where).unlink()
        except OSError as error:
            raise ReproError(f"${name}{SECRET_FILE} ({where}): {error.strerror or error}") from None


def scrubbed_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without what a child must not see (see `_SECRET`), with
    `extra` set on top."""
    kept = {name: value for name, value in os.environ.items() if not _SECRET.search(name)}
    return {**kept, **(extra or {})}


@dataclass(frozen=True)
class Run:
    """One timed run of a script: the signature it raised (None: none), or why it could not run."""

    observed: str | None
    seconds: float


def run_script(
    script: str,
    python: str = sys.executable,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    env: Mapping[str, str] | None = None,
    folder: Path | None = None,
    standalone: bool = False,
    name: str = REPRO_FILE,
) -> str | None:
    """Run `script` and return the signature of the error it raised, or None when it raised none.

    `env`: variables set for it besides those of `scrubbed_environment()`; `folder`: where it
    runs and writes (default: a temporary folder, removed after); `standalone`: run it as
    `__main__` instead of calling its `main()`; `name`: its file's name in `folder`. Raises
    `subprocess.TimeoutExpired` when it outlives `timeout`.
    """
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="triagebot-repro-") as temporary:
            return run_script(
                script, python, timeout, env=env, folder=Path(temporary), standalone=standalone, name=name
            )
    path = folder / name
    path.write_text(script, encoding="utf-8")
    completed = subprocess.run(
        [python, "-c", _HARNESS, str(path), "__main__" if standalone else "main"],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=folder,
        env=scrubbed_environment(env),
        check=False,
    )
    for line in reversed(completed.stderr.splitlines()):
        if line.startswith(_ERROR_PREFIX):
            error = json.loads(line[len(_ERROR_PREFIX) :])
            return error_signature(error["type"], error["message"])
    if completed.returncode != 0:
        tail = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        return f"exit status {completed.returncode}: {tail}"
    return None


def timed_run(
    script: str, python: str = sys.executable, timeout: float = DEFAULT_TIMEOUT, **options: Any
) -> Run:
    """`run_script` timed, with a timeout or a Python that cannot start as what was observed."""
    start = time.monotonic()
    try:
        observed = run_script(script, python, timeout, **options)
    except subprocess.TimeoutExpired:
        observed = f"timed out after {timeout:.0f} s"
    except OSError as error:
        observed = f"could not run {python}: {error.strerror}"
    return Run(observed, round(time.monotonic() - start, 2))


def verify(
    script: str,
    *,
    flag: str,
    model: str,
    signature: str,
    python: str = sys.executable,
    timeout: float = DEFAULT_TIMEOUT,
    backend: str | None = None,
) -> Reproduction:
    """Run `script` and record whether it raised `signature`; `backend`: the ladder backend the
    script compiles with (None: the counting backend)."""
    run = timed_run(script, python, timeout)
    return Reproduction(
        flag=flag,
        signature=signature,
        model=model,
        script=script,
        verified=run.observed == signature,
        observed=run.observed or "no error",
        backend=backend,
        seconds=run.seconds,
    )


class Steps(Protocol):
    """Where the phase's progress is shown (`triagebot.sweep.progress`)."""

    def phase(self, name: str, total: int) -> None: ...
    def step(self, what: str) -> None: ...


def in_lanes(work: Sequence[Callable[[], T]], lanes: int = 1) -> Iterator[T]:
    """Each of `work` called, up to `lanes` at once, its result yielded in `work`'s order.

    The work is waiting on child Pythons (a script's run), so threads suffice; `lanes` is the
    sweep's number of workers, which the machine was sized for."""
    if lanes <= 1 or len(work) <= 1:
        yield from (job() for job in work)
        return
    with ThreadPoolExecutor(max_workers=min(lanes, len(work)), thread_name_prefix="script") as pool:
        futures = [pool.submit(job) for job in work]
        try:
            yield from (future.result() for future in futures)
        finally:  # stopped early (Ctrl-C): what has not started never will
            for future in futures:
                future.cancel()


def _library_repro(snapshot: Snapshot, finding: LibraryFinding, python: str, timeout: float) -> Reproduction:
    """The no-compile script of a library finding, run and verified."""
    script = repro_script(
        snapshot, BASELINE, finding.model, finding.signature, other_attention=finding.other_attention
    )
    return verify(
        script,
        flag=BASELINE,
        model=finding.model,
        signature=finding.signature,
        python=python,
        timeout=timeout,
    )


def _alone(item: CompilerWrong) -> FailureGroup:
    """A wrong result at baseline as a group of its one model, for `reproduce`'s attempt."""
    return FailureGroup(flag=BASELINE, signature=item.signature, error_type=WRONG_RESULT, models=[item.model])


# A group to reproduce: its flag, the group, the ladder backend its script compiles with (None:
# the counting backend), and whether its script checks outputs instead of raising the error.
Attempt = tuple[str, FailureGroup, str | None, bool]


def groups_to_reproduce(snapshot: Snapshot) -> list[Attempt]:
    """The groups `reproduce` tries (library findings aside): every flag's confirmed crash,
    wrong-result, ladder failure and sentinel groups, and each wrong result at the default config."""
    groups: list[Attempt] = []
    for flag in snapshot.flags:
        stats = flag_stats(snapshot, flag)
        groups += [(flag, group, None, False) for group in stats.crash_groups]
        groups += [(flag, group, None, True) for group in stats.wrong_result_groups]
        groups += [
            (flag, group, group.backend, group.error_type == WRONG_RESULT)
            for group in [*stats.ladder_groups, *stats.sentinel_groups]
        ]
    # Each wrong result at baseline gets its own repro: each is reduced to where it happens,
    # and grouped by that (`analysis.compiler_wrong`), not by the output that differs.
    return groups + [(BASELINE, _alone(item), None, True) for item in compiler_wrong_results(snapshot)]


def reproduce(
    snapshot: Snapshot,
    python: str = sys.executable,
    timeout: float = DEFAULT_TIMEOUT,
    progress: Steps | None = None,
    lanes: int = 1,
) -> list[Reproduction]:
    """A verified-or-not reproduction for every library finding (no compile), confirmed crash
    group, wrong-result group and ladder failure group of every flag (its sentinels' too: the bot's
    canary of its own machinery), and every wrong result at
    the default config, `lanes` groups at once.

    Each group is tried with its models in order until one model's script reproduces it; a
    group none of whose models has a spec is skipped. `progress` is told the groups first,
    then each as it is done.
    """
    groups = groups_to_reproduce(snapshot)
    findings = library_findings(snapshot)
    if progress is not None:
        progress.phase("repros", len(groups) + len(findings))

    def attempt(flag: str, group: FailureGroup, backend: str | None, wrong: bool) -> Reproduction | None:
        tried = None
        for model in group.models:
            try:
                script = repro_script(snapshot, flag, model, group.signature, backend=backend, wrong=wrong)
            except ReproError:
                continue
            tried = verify(
                script,
                flag=flag,
                model=model,
                signature=group.signature,
                python=python,
                timeout=timeout,
                backend=backend,
            )
            if tried.verified:
                break
        return tried

    found = [_library_repro(snapshot, finding, python, timeout) for finding in findings]
    if progress is not None:
        for finding in findings:
            progress.step(f"{finding.model}: {finding.signature} (library finding)")
    attempts = in_lanes([functools.partial(attempt, *group) for group in groups], lanes)
    for (flag, group, _, _), tried in zip(groups, attempts, strict=True):
        if tried is not None:
            found.append(tried)
        if progress is not None:
            said = "no script" if tried is None else "verified" if tried.verified else "not reproduced"
            progress.step(f"{flag}: {group.signature} ({said})")
    return found
