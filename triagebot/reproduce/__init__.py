"""Verifying reproduction scripts: each is run in a Python that has torch (a stage beside the
sweep; this package imports no torch itself, it starts one).

`verify(script, signature)` runs a script in a subprocess and checks that it raises an error
whose signature, computed by `results.error_signature` as the sweep computes it, is the
expected one; `timed_run` runs one the same way, timed, with a timeout or a Python that cannot
start as what it observed (and, for PyTorch's own minifier, in a folder of its own, with
environment variables, or as a script of its own). Every child gets `scrubbed_environment()`:
no token, no git credential helper, no GITHUB_* variable.

`reproduce(snapshot, python)` writes (`report.repro.repro_script`) and verifies a script for
the models of every confirmed crash group, until one reproduces it (and of every wrong-result
group, whose script raises `WrongResult` naming the output that differs, and of every failure
met only on the backend ladder, whose script compiles with that backend), and returns
`results.Reproduction` records; store them in `Snapshot.reproductions`. Only verified ones are
shown in issues.
"""

from triagebot.reproduce.verify import (
    DEFAULT_TIMEOUT,
    SECRET_FILE,
    Run,
    Steps,
    adopt_secret_files,
    in_lanes,
    reproduce,
    run_script,
    scrubbed_environment,
    timed_run,
    verify,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "SECRET_FILE",
    "Run",
    "Steps",
    "adopt_secret_files",
    "in_lanes",
    "reproduce",
    "run_script",
    "scrubbed_environment",
    "timed_run",
    "verify",
]
