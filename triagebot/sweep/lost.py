"""A child that gave no result: what its log says, as an outcome that is never a lost record.

A child writes `[triagebot:stage] NAME` to its log as each stage of its run starts (`worker`),
so that a timeout or a death names the stage it happened in; the tail of the log (a
faulthandler stack dump, the last lines of an error) becomes the outcome's traceback.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal

from triagebot.results import Outcome, Status

STAGE_MARK = "[triagebot:stage] "
_STAGE = re.compile(r"^\[triagebot:stage\] (\w+)$", re.M)
_DEATHS = {
    "SIGKILL": "killed by SIGKILL (out of memory, or killed from outside)",
    "SIGSEGV": "segmentation fault",
}


def stage_line(stage: str) -> bytes:
    """The line a child writes to its log as a stage starts."""
    return f"\n{STAGE_MARK}{stage}\n".encode()


def death(code: int) -> tuple[str, str]:
    """The error type and cause of a child that exited by signal `-code`."""
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return name, _DEATHS.get(name, f"killed by {name}")


def lost_outcome(status: Status, error_type: str, cause: str, log_path: str, seconds: float) -> Outcome:
    """The outcome of a child that gave no result (`timeout` or `signal`): its cause, the stage it
    was in, the tail of its log. The log is removed."""
    log = read_log(log_path)
    stage = _stage(log)
    where = f" in {stage}" if stage else ""
    error = f"{cause}{where}" + (": killed" if status == Status.timeout else "")
    remove(log_path)
    return Outcome(
        status=status,
        error_type=error_type,
        error=error,
        signature=f"{error_type}{where}",
        traceback=_tail(log) or None,
        seconds=round(seconds, 4),
        stage=stage,
    )


def read_log(path: str) -> str:
    """The last 64 kB of a child's log ("" when it cannot be read)."""
    try:
        with open(path, errors="replace") as log:
            log.seek(0, os.SEEK_END)
            size = log.tell()
            log.seek(max(0, size - 64_000))
            return log.read()
    except OSError:
        return ""


def _stage(log: str) -> str | None:
    marks = _STAGE.findall(log)
    return marks[-1] if marks else None


def _tail(log: str, lines: int = 30) -> str:
    kept = [
        line
        for line in log.splitlines()
        if line.strip() and not line.startswith(("[triagebot:stage]", "Extension modules:"))
    ]
    return "\n".join(kept[-lines:])[-4000:]


def remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)
