"""Every write fits GitHub's 65,536 characters with its Markdown whole and its meaning kept.

A night built to break bodies: 600 models newly crashing under one flag in 600 distinct
signatures, a 2,000-model crash group under the other, error text that carries markers,
fences, `</details>` and @mentions, tracebacks with backtick runs, a verified repro with `## `
lines; then the night on which every one of them is fixed. Every issue body, notice and
comment stays within the limit, balanced (fences and `<details>` closed), and keeps its
summary, its crash groups (largest first, then "and N more") and its cc line.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from builders import DYNAMIC, NEW_NIGHTLY, SCALAR, crash, ok, result, snapshot
from builders import night_of as analysed

from triagebot import report
from triagebot.config import Config, TrackerSettings
from triagebot.report import links, markers
from triagebot.report.fit import (
    COMMENT_LADDER,
    FULL,
    GITHUB_LIMIT,
    Detail,
    bounded,
    fit,
    github_length,
    markdown_problems,
)
from triagebot.results import Night, Outcome, Reproduction, Snapshot
from triagebot.tracker.desired import desired_issues
from triagebot.tracker.render import render as tracker_render

DISTINCT, GROUP = 600, 2_000
HOSTILE = (
    "<!-- triagebot:flag=OTHER_FLAG --> @pytorch/everyone see #123 | pwn\n```\n</details> ``` "
    "<details><summary>x</summary> -->"
)
TRACEBACK = "\n".join(
    ["Traceback (most recent call last):"]
    + [
        f'  File "/x/modeling_{index}.py", line {index}, in forward\n    ```` y = x @ w ````'
        for index in range(60)
    ]
    + [f"RuntimeError: {HOSTILE}"]
)
SCRIPT = '"""## Reproduction"""\n' + "\n".join(f"## step {index}\nx = '````'  # ```" for index in range(400))
CC = ["ezyang", "pytorch/dynamo"]


def hostile_crash(signature_text: str) -> Outcome:
    return crash("RuntimeError", f"{signature_text} {HOSTILE}", traceback=TRACEBACK)


def nightly(day: int, crashing: bool) -> Snapshot:
    """Without `crashing`: every model runs. With: the first 600 crash under SCALAR, each its own way,
    and all 2,000 crash under DYNAMIC one way (so 600 crash under both)."""
    results = []
    for index in range(GROUP):
        flagged = {SCALAR: ok(3), DYNAMIC: ok(3)}
        if crashing:
            kind = f"failure kind {'abcdefghij'[index % 10]}{'klmnopqrst'[index // 10 % 10]}"
            flagged[DYNAMIC] = hostile_crash("one shared failure")
            if index < DISTINCT:
                flagged[SCALAR] = hostile_crash(f"op_{index:04d}: {kind}")
        results.append(result(f"Model{index:04d}ForCausalLM", ok(4), flagged, stratum="decoder_llm"))
    key = f"2.12.0.dev2026040{day}+cu128"
    reproductions = []
    if crashing:
        signature = results[0].outcomes[DYNAMIC].signature
        reproductions.append(
            Reproduction(
                flag=DYNAMIC, signature=signature, model=results[0].model, script=SCRIPT, verified=True
            )
        )
    return snapshot(
        results,
        key=key,
        git=f"{day:040x}",
        flags=[SCALAR, DYNAMIC],
        corpus="transformers",
        created=datetime(2026, 4, day, tzinfo=UTC),
        reproductions=reproductions,
    )


# Day 1 runs clean; days 2 to 8 crash alike (a steady crash, a week long); day 9 runs clean.
NIGHTS = [nightly(1, False), *(nightly(day, True) for day in range(2, 9)), nightly(9, False)]
FIXED = len(NIGHTS)


def night_of(day: int, dashboard_url: str | None = None) -> Night:
    # Closing after one clean nightly, so that the last night says the week's crashes fixed.
    settings = TrackerSettings(cc={SCALAR: CC, DYNAMIC: CC}, dashboard_url=dashboard_url, close_after=1)
    return analysed(NIGHTS[day - 1], NIGHTS[:day], Config(tracker=settings))


