"""action.yml's step scripts, run in bash against a stand-in interpreter that records its argv.

They check what the linters cannot: which `triagebot` command line each input produces, that
input text reaches it as data (never as shell), and that the data-branch token handed to git
through the environment really answers git's credential requests.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
NIGHTLY = yaml.safe_load((ROOT / ".github" / "workflows" / "nightly.yml").read_text(encoding="utf-8"))
RUN_STEP = next(step for step in ACTION["runs"]["steps"] if step.get("id") == "step")

# The action's inputs as the runner hands them to the step: every input, defaults filled in.
DEFAULTS = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}


@pytest.fixture
def runner(tmp_path: Path):
    """Run the action's main step with `inputs`; returns (exit status, argv seen, outputs, stdout)."""
    recorder = tmp_path / "python"
    recorder.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        "seen = {'argv': sys.argv[1:], 'git': os.environ.get('GIT_CONFIG_COUNT'),"
        " 'pythonpath': os.environ.get('PYTHONPATH')}\n"
        "with open(os.environ['ARGV_LOG'], 'a') as log:\n"
        "    log.write(json.dumps(seen) + '\\n')\n",
        encoding="utf-8",
    )
    recorder.chmod(0o755)

    def run(event_name: str = "workflow_dispatch", action_path: str | None = None, **inputs: str):
        values = {**DEFAULTS, **{name.replace("_", "-"): value for name, value in inputs.items()}}
        values["python"] = str(recorder)
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
        if action_path is not None:
            env["GITHUB_ACTION_PATH"] = action_path  # set by the runner in a composite action's steps
        for name, expression in RUN_STEP["env"].items():
            # Each env entry is `${{ inputs.NAME }}`; the runner substitutes the input's value.
            input_name = expression.removeprefix("${{ inputs.").removesuffix(" }}")
            env[name] = values[input_name]
        log, outputs = tmp_path / "argv.jsonl", tmp_path / "outputs"
        for path in (log, outputs):
            path.write_text("", encoding="utf-8")
        env.update(
            ARGV_LOG=str(log),
            GITHUB_OUTPUT=str(outputs),
            GITHUB_EVENT_NAME=event_name,
            GITHUB_EVENT_PATH=str(tmp_path / "event.json"),
            RUNNER_TEMP=str(tmp_path),
            GITHUB_RUN_ID="7",
            GITHUB_JOB="job",
        )
        done = subprocess.run(
            ["bash", "-e", "-c", RUN_STEP["run"]],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        written = dict(line.split("=", 1) for line in outputs.read_text(encoding="utf-8").splitlines())
        return done.returncode, calls, written, done.stdout

    return run


def test_every_input_of_the_step_comes_from_an_input():
    for name, expression in RUN_STEP["env"].items():
        assert expression.startswith("${{ inputs.") and expression.endswith(" }}"), name


def test_run_passes_only_the_inputs_given(runner, tmp_path: Path):
    status, calls, _, _ = runner(
        command="run", corpus="smoke", flags="a,b", dry_run="true", out=str(tmp_path / "o")
    )
    assert status == 0
    assert [call["argv"] for call in calls] == [
        [
            "-m",
            "triagebot",
            "run",
            "--corpus",
            "smoke",
            "--flags",
            "a,b",
            "--dry-run",
            "--out",
            str(tmp_path / "o"),
        ]
    ]


def test_input_text_reaches_triagebot_as_one_argument_and_never_runs(runner, tmp_path: Path):
    hostile = "$(touch pwned) \"; touch pwned2; echo '`touch pwned3`"
    status, calls, written, _ = runner(command="sweep", models=hostile, shard="2/4")
    assert status == 0
    (call,) = calls
    assert call["argv"][:3] == ["-m", "triagebot", "sweep"]
    assert call["argv"][call["argv"].index("--models") + 1] == hostile
    assert call["argv"][call["argv"].index("--shard") + 1] == "2/4"
    assert not list(tmp_path.glob("pwned*"))
    assert written["snapshot"] == call["argv"][call["argv"].index("--out") + 1]


def test_merge_takes_every_shard_file_in_order(runner, tmp_path: Path):
    shards = tmp_path / "shards"
    (shards / "nested").mkdir(parents=True)
    for name in ("shard-2.jsonl", "shard-1.jsonl", "nested/shard-3.jsonl", "notes.txt"):
        (shards / name).write_text("{}\n", encoding="utf-8")
    status, calls, written, _ = runner(command="merge", shards=str(shards), out=str(tmp_path / "m"))
    assert status == 0
    (call,) = calls
    assert call["argv"] == [
        "-m",
        "triagebot",
        "merge",
        str(shards / "nested" / "shard-3.jsonl"),
        str(shards / "shard-1.jsonl"),
        str(shards / "shard-2.jsonl"),
        "--out",
        str(tmp_path / "m" / "snapshot.json"),
    ]
    assert written["snapshot"] == str(tmp_path / "m" / "snapshot.json")


def test_publish_without_a_token_is_a_dry_run(runner, tmp_path: Path):
    status, calls, _, _ = runner(command="publish", snapshot="s.json", repo="o/n", out=str(tmp_path))
    assert status == 0
    argv = calls[0]["argv"]
    assert argv[:4] == ["-m", "triagebot", "publish", "s.json"] and "--dry-run" in argv
    status, calls, _, _ = runner(
        command="publish", snapshot="s.json", repo="o/n", token="t", out=str(tmp_path)
    )
    assert "--dry-run" not in calls[0]["argv"]


def test_command_reads_the_event_or_polls(runner, tmp_path: Path):
    _, calls, _, _ = runner("issue_comment", command="command")
    assert calls[0]["argv"] == ["-m", "triagebot", "command", "--event", str(tmp_path / "event.json")]
    _, calls, _, _ = runner("schedule", command="command", repo="pytorch/pytorch")
    assert calls[0]["argv"] == ["-m", "triagebot", "command", "--poll", "--repo", "pytorch/pytorch"]


def test_nightly_asks_about_the_newest_or_the_given_nightly(runner):
    _, calls, _, _ = runner(command="nightly")
    assert calls[0]["argv"] == ["-m", "triagebot", "nightly", "--check"]
    _, calls, _, _ = runner(command="nightly", nightly="2.12.0.dev20260408", force="true", store="s")
    assert calls[0]["argv"] == [
        "-m",
        "triagebot",
        "nightly",
        "--check",
        "--store",
        "s",
        "--force",
        "--nightly",
        "2.12.0.dev20260408",
    ]


def test_the_image_is_built_only_when_the_ask_job_found_something_to_sweep():
    jobs = NIGHTLY["jobs"]
    (ask,) = [step for step in jobs["ask"]["steps"] if step.get("id") == "ask"]
    assert ask["uses"] == "./" and ask["with"]["command"] == "nightly"
    assert jobs["image"]["needs"] == "ask" and jobs["image"]["if"] == "needs.ask.outputs.sweep == 'true'"
    (build,) = [step for step in jobs["image"]["steps"] if step.get("id") == "build"]
    assert build["env"]["NIGHTLY"] == "${{ needs.ask.outputs.version }}"


def test_a_missing_or_unknown_command_input_is_a_clear_error(runner):
    status, calls, _, stdout = runner(command="sweeep")
    assert status == 2 and calls == []
    assert (
        "::error::unknown command 'sweeep' (nightly, run, sweep, merge, publish, command, answer, doctor)"
        in stdout
    )
    status, calls, _, stdout = runner(command="merge")
    assert status == 2 and "needs the shards input" in stdout


def test_git_gets_the_store_token_only_when_one_is_given(runner):
    _, calls, _, _ = runner(command="run", store_token="secret-token")
    assert calls[0]["git"] == "1"
    _, calls, _, _ = runner(command="run")
    assert calls[0]["git"] is None


def git_credential(env: dict[str, str], home: Path) -> dict[str, str]:
    if shutil.which("git") is None:
        pytest.fail("git is needed to check the credential helper")
    done = subprocess.run(
        ["git", "credential", "fill"],
        input="protocol=https\nhost=github.com\npath=owner/repo.git\n\n",
        env={"PATH": os.environ["PATH"], "HOME": str(home), "GIT_TERMINAL_PROMPT": "0", **env},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)


def test_the_action_credential_helper_answers_git_with_the_token(tmp_path: Path):
    # The exports the step makes when store-token is set, read from the script itself.
    exports = dict(
        line.strip().removeprefix("export ").split("=", 1)
        for line in RUN_STEP["run"].splitlines()
        if line.strip().startswith("export GIT_CONFIG_")
    )
    env = {name: value.strip("'\"") for name, value in exports.items()}
    env["TRIAGEBOT_STORE_TOKEN"] = "secret-token"
    answer = git_credential(env, tmp_path)
    assert answer["username"] == "x-access-token" and answer["password"] == "secret-token"


def test_the_nightly_check_step_hands_git_the_token_the_same_way(tmp_path: Path):
    step = next(s for s in NIGHTLY["jobs"]["plan"]["steps"] if s.get("id") == "check")
    env = {name: str(value) for name, value in step["env"].items() if name.startswith("GIT_CONFIG_")}
    env["TRIAGEBOT_STORE_TOKEN"] = "job-token"
    answer = git_credential(env, tmp_path)
    assert answer["username"] == "x-access-token" and answer["password"] == "job-token"


INSTALL_STEP = ACTION["runs"]["steps"][0]

FAKE_INTERPRETER = """#!{python}
import json, os, sys
arguments = sys.argv[1:]
with open(os.environ["ARGV_LOG"], "a") as log:
    seen = {{"argv": arguments, "pythonpath": os.environ.get("PYTHONPATH")}}
    log.write(json.dumps(seen) + "\\n")
if arguments[:2] == ["-c", "import triagebot.cli"]:
    sys.exit(0 if os.environ["HAS_TRIAGEBOT"] == "1" else 1)
if arguments[:2] == ["-c", "import torch"]:
    sys.exit(0 if os.environ["HAS_TORCH"] == "1" else 1)
if arguments[0] == "-c" and "triagebot.__file__" in arguments[1]:
    # Where `import triagebot` lands: the module path's first entry, unless a stale copy wins.
    print(os.environ.get("STALE_TRIAGEBOT") or os.environ["PYTHONPATH"].split(":")[0] + "/triagebot")
elif arguments[0] == "-c":
    print(os.environ["TORCH_VERSION"])
"""


def install(
    tmp_path: Path,
    *,
    has_triagebot: bool,
    has_torch: bool,
    stale: str = "",
    command: str = "run",
    snapshot: str = "",
) -> tuple[int, list[dict], str]:
    interpreter = tmp_path / "python"
    interpreter.write_text(FAKE_INTERPRETER.format(python=sys.executable), encoding="utf-8")
    interpreter.chmod(0o755)
    log = tmp_path / "argv.jsonl"
    log.write_text("", encoding="utf-8")
    env = {
        "PATH": os.environ["PATH"],
        "ARGV_LOG": str(log),
        "RUNNER_TEMP": str(tmp_path),
        "TRIAGEBOT_PYTHON": str(interpreter),
        "TRIAGEBOT_TORCH": DEFAULTS["torch"],
        "TRIAGEBOT_SOURCE": str(ROOT),
        "HAS_TRIAGEBOT": "1" if has_triagebot else "0",
        "HAS_TORCH": "1" if has_torch else "0",
        "TORCH_VERSION": "2.12.0.dev20260408+cu128",
        "STALE_TRIAGEBOT": stale,
        "TRIAGEBOT_COMMAND": command,
        "TRIAGEBOT_SNAPSHOT": snapshot,
    }
    done = subprocess.run(["bash", "-e", "-c", INSTALL_STEP["run"]], env=env, capture_output=True, text=True)
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return done.returncode, calls, done.stdout + done.stderr


def installed(tmp_path: Path, **options) -> list[dict]:
    status, calls, output = install(tmp_path, **options)
    assert status == 0, output
    return calls


def pip_installs(calls: list[dict]) -> list[dict]:
    return [call for call in calls if call["argv"][:3] == ["-m", "pip", "install"]]


def test_install_runs_the_checkout_over_the_images_dependencies(tmp_path: Path):
    status, calls, output = install(tmp_path, has_triagebot=True, has_torch=True)
    assert status == 0 and pip_installs(calls) == []
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout
    where = ROOT.resolve()
    assert f"running triagebot {commit.strip() or 'unknown commit'} from the checkout {where}" in output
    assert calls[-1]["argv"] == ["-m", "triagebot", "--help"] and calls[-1]["pythonpath"] == str(where)


def test_install_refuses_to_run_another_triagebot_than_the_checkout(tmp_path: Path):
    status, _, output = install(tmp_path, has_triagebot=True, has_torch=True, stale="/opt/old/triagebot")
    assert status == 1
    assert (
        f"::error::triagebot would run from /opt/old/triagebot, not from the checkout {ROOT.resolve()}"
        in output
    )


def test_the_run_step_puts_the_checkout_first_on_the_module_path(runner):
    status, calls, _, _ = runner(command="run", action_path=str(ROOT))
    assert status == 0 and calls[0]["pythonpath"].split(":")[0] == str(ROOT.resolve())


def test_confirm_reaches_the_sweep(runner):
    status, calls, _, _ = runner(command="sweep", models="BertModel", confirm="3")
    argv = calls[0]["argv"]
    assert status == 0 and argv[argv.index("--confirm") + 1] == "3"
    _, calls, _, _ = runner(command="sweep")
    assert "--confirm" not in calls[0]["argv"]


def test_jobs_reaches_the_sweep_and_the_run(runner):
    for command in ("sweep", "run"):
        status, calls, _, _ = runner(command=command, jobs="auto")
        argv = next(call["argv"] for call in calls if call["argv"][2:3] == [command])
        assert status == 0 and argv[argv.index("--jobs") + 1] == "auto", command
    _, calls, _, _ = runner(command="sweep")
    assert "--jobs" not in calls[0]["argv"]  # the config's [sweep] jobs


def locked_install(call: dict) -> bool:
    """Whether `call` installs exactly the runtime lock, every file checked against its hash."""
    argv = call["argv"]
    lock = ROOT.resolve() / "requirements" / "runtime.lock"
    return "--require-hashes" in argv and "--no-deps" in argv and argv[-2:] == ["--requirement", str(lock)]


def test_install_beside_a_self_hosted_nightly_keeps_that_torch(tmp_path: Path):
    (call,) = pip_installs(installed(tmp_path, has_triagebot=False, has_torch=True))
    assert locked_install(call)  # the lock leaves torch out: the nightly is never touched
    assert not any(argument.startswith("torch") for argument in call["argv"])


def test_install_on_a_hosted_runner_brings_the_pinned_cpu_torch_first(tmp_path: Path):
    torch_call, triagebot_call = pip_installs(installed(tmp_path, has_triagebot=False, has_torch=False))
    assert DEFAULTS["torch"] == "torch==2.13.0" and DEFAULTS["torch"] in torch_call["argv"]
    assert torch_call["argv"][-2:] == ["--index-url", "https://download.pytorch.org/whl/cpu"]
    assert locked_install(triagebot_call)


@pytest.mark.parametrize(
    ("command", "snapshot"),
    [("publish", ""), ("command", ""), ("answer", ""), ("merge", ""), ("nightly", ""), ("run", "s.json")],
)
def test_the_jobs_that_hold_the_token_install_the_lock_and_no_torch(tmp_path: Path, command, snapshot):
    calls = installed(tmp_path, has_triagebot=False, has_torch=False, command=command, snapshot=snapshot)
    (call,) = pip_installs(calls)
    assert locked_install(call)
    assert not any(call["argv"][:2] == ["-c", "import torch"] for call in calls)  # not even asked


def test_the_answer_step_keeps_a_pin_or_a_bisection(runner, tmp_path: Path):
    where = {"issue": "12", "comment_id": "345", "repo": "pytorch/pytorch"}
    status, calls, _, _ = runner(
        command="answer", link="0123456789ab", number="4242", sweep_result="skipped", **where
    )
    assert status == 0
    assert calls[0]["argv"][2:7] == ["command", "--link", "0123456789ab", "--number", "4242"]
    found = tmp_path / "bisection.json"
    found.write_text("{}", encoding="utf-8")
    status, calls, _, _ = runner(command="answer", bisection=str(found), **where)
    assert status == 0 and calls[0]["argv"][2:5] == ["command", "--bisection", str(found)]
    status, calls, _, _ = runner(command="answer", bisection=str(found), sweep_result="failure", **where)
    assert status == 0 and calls[0]["argv"][2:5] == ["command", "--failed", "failure"]
    for link, number in (("$(id)", "1"), ("0123456789ab", "#1"), ("0123456789AB", "1")):
        status, calls, _, stdout = runner(command="answer", link=link, number=number, **where)
        assert status == 2 and calls == [] and "a link needs a crash group id" in stdout


def test_run_keeps_the_nights_bisections_when_given(runner, tmp_path: Path):
    status, calls, _, _ = runner(command="run", snapshot="s.json", bisections="found", out=str(tmp_path))
    assert status == 0
    argv = calls[0]["argv"]
    assert argv[argv.index("--bisections") + 1] == "found"
    status, calls, _, _ = runner(command="run", out=str(tmp_path))
    assert "--bisections" not in calls[0]["argv"]
