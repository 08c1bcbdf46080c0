"""What a new deployment meets first in the workflows: a trial that publishes nothing, the
tracker repository read alike by every job that asks about it, a manual run's shards defaulting
to the variable, and the doctor workflow."""

from __future__ import annotations

from pathlib import Path

import yaml
from test_workflows_action import runner  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
NIGHTLY = yaml.safe_load((WORKFLOWS / "nightly.yml").read_text(encoding="utf-8"))
DOCTOR = yaml.safe_load((WORKFLOWS / "doctor.yml").read_text(encoding="utf-8"))
JOBS = NIGHTLY["jobs"]
DISPATCH = NIGHTLY[True]["workflow_dispatch"]["inputs"]  # YAML reads a bare `on` as true


def action_step(job: dict) -> dict:
    (step,) = [step for step in job["steps"] if step.get("uses") == "./"]
    return step["with"]


def test_a_trial_sweeps_and_renders_but_writes_nothing_anywhere():
    assert DISPATCH["trial"] == {
        "description": DISPATCH["trial"]["description"],
        "type": "boolean",
        "default": False,
    }
    publish = action_step(JOBS["publish"])
    # No token (a dry run), no data branch (a store of its own in the runner's temp folder).
    assert publish["token"] == "${{ !inputs.trial && secrets.TRIAGEBOT_TOKEN || '' }}"
    assert publish["dry-run"] == "${{ inputs.trial || false }}"
    assert publish["store"] == "${{ inputs.trial && format('{0}/trial-store', runner.temp) || '' }}"
    assert publish["store-token"] == "${{ !inputs.trial && github.token || '' }}"
    # Neither the site nor a night still owed goes out during a trial.
    for name in ("pages", "pages-branch", "owed"):
        assert JOBS[name]["if"].endswith(" && !inputs.trial"), name
    # It sweeps whatever the store holds: a trial of a stored build is not skipped.
    assert action_step(JOBS["ask"])["force"] == "${{ inputs.force || inputs.trial || false }}"
    (check,) = [step for step in JOBS["plan"]["steps"] if step.get("id") == "check"]
    assert check["env"]["FORCE"] == "${{ inputs.force || inputs.trial || false }}"


def test_the_ask_job_asks_about_the_tracker_the_publish_job_writes():
    assert (
        action_step(JOBS["ask"])["repo"]
        == action_step(JOBS["publish"])["repo"]
        == "${{ vars.TRIAGEBOT_REPO }}"
    )


def test_the_action_hands_the_repository_to_the_nightly_check(runner):  # noqa: F811
    _, calls, _, _ = runner(command="nightly", repo="owner/tracker")
    assert calls[0]["argv"] == ["-m", "triagebot", "nightly", "--check", "--repo", "owner/tracker"]


def test_a_manual_run_s_shards_default_to_the_variable():
    assert DISPATCH["shards"]["type"] == "string" and DISPATCH["shards"]["default"] == ""
    (shard_list,) = [step for step in JOBS["plan"]["steps"] if step.get("id") == "shards"]
    sweep_env = JOBS["sweep"]["steps"]
    expressions = [shard_list["env"]["SHARDS"]] + [
        step["env"]["SHARDS"] for step in sweep_env if "SHARDS" in (step.get("env") or {})
    ]
    assert expressions and set(expressions) == {"${{ inputs.shards || vars.TRIAGEBOT_SHARDS || 4 }}"}


def test_the_doctor_workflow_is_dispatched_by_hand_and_only_reads():
    assert set(DOCTOR[True]) == {"workflow_dispatch"} and DOCTOR["permissions"] == {}
    (job,) = DOCTOR["jobs"].values()
    assert job["permissions"] == {"contents": "read", "actions": "read"}
    step = action_step(job)
    assert step["command"] == "doctor" and step["repo"] == "${{ vars.TRIAGEBOT_REPO }}"
    assert step["token"] == "${{ secrets.TRIAGEBOT_TOKEN || github.token }}"
    assert "fix" not in str(step)


def test_the_action_runs_the_doctor_with_the_repository(runner):  # noqa: F811
    status, calls, _, _ = runner(command="doctor", repo="owner/tracker", token="t")
    assert status == 0 and calls[0]["argv"] == ["-m", "triagebot", "doctor", "--repo", "owner/tracker"]
