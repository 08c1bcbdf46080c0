"""docs/example-issue.md: a tracking issue as triagebot writes it, kept current.

`make docs` (`docs/generate.py`) renders it from the committed smoke sweep (tests/data, a real
`triagebot run --corpus smoke` on a CPU machine); this test renders it the same way and fails
when the file differs, so a change to a template or to the analysis cannot leave it stale.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from triagebot.report import words
from triagebot.report.fit import markdown_problems
from triagebot.store import read_snapshot

ROOT = Path(__file__).parent.parent


def generator():
    """docs/generate.py as a module (docs/ is no package)."""
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DOCS = generator()


def test_the_generated_documents_are_current():
    for path, text in DOCS.documents().items():
        changes = DOCS.stale(path, text)
        if changes is not None:
            pytest.fail(f"{path.name} is stale (run `make docs` and review the diff):\n{changes}")


def test_the_example_is_a_real_night_with_every_section_a_tracking_issue_has():
    snapshot = read_snapshot(DOCS.SNAPSHOT)
    # A real sweep with the rest of the stack: outputs judged, the ladder climbed, repros verified.
    assert "accuracy" in snapshot.checks and snapshot.ladder
    assert any(result.ladder for result in snapshot.results)
    assert any(repro.verified for repro in snapshot.reproductions)
    text = DOCS.EXAMPLE.read_text(encoding="utf-8")
    body = text.split("\n\n", 1)[1]
    assert markdown_problems(body) == []
    sections = (
        "## Verdict",
        "## Summary",
        "## Environment",
        "## Methodology",
        "## Results",
        "## Models the flag helps",
        "## Crashing models",
        "## The backend ladder",
        "## Recompiles",
        "## Overlap with other flags",
        "## Analysis",
    )
    for section in sections:
        assert section in text, section
    # The smoke night's only wrong result is a sentinel's: in no group of the flag's, on the
    # sentinels' line (the report goldens show a wrong-result section).
    assert "## Wrong results" not in text and "`WrongUnderScalarCapture` (wrong result)" in text
    assert "\n\nSentinels: 7 of 7 behaved as built.\n" in text
    site = "https://owner.github.io/REPO/"
    assert [line for line in text.splitlines() if line.startswith("## ")][:2] == ["## Verdict", "## Summary"]
    assert "not compiled with the flag" in text  # the skipped models, and why
    assert "<details><summary>Traceback of" in text and "verified to raise this signature" in text
    assert "**Where it lives**" in text and "**Pattern**: model code" in text
    assert words.RULE not in text and f"[the readiness rule]({site}index.html#ready-rule) (" in text
    assert "Most common graph-break reasons" not in text  # the corpus's, said once elsewhere
    assert f"]({site}models/" in text and f"]({site}flags/{DOCS.FLAG}.html#crash-" in text


def test_the_readme_quotes_the_example_s_first_screen_word_for_word():
    """The README's quote of a tracking issue is the generated example's first lines (its HTML
    comments aside), so the front page cannot drift from what the bot writes."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quoted = [
        line.removeprefix(">").removeprefix(" ") for line in readme.splitlines() if line.startswith(">")
    ]
    example = [
        line for line in DOCS.EXAMPLE.read_text(encoding="utf-8").splitlines() if not line.startswith("<!--")
    ]
    assert quoted and quoted == example[: len(quoted)]
    assert any(line.startswith("**Not ready**") or line.startswith("**Ready**") for line in quoted)
