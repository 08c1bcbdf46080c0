"""The reference pages under docs/ agree with the code they describe: a key, an input, a secret,
a permission or a command added, renamed or removed in one place fails here until the other
says so too."""

from __future__ import annotations

import re
import types
from pathlib import Path
from typing import Literal, Union, get_args, get_origin

import pytest
import yaml

from triagebot.config import Config, parse_config
from triagebot.config.rendering import _toml_value
from triagebot.results import FlagSettings
from triagebot.tracker.commands import GRAMMAR
from triagebot.tracker.deployment import workflow_needs

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
WORKFLOWS = ROOT / ".github" / "workflows"


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def section(text: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert match, f"no section {title!r}"
    return match[1]


def table_rows(text: str, header: str) -> list[list[str]]:
    """The cells of each row of the Markdown table whose header row is `header`."""
    lines = text.splitlines()
    start = lines.index(header) + 2  # the header and its --- row
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = re.split(r"(?<!\\)\|", line.strip()[1:-1])
        rows.append([cell.strip() for cell in cells])
    return rows


def toml_type(annotation) -> str:
    """A settings field's type in TOML's words, as the configuration table's type column says it."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        return " or ".join(toml_type(arg) for arg in args if arg is not type(None))
    if origin is Literal:
        return " \\| ".join(f'`"{arg}"`' for arg in args)
    if origin is list:
        return "array of strings" if args[0] is str else "array of tables"
    if origin is dict:
        return "table"
    return {str: "string", int: "integer", float: "float", bool: "boolean"}[annotation]


def settings_fields() -> dict:
    fields = {f"flags.<name>.{name}": field for name, field in FlagSettings.model_fields.items()}
    for table, model in Config.model_fields.items():
        if table != "flags":
            fields |= {f"{table}.{name}": field for name, field in model.annotation.model_fields.items()}
    return fields


def test_the_configuration_table_has_every_key_with_its_type_and_default():
    rows = {
        row[0].strip("`"): row
        for row in table_rows(page("configuration.md"), "| key | type | default | meaning |")
    }
    fields = settings_fields()
    assert set(rows) == set(fields), "docs/configuration.md's table and the settings model name other keys"
    for key, field in fields.items():
        _, kind, default, _ = rows[key]
        assert kind == toml_type(field.annotation), f"{key}: the table says {kind}"
        if field.is_required():
            continue
        value = field.get_default(call_default_factory=True)
        if value is None:
            assert default.startswith("none"), f"{key}: no default, the table says {default}"
        else:
            assert f"`{_toml_value(value)}`" in default, f"{key}: default {value!r}, the table says {default}"


def test_the_configuration_example_is_the_defaults_with_no_live_cc_route():
    example = re.search(r"```toml\n(.*?)```", page("configuration.md"), flags=re.S)
    assert example
    config = parse_config(example[1], "docs/configuration.md's example")
    assert config.sweep == Config().sweep and config.store == Config().store
    assert config.tracker == Config().tracker  # a cc route to a made-up login stays a comment


def test_the_action_s_inputs_and_outputs_are_documented_as_action_yml_declares_them():
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    text = page("commands.md")
    inputs = {row[0].strip("`"): row[1] for row in table_rows(text, "| input | default | what |")}
    outputs = {row[0].strip("`") for row in table_rows(text, "| output | what |")}
    assert set(inputs) == set(action["inputs"]), "docs/commands.md's inputs differ from action.yml's"
    assert outputs == set(action["outputs"]), "docs/commands.md's outputs differ from action.yml's"
    for name, spec in action["inputs"].items():
        declared = (
            "required" if spec.get("required") else f"`{spec['default']}`" if spec.get("default") else "empty"
        )
        assert inputs[name] == declared, f"input {name}: action.yml says {declared}, the docs {inputs[name]}"


def workflows() -> dict[str, dict]:
    return {
        path.stem: yaml.safe_load(path.read_text(encoding="utf-8"))
        for path in sorted(WORKFLOWS.glob("*.yml"))
    }


def strings(node) -> list[str]:
    if isinstance(node, dict):
        return [text for key, value in node.items() for text in strings(key) + strings(value)]
    if isinstance(node, list):
        return [text for item in node for text in strings(item)]
    return [node] if isinstance(node, str) else []


def read_settings() -> dict[str, tuple[str, set[str]]]:
    """Every `secrets.X` and `vars.X` the workflows read (comments aside): its kind and the
    defaults written beside it (`vars.X || 'default'`), as `triagebot doctor` reads them."""
    return {
        name: (setting.kind, set(setting.defaults)) for name, setting in workflow_needs(ROOT).settings.items()
    }


def test_the_deploy_page_documents_every_secret_and_variable_the_workflows_read():
    rows = table_rows(page("deploy.md"), "| name | kind | default | what |")
    documented = {row[0].strip("`"): row for row in rows}
    read = read_settings()
    assert set(read) - set(documented) == set(), "read by the workflows, missing from docs/deploy.md"
    assert set(documented) <= set(read), "documented but read by no workflow"
    for name, (kind, defaults) in read.items():
        assert documented[name][1] == kind, f"{name} is a {kind}"
        for default in defaults:
            assert f"`{default}`" in documented[name][2], f"{name} defaults to {default} in the workflows"


def test_the_deploy_page_gives_every_job_its_permissions():
    documented = {
        (row[0], row[1].strip("`")): (row[2], row[3])
        for row in table_rows(page("deploy.md"), "| workflow | job | runs on | permissions |")
    }
    actual = {}
    for name, workflow in workflows().items():
        if name != "ci":
            assert workflow["permissions"] == {}, f"{name}.yml grants permissions to every job"
        for job_name, job in workflow["jobs"].items():
            runs_on = job["runs-on"]
            where = "GPU runner" if isinstance(runs_on, list) and "gpu" in runs_on else "hosted"
            grants = ", ".join(
                f"`{scope}: {level}`" for scope, level in (job.get("permissions") or {}).items()
            )
            actual[(name, job_name)] = (where, grants)
    assert documented == actual


def test_the_deploy_page_gives_the_workflows_schedules():
    documented = {
        row[0].strip("`"): row[1].strip("`")
        for row in table_rows(page("deploy.md"), "| workflow | cron | when |")
    }
    crons = {}
    for name, workflow in workflows().items():
        triggers = workflow.get(True) or workflow.get("on")  # YAML reads a bare `on` as true
        for entry in triggers.get("schedule") or []:
            crons[f"{name}.yml"] = entry["cron"]
    assert documented == crons


def test_the_deploy_page_names_the_image_s_base():
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    (base,) = re.findall(r"^FROM\s+(\S+)", dockerfile, flags=re.M)
    assert f"`{base}`" in page("deploy.md")


def test_the_rerun_sweep_forms_are_the_parser_s():
    text = section(page("commands.md"), "`/rerun-sweep`")
    documented = [row[0].strip("`") for row in table_rows(text, "| command | what it does |")]
    assert documented == GRAMMAR.splitlines()
    deploy = section(page("deploy.md"), "12. The first `/rerun-sweep`")
    assert f"```\n{GRAMMAR}\n```" in deploy, "docs/deploy.md's list of /rerun-sweep forms is not the parser's"


def cli_commands() -> dict[str, list[str]]:
    """Each command `triagebot --help` lists, with the subcommands of a group."""
    import typer

    from triagebot.cli import app

    root = typer.main.get_command(app)
    return {name: sorted(getattr(command, "commands", {})) for name, command in root.commands.items()}


@pytest.mark.parametrize("name", sorted(cli_commands()))
def test_the_command_line_reference_lists_every_command(name):
    reference = section(page("commands.md"), "The `triagebot` command line")
    subcommands = cli_commands()[name]
    for spelled in [f"`triagebot {name} {sub}" for sub in subcommands] or [f"`triagebot {name}"]:
        assert spelled in reference, f"docs/commands.md does not list {spelled.strip('`')}"


def test_the_command_line_reference_lists_no_command_that_is_gone():
    reference = section(page("commands.md"), "The `triagebot` command line")
    named = set(re.findall(r"^\| `triagebot (\w+)", reference, flags=re.M))
    assert named <= set(cli_commands())


def test_the_deploy_page_names_the_jobs_that_read_the_bot_s_token():
    rows = table_rows(page("deploy.md"), "| name | kind | default | what |")
    (what,) = [row[3] for row in rows if row[0] == "`TRIAGEBOT_TOKEN`"]
    named = set(re.findall(r"`([\w-]+)`", what.split("read by", 1)[1]))
    reading = {
        job_name
        for workflow in workflows().values()
        for job_name, job in workflow["jobs"].items()
        if any("secrets.TRIAGEBOT_TOKEN" in text for text in strings(job))
    }
    assert named == reading
