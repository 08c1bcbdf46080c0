"""The compiler stack in the night record: the corpus's health computed once and rendered three
times (summary.md, the health issue, the baseline-regression notice), wrong results under the
tracker's rules (open issues, cc routes, titles, regression notices), and the stack's sections
inside GitHub's limit."""

from __future__ import annotations

from pathlib import Path

import builders
import pytest
from builders import REPO, crash
from builders import night_of as analysed
from fakegithub import serve

from triagebot import report
from triagebot.analysis import health as health_module
from triagebot.analysis import night_analysis
from triagebot.config import Config, TrackerSettings, parse_config
from triagebot.errors import ConfigError
from triagebot.report.fit import FULL, GITHUB_LIMIT, Detail, github_length, markdown_problems
from triagebot.report.markers import HEALTH_MARKER, notice_marker
from triagebot.report.render import render
from triagebot.results import (
    BASELINE,
    COMPILER_WRONG_ISSUE,
    COUNTING_BACKEND,
    HEALTH_ISSUE,
    Accuracy,
    AccuracyCheck,
    ModelResult,
    Outcome,
    RecompileCheck,
    Reproduction,
    Snapshot,
    Status,
    wrong_result_signature,
)
from triagebot.tracker import cc
from triagebot.tracker.desired import desired_issues, title_for
from triagebot.tracker.destination import ConnectedView, GitHubWriter
from triagebot.tracker.github import RetryPolicy, connect
from triagebot.tracker.memory import night_facts
from triagebot.tracker.publish import plan_and_apply

FLAG = "capture_scalar_outputs"
ITEM = "Unsupported Tensor.item() call with capture_scalar_outputs=False"


def ok(graphs: int, *, reasons=(), where: str | None = None, recompile=None) -> Outcome:
    verdict = Accuracy.mismatch if where else Accuracy.match
    detail = "largest difference 0.5, tolerance 0.001" if where else None
    return Outcome(
        status=Status.ok,
        graphs=graphs,
        ops=graphs * 10,
        break_reasons=list(reasons),
        accuracy=AccuracyCheck(verdict=verdict, where=where, detail=detail),
        recompile=recompile,
        seconds=1.0,
    )


def model(name: str, baseline: Outcome, flagged: Outcome, stratum="decoder_llm", **extra) -> ModelResult:
    """`name` under FLAG; a crash or a wrong result confirmed (the rerun did the same)."""
    return builders.result(name, baseline, {FLAG: flagged}, stratum=stratum, **extra)


def nightly(key: str, git: str, results: list[ModelResult], reproductions=()) -> Snapshot:
    return builders.snapshot(
        results,
        key=key,
        git=git,
        flags=[FLAG],
        corpus="smoke",
        reproductions=list(reproductions),
        checks=["accuracy"],
        ladder=[COUNTING_BACKEND, "aot_eager"],
    )


def two_nights(b_graphs: int = 5) -> list[Snapshot]:
    """A nightly, then one where B compiles to more graphs at baseline and Helped gives a wrong result."""
    old = nightly(
        "2.13.0.dev20261120",
        "a" * 40,
        [
            model("A", ok(1), ok(1)),
            model("B", ok(2, reasons=[ITEM]), ok(1)),
            model("Helped", ok(3, reasons=[ITEM]), ok(1)),
        ],
    )
    new = nightly(
        "2.13.0.dev20261121",
        "b" * 40,
        [
            model("A", ok(1), ok(1)),
            model("B", ok(b_graphs, reasons=[ITEM]), ok(1)),
            model("Helped", ok(3, reasons=[ITEM]), ok(1, where="logits")),
        ],
    )
    return [old, new]


def night_of(history: list[Snapshot], **tracker):
    return analysed(history[-1], history, Config(tracker=TrackerSettings(**tracker)))


