"""What docs/deploy.md states where code cannot fix a trap, checked against the code and the
workflows it speaks of: a public fork's schedules, the workers on CUDA, the poll's cost, edited
commands, fine-grained tokens, ephemeral runners, what a trial publishes, `flags=`'s default."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from test_commands import SCALAR, command_payload, decide
from test_example_issue import DOCS

from triagebot.config import Config, TrackerSettings
from triagebot.tracker import doctor, rerun
from triagebot.workers import GPU_SHARE, auto_jobs

ROOT = Path(__file__).resolve().parent.parent
PAGE = " ".join((ROOT / "docs" / "deploy.md").read_text(encoding="utf-8").split())
COMMANDS = " ".join((ROOT / "docs" / "commands.md").read_text(encoding="utf-8").split())
WORKFLOWS = ROOT / ".github" / "workflows"


def workflow(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def test_a_public_fork_s_schedules_are_said_as_doctor_names_them():
    said = re.search(r"`triagebot doctor` says `(\w+)`", PAGE)
    assert said and said[1] == "disabled_fork" and said[1] in doctor._ENABLE
    assert "until you enable workflows in its Actions tab" in PAGE
    assert "enable workflows" in doctor._ENABLE["disabled_fork"]


def test_the_workers_on_cuda_are_the_resources_rule():
    memory = Config().sweep.memory_limit_gb
    assert (
        f"⌊{GPU_SHARE} × GPU memory / `[sweep] memory_limit_gb`⌋, at {memory:g} GiB each by default" in PAGE
    )
    gib, workers = map(
        int, re.search(r"a (\d+) GiB GPU gets (\d+) workers whatever its cores", PAGE).groups()
    )
    assert auto_jobs("cuda", 128, gib * 2**30, memory) == workers == 2


def test_the_poll_s_cost_is_its_cron_s():
    (cron,) = [entry["cron"] for entry in workflow("rerun-sweep.yml")[True]["schedule"]]
    minutes = int(re.fullmatch(r"\*/(\d+) \* \* \* \*", cron)[1])
    per_day = 24 * 60 // minutes
    assert f"the poll alone runs every {minutes} minutes: {per_day} hosted jobs a day" in PAGE
    assert f"about {per_day * 30:,} billed minutes a month" in PAGE


def test_an_edited_command_is_said_to_need_commands_on_edited():
    assert "edited" in workflow("rerun-sweep.yml")[True]["issue_comment"]["types"]
    assert TrackerSettings().commands_on_edited is False
    assert "does nothing unless `[tracker] commands_on_edited = true` (default `false`)" in PAGE


def test_a_fine_grained_token_on_another_user_s_repository_is_said_as_doctor_says_it():
    assert "a bot account's fine-grained token cannot write a repository owned by another user" in PAGE
    source = Path(doctor.__file__).read_text(encoding="utf-8")
    assert "owned by another user" in source and "use a classic token" in source


def test_an_ephemeral_runner_s_count_of_gpu_jobs_is_the_night_s():
    jobs = workflow("nightly.yml")["jobs"]
    gpu = [name for name, job in jobs.items() if "gpu" in job["runs-on"]]
    sharded = [name for name in gpu if "matrix" in (jobs[name].get("strategy") or {})]
    assert sharded == ["sweep"]
    said = re.search(r"A night asks for S \+ (\d+) GPU jobs \(([^)]*)\)", PAGE)
    assert int(said[1]) == len(gpu) - 1
    assert said[2] == "plan, the S sweep shards, merge, bisect" and gpu == [
        "plan",
        "sweep",
        "merge",
        "bisect",
    ]


def test_the_trial_is_said_to_publish_nothing_and_the_form_has_it():
    inputs = workflow("nightly.yml")[True]["workflow_dispatch"]["inputs"]
    assert inputs["trial"]["type"] == "boolean"
    assert "with `trial` ticked" in PAGE and "A trial publishes nothing" in PAGE


def test_flags_default_to_the_issue_s_flag_as_both_pages_say():
    decided = decide(rerun.read_event(command_payload("/rerun-sweep models=BertModel")))
    assert decided.request.flags == [SCALAR]  # the issue's flag (command_payload's issue is SCALAR's)
    assert "`flags=` the configured flags to sweep them under (default: the issue's flag)" in PAGE
    assert "`flags=` names configured flags (default: the issue's flag)" in COMMANDS


def test_a_night_s_cost_per_suite_is_read_from_the_measurements_page_once():
    performance = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert DOCS.suite_nights(performance) == {
        "transformers": (5118, 9243),
        "diffusers": (539, 761),
        "timm": (552, 900),
    }
    costs = DOCS.suite_costs(performance)
    assert "to which diffusers added 11% and timm added 11%" in costs["slow-night"]  # 539 and 552 of 5,118 s
    assert "about 3,140 run seconds" in costs["three-suites"]  # 2,659 × (1 + 761/9,243 + 900/9,243)
    blocks = [
        DOCS.BLOCK.findall(page.read_text(encoding="utf-8"))
        for page in (ROOT / "README.md", ROOT / "docs" / "deploy.md")
    ]
    assert [len(found) for found in blocks] == [1, 3]
    # The figures are said in those blocks alone: no page retypes a suite's share.
    for page in (ROOT / "README.md", ROOT / "docs" / "deploy.md"):
        outside = DOCS.BLOCK.sub("", page.read_text(encoding="utf-8"))
        assert not re.search(r"(diffusers|timm)[^.]*\d+%", outside), page.name
