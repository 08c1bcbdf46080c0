"""One name per idea: a name the project defines once (in `results`) is the one every package
uses, and what earlier nights stored under an older name still loads."""

from __future__ import annotations

import ast
from pathlib import Path

from triagebot.results import COUNTING_BACKEND

PACKAGE = Path(__file__).resolve().parent.parent / "triagebot"


def _spelled(text: str) -> list[str]:
    """The modules of triagebot/ whose code holds the string `text` itself (comments aside)."""
    return sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if any(
            isinstance(node, ast.Constant) and node.value == text
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    )


def test_the_counting_backend_is_named_by_its_constant_alone():
    assert _spelled(COUNTING_BACKEND) == ["results/runs.py"]