def flag_issues(night, settings: TrackerSettings):
    """The flags' desired issues, without the one of wrong results at the default config (on by
    default, closed here: no model is wrong at baseline in these nights)."""
    issues = desired_issues(night, settings)
    assert all(not issue.open for issue in issues if issue.flag == COMPILER_WRONG_ISSUE)
    return [issue for issue in issues if issue.flag != COMPILER_WRONG_ISSUE]


# --- the health: computed once, rendered three times ---------------------------------------


def test_the_health_is_computed_once_and_every_rendering_reads_it(monkeypatch, tmp_path: Path):
    computed, counted = [], []
    health_of, numbers = night_analysis.health_of, health_module.numbers
    monkeypatch.setattr(night_analysis, "health_of", lambda *a: computed.append(a) or health_of(*a))
    monkeypatch.setattr(health_module, "numbers", lambda *a: counted.append(a) or numbers(*a))
    tonight = night_of(two_nights(), health_issue=True, repo=REPO)
    assert len(computed) == 1 and tonight.health is not None
    analysed = len(counted)
    # Every rendering of the night: the report folder, the published bodies and notices, the
    # step summary. None analyses again.
    report.write_report(tonight, tmp_path / "report")
    desired_issues(tonight, TrackerSettings(health_issue=True, repo=REPO))
    report.run_summary(tonight.snapshot.environment, tonight)
    assert (len(computed), len(counted)) == (1, analysed)


def test_the_summary_the_health_issue_and_the_notice_share_their_text(tmp_path: Path):
    tonight = night_of(two_nights(), health_issue=True, repo=REPO)
    health = tonight.health
    assert [(c.model, c.old_graphs, c.new_graphs) for c in health.baseline_regressions] == [("B", 2, 5)]
    section = render("health-section.md.j2", health=health, detail=FULL)
    regressions = render("health-regressions.md.j2", health=health, detail=FULL)
    summary = report.nightly_summary(tonight)
    body = report.health_body(tonight)
    notice = report.baseline_regression_notice(tonight)
    assert regressions in section and section in summary and section in body
    assert notice == notice_marker("regression", BASELINE, tonight.key) + "\n" + regressions
    assert health.compare_url in regressions
    # The report folder's copy, the health issue's notice and the step summary: the same text.
    written = {path.name: path for path in report.write_report(tonight, tmp_path)}
    assert written["regression-baseline.md"].read_text(encoding="utf-8") == notice
    issues = {issue.flag: issue for issue in desired_issues(tonight, TrackerSettings(health_issue=True))}
    assert issues[HEALTH_ISSUE].body == body and body.startswith(HEALTH_MARKER + "\n")
    assert [n.body for n in issues[HEALTH_ISSUE].notices] == [notice]
    assert regressions in report.run_summary(tonight.snapshot.environment, tonight)


def test_without_the_health_issue_a_baseline_regression_stays_in_the_report_and_summary(tmp_path: Path):
    tonight = night_of(two_nights())
    issues = flag_issues(tonight, TrackerSettings())
    assert [issue.flag for issue in issues] == [FLAG]
    baseline = notice_marker("regression", BASELINE, tonight.key)
    assert all(n.marker != baseline for issue in issues for n in issue.notices)
    written = {path.name for path in report.write_report(tonight, tmp_path)}
    assert "regression-baseline.md" in written
    assert "to more graphs at baseline" in report.run_summary(tonight.snapshot.environment, tonight)
    # No rise, or one torch build: no notice anywhere.
    assert report.baseline_regression_notice(night_of(two_nights(b_graphs=2))) is None


