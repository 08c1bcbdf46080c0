"""rerun-sweep.yml keeps every command: sweeps queue without cancelling each other, run in the
nightly's pinned runner image, and every accepted command is answered whatever the sweep did."""

from __future__ import annotations

from pathlib import Path

import yaml
from test_workflows_action import runner  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parent.parent
RERUN = yaml.safe_load((ROOT / ".github" / "workflows" / "rerun-sweep.yml").read_text(encoding="utf-8"))
NIGHTLY = yaml.safe_load((ROOT / ".github" / "workflows" / "nightly.yml").read_text(encoding="utf-8"))
JOBS = RERUN["jobs"]


def test_reruns_queue_without_cancelling_each_other():
    assert "concurrency" not in RERUN
    for name in ("sweep", "answer", "image"):
        assert "concurrency" not in JOBS[name], name


def test_commands_are_parsed_one_at_a_time_so_each_sees_the_ones_accepted_before_it():
    # Each parse reads the commands the bot accepted (its 👀) to keep the GPU caps: two at once
    # would each read none of the other's. One group per repository, never cancelling a parse.
    assert JOBS["parse"]["concurrency"] == {
        "group": "triagebot-parse-${{ github.repository }}",
        "cancel-in-progress": False,
    }


def test_the_rerun_sweeps_in_the_nightlys_image_by_digest():
    sweep = JOBS["sweep"]
    assert sweep["container"]["image"] == "${{ needs.image.outputs.image }}"
    assert "--gpus all" in sweep["container"]["options"]
    step = next(s for s in sweep["steps"] if s.get("id") == "sweep")
    assert step["uses"] == "./" and step["with"]["python"] == "python"  # the image's, not the host's
    resolve = JOBS["image"]["steps"][0]["run"]
    assert ":nightly" in resolve and "sha256:[0-9a-f]{64}" in resolve
    build = next(s for s in NIGHTLY["jobs"]["image"]["steps"] if s.get("id") == "build")["run"]
    assert 'docker push "${image%:*}:nightly"' in build
    assert not any("TRIAGEBOT_PYTHON" in str(job) for job in JOBS.values())


def test_the_command_reaches_the_sweep_whole():
    step = next(s for s in JOBS["sweep"]["steps"] if s.get("id") == "sweep")["with"]
    for name in ("models", "flags", "confirm", "corpus"):
        assert step[name] == f"${{{{ needs.parse.outputs.{name} || needs.poll.outputs.{name} }}}}", name
    for job in ("parse", "poll"):
        assert set(JOBS[job]["outputs"]) >= {
            "run",
            "models",
            "flags",
            "confirm",
            "corpus",
            "issue",
            "comment_id",
        }


def test_every_accepted_command_is_answered_whatever_the_sweep_did():
    answer = JOBS["answer"]
    assert answer["if"].startswith("always() && ")
    assert "sweep" in answer["needs"]
    post = answer["steps"][-1]
    assert post["uses"] == "./" and post["with"]["command"] == "answer"
    assert post["with"]["sweep-result"] == "${{ needs.sweep.result }}"


def test_the_answer_step_answers_a_result_or_why_there_is_none(runner):  # noqa: F811
    where = {"issue": "12", "comment_id": "345", "repo": "pytorch/pytorch"}
    status, calls, _, _ = runner(command="answer", sweep_result="success", snapshot="s.json", **where)
    assert status == 0
    assert calls[0]["argv"][:5] == ["-m", "triagebot", "command", "--answer", "s.json"]
    assert calls[0]["argv"][-4:] == ["--issue", "12", "--comment-id", "345"]
    for result in ("failure", "cancelled", "skipped"):
        status, calls, _, _ = runner(command="answer", sweep_result=result, **where)
        assert status == 0 and calls[0]["argv"][3:5] == ["--failed", result]
    status, calls, _, stdout = runner(command="answer", sweep_result="failure", issue="$(id)", comment_id="1")
    assert status == 2 and calls == [] and "needs the issue and comment-id inputs" in stdout


def test_only_polling_and_keeping_may_write_the_data_branch():
    assert JOBS["parse"]["permissions"] == {"contents": "read", "issues": "write"}
    assert JOBS["poll"]["permissions"] == {"contents": "write"}
    assert JOBS["poll"]["if"].startswith("github.event_name == 'schedule'")
    assert JOBS["parse"]["if"].startswith("github.event_name == 'issue_comment'")
    writers = {name for name, job in JOBS.items() if job["permissions"].get("contents") == "write"}
    assert writers == {"poll", "keep"}
    # keep runs only for a pin or a bisection; the GPU bisection itself holds no write token.
    assert "outputs.link == 'true'" in JOBS["keep"]["if"] and "outputs.bisect == 'true'" in JOBS["keep"]["if"]
    assert JOBS["bisect"]["permissions"] == {"contents": "read", "packages": "read"}


def test_a_bisection_runs_in_the_nightlys_image_and_only_for_a_bisect_command():
    bisect = JOBS["bisect"]
    assert bisect["container"]["image"] == "${{ needs.image.outputs.image }}"
    assert "outputs.bisect == 'true'" in bisect["if"] and "outputs.run" not in bisect["if"]
    assert "outputs.run == 'true'" in JOBS["sweep"]["if"] and "bisect" not in JOBS["sweep"]["if"]
    keep = next(s for s in JOBS["keep"]["steps"] if s.get("uses") == "./")["with"]
    assert keep["command"] == "answer" and keep["sweep-result"] == "${{ needs.bisect.result }}"
    for job in ("parse", "poll"):
        assert {"bisect", "link", "group", "number"} <= set(JOBS[job]["outputs"])


