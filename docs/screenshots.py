"""The screenshots on docs/dashboard.md of the dashboard site, one per page kind, made from a smoke sweep.

    .venv/bin/python docs/screenshots.py tests/data/smoke-2.13.0+cpu.json

The snapshot is the committed smoke sweep (or any `triagebot run` of the smoke corpus). One
sweep makes one nightly, and trends need several: the three nightlies before it are copies of
that snapshot with earlier keys, dates and torch git hashes and a few results edited, as torch
changes would move them: Mistral 3 ran under capture_scalar_outputs until the newest nightly
(so the index shows it newly crashing), Qwen2-VL's baseline had two more graphs in the first
two, and PatchTST joined in the second. The site is built from those four nightlies as
`triagebot site` builds it and opened in headless Chromium (Debian's `chromium`, as in
tests/test_site_browser.py) at 1280 pixels wide; the PNGs are written into docs/.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the browser test's own imports (builders)

from tests.test_site_browser import CHROMIUM, FLAGS  # noqa: E402
from triagebot.config import Config  # noqa: E402
from triagebot.pipeline import build_site  # noqa: E402
from triagebot.report import links  # noqa: E402
from triagebot.results import BASELINE, Outcome, Snapshot, Status  # noqa: E402
from triagebot.store import LocalStore, read_snapshot  # noqa: E402

SCALAR = "capture_scalar_outputs"


def earlier(snapshot: Snapshot, days: int, key: str) -> Snapshot:
    """`snapshot` as a nightly `days` before it, under `key`, with the edits the docstring names."""
    copy = snapshot.model_copy(deep=True)
    copy.key = key
    copy.created = snapshot.created - timedelta(days=days)
    copy.environment.torch_version = key
    copy.environment.torch_git_version = hashlib.sha1(key.encode()).hexdigest()
    for result in copy.results:
        if result.model.startswith("Mistral3"):
            graphs = result.outcomes[BASELINE].graphs or 2
            result.outcomes[SCALAR] = Outcome(status=Status.ok, graphs=graphs - 1, ops=300, seconds=9.0)
            result.confirmations.pop(SCALAR, None)
        if result.model.startswith("Qwen2VL") and days >= 2:
            result.outcomes[BASELINE].graphs = (result.outcomes[BASELINE].graphs or 0) + 2
    if days >= 3:
        copy.results = [result for result in copy.results if result.model != "PatchTSTModel"]
    copy.corpus.models = [result.model for result in copy.results]
    copy.reproductions = [repro for repro in copy.reproductions if repro.model in copy.corpus.models]
    return copy


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("snapshot", type=Path, help="A snapshot of the smoke corpus (triagebot run).")
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="Folder for the PNGs.")
    args = parser.parse_args()

    latest = read_snapshot(args.snapshot)
    work = Path(tempfile.mkdtemp(prefix="triagebot-screenshots-"))
    store = LocalStore(work / "store")
    day = latest.created.date()
    keys = [f"2.13.0.dev{day - timedelta(days=n):%Y%m%d}+cpu" for n in (3, 2, 1)]
    for days, key in zip((3, 2, 1), keys, strict=True):
        store.put(earlier(latest, days, key))
    store.put(latest)
    site = work / "site"
    build_site(store, site, Config(), say=lambda line: None)
    mistral = next(r.model for r in latest.results if r.model.startswith("Mistral3"))
    pages = {
        "dashboard-index.png": links.INDEX,
        "dashboard-flag.png": links.flag_page(SCALAR),
        "dashboard-model.png": links.model_page(mistral),
        # Mistral 3 starts crashing in the newest nightly.
        "dashboard-compare.png": links.compare_page(keys[2], latest.key),
    }
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 900}, device_scale_factor=1)
        for name, target in pages.items():
            page.goto((site / target).as_uri())
            page.wait_for_load_state("load")
            height = min(1500, page.evaluate("document.documentElement.scrollHeight"))
            page.set_viewport_size({"width": 1280, "height": height})
            page.screenshot(path=str(args.out / name))
            page.set_viewport_size({"width": 1280, "height": 900})
            print(args.out / name)
        browser.close()
    print(f"site: {site / 'index.html'}")


if __name__ == "__main__":
    main()
