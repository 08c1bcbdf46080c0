"""The documents rendered from a real night, so that they cannot drift from the templates.

    make docs                                  # or: python docs/generate.py
    python docs/generate.py --check            # exit 1 when a document is stale

`docs/example-issue.md` is the tracking issue of `capture_scalar_outputs` exactly as `triagebot
run` writes it (`# title`, then the body) for the committed smoke sweep `tests/data/smoke-*.json`
(a real `triagebot run --corpus smoke` on a CPU machine: crashes confirmed, the backend ladder
climbed, reproductions verified), in the nightly workflow of a repository OWNER/REPO, where
`tracker.dashboard_url` is the Pages address: every model and crash group links to its page on
the dashboard, as in a real issue. `tests/test_example_issue.py` renders it again and fails when
the file differs.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from triagebot import pipeline  # noqa: E402
from triagebot.config import Config, with_site_url  # noqa: E402
from triagebot.store import MemoryStore, read_snapshot  # noqa: E402
from triagebot.tracker.desired import desired_issues  # noqa: E402

SNAPSHOT = ROOT / "tests" / "data" / "smoke-2.13.0+cpu.json"
EXAMPLE = ROOT / "docs" / "example-issue.md"
FLAG = "capture_scalar_outputs"


def example_issue(snapshot_path: Path = SNAPSHOT, flag: str = FLAG) -> str:
    """The dry run's file for `flag` from the committed snapshot, as `triagebot run` writes it."""
    snapshot = read_snapshot(snapshot_path)
    config = with_site_url(Config(), {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "OWNER/REPO"})
    night = pipeline.night_of(snapshot, MemoryStore([snapshot]), config)
    [issue] = [issue for issue in desired_issues(night, config.tracker) if issue.flag == flag]
    return f"# {issue.title}\n\n{issue.body}"


def documents() -> dict[Path, str]:
    """Every generated document and its text."""
    return {EXAMPLE: example_issue()}


def stale(path: Path, text: str) -> str | None:
    """The diff of `path` against `text`, or None when it is current."""
    committed = path.read_text(encoding="utf-8") if path.is_file() else ""
    if committed == text:
        return None
    return "".join(difflib.unified_diff(committed.splitlines(True), text.splitlines(True), str(path)))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="Only say whether a document is stale.")
    args = parser.parse_args()
    status = 0
    for path, text in documents().items():
        changes = stale(path, text)
        if changes is None:
            print(f"{path.relative_to(ROOT)}: current")
        elif args.check:
            print(f"{path.relative_to(ROOT)}: stale (make docs renders it again)\n{changes}")
            status = 1
        else:
            path.write_text(text, encoding="utf-8")
            print(f"{path.relative_to(ROOT)}: written")
    return status


if __name__ == "__main__":
    sys.exit(main())
