"""`triagebot reproduce`: a merged snapshot gains verified reproduction scripts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from builders import NEW_NIGHTLY as FIXTURE

from triagebot.reproduce import run_script
from triagebot.results import error_signature
from triagebot.store import read_snapshot


@pytest.mark.torch
@pytest.mark.slow
def test_reproduce_verifies_a_script_per_confirmed_crash_group(tmp_path: Path):
    out = tmp_path / "snapshot.json"
    done = subprocess.run(
        [sys.executable, "-m", "triagebot", "reproduce", str(FIXTURE), "--out", str(out), "--timeout", "120"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = read_snapshot(FIXTURE), read_snapshot(out)
    assert after.results == before.results  # only the reproductions were added
    (repro,) = after.reproductions  # the only crash group whose model the snapshot can rebuild
    crash = after.result("NonzeroGuardCrash").outcomes["capture_dynamic_output_shape_ops"]
    assert repro.verified and repro.observed == crash.signature
    assert "class NonzeroGuardCrash" in repro.script
    assert f"1 of 1 reproductions verified, 0 reduced: {out}" in done.stdout


def test_reproduce_names_a_missing_snapshot(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "-m", "triagebot", "reproduce", str(tmp_path / "absent.json")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "absent.json" in done.stderr and len(done.stderr.strip().splitlines()) == 1


LEAKS = """import os


def main():
    secret = ("GIT_", "GITHUB_", "ACTIONS_")
    leaked = sorted(name for name in os.environ if name.startswith(secret) or "TOKEN" in name)
    if leaked:
        raise RuntimeError("sees " + " ".join(leaked))
    if os.environ.get("HF_HUB_OFFLINE") != "1":
        raise RuntimeError("lost HF_HUB_OFFLINE")
"""


def test_a_script_runs_without_the_jobs_tokens_or_credential_helper(monkeypatch):
    secrets = {
        "TRIAGEBOT_STORE_TOKEN": "store-token",
        "GITHUB_TOKEN": "issues-token",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_VALUE_0": "!f() { echo password=$TRIAGEBOT_STORE_TOKEN; }; f",
        "GITHUB_ENV": "/tmp/env",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc",
    }
    for name, value in {**secrets, "HF_HUB_OFFLINE": "1"}.items():
        monkeypatch.setenv(name, value)
    assert run_script(LEAKS, timeout=60) is None
    assert run_script(LEAKS, timeout=60, env={"HF_HUB_OFFLINE": "0"}) == error_signature(
        "RuntimeError", "lost HF_HUB_OFFLINE"
    )
