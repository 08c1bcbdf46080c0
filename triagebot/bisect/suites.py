"""What a reproduction of a model of another suite needs installed beside torch and transformers.

A timm or diffusers model's script imports its library (its `CLASS_PATH` names the module), so
a probe's environment must hold it: the version installed where the bisection runs (the one the
sweep used), else the newest. timm comes with torchvision, which has no version of its own to
pin: it is the build made for the torch under test, from that torch's own index, found by the
constraint the install runs under (`EnvironmentCache.python_for`). A build for which one of
them cannot be installed is a skipped probe that says which and why (`probe.Prober`); the rest
of the bisection goes on.
"""

from __future__ import annotations

import ast
import re
from importlib import metadata

from triagebot.bisect.envs import Pin
from triagebot.results import SUITES


def suite_packages() -> dict[str, tuple[str, ...]]:
    """Suite library -> the packages it is installed with (`Suite.packages`, in order;
    torchvision from the torch index)."""
    return {suite.library: suite.packages for suite in SUITES.values() if suite.packages}


_CLASS_PATH = re.compile(r"^([A-Za-z_]\w*)(?:\.\w+)*:\w+$")


def imported_suites(script: str) -> list[str]:
    """The suite libraries `script` imports, directly or through a class path ("timm.models.x:y")."""
    try:
        tree = ast.parse(script)
    except SyntaxError:
        return []
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module.partition(".")[0])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            named = _CLASS_PATH.match(node.value)
            if named:
                modules.add(named.group(1))
    return sorted(modules & set(suite_packages()))


def suite_pins(script: str, torch_index: str, releases: str) -> list[Pin]:
    """The pins a probe of `script` installs after torch and transformers."""
    pins = []
    for suite in imported_suites(script):
        for project in suite_packages()[suite]:
            if project == "torchvision":
                pins.append(Pin(project, "", torch_index))
            else:
                pins.append(Pin(project, _installed(project), releases))
    return pins


def _installed(project: str) -> str:
    try:
        return metadata.version(project)
    except metadata.PackageNotFoundError:
        return ""  # not installed here: the newest release