def test_the_health_issue_is_published_once_and_found_again(tmp_path: Path):
    history = two_nights()
    settings = TrackerSettings(repo=REPO, health_issue=True)
    for fake in serve():
        gh = connect(
            "bot-token", base_url=fake.base_url, sleep=lambda _: None, clock=fake.clock, policy=RetryPolicy()
        )
        for _ in range(2):
            tonight = night_of(history, repo=REPO, health_issue=True).linked({}, author=gh.login)
            desired = desired_issues(tonight, settings)
            github, writer = ConnectedView(gh), GitHubWriter(gh)
            plan_and_apply(desired, key=tonight.key, repo=REPO, github=github, writer=writer, max_writes=50)
        health = [issue for issue in fake.issues(REPO) if issue["body"].startswith(HEALTH_MARKER)]
        assert len(health) == 1 and health[0]["title"].endswith("1 of 3 models compile to one graph")
        [comment] = fake.comments(REPO, health[0]["number"])
        assert comment["body"].startswith(notice_marker("regression", BASELINE, history[-1].key))


# --- wrong results under the tracker's rules -------------------------------------------------


def test_a_wrong_result_keeps_its_issue_open_like_a_confirmed_crash():
    history = two_nights()
    [issue] = flag_issues(night_of(history), TrackerSettings())
    assert issue.open  # no crash at all: the wrong result alone keeps it open
    after = [
        nightly(
            f"2.13.0.dev2026112{day}",
            f"{day}" * 40,
            [model("A", ok(1), ok(1)), model("Helped", ok(3, reasons=[ITEM]), ok(1))],
        )
        for day in range(2, 9)
    ]
    # Seen on one night, it may be intermittent: as a crash, it is over after a clean week, not
    # after `close_after` clean nights.
    [six_clean] = flag_issues(night_of([*history, *after[:6]]), TrackerSettings(close_after=2))
    [week_clean] = flag_issues(night_of([*history, *after]), TrackerSettings(close_after=2))
    assert six_clean.open and not week_clean.open
    [closing] = [n for n in week_clean.notices if n.kind == "close"]
    assert "No confirmed crash or wrong result" in closing.body
    [reopen] = [n for n in issue.notices if n.kind == "reopen"]
    assert "gives a wrong result again" in reopen.body and "(1 model)" in reopen.body


def test_cc_routes_and_the_peoples_rules_see_wrong_result_signatures():
    settings = TrackerSettings(cc_routes=[{"pattern": r"^WrongResult: logits", "people": ["accuracy-owner"]}])
    tonight = analysed(two_nights()[-1], two_nights(), Config(tracker=settings))
    state = tonight.flags[FLAG]
    assert state.cc == ["accuracy-owner"]
    assert "cc @accuracy-owner" in report.issue_body(tonight, FLAG)
    facts = night_facts(tonight, settings)[FLAG]
    assert facts.signatures == {wrong_result_signature("logits"): 1}
    assert cc.routed(FLAG, facts.signatures, settings) == {"accuracy-owner": ["WrongResult: logits"]}
    assert state.previous_signatures == []  # the previous nightly had neither


def test_the_wrong_title_placeholder_is_checked_when_read():
    config = parse_config('[tracker]\ntitle = "{flag}: {wrong} wrong, {crashes} crash of {testable}"')
    tonight = night_of(two_nights())
    title = title_for(config.tracker, tonight.flags[FLAG].figures, tonight.key)
    assert title == f"{FLAG}: 1 wrong, 0 crash of 3"
    with pytest.raises(ConfigError, match=r"\{wrng\}.*\{wrong\}"):
        parse_config('[tracker]\ntitle = "{wrng}"')


def test_the_regression_notice_names_the_models_that_newly_give_a_wrong_result():
    old, new = two_nights()
    new.results.append(model("Crashy", ok(2, reasons=[ITEM]), crash()))
    old.results.append(model("Crashy", ok(2, reasons=[ITEM]), ok(1)))
    tonight = night_of([old, new])
    assert [c.model for c in tonight.flags[FLAG].diff.newly_wrong] == ["Helped"]
    notice = report.regression_notice(tonight, FLAG)
    assert notice.startswith(notice_marker("regression", FLAG, new.key) + "\n")
    assert "**1 model newly gives a wrong result**" in notice and "`logits: largest difference" in notice
    assert "**1 model newly crashes**" in notice and "`Crashy`" in notice
    assert notice.index("wrong result") < notice.index("newly crashes")
    assert not markdown_problems(notice)
    wrong_only = night_of(two_nights())
    assert "newly crash" not in report.regression_notice(wrong_only, FLAG)
    assert "1 newly wrong (`Helped`)" in report.nightly_summary(wrong_only)


