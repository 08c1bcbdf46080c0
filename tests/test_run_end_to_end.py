"""`triagebot run` end to end on the sentinel corpus: the real sweep, store, diff, reports and a
dry-run publish, run twice; the second run must see that the build was already swept.

The sentinels build in milliseconds; the one that hangs under compile is left out so that the
test does not wait for a timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.torch

SENTINELS = "Plain,ItemBreak,NonzeroBreak,NonzeroGuardCrash,EagerError,BuildError,Segfault"


def triagebot_run(cwd: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("GITHUB_")}
    env["GITHUB_STEP_SUMMARY"] = str(cwd / "step-summary.md")
    env["GITHUB_OUTPUT"] = str(cwd / "github-output")
    command = [sys.executable, "-m", "triagebot", "run", "--corpus", "sentinels", "--models", SENTINELS]
    command += ["--jobs", "2", "--timeout", "120", "--store", "store", *arguments]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=400, check=False)


def outputs(cwd: Path) -> dict[str, str]:
    lines = (cwd / "github-output").read_text(encoding="utf-8").splitlines()
    return dict(line.split("=", 1) for line in lines)


@pytest.mark.slow
def test_run_twice_sweeps_once_and_says_where_everything_is(tmp_path: Path):
    first = triagebot_run(tmp_path, "--out", "night")
    assert first.returncode == 0, first.stderr[-3000:]

    # It printed where the snapshot, the diff and the rendered issues are, and they are there.
    night = tmp_path / "night"
    stored = list((tmp_path / "store").glob("*.json"))
    assert len(stored) == 1
    key = stored[0].stem
    assert f"snapshot {key}: store/{key}.json" in first.stdout
    assert "diff: none (first snapshot)" in first.stdout
    assert f"reports: {Path('night') / 'report'}" in first.stdout
    assert f"issues: {Path('night') / 'issues'} (" in first.stdout
    snapshot = json.loads((night / "snapshot.json").read_text(encoding="utf-8"))
    assert snapshot["key"] == key and snapshot["corpus"]["name"] == "sentinels"
    assert {result["model"] for result in snapshot["results"]} == set(SENTINELS.split(","))
    # The crash of the sentinel that raises under capture_dynamic_output_shape_ops was confirmed.
    crasher = next(r for r in snapshot["results"] if r["model"] == "NonzeroGuardCrash")
    assert crasher["outcomes"]["capture_dynamic_output_shape_ops"]["status"] == "crash"
    assert crasher["confirmations"]["capture_dynamic_output_shape_ops"]
    # ...and its reproduction script was run and raised the same signature, so the issue shows it.
    (repro,) = snapshot["reproductions"]
    assert repro["model"] == "NonzeroGuardCrash" and repro["verified"]
    assert repro["observed"] == crasher["outcomes"]["capture_dynamic_output_shape_ops"]["signature"]
    # A sentinel's crash is the bot's canary, never a crash group of an issue: the issue says on a
    # line of its own that it behaved as built (it crashed, as it is built to).
    issue = (night / "issues" / "issue-capture_dynamic_output_shape_ops.md").read_text(encoding="utf-8")
    assert "verified to raise this signature" not in issue
    assert "behaved as built" in issue
    # One dashboard: the site, not a page in the report folder.
    assert (night / "site" / "index.html").exists() and not (night / "report" / "dashboard.html").exists()
    assert (night / "report" / "issue-capture_dynamic_output_shape_ops.md").exists()
    assert (night / "issues" / "plan.txt").exists()  # the dry run's plan
    assert (night / "issues" / "issue-capture_dynamic_output_shape_ops.md").exists()
    summary = (tmp_path / "step-summary.md").read_text(encoding="utf-8")
    assert f"- snapshot `{key}`" in summary
    assert outputs(tmp_path)["swept"] == "true"

    second = triagebot_run(tmp_path)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "was already swept" in second.stdout and f"snapshot {key}" in second.stdout
    assert [path.stem for path in (tmp_path / "store").glob("*.json")] == [key]
    assert not (tmp_path / ".triagebot" / "runs").exists()  # nothing was swept or written
    assert outputs(tmp_path)["swept"] == "false"
    assert "Already swept" in (tmp_path / "step-summary.md").read_text(encoding="utf-8")