def test_the_night_bisects_between_merge_and_publish_without_holding_it_back():
    jobs = NIGHTLY["jobs"]
    assert jobs["bisect"]["needs"] == ["image", "merge"]
    assert jobs["bisect"]["permissions"] == {"contents": "read", "packages": "read"}
    assert jobs["publish"]["needs"] == ["merge", "bisect"]
    assert jobs["publish"]["if"] == "always() && needs.merge.result == 'success'"
    run = next(s for s in jobs["publish"]["steps"] if s.get("id") == "run")["with"]
    assert run["bisections"] == "bisections"


def bisect_step(job: dict) -> dict:
    return next(s for s in job["steps"] if s.get("name", "").startswith("Bisect"))


def test_the_bisect_steps_write_their_answers_out_and_the_rerun_runs_the_checkout():
    rerun = bisect_step(JOBS["bisect"])["run"]
    # The image's triagebot is the last nightly's; the checkout's is the one the keep job runs.
    assert 'export PYTHONPATH="$GITHUB_WORKSPACE"' in rerun
    assert "python -m triagebot bisect --crash" in rerun and "\ntriagebot " not in rerun
    assert "--out bisection" in rerun
    for job in (JOBS["bisect"], NIGHTLY["jobs"]["bisect"]):
        # The secrets reach the bisection in files, never in its step's environment (nor in
        # its ancestors', where a probe could read them from /proc/<pid>/environ).
        step = bisect_step(job)
        assert not any(
            "secrets." in str(value) or "github.token" in str(value) for value in step["env"].values()
        )
        for name in ("TRIAGEBOT_ENV_SECRET", "TRIAGEBOT_STORE_TOKEN"):
            assert f'export {name}_FILE="$RUNNER_TEMP/' in step["run"]
        files = next(s for s in job["steps"] if s.get("name") == "Hand the bisection its secrets in files")
        assert files["env"]["ENV_SECRET"] == "${{ secrets.TRIAGEBOT_ENV_SECRET }}"
        assert "umask 077" in files["run"] and job["steps"].index(files) < job["steps"].index(step)
    jobs = NIGHTLY["jobs"]
    night = bisect_step(jobs["bisect"])
    assert "--out bisections" in night["run"]
    # What was found before the budget, a failure or the job's limit stopped it still reaches publish.
    assert night["timeout-minutes"] < jobs["bisect"]["timeout-minutes"]
    upload = next(s for s in jobs["bisect"]["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["if"] == "always()"
    download = next(s for s in jobs["publish"]["steps"] if s.get("with", {}).get("name") == "bisections")
    assert download["if"] == "needs.bisect.result != 'skipped'" and download["continue-on-error"] is True


def test_a_night_still_owed_is_published_when_there_is_nothing_to_sweep():
    jobs = NIGHTLY["jobs"]
    assert {"publish", "owed"} <= set(jobs["ask"]["outputs"])
    owed = jobs["owed"]
    assert owed["needs"] == "ask"
    assert owed["if"] == (
        "needs.ask.outputs.sweep == 'false' && needs.ask.outputs.publish == 'true' && !inputs.trial"
    )
    step = next(s for s in owed["steps"] if s.get("uses") == "./")["with"]
    assert step["command"] == "publish" and step["snapshot"] == "${{ needs.ask.outputs.owed }}"
    assert owed["permissions"] == {"contents": "write"}


def test_edited_comments_reach_the_same_decision_as_polled_ones():
    """`commands_on_edited` is obeyed on the issue_comment path too, so that path must see edits."""
    triggers = RERUN[True]  # YAML 1.1 reads the key `on` as true
    assert triggers["issue_comment"]["types"] == ["created", "edited"]


def test_the_poll_runs_on_schedule_whatever_names_the_repository():
    """A job's `if` cannot read triagebot.toml: the poll step resolves TRIAGEBOT_REPO or
    `[tracker] repo` itself (and ends with a notice when neither names one)."""
    poll = JOBS["poll"]
    assert poll["if"] == "github.event_name == 'schedule'"
    step = next(s for s in poll["steps"] if s.get("id") == "plan")
    assert step["with"]["repo"] == "${{ vars.TRIAGEBOT_REPO }}"  # empty: the toml's


def test_every_gpu_sweep_uses_every_core_unless_triagebot_jobs_says():
    """A GPU runner sweeps with `--jobs auto` (triagebot/workers.py: one worker per core, on CUDA
    no more than the GPU's memory holds), or with what the TRIAGEBOT_JOBS variable says."""
    jobs = "${{ vars.TRIAGEBOT_JOBS || 'auto' }}"
    night = next(s for s in NIGHTLY["jobs"]["sweep"]["steps"] if s.get("name") == "Sweep")
    assert night["env"]["JOBS"] == jobs and '--jobs "$JOBS"' in night["run"]
    rerun = next(s for s in JOBS["sweep"]["steps"] if s.get("id") == "sweep")
    assert rerun["with"]["jobs"] == jobs


def test_auto_on_a_gpu_runner_is_its_cores_bounded_by_the_gpus_memory():
    from triagebot.workers import auto_jobs

    h200, a10 = 139 * 2**30, 24 * 2**30
    assert auto_jobs("cuda", 16, gpu_memory=h200, share_gb=8.0) == 16  # cores bound it
    assert auto_jobs("cuda", 64, gpu_memory=h200, share_gb=8.0) == 16  # 0.95 * 139 / 8
    assert auto_jobs("cuda", 16, gpu_memory=a10, share_gb=8.0) == 2  # 0.95 * 24 / 8
    assert auto_jobs("cpu", 16) == 16 and auto_jobs("cpu", 0) == 1
