"""The import rules of docs/architecture.md, read from the code: each package imports only what
its row allows, and torch and transformers only where a model is built or run."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "triagebot"

# package -> the triagebot packages it may import (besides itself)
ALLOWED = {
    "results": set(),
    "errors": set(),
    "config": {"results", "errors"},
    "corpus": {"results", "config", "errors"},
    "sweep": {"corpus", "results", "config", "errors", "analysis"},
    "analysis": {"results", "errors", "store"},  # store: `analysis.history` reads what earlier nights stored
    "store": {"results", "config", "errors"},
    "report": {"results", "analysis", "config", "errors"},
    "reproduce": {"results", "analysis", "report", "errors"},
    "tracker": {"results", "analysis", "report", "config", "errors"},
    "nightlies": {"results", "errors"},
    "bisect": {"results", "errors", "nightlies", "store", "analysis", "reproduce"},
    "pipeline": {
        "results",
        "analysis",
        "config",
        "corpus",
        "errors",
        "report",
        "reproduce",
        "store",
        "sweep",
        "tracker",
    },
}
TORCH_FREE = {
    "results",
    "errors",
    "config",
    "analysis",
    "store",
    "report",
    "reproduce",
    "tracker",
    "pipeline",
    "nightlies",
    "bisect",
}
THIRD_PARTY_MODEL_CODE = {"torch", "transformers"}


def package_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[0]


def imports(path: Path) -> set[str]:
    """Top-level names imported anywhere in the file (function bodies too), `triagebot.X` as X."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            parts = name.split(".")
            found.add(parts[1] if parts[0] == "triagebot" and len(parts) > 1 else parts[0])
    return found


FILES = sorted(path for path in PACKAGE.rglob("*.py") if package_of(path) in ALLOWED)


@pytest.mark.parametrize("path", FILES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_each_module_imports_only_what_its_package_may(path: Path):
    package = package_of(path)
    used = imports(path) & (set(ALLOWED) | {"cli"})
    assert used - ALLOWED[package] - {package} == set()
    if package in TORCH_FREE:
        assert imports(path) & THIRD_PARTY_MODEL_CODE == set()


def test_every_package_has_a_rule():
    """A new package must say what it may import."""
    packages = {package_of(path) for path in PACKAGE.rglob("*.py")} - {"__init__", "__main__", "cli"}
    assert packages == set(ALLOWED)