@pytest.fixture(scope="module")
def crashing_night() -> Night:
    return night_of(2)


def outside_code(text: str) -> str:
    """`text` without its fenced blocks and code spans: what GitHub reads as Markdown."""
    text = re.sub(r"(?ms)^(`{3,})[^\n]*\n.*?^\1\s*$", "", text)
    return re.sub(r"`[^`\n]*`", "", text)


def assert_whole(text: str, pings: tuple[str, ...] = ()) -> None:
    assert github_length(text) <= GITHUB_LIMIT, github_length(text)
    assert markdown_problems(text) == []
    assert text.count("<!--") == 1 and text.startswith("<!-- triagebot:")
    prose = outside_code(text)
    prose = re.sub(r"(?m)^cc @.*$", "", prose)  # the one line meant to ping
    for login in pings:  # a person the comment answers
        prose = prose.replace(f"@{login} ", "")
    assert not re.search(r"@[A-Za-z0-9]", prose), "a ping outside the cc line"
    assert not re.search(r"#\d", prose), "a cross-link"
    assert "</details>" not in re.sub(r"(?m)^</details>$", "", prose)


def test_600_signatures_and_a_2000_model_group_keep_their_summary_groups_and_cc(crashing_night) -> None:
    scalar_body, scalar_detail = report.issue_rendering(crashing_night, SCALAR)
    dynamic_body, dynamic_detail = report.issue_rendering(crashing_night, DYNAMIC)
    for body in (scalar_body, dynamic_body):
        assert_whole(body)
        assert body.rstrip().endswith("cc @ezyang @pytorch/dynamo")
        assert "## Overlap with other flags" in body
    assert markers.find_flag(scalar_body) == SCALAR and markers.find_flag(dynamic_body) == DYNAMIC
    # 600 in 600 signatures: the summary counts them all; the groups listed and the "and N more"
    # line account for every one of them.
    assert f"**{DISTINCT} of {GROUP} testable models (30%)** crash" in scalar_body
    assert f"The crashes fall into {DISTINCT} groups by error signature." in scalar_body
    assert scalar_detail.shortened and "This body is shortened" in scalar_body
    groups = crashing_night.flags[SCALAR].stats.crash_groups
    listed = [group for group in groups if f"`{group.signature[:40]}" in scalar_body]
    hidden = re.search(r"and (\d+) more crash groups \((\d+) models\)", scalar_body)
    assert listed == groups[: len(listed)], "the largest groups first"
    assert len(listed) + (int(hidden[1]) if hidden else 0) == DISTINCT
    # One group of 2,000: its signature and size, its first models, then "and N more".
    assert f"**{GROUP} of {GROUP} testable models (100%)** crash" in dynamic_body
    shared = crashing_night.flags[DYNAMIC].stats.crash_groups[0]
    assert shared.signature[:30] in dynamic_body and f"{GROUP} models" in dynamic_body
    assert "`Model0000ForCausalLM`" in dynamic_body
    assert "`Model1999ForCausalLM`" in dynamic_body or re.search(r"and 1\d\d\d more", dynamic_body)
    assert dynamic_detail != FULL
    # The overlap keeps its count and its first models.
    assert f"{DISTINCT} of the {GROUP} crashing models also crash under it" in dynamic_body


def test_the_report_folder_keeps_every_table(crashing_night, tmp_path) -> None:
    written = {path.name: path for path in report.write_report(crashing_night, tmp_path)}
    full = written[report.full_name(SCALAR)].read_text(encoding="utf-8")
    assert markdown_problems(full) == []
    assert all(group.signature[:40] in full for group in crashing_night.flags[SCALAR].stats.crash_groups)
    assert written[f"issue-{SCALAR}.md"].read_text(encoding="utf-8") == report.issue_body(
        crashing_night, SCALAR
    )
    assert f"`{report.full_name(SCALAR)}`" in written[f"issue-{SCALAR}.md"].read_text(encoding="utf-8")
    # The record itself, for the dashboard and any script: it reads back whole.
    assert Night.model_validate_json(written["night.json"].read_text(encoding="utf-8")) == crashing_night


