"""docs/example-issue.md: a tracking issue as triagebot writes it, kept current.

The snapshot is a real sweep of the smoke corpus (`triagebot run --dry-run`, torch 2.13.0 CPU,
both reproductions verified), committed under tests/data; the file is what the dry run writes
for one flag (`# title`, then the body) in the nightly workflow of a repository OWNER/REPO,
where `tracker.dashboard_url` is the Pages address: every model and crash group links to its
page on the dashboard, as in a real issue. When a template or the analysis changes, this test
fails until the file is rendered again with `TRIAGEBOT_UPDATE_GOLDEN=1 pytest
tests/test_example_issue.py` and the diff is reviewed.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest
from builders import DATA, SCALAR, night_of

from triagebot.config import Config, with_site_url
from triagebot.report.fit import markdown_problems
from triagebot.store import read_snapshot
from triagebot.tracker.desired import desired_issues

ROOT = Path(__file__).parent.parent
SNAPSHOT = DATA / "smoke-2.13.0+cpu.json"
EXAMPLE = ROOT / "docs" / "example-issue.md"
FLAG = SCALAR


def example() -> str:
    """The dry run's file for FLAG from the committed snapshot, as `triagebot run` writes it."""
    snapshot = read_snapshot(SNAPSHOT)
    config = with_site_url(Config(), {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "OWNER/REPO"})
    night = night_of(snapshot, [snapshot], config)
    [issue] = [issue for issue in desired_issues(night, config.tracker) if issue.flag == FLAG]
    return f"# {issue.title}\n\n{issue.body}"


def test_the_example_issue_is_what_the_smoke_sweep_renders() -> None:
    text = example()
    if os.environ.get("TRIAGEBOT_UPDATE_GOLDEN"):
        EXAMPLE.parent.mkdir(exist_ok=True)
        EXAMPLE.write_text(text, encoding="utf-8")
    committed = EXAMPLE.read_text(encoding="utf-8")
    if text != committed:
        changes = "".join(
            difflib.unified_diff(committed.splitlines(True), text.splitlines(True), str(EXAMPLE))
        )
        pytest.fail(f"{EXAMPLE.name} is stale (TRIAGEBOT_UPDATE_GOLDEN=1 to render it again):\n{changes}")


def test_the_example_shows_what_a_tracking_issue_is_for() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    body = text.split("\n\n", 1)[1]
    assert markdown_problems(body) == []
    for section in ("## Summary", "## Models the flag helps", "## Crashing models", "## Analysis"):
        assert section in text
    assert "<details><summary>Traceback of" in text and "verified to raise this signature" in text
    site = "https://owner.github.io/REPO/"
    assert f"]({site}models/" in text and f"]({site}flags/{FLAG}.html#crash-" in text
