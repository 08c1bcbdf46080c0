"""The shipped GitHub workflows, action.yml and Dockerfile: linted, safe, and in step with the CLI.

The linters (zizmor, check-jsonschema, hadolint) run here so that `make test` runs them; they
work offline. The drift test reads every `triagebot ...` invocation in the YAML and checks it
against the real click command tree, so renaming an option breaks a test, not a night's run.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest
import typer
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTION = ROOT / "action.yml"
DOCKERFILE = ROOT / "Dockerfile"
SHIPPED = [*WORKFLOWS, ACTION]
SHIPPED_IDS = [str(path.relative_to(ROOT)) for path in SHIPPED]

# The subcommands the workflows and the action exist to run; each must be invoked somewhere.
EXPECTED_SUBCOMMANDS = {"nightly", "run", "sweep", "merge", "publish", "command", "bisect"}


def tool(name: str) -> str:
    """A linter from the dev extra, next to this interpreter first; a missing one fails the test."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: run `pip install -e '.[dev]'`")
    return found


def lint(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def steps_of(document: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(where, step) for every step of a workflow's jobs or of a composite action."""
    if "jobs" in document:
        return [
            (f"jobs.{job_name}.steps[{index}]", step)
            for job_name, job in document["jobs"].items()
            for index, step in enumerate(job.get("steps", []))
        ]
    return [(f"runs.steps[{index}]", step) for index, step in enumerate(document["runs"].get("steps", []))]


def run_scripts(path: Path) -> list[tuple[str, str]]:
    return [(where, step["run"]) for where, step in steps_of(load(path)) if "run" in step]


# --- the linters ------------------------------------------------------------------------------


def test_zizmor_offline_finds_nothing_at_medium_or_above():
    zizmor = tool("zizmor")
    files = [str(path.relative_to(ROOT)) for path in SHIPPED]
    result = lint(zizmor, "--offline", "--min-severity", "medium", "--format", "json", *files)
    try:
        findings = json.loads(result.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"zizmor gave no findings list (exit {result.returncode}): {result.stderr[-2000:]}")
    described = [
        f"{finding['ident']} ({finding['determinations']['severity']}): {finding['desc']} at "
        f"{finding['locations'][0]['symbolic']['key']['Local']['verbatim_path']}"
        for finding in findings
    ]
    assert described == []
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_workflow_matches_github_schema(path: Path):
    result = lint(tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(path))
    assert result.returncode == 0, result.stdout + result.stderr


def test_action_matches_github_schema():
    result = lint(tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", str(ACTION))
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_passes_hadolint():
    result = lint(tool("hadolint"), str(DOCKERFILE))
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_does_fail_on_a_bad_dockerfile(tmp_path: Path):
    """Guards the test above: a wrapper that always exits 0 would make it pass vacuously."""
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM ubuntu\nRUN cd /tmp && apt-get install curl\n", encoding="utf-8")
    result = lint(tool("hadolint"), str(bad))
    assert result.returncode != 0
    assert "DL3006" in result.stdout  # untagged base image


# --- security rules the linters do not state exactly ---------------------------------------------

# Any `${{ ... }}` inside a shell script is pasted into the script before the shell parses it;
# values must reach the shell through env: instead. This covers `${{ github.event.* }}` and
# `${{ inputs.* }}`, the two that carry text someone else wrote.
_EXPRESSION = re.compile(r"\$\{\{")
_UNTRUSTED = re.compile(r"\$\{\{\s*(?:github\.event|inputs)\b")


def expressions_in_scripts(document: dict[str, Any]) -> list[str]:
    return [
        f"{where}: {line.strip()}"
        for where, step in steps_of(document)
        for line in str(step.get("run", "")).splitlines()
        if _EXPRESSION.search(line)
    ]


def test_expression_check_catches_event_text_in_a_script():
    document = yaml.safe_load(
        """
        jobs:
          j:
            steps:
              - run: echo "${{ github.event.comment.body }}"
              - env: {BODY: "${{ github.event.comment.body }}"}
                run: echo "$BODY"
        """
    )
    assert expressions_in_scripts(document) == ['jobs.j.steps[0]: echo "${{ github.event.comment.body }}"']


@pytest.mark.parametrize("path", SHIPPED, ids=SHIPPED_IDS)
def test_no_event_or_input_text_in_run_lines(path: Path):
    for where, script in run_scripts(path):
        assert not _UNTRUSTED.search(script), f"{path.name} {where} pastes event or input text into a shell"
    assert expressions_in_scripts(load(path)) == []


@pytest.mark.parametrize("path", SHIPPED, ids=SHIPPED_IDS)
def test_actions_are_pinned_to_full_commit_shas(path: Path):
    for where, step in steps_of(load(path)):
        uses = step.get("uses")
        if uses is None or uses.startswith("./"):
            continue
        pinned = re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", uses)
        assert pinned, f"{path.name} {where}: {uses} is not pinned to a commit"
    # The release each SHA stands for is written beside it, so an update can be reviewed.
    for line in path.read_text(encoding="utf-8").splitlines():
        if re.search(r"uses: [\w.-]+/[\w./-]+@[0-9a-f]{40}", line):
            assert re.search(r"# v\d+(\.\d+)*\s*$", line), f"{path.name}: no version comment: {line.strip()}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=[p.name for p in WORKFLOWS])
def test_workflow_grants_permissions_per_job_only(path: Path):
    document = load(path)
    triggers = document.get(True, document.get("on"))  # YAML 1.1 reads the key `on` as True
    assert "pull_request_target" not in triggers
    assert document.get("permissions") == {}, f"{path.name}: top-level permissions must be {{}}"
    for name, job in document["jobs"].items():
        assert "permissions" in job, f"{path.name}: job {name} does not declare its permissions"
        granted = job["permissions"]
        assert isinstance(granted, dict), f"{path.name}: job {name} must list scopes, not {granted!r}"
        assert "write-all" not in granted.values()


def test_checkout_keeps_no_credentials():
    """The data branch is pushed with a token handed to git for one step (action.yml, store-token),
    so no job leaves a token in .git/config for a later step or an artifact to pick up."""
    for path in WORKFLOWS:
        for where, step in steps_of(load(path)):
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert step.get("with", {}).get("persist-credentials") is False, f"{path.name} {where}"


# --- the drift test: YAML against the real command tree -------------------------------------------


@dataclass
class Invocation:
    source: str  # file and step
    subcommand: str
    options: list[str]  # every `-x`/`--xx` given, arrays expanded


_OPERATORS = {";", "&&", "||", "|", "&", "(", ")", ";;", "$(", "<", ">", ">>", "<(", "2>", "<<<"}
_ARRAY_EXPANSION = re.compile(r"^\$\{(\w+)\[@\]\}$")
_ARRAY_ASSIGNMENT = re.compile(r"^(\w+)\+?=$")
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)")


def _tokens(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def triagebot_invocations(script: str, source: str) -> list[Invocation]:
    """Every `triagebot SUB ...` in a bash script: `triagebot`, `python -m triagebot`, or an
    array holding that prefix (`"${triagebot[@]}" SUB`); options held in arrays such as
    `config=(--config "$X")` are expanded where the array is used."""
    lines = []
    for line in script.replace("\\\n", " ").splitlines():
        lines.append(_tokens(line))
        # A command substitution inside quotes, "$(triagebot ...)", is one word to the lexer:
        # read its inside as a line of its own too.
        lines.extend(_tokens(inner) for inner in _SUBSTITUTION.findall(line))
    arrays: dict[str, list[str]] = {}
    prefixes: set[str] = set()
    for tokens in lines:
        for index, token in enumerate(tokens[:-1]):
            match = _ARRAY_ASSIGNMENT.match(token)
            if match and tokens[index + 1] == "(":
                body = tokens[index + 2 : tokens.index(")", index + 2)] if ")" in tokens[index + 2 :] else []
                arrays.setdefault(match[1], []).extend(body)
                if "triagebot" in body:  # triagebot=(python -m triagebot)
                    prefixes.add(match[1])
    found = []
    for tokens in lines:
        for index, token in enumerate(tokens):
            expansion = _ARRAY_EXPANSION.match(token)
            starts = token == "triagebot" or (expansion is not None and expansion[1] in prefixes)
            if not starts or (index > 0 and tokens[index - 1] not in _OPERATORS | {"-m"}):
                continue
            arguments = []
            for argument in tokens[index + 1 :]:
                if argument in _OPERATORS:
                    break
                expanded = _ARRAY_EXPANSION.match(argument)
                arguments.extend(arrays.get(expanded[1], []) if expanded else [argument])
            if not arguments:
                continue
            options = [a.split("=", 1)[0] for a in arguments[1:] if a.startswith("-")]
            found.append(Invocation(source, arguments[0], options))
    return found


def shipped_invocations() -> list[Invocation]:
    return [
        invocation
        for path in SHIPPED
        for where, script in run_scripts(path)
        for invocation in triagebot_invocations(script, f"{path.name} {where}")
    ]


def drift(invocations: list[Invocation], group: Any) -> list[str]:
    """Invocations that name no subcommand of `group`, or an option its subcommand lacks.

    `group` is a click group; typer vendors its own copy of click, so it is read by duck typing
    (`commands`, each command's `params` with `param_type_name`, `opts`, `secondary_opts`)."""
    problems = []
    for invocation in invocations:
        if invocation.subcommand == "--help":
            continue
        command = group.commands.get(invocation.subcommand)
        if command is None:
            known = ", ".join(sorted(group.commands))
            problems.append(f"{invocation.source}: no subcommand {invocation.subcommand!r} (known: {known})")
            continue
        real = {"--help"}
        for parameter in command.params:
            if parameter.param_type_name == "option":
                real.update(parameter.opts)
                real.update(parameter.secondary_opts)
        for option in invocation.options:
            if option not in real:
                where = f"{invocation.source}: `triagebot {invocation.subcommand}`"
                problems.append(f"{where} has no option {option}")
    return problems


def test_invocation_reader_expands_arrays_and_ignores_text():
    script = """
    triagebot=("$PY" -m triagebot)
    echo "triagebot is installed"  # triagebot sweep --not-an-invocation
    config=() ; [[ -n "$C" ]] && config=(--config "$C")
    "${triagebot[@]}" run "${config[@]}" --out "$out" \\
      --force
    out="$(triagebot merge a.jsonl b.jsonl --out m.json)"
    python -m triagebot command --event "$GITHUB_EVENT_PATH"
    """
    found = [(i.subcommand, i.options) for i in triagebot_invocations(script, "sample")]
    assert found == [
        ("run", ["--config", "--out", "--force"]),
        ("merge", ["--out"]),
        ("command", ["--event"]),
    ]


def test_drift_reports_an_unknown_subcommand_and_option():
    group = click.Group(commands=[click.Command("sweep", params=[click.Option(["--corpus"])])])
    invocations = [
        Invocation("a", "sweep", ["--corpus", "--shards"]),
        Invocation("b", "swept", []),
    ]
    assert drift(invocations, group) == [
        "a: `triagebot sweep` has no option --shards",
        "b: no subcommand 'swept' (known: sweep)",
    ]


def test_workflows_and_action_name_real_subcommands_and_options():
    from triagebot.cli import app

    group = typer.main.get_command(app)
    assert group.commands, "the triagebot command has no subcommands"
    invocations = shipped_invocations()
    missing = EXPECTED_SUBCOMMANDS - {invocation.subcommand for invocation in invocations}
    assert not missing, f"no workflow or action step runs: {sorted(missing)}"
    assert drift(invocations, group) == []