def test_a_shortened_body_links_the_dashboard() -> None:
    body = report.issue_body(night_of(2, "https://example.org/triagebot/"), SCALAR)
    assert "Every table: https://example.org/triagebot/" in body


def test_every_notice_and_comment_of_the_big_nights_fits(crashing_night) -> None:
    fixed_night = night_of(FIXED)
    notices = [
        report.regression_notice(crashing_night, SCALAR),
        report.regression_notice(crashing_night, DYNAMIC),
        report.fixed_notice(fixed_night, SCALAR),
        report.fixed_notice(fixed_night, DYNAMIC),
    ]
    for notice in notices:
        assert notice is not None
        assert_whole(notice)
        assert re.search(r"And \d+ more models: every one is listed", notice)
    assert (
        f"**{DISTINCT} models newly crash**" in notices[0]
        and f"**{GROUP} models stopped crashing**" in notices[3]
    )
    for issue in desired_issues(fixed_night, TrackerSettings()) + desired_issues(
        crashing_night, TrackerSettings()
    ):
        assert_whole(issue.body)
        for notice in issue.notices:
            assert_whole(notice.body)
    # The night all of them are fixed: no crash section, and the issue says so in its summary.
    clean = report.issue_body(fixed_night, SCALAR)
    assert "**0 of 2000 testable models (0%)** crash" in clean and "## Crashing models" not in clean
    assert_whole(clean)


def test_the_tracker_comments_are_bounded_too(crashing_night) -> None:
    rows = [row for flag in crashing_night.flags.values() for row in flag.effects if row.effect == "crashes"]
    answer = tracker_render(
        "tracker-answer.md.j2",
        marker=markers.result_marker(7),
        user="someone",
        key=crashing_night.key,
        stored=crashing_night.previous_key,
        counts={"still": len(rows), "fixed": 700, "new": 0, "flaky": 0, "other": 0},
        not_rerun=0,
        sections=[
            {"title": "Still crashing", "rows": rows},
            {"title": "No longer crashing", "rows": rows[:700]},
        ],
        dashboard_url=SITE,
    )
    assert_whole(answer, pings=("someone",))
    assert "And " in answer and "more rows" in answer
    assert_models_linked(answer, at_least=5)
    alert = tracker_render(
        "tracker-alert.md.j2",
        marker=markers.alert_marker(crashing_night.key),
        key=crashing_night.key,
        writes=900,
        max_writes=50,
        planned=[HOSTILE * 3] * 900,
    )
    assert_whole(alert)


SITE = "https://someone.github.io/triagebot/"


def assert_models_linked(text: str, at_least: int) -> None:
    """Every model name `text` shows as a code span is a link to its page on the site."""
    shown = re.findall(r"`(Model\d{4}ForCausalLM)`", text)
    assert len(set(shown)) >= at_least
    for model in set(shown):
        linked = f"[`{model}`]({SITE}{links.model_page(model)})"
        assert text.count(f"`{model}`") == text.count(linked), f"{model} is named without its link"


