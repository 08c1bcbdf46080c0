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

A night's cost per suite is said in three places (README.md, docs/deploy.md steps 2 and 11); each
says it in a block between `<!-- suite-cost: NAME -->` and `<!-- /suite-cost -->`, written here
from docs/performance.md's own figures (the suites' table, and the transformers night's run
seconds), so that no page retypes a figure the measurements page holds.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
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


PERFORMANCE = ROOT / "docs" / "performance.md"
SUITES_TABLE = "| night | wall | sweep | confirmations | ladder |"
SWEEP_ROW = re.compile(r"^\| the sweep \| .*?; ([\d,]+) run seconds", re.M)
BLOCK = re.compile(r"(<!-- suite-cost: (?P<name>[\w-]+) -->\n)(?P<text>.*?)(\n<!-- /suite-cost -->)", re.S)


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def suite_nights(performance: str) -> dict[str, tuple[int, int]]:
    """suite -> (wall seconds, run seconds of its sweep), from performance.md's suites table."""
    table = performance.split(SUITES_TABLE, 1)[1].split("\n\n", 1)[0]
    nights = {}
    for row in table.strip().splitlines()[1:]:
        night, wall, sweep = (cell.strip() for cell in row.strip("|").split("|")[:3])
        run_seconds = re.search(r"([\d,]+) run seconds", sweep)[1]
        nights[night.split(",")[0]] = (_number(re.match(r"[\d,]+", wall)[0]), _number(run_seconds))
    return nights


def _minutes(seconds: int) -> str:
    return f"{seconds // 60} min {seconds % 60} s"


def suite_costs(performance: str) -> dict[str, str]:
    """Each block's text: a night's cost per suite, in the words each place needs."""
    nights = suite_nights(performance)
    wall, runs = nights.pop("transformers")
    walls = {suite: round(100 * seconds / wall) for suite, (seconds, _) in nights.items()}
    shares = {suite: seconds / runs for suite, (_, seconds) in nights.items()}
    measured = _number(SWEEP_ROW.search(performance)[1])
    total = int(round(measured * (1 + sum(shares.values())), -1))
    added = " and ".join(f"{suite} added {walls[suite]}%" for suite in walls)
    slow = (
        f"On one slow 2-core CPU machine the transformers night took {_minutes(wall)}, "
        f"to which {added} ([performance.md](performance.md))."
    )
    run_shares = " and ".join(f"{suite} {round(100 * share)}%" for suite, share in shares.items())
    sweep = f"was {measured:,} run seconds of sweep on the CPU machine of [performance.md](performance.md)"
    night = (
        f"A night of the transformers corpus (1,014 models, both default flags) {sweep}.\n"
        f"Measured beside a transformers night on one machine, the other suites add to it {run_shares}.\n"
        "(timm ran with torch 2.14.1 then, before `make` installed a torchvision beside its torch.)\n"
        f"So the default night of the three suites is about {total:,} run seconds.\n"
        "Almost all of it is Dynamo tracing, CPU work whatever the device.\n"
        f"So a shard takes about {total:,} / (S × W) seconds of sweep on S shards of W workers, "
        "side by side on S runners.\n"
        f"On 4 shards: about {total / 8 / 60:.1f} min with 2 workers each, {total / 32 / 60:.1f} min with 8."
    )
    return {"slow-night": slow, "three-suites": night}


def with_suite_costs(path: Path, costs: dict[str, str]) -> str:
    """`path` with each of its suite-cost blocks written from `costs`, their links to
    performance.md relative to `path` (the README links into docs/)."""
    link = f"]({os.path.relpath(PERFORMANCE, path.parent)})"
    return BLOCK.sub(
        lambda found: found[1] + costs[found["name"]].replace("](performance.md)", link) + found[4],
        path.read_text(encoding="utf-8"),
    )


def documents() -> dict[Path, str]:
    """Every generated document and its text."""
    costs = suite_costs(PERFORMANCE.read_text(encoding="utf-8"))
    pages = (ROOT / "README.md", ROOT / "docs" / "deploy.md")
    return {EXAMPLE: example_issue(), **{page: with_suite_costs(page, costs) for page in pages}}


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
