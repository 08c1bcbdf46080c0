"""Reproduction scripts run in a child Python that has torch, and verified: `run_script`,
`verify`, `reproduce` (see the package docstring)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Protocol

from triagebot.analysis import flag_stats
from triagebot.errors import ReproError
from triagebot.report.repro import repro_script
from triagebot.results import WRONG_RESULT, Reproduction, Snapshot, error_signature

DEFAULT_TIMEOUT = 300.0

# Runs a script under test without its `__main__` block and reports the exception as type and
# message in one JSON line on stderr, so that the signature is computed as the sweep computes it.
_HARNESS = """
import json, runpy, sys
namespace = runpy.run_path(sys.argv[1], run_name="triagebot_repro")
try:
    namespace["main"]()
except BaseException as error:
    report = {"type": type(error).__name__, "message": str(error)}
    sys.stderr.write("\\nTRIAGEBOT-ERROR " + json.dumps(report) + "\\n")
    sys.exit(1)
"""
_ERROR_PREFIX = "TRIAGEBOT-ERROR "


def run_script(script: str, python: str = sys.executable, timeout: float = DEFAULT_TIMEOUT) -> str | None:
    """Run `script` and return the signature of the error it raised, or None when it raised none.

    Raises `subprocess.TimeoutExpired` when it outlives `timeout`.
    """
    with tempfile.TemporaryDirectory(prefix="triagebot-repro-") as folder:
        path = Path(folder) / "repro.py"
        path.write_text(script, encoding="utf-8")
        completed = subprocess.run(
            [python, "-c", _HARNESS, str(path)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=folder,
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
    try:
        observed = run_script(script, python, timeout)
    except subprocess.TimeoutExpired:
        observed = f"timed out after {timeout:.0f} s"
    except OSError as error:
        observed = f"could not run {python}: {error.strerror}"
    return Reproduction(
        flag=flag,
        signature=signature,
        model=model,
        script=script,
        verified=observed == signature,
        observed=observed or "no error",
        backend=backend,
    )


class Steps(Protocol):
    """Where the phase's progress is shown (`triagebot.sweep.progress`)."""

    def phase(self, name: str, total: int) -> None: ...
    def step(self, what: str) -> None: ...


def reproduce(
    snapshot: Snapshot,
    python: str = sys.executable,
    timeout: float = DEFAULT_TIMEOUT,
    progress: Steps | None = None,
) -> list[Reproduction]:
    """A verified-or-not reproduction for every confirmed crash group, wrong-result group and
    ladder failure group of every flag.

    Each group is tried with its models in order until one model's script reproduces it; a
    group none of whose models has a spec is skipped. `progress` is told the groups first,
    then each as it is done.
    """
    groups = []
    for flag in snapshot.flags:
        stats = flag_stats(snapshot, flag)
        groups += [(flag, group, None, False) for group in stats.crash_groups]
        groups += [(flag, group, None, True) for group in stats.wrong_result_groups]
        groups += [
            (flag, group, group.backend, group.error_type == WRONG_RESULT) for group in stats.ladder_groups
        ]
    if progress is not None:
        progress.phase("repros", len(groups))
    found = []
    for flag, group, backend, wrong in groups:
        attempt = None
        for model in group.models:
            try:
                script = repro_script(snapshot, flag, model, group.signature, backend=backend, wrong=wrong)
            except ReproError:
                continue
            attempt = verify(
                script,
                flag=flag,
                model=model,
                signature=group.signature,
                python=python,
                timeout=timeout,
                backend=backend,
            )
            if attempt.verified:
                break
        if attempt is not None:
            found.append(attempt)
        if progress is not None:
            said = "no script" if attempt is None else "verified" if attempt.verified else "not reproduced"
            progress.step(f"{flag}: {group.signature} ({said})")
    return found