# --- the stack's sections inside the body's size ladder --------------------------------------


def script(size: int = 8_000) -> str:
    """A reproduction the size of a wrong-result one (the comparison rules inlined)."""
    return "\n".join(f"# line {index:05d} " + "x" * 60 for index in range(size // 72))


def crowded(groups: int, rows: int) -> Snapshot:
    """One flag with `groups` wrong-result groups, each with a verified 8 KB script, `rows` models
    that climbed the ladder and were called on a second shape, and a failure met only on the ladder."""
    results, repros = [], []
    aot = crash().model_copy(update={"signature": "BackendCompilerFailed: aliased output"})
    for index in range(groups):
        where = f"logits.layer{index}"
        results.append(model(f"Wrong{index:03d}", ok(2, reasons=[ITEM]), ok(1, where=where)))
        repros.append(
            Reproduction(
                flag=FLAG,
                signature=wrong_result_signature(where),
                model=f"Wrong{index:03d}",
                script=script(),
                verified=True,
            )
        )
    again = RecompileCheck(
        change="sequence 16 -> 24", status="ok", recompiles=1, graphs=1, dynamic=True, again=0
    )
    for index in range(rows):
        rungs = {COUNTING_BACKEND: ok(1, recompile=again), "aot_eager": aot}
        results.append(
            model(
                f"Climbed{index:04d}With{'A' * 40}",
                ok(3, reasons=[ITEM], recompile=again),
                ok(1, recompile=again),
                ladder={BASELINE: {COUNTING_BACKEND: ok(3, recompile=again)}, FLAG: rungs},
                ladder_confirmations={FLAG: {"aot_eager": [aot]}},
            )
        )
    repros.append(
        Reproduction(
            flag=FLAG,
            signature=aot.signature,
            model=results[-1].model,
            script=script(),
            verified=True,
            backend="aot_eager",
        )
    )
    return nightly("2.13.0.dev20261121", "b" * 40, results, repros)


@pytest.mark.parametrize(("groups", "rows"), [(12, 5), (3, 900), (400, 400)])
def test_the_stack_sections_shed_detail_to_fit_like_crash_groups(groups: int, rows: int):
    tonight = analysed(crowded(groups, rows))
    full = render("issue.md.j2", detail=FULL, **report.bodies._issue_context(tonight, FLAG))
    body, detail = report.issue_rendering(tonight, FLAG)
    assert github_length(full) > GITHUB_LIMIT  # too long whole: something had to go
    assert github_length(body) <= GITHUB_LIMIT and not markdown_problems(body)
    assert detail.shortened and "shortened to fit" in body
    # What a reader needs stays: the counts, the wrong results before the crashes, the ladder.
    assert f"**{groups} of " in body and "** give wrong results" in body
    assert "## Wrong results" in body and "## The backend ladder" in body
    assert f"{rows} models climbed" in body or f"{rows + groups} models climbed" in body
    if groups <= 12:  # few groups: each is named, only their scripts and tables went
        assert all(f"logits.layer{index}" in body for index in range(groups))
        assert "reproduction scripts are left out" in body


def test_a_wrong_result_reproduction_is_shown_while_it_fits():
    tonight = analysed(crowded(1, 1))
    body, detail = report.issue_rendering(tonight, FLAG)
    assert detail == FULL and "verified to assert the mismatch" in body
    assert "with backend aot_eager, verified" in body
    lean = render(
        "issue.md.j2", detail=Detail(reproductions=False), **report.bodies._issue_context(tonight, FLAG)
    )
    assert "verified to assert the mismatch" not in lean and "line 00001" not in lean
