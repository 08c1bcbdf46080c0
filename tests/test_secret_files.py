"""A bisection's secrets reach it in files, never in its job's environment: a probe (a build
under test, code from an index's wheel) that reads its ancestors' /proc/<pid>/environ finds
neither the key that seals the cached environments nor the store's token."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from climain import run_main

import triagebot
from triagebot.bisect.envs import HANDED_IN_FILES, SECRET

SEAL, TOKEN = "seal-key-3f9a1c", "store-token-77b2e0"

# What a probe that means harm tries: every ancestor's starting environment.
PROBE = f"""
import os


def main():
    pid = os.getppid()
    while pid > 1:
        try:
            with open(f"/proc/{{pid}}/environ", "rb") as opened:
                seen = opened.read()
        except OSError:
            seen = b""
        for secret in ({SEAL!r}, {TOKEN!r}):
            if secret.encode() in seen:
                raise RuntimeError(f"read a secret from the environment of process {{pid}}")
        with open(f"/proc/{{pid}}/stat") as opened:
            pid = int(opened.read().rsplit(")", 1)[1].split()[1])
"""

# The bisect command's start, then a probe as the prober runs one, from a job step (this
# script's parent) whose environment is `env`.
BISECTION = f"""
import os
from triagebot.bisect.envs import HANDED_IN_FILES
from triagebot.reproduce import adopt_secret_files, run_script

adopt_secret_files(HANDED_IN_FILES)
assert os.environ["TRIAGEBOT_ENV_SECRET"] == {SEAL!r}, "the bisection has its key"
print(run_script({PROBE!r}) or "found nothing")
"""


def job_step(env: dict[str, str]) -> str:
    """What the probe said, run under a job step whose environment is `env`."""
    root = str(Path(triagebot.__file__).parent.parent)
    step = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": root, **env}
    done = subprocess.run(
        [sys.executable, "-c", BISECTION], env=step, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="no /proc")
def test_a_probe_finds_no_secret_in_its_ancestors_environment(tmp_path):
    (tmp_path / "seal").write_text(SEAL)
    (tmp_path / "token").write_text(TOKEN + "\n")
    files = {
        "TRIAGEBOT_ENV_SECRET_FILE": str(tmp_path / "seal"),
        "TRIAGEBOT_STORE_TOKEN_FILE": str(tmp_path / "token"),
    }
    assert job_step(files) == "found nothing"
    assert not (tmp_path / "seal").exists() and not (tmp_path / "token").exists()  # read once, deleted


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="no /proc")
def test_the_probe_finds_a_secret_handed_in_the_environment(tmp_path):
    # As the workflows handed them before: in the step's environment (the probe's check can fail).
    (tmp_path / "seal").write_text(SEAL)
    said = job_step({"TRIAGEBOT_ENV_SECRET_FILE": str(tmp_path / "seal"), "TRIAGEBOT_STORE_TOKEN": TOKEN})
    assert said.startswith("RuntimeError: read a secret from the environment of process")


def test_the_bisect_command_takes_its_secrets_from_their_files_first(tmp_path, monkeypatch, capsys):
    assert set(HANDED_IN_FILES) == {SECRET, "TRIAGEBOT_STORE_TOKEN"}
    for name in HANDED_IN_FILES:
        monkeypatch.setenv(name, "")  # restored after: the command sets them
        (tmp_path / name).write_text(f"{name}-value")
        monkeypatch.setenv(f"{name}_FILE", str(tmp_path / name))
    ran = run_main(monkeypatch, capsys, "bisect", "2026-04-01", "2026-04-12", "--budget", "0")
    assert ran.status == 2 and "--budget 0.0 is not a positive number" in ran.err
    assert not list(tmp_path.iterdir()) and os.environ[SECRET] == f"{SECRET}-value"

    monkeypatch.setenv(f"{SECRET}_FILE", str(tmp_path / "missing"))
    ran = run_main(monkeypatch, capsys, "bisect", "2026-04-01", "2026-04-12")
    assert ran.status == 2 and ran.err.count("\n") == 1
    assert f"${SECRET}_FILE ({tmp_path / 'missing'}): No such file or directory" in ran.err
