"""What the shipped workflows ask of the repository that runs them, read from the files
themselves: the secrets and variables they read (with the defaults written beside them), the
labels of the self-hosted runners they ask for, and which of them run on a schedule.

`triagebot doctor` checks a deployment against this, and the docs tests check docs/deploy.md
against it: one reading of `.github/workflows/*.yml` and `action.yml` for both. The files are
read as text (the runtime has no YAML parser): comments are dropped first, so a secret named
only in a comment is not one the workflows read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from triagebot.errors import ConfigError

_SETTING = re.compile(r"\b(secrets|vars)\.(\w+)(?:\s*\|\|\s*'?([\w.-]+)'?)?")
_RUNS_ON = re.compile(r"^\s*runs-on:\s*\[([^\]]*)\]", re.M)
_SCHEDULE = re.compile(r"^\s+schedule:\s*$", re.M)
AUTOMATIC = {"GITHUB_TOKEN"}
"""Secrets GitHub hands every run itself: nobody sets them."""


@dataclass(frozen=True)
class Setting:
    name: str
    kind: str  # "secret" or "variable"
    defaults: frozenset[str] = frozenset()  # written beside it: `vars.X || 'default'`


@dataclass(frozen=True)
class WorkflowNeeds:
    settings: dict[str, Setting] = field(default_factory=dict)
    runner_labels: frozenset[str] = frozenset()  # what a self-hosted job's `runs-on` asks for
    scheduled: tuple[str, ...] = ()  # workflow files with a `schedule` trigger, e.g. nightly.yml

    def named(self, kind: str) -> list[str]:
        return sorted(name for name, setting in self.settings.items() if setting.kind == kind)


def without_comments(text: str) -> str:
    """`text` (YAML, or the shell inside it) with every `#` comment dropped: a `#` at the start
    of a line or after a blank, outside quotes."""
    kept = []
    for line in text.splitlines():
        quote = ""
        for index, char in enumerate(line):
            if quote:
                quote = "" if char == quote else quote
            elif char in "'\"":
                quote = char
            elif char == "#" and (index == 0 or line[index - 1].isspace()):
                line = line[:index]
                break
        kept.append(line)
    return "\n".join(kept)


def workflow_files(root: Path) -> list[Path]:
    """The files that make a deployment: `.github/workflows/*.yml` and `action.yml` under `root`."""
    files = sorted((root / ".github" / "workflows").glob("*.yml"))
    action = root / "action.yml"
    if not files:
        raise ConfigError(f"{root}: no .github/workflows/*.yml (run this in a copy of the repository)")
    return files + ([action] if action.is_file() else [])


def workflow_needs(root: Path) -> WorkflowNeeds:
    """Every secret and variable the workflows under `root` read, the runner labels their
    self-hosted jobs ask for, and the workflows that run on a schedule."""
    found: dict[str, Setting] = {}
    labels: set[str] = set()
    scheduled = []
    for path in workflow_files(root):
        text = without_comments(path.read_text(encoding="utf-8"))
        for kind, name, default in _SETTING.findall(text):
            if name in AUTOMATIC:
                continue
            kind = "secret" if kind == "secrets" else "variable"
            before = found.get(name, Setting(name, kind))
            found[name] = Setting(name, kind, before.defaults | ({default} if default else set()))
        for listed in _RUNS_ON.findall(text):
            asked = {label.strip().strip("'\"") for label in listed.split(",")}
            if "self-hosted" in asked:
                labels |= asked
        if path.parent.name == "workflows" and _SCHEDULE.search(text):
            scheduled.append(path.name)
    return WorkflowNeeds(dict(sorted(found.items())), frozenset(labels), tuple(scheduled))
