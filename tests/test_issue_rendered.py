"""Every issue body of the committed smoke night as a person sees it on GitHub: rendered as
GitHub-flavoured Markdown (markdown-it-py's CommonMark with its GFM tables and raw HTML, so that
`<details>` folds) into a 1012 px column styled like GitHub's, in headless Chromium. What is
above the first collapsed section fits one screen, and no table is wider than the column.

The browser is Debian's `chromium`, driven by Playwright, as in `test_site_browser.py`; without
either the tests are skipped with the reason (they fail where `TRIAGEBOT_REQUIRE_BROWSER=1`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from triagebot import pipeline
from triagebot.config import Config, with_site_url
from triagebot.store import MemoryStore, read_snapshot
from triagebot.tracker.desired import desired_issues

SMOKE = Path(__file__).parent / "data" / "smoke-2.13.0+cpu.json"
CHROMIUM = Path(os.environ.get("TRIAGEBOT_CHROMIUM", "/usr/bin/chromium"))
REQUIRED = os.environ.get("TRIAGEBOT_REQUIRE_BROWSER") == "1"
COLUMN = 1012  # GitHub's issue column, in CSS pixels
SCREEN = 1000  # what a laptop shows of it without scrolling
# The parts of GitHub's `markdown-body` style that decide heights and widths.
GITHUB_CSS = f"""
body {{ margin: 0; }}
.markdown-body {{ width: {COLUMN}px; box-sizing: border-box; padding: 16px;
  font-family: -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif;
  font-size: 14px; line-height: 1.5; overflow-wrap: break-word; }}
.markdown-body h2 {{ font-size: 1.5em; line-height: 1.25; margin: 24px 0 16px; padding-bottom: .3em;
  border-bottom: 1px solid #d1d9e0; }}
.markdown-body h3 {{ font-size: 1.25em; line-height: 1.25; margin: 24px 0 16px; }}
.markdown-body p, .markdown-body ul, .markdown-body ol, .markdown-body table, .markdown-body pre,
.markdown-body details {{ margin-top: 0; margin-bottom: 16px; }}
.markdown-body ul, .markdown-body ol {{ padding-left: 2em; }}
.markdown-body table {{ display: block; width: max-content; max-width: 100%; overflow: auto;
  border-collapse: collapse; border-spacing: 0; }}
.markdown-body td, .markdown-body th {{ padding: 6px 13px; border: 1px solid #d1d9e0; }}
.markdown-body code {{ font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 85%;
  padding: .2em .4em; }}
.markdown-body pre {{ padding: 16px; overflow: auto; font-size: 85%; line-height: 1.45; }}
"""


def bodies() -> dict[str, str]:
    """Every issue the smoke night's run would write, by flag (and the health issue)."""
    snapshot = read_snapshot(SMOKE)
    config = with_site_url(Config(), {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "OWNER/REPO"})
    night = pipeline.night_of(snapshot, MemoryStore([snapshot]), config)
    return {issue.flag: issue.body for issue in desired_issues(night, config.tracker)}


def as_github_shows(body: str) -> str:
    """`body` as an HTML page: GitHub-flavoured Markdown in GitHub's column."""
    markdown = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    article = f"<article class='markdown-body'>{markdown.render(body)}</article>"
    return f"<html><head><style>{GITHUB_CSS}</style></head><body>{article}</body></html>"


@pytest.fixture(scope="module")
def page():
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        return _unavailable("the Python package playwright is not installed")
    if not CHROMIUM.is_file():
        return _unavailable(f"{CHROMIUM} does not exist")
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"]
            )
        except Error as error:
            return _unavailable(f"{CHROMIUM} did not start: {str(error).splitlines()[0]}")
        opened = browser.new_page(viewport={"width": COLUMN, "height": SCREEN})
        yield opened
        browser.close()


def _unavailable(reason: str) -> None:
    message = f"the issue bodies cannot be rendered: {reason} (Debian's chromium and the dev extra)"
    if REQUIRED:
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


MEASURE = """() => {
    const article = document.querySelector("article");
    const first = article.querySelector("details");
    const above = (first ? first.getBoundingClientRect().top : article.getBoundingClientRect().bottom)
        - article.getBoundingClientRect().top;
    article.querySelectorAll("details").forEach((details) => { details.open = true; });
    const wide = [...article.querySelectorAll("table")]
        .filter((table) => table.scrollWidth > table.clientWidth + 1)
        .map((table) => table.querySelector("tr").innerText.slice(0, 80));
    return {above: Math.round(above), wide: wide};
}"""


@pytest.mark.parametrize("flag", sorted(bodies()))
def test_each_issue_fits_a_screen_above_its_first_fold_and_no_table_overflows(page, flag):
    page.set_content(as_github_shows(bodies()[flag]))
    measured = page.evaluate(MEASURE)
    assert measured["above"] <= SCREEN, f"{flag}: {measured['above']} px above the first <details>"
    assert measured["wide"] == [], f"{flag}: tables wider than the {COLUMN} px column"


def test_the_issue_of_a_night_of_two_suites_fits_as_one_suite_s_does(page):
    from builders import SCALAR, night_of
    from test_suites_night import suites_night

    night = night_of(suites_night(suites={"transformers": 180, "diffusers": 40}))
    (body,) = [issue.body for issue in desired_issues(night, Config().tracker) if issue.flag == SCALAR]
    page.set_content(as_github_shows(body))
    measured = page.evaluate(MEASURE)
    assert measured["above"] <= SCREEN, f"{measured['above']} px above the first <details>"
    assert measured["wide"] == [], f"tables wider than the {COLUMN} px column"
    shown = page.inner_text("article")
    assert "15 models crash (12 of 180 transformers models, 3 of 40 diffusers models; " in shown
    if os.environ.get("TRIAGEBOT_SCREENSHOT"):  # to look at it: a PNG of the column, folds open
        page.screenshot(path=os.environ["TRIAGEBOT_SCREENSHOT"], full_page=True)
