"""The dashboard site as a person uses it: opened from disk in a real headless Chromium.

The browser is Debian's `chromium` package, driven by Playwright (the dev extra) through
`executable_path`; Playwright's own browser download is never used. Every page must load with
no console error and no request leaving the site's folder; sorting and filtering change the
rows a person sees; every chart draws, with both axes titled; the links that the issue bodies,
notices, summary and rerun answers of the newest night make to the site, read from those texts,
land on a page and an anchor that exist; comparing any two nightlies in the browser
agrees with triagebot's own diff. Screenshots go to `--screenshots DIR` (default: pytest's tmp
folder; the folder is printed at the end of the run).

Without Chromium or Playwright the tests are skipped with the reason, except where
`TRIAGEBOT_REQUIRE_BROWSER=1` (as `.ci/run` sets it after installing both): there they fail.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from builders import night_of

from tests.sitestore import HOSTILE, LIBRARY, LIBRARY_REPRO, make_store, nightlies, third_snapshot
from tests.snapshots import DYNAMIC, SCALAR
from triagebot.analysis import CRASH_EFFECTS, classify, diff
from triagebot.config import Config, TrackerSettings
from triagebot.pipeline import build_site
from triagebot.report import fixed_notice, issue_body, links, nightly_summary, regression_notice, words
from triagebot.results import Effect, Night
from triagebot.tracker.answer import answer_body

LAST_STORED = third_snapshot().created  # the newest nightly of the site's store
THE_NEXT_MORNING = LAST_STORED + timedelta(hours=20)
CHROMIUM = Path(os.environ.get("TRIAGEBOT_CHROMIUM", "/usr/bin/chromium"))
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REQUIRED = os.environ.get("TRIAGEBOT_REQUIRE_BROWSER") == "1"
BASE = "https://someone.github.io/triagebot/"  # where the issue bodies say the site is
OLD, NEW, THIRD = (snapshot.key for snapshot in nightlies())


def unavailable(reason: str) -> None:
    message = (
        f"the dashboard's browser test cannot run: {reason}. Install Debian's Chromium "
        "(`apt-get install chromium`) and the dev extra (`pip install -e '.[dev]'`); .ci/run does both"
    )
    if REQUIRED:
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        unavailable("the Python package playwright is not installed")
    if not CHROMIUM.is_file():
        unavailable(f"{CHROMIUM} does not exist")
    with sync_playwright() as playwright:
        try:
            launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        except Error as error:
            unavailable(f"{CHROMIUM} did not start: {str(error).splitlines()[0]}")
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("browser-site")
    build_site(make_store(root / "store"), root / "site", Config(), say=lambda line: None)
    return root / "site"


@pytest.fixture(scope="module")
def screenshots(request, tmp_path_factory) -> Path:
    chosen = request.config.getoption("--screenshots")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    request.config.triagebot_screenshots = folder
    return folder


class Visit:
    """A page opened from disk, with every console error, script error and outside request."""

    def __init__(
        self, browser, site: Path, name: str, javascript: bool = True, now: datetime = THE_NEXT_MORNING
    ) -> None:
        size = {"width": 1280, "height": 900}
        self.context = browser.new_context(viewport=size, java_script_enabled=javascript)
        self.page = self.context.new_page()
        self.page.clock.set_fixed_time(now)  # the reader's clock: the watchdog's line depends on it
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(f"console: {m.text}"))
        self.page.on("pageerror", lambda e: self.errors.append(f"script: {e}"))
        self.page.on("requestfailed", lambda r: self.errors.append(f"failed: {r.url} {r.failure}"))

        def guard(route):
            if route.request.url.startswith(("file://", "data:")):
                route.continue_()
            else:
                self.outside.append(route.request.url)
                route.abort()

        self.page.route("**/*", guard)
        self.open(site / name)

    def open(self, path: Path) -> None:
        self.page.goto(path.as_uri())
        self.page.wait_for_load_state("load")

    def shot(self, folder: Path, name: str) -> None:
        self.page.screenshot(path=str(folder / f"{name}.png"), full_page=True)

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def visit(browser, site):
    opened: list[Visit] = []

    def open_page(name: str, javascript: bool = True, now: datetime = THE_NEXT_MORNING) -> Visit:
        opened.append(Visit(browser, site, name, javascript, now))
        return opened[-1]

    yield open_page
    for page in opened:
        page.close()


def visible_models(visit: Visit, table: str) -> list[str]:
    return visit.page.eval_on_selector_all(
        f"#{table} tbody tr:not([hidden])", "rows => rows.map(row => row.dataset.model)"
    )


# --- every page loads, from disk, with nothing from outside -----------------------------------------


def test_every_page_loads_without_a_console_error(visit, site: Path, screenshots: Path):
    pages = sorted(path.relative_to(site).as_posix() for path in site.rglob("*.html"))
    assert len(pages) >= 20
    kinds = {
        links.INDEX: "index",
        links.flag_page(DYNAMIC): "flag",
        links.model_page("Qwen2VLForConditionalGeneration"): "model",
        links.compare_page(NEW, THIRD): "compare",
        links.MODELS: "models",
    }
    page = visit(links.INDEX)
    for name in pages:
        page.open(site / name)
        assert page.errors == [], f"{name}: {page.errors}"
        assert page.outside == [], f"{name} asked for {page.outside}"
        assert page.page.title().endswith("· triagebot"), name
        if name in kinds:
            page.shot(screenshots, kinds[name])


def test_tables_read_without_javascript(visit):
    page = visit(links.flag_page(SCALAR), javascript=False)
    rows = page.page.locator("#effects tbody tr")
    latest = nightlies()[-1]
    assert rows.count() == sum(SCALAR in result.outcomes for result in latest.results)
    assert rows.first.is_visible()
    # The charts (the flag across nightlies, tonight's compile times) need a script; the tables do not.
    assert page.page.locator("canvas").count() == 2
    assert page.page.locator("#compile-risers tbody tr").first.is_visible()


# --- sorting and filtering ---------------------------------------------------------------------------


def test_sorting_changes_the_order_of_the_rows(visit, screenshots: Path):
    page = visit(links.flag_page(SCALAR))
    before = visible_models(page, "effects")
    header = page.page.locator("#effects thead th", has_text="Baseline graphs")
    header.click()
    ascending = visible_models(page, "effects")
    graphs = page.page.eval_on_selector_all(
        "#effects tbody tr", "rows => rows.map(row => row.cells[3].dataset.value)"
    )
    numbers = [int(value) for value in graphs if value]
    assert numbers == sorted(numbers) and graphs[-1] == ""  # blanks last
    header.click()
    descending = visible_models(page, "effects")
    assert ascending != before and descending != ascending
    assert header.get_attribute("aria-sort") == "descending"
    page.page.locator("#effects thead th", has_text="Model").click()
    assert visible_models(page, "effects") == sorted(before, key=str.lower)
    page.shot(screenshots, "flag-sorted")


def test_filtering_changes_the_visible_rows(visit, screenshots: Path):
    page = visit(links.flag_page(DYNAMIC))
    every = visible_models(page, "effects")
    form = page.page.locator('form.filters[data-table="effects"]')
    form.locator('select[data-column="effect"]').select_option("crashes")
    crashing = visible_models(page, "effects")
    rows = [row for row in classify(nightlies()[-1]) if row.flag == DYNAMIC]
    assert sorted(crashing) == sorted(row.model for row in rows if row.effect == Effect.crashes)
    assert form.locator("output").inner_text() == f"{len(crashing)} of {len(every)} rows"
    form.locator('select[data-column="effect"]').select_option("")
    form.locator('select[data-column="stratum"]').select_option("vl")
    assert sorted(visible_models(page, "effects")) == sorted(row.model for row in rows if row.stratum == "vl")
    form.locator('select[data-column="stratum"]').select_option("")
    form.locator('input[data-column="model"]').fill("qwen2")
    assert visible_models(page, "effects") == ["Qwen2VLForConditionalGeneration"]
    form.locator('input[data-column="model"]').fill("")
    signature = next(row.signature for row in rows if row.model == "Qwen2VLForConditionalGeneration")
    form.locator('select[data-column="signature"]').select_option(signature)
    assert visible_models(page, "effects") == [r.model for r in rows if r.signature == signature]
    page.shot(screenshots, "flag-filtered")

    models = visit(links.MODELS)
    everyone = visible_models(models, "models")
    models.page.locator('form.filters select[data-column="effect"]').select_option("reduces_graphs")
    helped = visible_models(models, "models")
    assert helped and len(helped) < len(everyone)


# --- charts ------------------------------------------------------------------------------------------

CHART_STATE = """canvas => {
  const chart = Chart.getChart(canvas);
  const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  let painted = 0;
  for (let i = 3; i < pixels.length; i += 4) { if (pixels[i]) { painted++; } }
  return {
    type: chart.config.type, drawn: canvas.dataset.drawn, painted: painted, width: canvas.width,
    x: chart.scales.x.options.title.text, y: chart.scales.y.options.title.text,
    xTicks: chart.scales.x.ticks.length, yTicks: chart.scales.y.ticks.length,
    legend: chart.legend.legendItems.map(item => item.text),
    labels: chart.data.labels,
  };
}"""


def test_every_chart_draws_with_axes_and_a_legend(visit, site: Path):
    charted = [path for path in site.rglob("*.html") if "<canvas" in path.read_text(encoding="utf-8")]
    charted_names = {path.relative_to(site).as_posix() for path in charted}
    assert {links.INDEX, links.flag_page(SCALAR), links.model_page("Qwen2VLForConditionalGeneration")} <= (
        charted_names
    )
    assert links.model_page(HOSTILE) not in charted_names  # swept in one nightly: one point, no chart
    page = visit(links.INDEX)
    for path in charted:
        page.open(path)
        canvases = page.page.locator("canvas[data-chart]")
        assert canvases.count() > 0
        for index in range(canvases.count()):
            state = canvases.nth(index).evaluate(CHART_STATE)
            where = f"{path.name} chart {index}"
            assert state["drawn"] == "true", where
            assert state["painted"] > 0.01 * state["width"] * 100, f"{where}: blank canvas"
            assert state["xTicks"] > 0 and state["yTicks"] > 1, where
            assert state["legend"], where
            if state["type"] == "bar":  # tonight's compile times, flag over baseline, binned
                assert state["x"].startswith("compile seconds") and state["y"], where
                assert state["labels"], where
                continue
            assert state["x"] == "nightly" and state["y"], where
            # Full nightly keys, never shortened.
            assert set(state["labels"]) <= {OLD, NEW, THIRD}, where
    assert page.errors == []


# --- links from an issue body --------------------------------------------------------------------


def newest_night() -> Night:
    """The night the site renders, as `triagebot run` publishes it with the dashboard at BASE."""
    config = Config(tracker=TrackerSettings(dashboard_url=BASE))
    return night_of(nightlies()[-1], nightlies(), config)


def night_of_a_fix() -> Night:
    """The newest night after a week of nightlies in which T5 crashed under the dynamic flag
    (the previous nightly's builds, earlier keys), so that its clean run tonight is a fix: a
    crash younger than a week is not said fixed the next night."""
    crashing = nightlies()[-2]
    week = [
        crashing.model_copy(
            update={
                "key": f"2.12.0.dev2026040{day}+cu128",
                "created": crashing.created - timedelta(days=9 - day),
                "environment": crashing.environment.model_copy(
                    update={"torch_version": f"2.12.0.dev2026040{day}+cu128"}
                ),
            }
        )
        for day in range(1, 7)
    ]
    config = Config(tracker=TrackerSettings(dashboard_url=BASE, close_after=1))
    return night_of(nightlies()[-1], [*week, crashing, nightlies()[-1]], config)


def what_the_night_publishes() -> dict[str, str]:
    """Every text the newest night publishes, rendered as the tracker renders it: the issue
    bodies, the notices, the summary, and the answer to a rerun of the newest nightly."""
    latest, before = nightlies()[-1], nightlies()[-2]
    tonight = newest_night()
    texts = {f"issue {flag}": issue_body(tonight, flag) for flag in (SCALAR, DYNAMIC)}
    texts["fixed"] = fixed_notice(night_of_a_fix(), DYNAMIC)
    texts["regression"] = regression_notice(tonight, DYNAMIC)
    texts["summary"] = nightly_summary(tonight)
    texts["answer"] = answer_body(7, "someone", latest, before, None, dashboard_url=BASE)
    assert all(texts.values()), [name for name, text in texts.items() if not text]
    return texts


def site_links(text: str) -> list[str]:
    """The addresses on the site that `text` links to (Markdown links and bare addresses)."""
    return re.findall(rf"{re.escape(BASE)}[^\s)>\]]*", text)


def test_the_published_texts_link_every_model_group_and_comparison():
    texts = what_the_night_publishes()
    found = {name: site_links(text) for name, text in texts.items()}
    tonight = newest_night()
    for flag, state in tonight.flags.items():
        groups = state.stats.crash_groups
        wanted = {links.crash_group(flag, group.signature) for group in groups}
        wanted |= {links.model_page(model) for group in groups for model in group.models}
        wanted |= {links.model_page(row.model) for row in state.helped} | {links.flag_page(flag)}
        assert {links.site_url(BASE, page) for page in wanted} <= set(found[f"issue {flag}"]), flag
    compared = links.site_url(BASE, links.compare_page(tonight.previous_key, tonight.key))
    for name in ("fixed", "regression", "summary"):
        assert compared in found[name], name
    assert links.site_url(BASE, links.model_page("GPT2LMHeadModel")) in found["regression"]
    assert links.site_url(BASE, links.model_page("T5ForConditionalGeneration")) in found["fixed"]
    assert links.site_url(BASE, links.model_page("ScriptyModel")) in found["answer"]


@pytest.mark.parametrize(
    "name", ["issue " + SCALAR, "issue " + DYNAMIC, "fixed", "regression", "summary", "answer"]
)
def test_links_from_an_issue_body_land_on_existing_pages_and_anchors(visit, site: Path, name: str):
    """Every link the published texts make to the site, read from the texts themselves."""
    targets = site_links(what_the_night_publishes()[name])
    assert targets, f"the {name} does not link to the site"
    if name.startswith("issue"):
        assert any("#crash-" in target for target in targets)
    page = visit(links.INDEX)
    for target in dict.fromkeys(targets):
        path, _, anchor = target[len(BASE) :].partition("#")
        file = site / (path or links.INDEX)
        assert file.is_file(), f"{target} is not a page of the site"
        page.open(file)
        assert page.errors == []
        if anchor:
            assert page.page.locator(f"#{anchor}").count() == 1, f"{target}: no element with that id"
            page.page.goto(f"{file.as_uri()}#{anchor}")
            assert page.page.locator(f"#{anchor}").is_visible()


# --- comparing any two nightlies -----------------------------------------------------------------


COMPARE = """async ([old, now]) => {
  const a = await triagebotSite.load(old), b = await triagebotSite.load(now);
  const result = triagebotSite.compare(a, b);
  const names = rows => rows.map(row => row.model).sort();
  const flags = {};
  for (const [flag, moved] of Object.entries(result.flags)) {
    flags[flag] = Object.fromEntries(Object.entries(moved).map(([kind, rows]) => [kind, names(rows)]));
  }
  const baseline = names(result.baseline);
  return {added: result.added.sort(), removed: result.removed.sort(), baseline, flags};
}"""


@pytest.mark.parametrize("pair", [(0, 1), (1, 2), (0, 2)])
def test_comparing_in_the_browser_agrees_with_triagebots_diff(visit, pair: tuple[int, int]):
    old, new = nightlies()[pair[0]], nightlies()[pair[1]]
    expected = diff(old, new)
    page = visit(links.COMPARE)
    found = page.page.evaluate(COMPARE, [old.key, new.key])
    assert found["added"] == sorted(expected.models_added)
    assert found["removed"] == sorted(expected.models_removed)
    assert found["baseline"] == sorted(change.model for change in expected.baseline_graph_changes)
    assert set(found["flags"]) == set(expected.flags)
    for flag, moved in expected.flags.items():
        for kind in ("newly_crashing", "fixed", "signature_changes", "effect_changes", "graph_changes"):
            assert found["flags"][flag][kind] == sorted(c.model for c in getattr(moved, kind)), (flag, kind)
    assert page.errors == []


REORDERED = """async ([old, now]) => {
  const a = await triagebotSite.load(old), b = await triagebotSite.load(now);
  const fields = triagebotSite.settings.fields, given = {model: fields.model, run: fields.run};
  const asGiven = JSON.stringify(triagebotSite.compare(a, b));
  // The same nightlies with every model's and every run's array in the opposite order, and the
  // names the page gives for them reversed alike.
  const reverse = data => ({...data, models: data.models.map(values => {
    const row = Object.fromEntries(given.model.map((name, i) => [name, values[i]]));
    row.runs = row.runs.map(run => run && [...run].reverse());
    return given.model.map(name => row[name]).reverse();
  })});
  fields.model = [...given.model].reverse();
  fields.run = [...given.run].reverse();
  const reversed = JSON.stringify(triagebotSite.compare(reverse(a), reverse(b)));
  Object.assign(fields, given);
  return [asGiven, reversed];
}"""


def test_the_compare_view_reads_a_data_files_arrays_by_the_names_the_page_gives(visit):
    """The data files keep `ModelNight` and `Run` as arrays; the compare view reads them by the
    field names the page's settings list (from their one declaration), not by position."""
    old, new = nightlies()[0], nightlies()[2]
    page = visit(links.COMPARE)
    as_given, reversed_ = page.page.evaluate(REORDERED, [old.key, new.key])
    assert as_given == reversed_
    # Not an empty comparison: it reads graphs and signatures out of the runs.
    result, expected = json.loads(as_given), diff(old, new)
    assert [row["model"] for row in result["baseline"]] == [c.model for c in expected.baseline_graph_changes]
    moved = [(c.model, c.old_signature, c.new_signature) for c in expected.flags[DYNAMIC].signature_changes]
    found = result["flags"][DYNAMIC]["signature_changes"]
    assert moved and [(row["model"], row["oldSignature"], row["newSignature"]) for row in found] == moved
    assert page.errors == []


def test_the_compare_view_opens_a_consecutive_pair_and_draws_any_other(visit, site: Path, screenshots: Path):
    page = visit(links.COMPARE)
    page.page.select_option("#compare-old", OLD)
    page.page.select_option("#compare-new", THIRD)
    page.page.click("#compare-form button")
    page.page.wait_for_selector("#compared")
    assert page.page.locator("#compare-result table").count() > 0
    fixed = page.page.locator("#compare-result h3.flag", has_text=DYNAMIC)
    assert fixed.count() == 1
    assert page.errors == [] and page.outside == []
    old_git, _, new_git = (snapshot.environment.torch_git_version for snapshot in nightlies())
    commits = page.page.locator("#compare-result a", has_text=old_git[:12])
    assert (
        commits.get_attribute("href") == f"https://github.com/pytorch/pytorch/compare/{old_git}...{new_git}"
    )
    page.shot(screenshots, "compare-any")
    page.page.select_option("#compare-old", NEW)
    page.page.click("#compare-form button")
    page.page.wait_for_url(re.compile(re.escape(Path(links.compare_page(NEW, THIRD)).name)))
    assert page.page.locator("h1").inner_text() == f"{NEW} → {THIRD}"


def test_a_crashing_model_links_to_its_crash_group(visit, site: Path):
    row = next(r for r in classify(nightlies()[-1]) if r.flag == SCALAR and r.effect in CRASH_EFFECTS)
    page = visit(links.model_page(row.model))
    page.page.locator("#errors a", has_text="its crash group").first.click()
    page.page.wait_for_load_state("load")
    assert page.page.url.endswith(links.crash_group(SCALAR, row.signature))
    assert page.page.locator(f"#{links.crash_anchor(row.signature)}").is_visible()


def test_a_library_finding_reads_as_transformers_never_as_a_wrong_result(visit, screenshots: Path):
    """The model page of a model whose eager disagrees with itself says which side is wrong, the
    cross-checks that ran and what each gave, the repro's state, and never "wrong result"."""
    [finding] = night_of(third_snapshot()).health.library_findings
    page = visit(links.model_page(LIBRARY))
    page.shot(screenshots, "model-library-finding")
    section = page.page.locator("#library-finding")
    text = section.inner_text()
    assert finding.title in text and words.library_verdict(finding) in text
    checks = page.page.locator("#cross-checks li").all_inner_texts()
    assert checks == [words.cross_check(finding, check) for check in finding.cross_checks]
    assert checks[0].endswith("differ (2.79 </li><b>x)")  # markup in a detail stays text
    assert page.page.locator("#library-repro").inner_text().startswith("Repro: verified (no torch.compile)")
    section.locator("summary").click()
    assert section.locator("pre code").inner_text() == LIBRARY_REPRO.script
    assert "wrong result" not in page.page.locator("body").inner_text().lower()
    assert page.page.locator("#library-finding script, #library-finding b").count() == 0
    assert page.errors == [] and page.outside == []


# --- the index at a glance, colours that mean one thing, a comparison in the address ----------------


def test_the_index_answers_at_a_glance_on_a_1280_pixel_screen(visit, screenshots: Path):
    page = visit(links.INDEX)
    tonight = newest_night()
    width = page.page.evaluate("document.documentElement.clientWidth")
    assert page.page.evaluate("document.documentElement.scrollWidth") <= width  # nothing off screen
    for flag, state in tonight.flags.items():
        row = page.page.locator(f'#flag-table tr[data-flag="{flag}"]')
        diff = row.locator("td.diff").bounding_box()
        assert diff["x"] + diff["width"] <= width and diff["y"] + diff["height"] <= 900, flag
        verdict = row.locator(".verdict")
        assert verdict.inner_text() == ("Ready" if state.verdict.ready else "Not ready")
        colour = verdict.evaluate("node => getComputedStyle(node).color")
        assert colour == ("rgb(17, 99, 41)" if state.verdict.ready else "rgb(164, 14, 38)"), colour
        for change in state.diff.newly_crashing:  # named, and linked to the model's page
            link = row.locator("td.diff a", has_text=change.model)
            assert link.get_attribute("href") == links.model_page(change.model)
        checked = state.figures.outputs_checked  # the fixture's sweep compared no outputs
        wrong = words.of(state.figures.wrong_results, state.figures) if checked else "not checked"
        assert row.locator("td.wrong").inner_text() == wrong
    assert "GPT2LMHeadModel" in page.page.locator(f'#flag-table tr[data-flag="{DYNAMIC}"]').inner_text()
    page.shot(screenshots, "index-at-a-glance")


def test_crash_is_red_and_helped_green_in_every_chart(visit, site: Path):
    page = visit(links.INDEX)
    for name in (links.INDEX, links.flag_page(SCALAR)):
        page.open(site / name)
        colours = page.page.eval_on_selector_all(
            "canvas[data-chart]",
            "cs => cs.flatMap(c => Chart.getChart(c).data.datasets.map(d => [d.label, d.borderColor]))",
        )
        for label, colour in colours:
            if "crash" in label:
                assert colour == "#cf222e", (name, label)
            elif "helped" in label or "fewer graphs" in label:
                assert colour == "#1a7f37", (name, label)
            else:
                assert colour not in ("#cf222e", "#1a7f37"), (name, label)


def test_a_flag_page_has_its_verdict_and_the_stacks_sections(visit):
    page = visit(links.flag_page(DYNAMIC))
    for section in ("verdict", "crash-groups", "wrong-results", "ladder", "recompiles", "overlap"):
        assert page.page.locator(f"#{section}").count() == 1, section
    state = newest_night().flags[DYNAMIC]
    assert words.verdict_clause(state.figures, state.verdict, state.stats.crash_groups) in (
        page.page.locator("#verdict").inner_text()
    )
    new = page.page.locator("section.crash-group .new")
    assert new.count() >= 1  # GPT-2 crashes for the first time tonight


def test_a_comparison_lives_in_the_address(visit, site: Path):
    address = (site / links.COMPARE).as_uri()
    page = visit(links.COMPARE)
    page.page.goto(f"{address}#old={OLD}&new={THIRD}".replace("+", "%2B"))
    page.page.wait_for_selector("#compared")
    assert page.page.locator("#compared").inner_text() == f"{OLD} → {THIRD}"
    assert page.page.locator("#compare-old").input_value() == OLD
    joined = page.page.locator("#models-added")
    added = diff(nightlies()[0], nightlies()[2]).models_added
    assert joined.inner_text().startswith(f"{len(added)} models joined the corpus: ")
    assert joined.locator("a").count() == len(added)  # each named, linked to its page
    # A pair chosen in the form goes into the address, where a link can take it.
    again = visit(links.COMPARE)
    again.page.select_option("#compare-old", THIRD)
    again.page.select_option("#compare-new", OLD)
    again.page.click("#compare-form button")
    again.page.wait_for_selector("#compared")
    hash_ = again.page.evaluate("decodeURIComponent(window.location.hash)")
    assert hash_ == f"#old={OLD}&new={THIRD}"
    assert page.errors == [] and again.errors == []


def test_plurals_read_right(visit, site: Path):
    page = visit(links.model_page(HOSTILE))
    lede = page.page.locator("p.lede").inner_text()
    assert "swept in 1 of 3 stored nightlies" in lede
    index = visit(links.INDEX).page.locator("main").inner_text()
    assert not re.search(r"\b1 (models|nightlies|graphs|flags)\b", index)
    assert not re.search(r"[a-z]\.[A-Z]", index.replace("e.g.", ""))  # a missing space after a sentence


# --- the watchdog -------------------------------------------------------------------------------


def test_a_reader_days_after_the_last_nightly_is_told_none_came_since(visit, screenshots: Path):
    fresh = visit("index.html")  # the morning after: nothing to say
    assert fresh.page.is_hidden("#silence")
    late = visit("models.html", now=LAST_STORED + timedelta(days=4, hours=1))
    assert late.page.is_visible("#silence")
    said = late.page.inner_text("#silence")
    assert said.startswith("No nightly stored for 4 days (over 3): the last is " + third_snapshot().key)
    assert "stored 2026-04-10" in said
    late.shot(screenshots, "silence")
    # without JavaScript the page cannot know its age, and says nothing rather than something wrong
    assert visit("models.html", javascript=False, now=LAST_STORED + timedelta(days=9)).page.is_hidden(
        "#silence"
    )


# --- read as a person reads it: names, words, charts and tables at 1280 pixels ----------------------

# The characters after which a line of `element`'s text breaks, as the browser laid it out.
LINE_BREAKS = r"""element => {
  const breaks = [];
  let previous = null;
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.length; i++) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const box = range.getBoundingClientRect();
      if (!box.width) {  /* a space at the end of a line takes no room: the line broke there */
        if (previous && /\s/.test(node.data[i])) { previous.character = " "; }
        continue;
      }
      if (previous && box.top > previous.top + previous.height / 2) { breaks.push(previous.character); }
      previous = { top: box.top, height: box.height, character: node.data[i] };
    }
  }
  return breaks;
}"""


@pytest.mark.parametrize("width", [1280, 900])
def test_flag_names_wrap_only_after_an_underscore(browser, site: Path, width: int):
    pages = [
        links.INDEX,
        links.MODELS,
        links.model_page("Qwen2VLForConditionalGeneration"),
        links.compare_page(NEW, THIRD),
    ]
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    wrapped = 0
    for name in pages:
        page.goto((site / name).as_uri())
        cells = page.locator("main th, main td", has_text=re.compile(f"{SCALAR}|{DYNAMIC}"))
        for index in range(cells.count()):
            cell = cells.nth(index)
            breaks = cell.evaluate(LINE_BREAKS)
            wrapped += len(breaks)
            assert set(breaks) <= {"_", " "}, (
                f"{name} at {width} px: {cell.inner_text()!r} breaks after {breaks}"
            )
    context.close()
    assert wrapped  # some names did wrap, where the test can see them


# Whether each chart draws a smaller point over a larger one, never under it, where two series
# meet; and its legend in the series' own order.
MARKERS = """canvas => {
  const chart = Chart.getChart(canvas);
  const drawn = chart.getSortedVisibleDatasetMetas().map(meta => meta.index).reverse();
  const sets = chart.data.datasets;
  const hidden = [];
  sets.forEach((under, i) => sets.forEach((over, j) => {
    if (drawn.indexOf(j) <= drawn.indexOf(i)) { return; }
    under.data.forEach((value, x) => {
      if (value !== null && value === over.data[x] && over.pointRadius >= under.pointRadius) {
        hidden.push(under.label + " under " + over.label + " at " + chart.data.labels[x]);
      }
    });
  }));
  const legend = chart.legend.legendItems.map(item => item.text);
  return { hidden: hidden, legend: legend, series: sets.map(set => set.label) };
}"""


def test_a_point_is_never_hidden_under_another_series_point(visit, site: Path):
    page = visit(links.INDEX)
    met = 0
    for name in (
        links.INDEX,
        links.flag_page(SCALAR),
        links.flag_page(DYNAMIC),
        links.model_page("Qwen2VLForConditionalGeneration"),
    ):
        page.open(site / name)
        canvases = page.page.locator("canvas[data-chart]")
        for index in range(canvases.count()):
            state = canvases.nth(index).evaluate(MARKERS)
            assert state["hidden"] == [], f"{name}: {state['hidden']}"
            assert state["legend"] == state["series"], name
            met += 1
    assert met >= 4


def test_tables_fit_the_page_or_scroll_in_their_box(visit, site: Path):
    page = visit(links.INDEX)
    for path in sorted(site.rglob("*.html")):
        page.open(path)
        state = page.page.evaluate(
            """() => {
              const width = document.documentElement.clientWidth;
              const clipped = [];
              document.querySelectorAll("table").forEach(table => {
                if (table.getBoundingClientRect().right <= width) { return; }
                let box = table.parentElement;
                const scrolls = node => ["auto", "scroll"].includes(getComputedStyle(node).overflowX);
                while (box && !scrolls(box)) { box = box.parentElement; }
                if (!box || box.getBoundingClientRect().right > width) { clipped.push(table.id || "table"); }
              });
              return { page: document.documentElement.scrollWidth - width, clipped: clipped };
            }"""
        )
        assert state == {"page": 0, "clipped": []}, path.relative_to(site)


def test_a_comparison_drawn_in_the_browser_says_effects_in_words(visit, site: Path):
    page = visit(links.COMPARE)
    page.page.goto(f"{(site / links.COMPARE).as_uri()}#old={OLD}&new={THIRD}".replace("+", "%2B"))
    page.page.wait_for_selector("#compared")
    shown = page.page.locator("#compare-result").inner_text()
    assert "no effect" in shown or "fewer graphs" in shown
    assert not [effect.value for effect in Effect if "_" in effect.value and effect.value in shown]
