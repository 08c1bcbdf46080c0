"""One night, every surface, one set of numbers: the issue title and body, the step summary, the
report folder (`triagebot report`), the site's index, flag pages and model pages all print each
flag's figures from `FlagNight.figures`, each share beside the denominator it is over."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from builders import night_of

from tests.sitestore import make_store, nightlies
from triagebot.config import Config, TrackerSettings
from triagebot.pipeline import build_site
from triagebot.report import links, run_summary, words, write_report
from triagebot.results import Night
from triagebot.tracker.desired import desired_issues

SHARE = re.compile(r"(\d+) of (\d+) (testable models|models it could affect) \((\d+(?:\.\d+)?%|n/a)\)")


@pytest.fixture(scope="module")
def surfaces(tmp_path_factory) -> tuple[Night, dict[str, str]]:
    """The newest nightly of the site's store, rendered onto every surface it has."""
    root = tmp_path_factory.mktemp("surfaces")
    config = Config(tracker=TrackerSettings(dashboard_url="https://someone.github.io/triagebot/"))
    build_site(make_store(root / "store"), root / "site", config, say=lambda line: None)
    night = night_of(nightlies()[-1], nightlies(), config)
    texts = {f"title {issue.flag}": issue.title for issue in desired_issues(night, config.tracker)}
    for path in write_report(night, root / "report"):
        if path.suffix == ".md":
            texts[f"report {path.name}"] = path.read_text(encoding="utf-8")
    texts["step summary"] = run_summary(night.snapshot.environment, night, published="dry run")
    site = root / "site"
    pages = [links.INDEX, *(links.flag_page(flag) for flag in night.flags)]
    pages += [links.model_page(model) for model in ("GPT2LMHeadModel", "Qwen2VLForConditionalGeneration")]
    for page in pages:
        texts[f"site {page}"] = (site / page).read_text(encoding="utf-8")
    return night, texts


def test_every_surface_states_each_flags_figures_in_the_same_words(surfaces):
    night, texts = surfaces
    for flag, state in night.flags.items():
        figures = state.figures
        crashes, helped = words.of(figures.crashes, figures), words.of(figures.helped, figures)
        flag_surfaces = [f"report issue-{flag}.md", "report summary.md", "step summary", "site index.html"]
        flag_surfaces += [f"site {links.flag_page(flag)}", f"site {links.model_page('GPT2LMHeadModel')}"]
        for name in flag_surfaces:
            assert crashes in texts[name], (flag, name, crashes)
            assert helped in texts[name], (flag, name, helped)
            assert words.verdict_word(state.verdict) in texts[name], (flag, name)
        sentence = words.verdict_sentence(figures, state.verdict, state.stats.crash_groups)
        assert sentence in texts["site index.html"] and sentence in texts["step summary"]
        assert words.headline(figures) in texts[f"title {flag}"]


def test_no_surface_gives_a_share_over_another_denominator(surfaces):
    night, texts = surfaces
    denominators = {
        (figures.affectable, words.population(figures))
        for figures in (s.figures for s in night.flags.values())
    }
    for name, text in texts.items():
        for count, total, population, percent in SHARE.findall(text):
            assert (int(total), population) in denominators, (name, count, total, population)
            share = round(100.0 * int(count) / int(total), 1) if int(total) else None
            assert percent == words.percent(share), (name, count, total, percent)


def test_the_crash_count_is_the_same_in_the_title_the_body_and_the_index(surfaces):
    night, texts = surfaces
    for flag, state in night.flags.items():
        counted = words.plural(state.figures.crashes, "model crashes", "models crash")
        assert counted in texts[f"title {flag}"]
        assert (
            f"**{words.of(state.figures.crashes, state.figures)}** crash" in texts[f"report issue-{flag}.md"]
        )
        index = texts["site index.html"]
        row = index[index.index(f'<tr data-flag="{flag}">') :]
        assert words.of(state.figures.crashes, state.figures) in row[: row.index("</tr>")]


def test_the_issue_as_published_is_the_report_folders(surfaces, tmp_path: Path):
    night, texts = surfaces
    for issue in desired_issues(night, Config().tracker):
        if issue.flag in night.flags:
            assert texts[f"report issue-{issue.flag}.md"] == issue.body


def test_every_surface_states_each_flags_compile_time_in_the_same_words(surfaces):
    night, texts = surfaces
    for flag, state in night.flags.items():
        said = words.compile_time(state.figures)
        assert said is not None and state.figures.compile_time.models, flag  # the nightlies are timed
        for name in (
            f"report issue-{flag}.md",
            "report summary.md",
            "step summary",
            f"site {links.flag_page(flag)}",
        ):
            text = html.unescape(texts[name]) if name.startswith("site") else texts[name]
            assert said in text, (flag, name)
        for name in (f"report issue-{flag}.md", "report summary.md", "step summary"):
            assert texts[name].count("Not measured tonight:") == 1, (flag, name)
        page = texts[f"site {links.flag_page(flag)}"]
        assert html.unescape(page).count(words.not_measured(night.snapshot, state.figures)) == 1, flag
        assert 'data-chart="data-compile-time"' in page and '"type": "bar"' in page, flag


def test_every_surface_says_what_the_ladder_has_covered_of_what_each_flag_changes(surfaces):
    night, texts = surfaces
    said = {flag: words.coverage(state.figures) for flag, state in night.flags.items()}
    assert any(said.values())
    for flag, sentence in said.items():
        if sentence is None:
            continue
        for name in (f"report issue-{flag}.md", "report summary.md", "step summary"):
            assert sentence in texts[name].replace("\\", ""), (flag, name)
        assert sentence in html.unescape(texts[f"site {links.flag_page(flag)}"]), flag