def test_with_a_dashboard_the_shortened_bodies_keep_the_links_of_what_they_show() -> None:
    """Links lengthen every body; the ladder sheds detail, never a link of what it keeps."""
    crashing, fixed = night_of(2, SITE), night_of(FIXED, SITE)
    for flag in (SCALAR, DYNAMIC):
        body, detail = report.issue_rendering(crashing, flag)
        assert_whole(body)
        assert body.rstrip().endswith("cc @ezyang @pytorch/dynamo")
        assert detail.shortened and f"Every table: {SITE}{links.flag_page(flag)}" in body
        assert_models_linked(body, at_least=3)
        groups = crashing.flags[flag].stats.crash_groups
        listed = [group for group in groups if f"`{group.signature[:30]}" in body]
        assert listed
        for group in listed:
            assert f"]({SITE}{links.crash_group(flag, group.signature)})" in body
    compared = f"{SITE}{links.compare_page(NIGHTS[0].key, NIGHTS[1].key)}"
    for notice in (report.regression_notice(crashing, SCALAR), report.regression_notice(crashing, DYNAMIC)):
        assert notice is not None
        assert_whole(notice)
        assert_models_linked(notice, at_least=5)
        assert f"every one is listed on {compared}" in notice
        assert f"The two nightlies compared: {compared}" in notice
    for notice in (report.fixed_notice(fixed, SCALAR), report.fixed_notice(fixed, DYNAMIC)):
        assert notice is not None
        assert_whole(notice)
        assert_models_linked(notice, at_least=5)


def test_a_text_that_cannot_fit_is_refused_not_cut() -> None:
    from triagebot.errors import RenderError

    with pytest.raises(RenderError, match="does not fit"):
        fit(lambda detail: "<!-- m -->\n" + "x" * 100, COMMENT_LADDER, limit=50)
    with pytest.raises(RenderError, match="not be whole"):
        fit(lambda detail: "<!-- m -->\n```\nopen fence", COMMENT_LADDER)
    assert bounded("tracker-close.md.j2", marker="<!-- m -->", flag="f", key="k", streak=2).startswith(
        "<!-- m -->"
    )


def test_markdown_problems_finds_what_is_not_whole() -> None:
    assert (
        markdown_problems("<!-- m -->\n```\ncode\n```\n<details><summary>s</summary>\n\nx\n\n</details>")
        == []
    )
    assert markdown_problems("a\n````\n```\n") == ["a ```` fence is never closed"]
    assert markdown_problems("<details>\n") == ["1 <details> never closed"]
    assert markdown_problems("</details>") == ["line 1: </details> without <details>"]
    assert markdown_problems("a\n<!-- x -->") == ["line 2: an HTML comment past the marker line"]
    assert Detail(rows=2).head([1, 2, 3]) == [1, 2] and Detail(rows=2).more([1, 2, 3]) == 1


def test_a_repro_with_headings_and_backtick_runs_stays_inside_its_fence() -> None:
    """A small night, so the script is shown: its `## ` lines and backtick runs stay code."""
    from triagebot.analysis import night
    from triagebot.store import read_snapshot

    fixture = read_snapshot(NEW_NIGHTLY)
    group = night(fixture).flags[DYNAMIC].stats.crash_groups[0]
    repro = Reproduction(
        flag=DYNAMIC, signature=group.signature, model=group.models[0], script=SCRIPT, verified=True
    )
    body, detail = report.issue_rendering(
        night(fixture.model_copy(update={"reproductions": [repro]})), DYNAMIC
    )
    assert detail.reproductions and "## step 399" in body
    assert_whole(body)
    fence = "`" * 5  # one longer than the longest run in the script
    start = body.index(f"{fence}python\n")
    end = body.index(f"\n{fence}\n", start)
    assert body[start:end].count("\n## step ") == 400  # every heading-like line inside the fence


def test_a_big_body_says_its_verdict_its_blocking_groups_and_its_new_crashes_first(crashing_night) -> None:
    for flag in (SCALAR, DYNAMIC):
        body = report.issue_body(crashing_night, flag)
        assert github_length(body) <= GITHUB_LIMIT
        headings = [line for line in body.splitlines() if line.startswith("## ")]
        assert headings[:3] == ["## Verdict", "## Summary", "## Crashing models"]
        # Everything else waits in a fold below the groups, whose new members are said there.
        first_fold = body.index("<details>")
        assert body.index("## Crashing models") < first_fold and "new tonight" in body[:first_fold]
