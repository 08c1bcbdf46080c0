"""Publishing tracking issues against a fake GitHub: scenarios across nightlies, faults, limits."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from builders import DYNAMIC, REPO, SCALAR, crash, nightly, ok
from builders import night_of as analysed
from fakegithub import ACTIONS_TOKEN, FakeGitHub, point_tracker_at, serve

from triagebot.config import CcRoute, Config, TrackerSettings
from triagebot.config.settings import TITLE_FIELDS, TITLE_TRIAL
from triagebot.report.markers import flag_marker, notice_marker
from triagebot.report.words import title_values
from triagebot.results import FlagNight, IssueTitle, Night, Snapshot, TrackedIssue, TrendPoint
from triagebot.tracker import cc, closing
from triagebot.tracker.desired import desired_issues, title_for
from triagebot.tracker.destination import destination
from triagebot.tracker.github import GitHub, GitHubError, GitHubFault, RetryPolicy, connect
from triagebot.tracker.plan import Verb
from triagebot.tracker.publish import Publication, plan_and_apply
from triagebot.tracker.remote import create_issue, list_bot_issues, post_comment

MODELS = ["Bert", "Llama", "T5", "Whisper"]
SIGNATURE = "GuardOnDataDependentSymNode: Could not guard on data-dependent expression"


def snapshot(
    key: str, crashing: dict[str, Sequence[str]], flaky: dict[str, Sequence[str]] | None = None
) -> Snapshot:
    """A small nightly: every model has 3 baseline graphs; a flag gives 2 graphs, or crashes
    (confirmed by one rerun), or crashes once and then runs (flaky)."""
    flaky = flaky or {}
    crashes = {
        flag: dict.fromkeys([*crashing.get(flag, ()), *flaky.get(flag, ())], crash())
        for flag in (SCALAR, DYNAMIC)
    }
    reruns = {flag: dict.fromkeys(models, ok(2)) for flag, models in flaky.items()}
    return nightly(key, crashes, MODELS, reruns=reruns, git=f"git{key}")


@pytest.fixture
def fake():
    yield from serve()


def connected(fake: FakeGitHub, token: str = "bot-token", slept: list[float] | None = None, **policy):
    waits = slept if slept is not None else []
    return connect(
        token, base_url=fake.base_url, sleep=waits.append, clock=fake.clock, policy=RetryPolicy(**policy)
    )


def night_of(history: list[Snapshot], settings: TrackerSettings | None = None) -> Night:
    """The night of the newest of `history`, the rest stored, as every command builds it."""
    return analysed(history[-1], history, Config(tracker=settings or TrackerSettings()))


def publish(
    desired: list[TrackedIssue],
    *,
    gh: GitHub | None,
    dry_run: bool = False,
    out_dir: Path | None = None,
    **options,
) -> Publication:
    """`desired` planned and applied as publishing does: through `gh` (None: GitHub unread),
    into `out_dir` in a dry run or without `gh`."""
    github, writer = destination(gh, dry_run=dry_run, out=out_dir or Path("unused"))  # written: GitHub
    return plan_and_apply(desired, github=github, writer=writer, **options)


def run(fake: FakeGitHub, history: list[Snapshot], settings: TrackerSettings | None = None, **options):
    """Publish the newest of `history` as the nightly job does; returns the publication."""
    settings = settings or TrackerSettings(repo=REPO)
    gh = connected(fake)
    desired = desired_issues(night_of(history, settings).linked({}, author=gh.login), settings)
    return publish(
        desired,
        key=history[-1].key,
        repo=REPO,
        gh=gh,
        max_writes=options.pop("max_writes", settings.max_writes),
        **options,
    )


def test_should_be_open_needs_close_after_clean_snapshots():
    assert closing.should_be_open([1], 2)
    assert closing.should_be_open([1, 0], 2)
    assert not closing.should_be_open([1, 0, 0], 2)
    assert closing.should_be_open([1, 0, 0, 3], 2)
    assert not closing.should_be_open([0], 2)
    assert not closing.should_be_open([2, 0], 1)
    assert closing.clean_streak([1, 0, 0]) == 2


def test_a_wrong_result_is_a_failure_to_closing_as_a_crash_is():
    trend = [
        TrendPoint(key="a", crashes=1, helps=0),
        TrendPoint(key="b", crashes=0, helps=0, wrong_results=2),
        TrendPoint(key="c", crashes=0, helps=0),
    ]
    failures = closing.failures_per_nightly(FlagNight.model_construct(trend=trend))
    assert failures == [1, 2, 0]
    assert closing.should_be_open(failures, 2) and closing.clean_streak(failures) == 1


def test_cc_routes_by_signature_and_never_ccs_author_twice():
    settings = TrackerSettings(
        cc={SCALAR: ["ezyang", "@bobrenjc93", "EZYANG"]},
        cc_routes=[
            CcRoute(pattern=r"GuardOnDataDependent", people=["laithsakka", "triagebot-bot"]),
            CcRoute(pattern=r"PendingUnbacked", people=["nobody"]),
        ],
    )
    people = cc.cc_for(SCALAR, [SIGNATURE], settings, author="triagebot-bot")
    assert people == ["ezyang", "bobrenjc93", "laithsakka"]


def test_title_placeholders_are_filled_in():
    issue = desired_issues(night_of([snapshot("k1", {SCALAR: ["Bert"]})]), TrackerSettings())[0]
    assert (
        issue.title
        == f"[triagebot] torch._dynamo.config.{SCALAR}: 1 model crashes (GuardOnDataDependentSymNode)"
    )
    tonight = night_of([snapshot("k1", {})])
    settings = TrackerSettings(title="{flag} {key}: {flaky}/{helps} of {affectable}, {new} new")
    assert title_for(settings, tonight.flags[SCALAR].figures, "k1") == f"{SCALAR} k1: 0/4 of 4, 0 new"


def test_every_placeholder_the_config_accepts_is_filled_in_from_a_night():
    # The config's list, the values it tries a title with, and what a night fills in are one
    # declaration: a title using every accepted placeholder is accepted and renders each one.
    every = " ".join("{" + name + "}" for name in TITLE_FIELDS)
    assert set(TITLE_FIELDS) == set(TITLE_TRIAL.model_dump()) == set(IssueTitle.model_fields)
    settings = TrackerSettings(title=every)
    figures = night_of([snapshot("k1", {SCALAR: ["Bert"]})]).flags[SCALAR].figures
    values = title_values(figures, "k1")
    assert set(values.model_dump()) == set(TITLE_FIELDS)
    assert title_for(settings, figures, "k1") == " ".join(
        str(value) for value in values.model_dump().values()
    )
    assert values.crashes == 1 and values.headline.startswith("1 model crashes")


def test_scenario_across_nightlies(fake):
    n1 = snapshot("2.12.0.dev20260401", {SCALAR: ["Bert", "Llama"]})
    first = run(fake, [n1])
    issues = fake.issues(REPO)
    first_body = issues[0]["body"]
    assert [i["title"].split(": ", 1)[1] for i in issues] == ["2 models crash (GuardOnDataDependentSymNode)"]
    assert issues[0]["body"].startswith(flag_marker(SCALAR))
    assert {label["name"] for label in issues[0]["labels"]} == {"module: dynamo", "triagebot"}
    assert {a.verb for a in first.plan.writes} == {Verb.create_label, Verb.create}

    writes = len(fake.writes)
    again = run(fake, [n1])
    assert again.plan.writes == [] and len(fake.writes) == writes  # same snapshot: no write at all

    # A steady crash (a week of nightlies) stops: the notice waits for `close_after` clean
    # nightlies, as closing does; then one notice, and rerunning posts nothing more.
    week = [n1] + [snapshot(f"2.12.0.dev202604{day:02}", {SCALAR: ["Bert", "Llama"]}) for day in range(2, 8)]
    history = [*week, snapshot("2.12.0.dev20260408", {SCALAR: ["Llama"]})]
    run(fake, history)
    assert fake.comments(REPO, 1) == [] and fake.issues(REPO)[0]["body"] != first_body
    history.append(snapshot("2.12.0.dev20260409", {SCALAR: ["Llama"]}))
    run(fake, history)
    comments = fake.comments(REPO, 1)
    assert len(comments) == 1
    assert comments[0]["body"].startswith(notice_marker("fixed", SCALAR, "2.12.0.dev20260409"))
    assert "Bert" in comments[0]["body"] and "Llama" not in comments[0]["body"]
    assert "the last stored nightly with the crash is `2.12.0.dev20260407`" in comments[0]["body"]
    writes = len(fake.writes)
    run(fake, history)
    assert len(fake.writes) == writes

    # Two clean nightlies close the issue, with one comment: Llama fixed, and the close.
    history.append(snapshot("2.12.0.dev20260410", {}))
    run(fake, history)
    assert fake.issues(REPO)[0]["state"] == "open"
    history.append(snapshot("2.12.0.dev20260411", {}))
    run(fake, history)
    assert fake.issues(REPO)[0]["state"] == "closed"
    closed = fake.comments(REPO, 1)
    assert len(closed) == 2 and "No confirmed crash" in closed[-1]["body"] and "Llama" in closed[-1]["body"]
    writes = len(fake.writes)
    run(fake, history)
    assert len(fake.writes) == writes

    # A recurrence reopens the same issue (no duplicate) with one comment: the reopen and the
    # new crash, which names the range it came from, not yet bisected.
    history.append(snapshot("2.12.0.dev20260412", {SCALAR: ["T5"]}))
    run(fake, history)
    issues = fake.issues(REPO)
    assert len(issues) == 1 and issues[0]["state"] == "open"
    bodies = [c["body"] for c in fake.comments(REPO, 1)]
    regression = notice_marker("regression", SCALAR, "2.12.0.dev20260412")
    assert len(bodies) == 3 and "Reopened" in bodies[-1] and regression in bodies[-1]
    assert "the last stored nightly without it is `2.12.0.dev20260411`. Not yet bisected." in bodies[-1]


def test_flaky_crash_alone_opens_nothing(fake):
    run(fake, [snapshot("k1", {}, flaky={SCALAR: ["Bert"]})])
    assert fake.issues(REPO) == []


def test_interrupted_publish_converges_without_duplicates(fake):
    n1 = snapshot("k1", {SCALAR: ["Bert"], DYNAMIC: ["T5"]})
    n2 = snapshot("k2", {SCALAR: ["Llama"], DYNAMIC: ["T5"]})
    run(fake, [n1])
    # The create of an answer is applied but its answer lost; a 502 hides another; a dropped
    # connection before a label edit.
    fake.inject("POST", r"/issues/\d+/comments$", "drop_after")
    fake.inject("PATCH", r"/issues/\d+$", "error", status=502)
    run(fake, [n1, n2])
    assert len(fake.issues(REPO)) == 2
    # The regression (Llama), once; Bert, seen crashing on one nightly only, is not said fixed
    # before a week of clean nightlies.
    assert len(fake.comments(REPO, 1)) == 1
    writes = len(fake.writes)
    run(fake, [n1, n2])
    assert len(fake.writes) == writes

    # A run stopped half-way (every write after the first failing for good) then run again.
    n3 = snapshot("k3", {SCALAR: ["Llama", "Whisper"], DYNAMIC: []})
    fake.inject("POST", r"/comments$", "error", status=503, times=100)
    stopped = run(fake, [n1, n2, n3])
    assert stopped.not_applied and "still failing after 6 attempts" in stopped.not_applied[0].reason
    assert all("not tried: GitHub was failing" in n.reason for n in stopped.not_applied[1:])
    fake.faults.clear()
    run(fake, [n1, n2, n3])
    markers = [c["body"].splitlines()[0] for c in fake.comments(REPO, 1)]
    assert len(markers) == len(set(markers)) == 2


def test_create_with_lost_answer_is_not_duplicated(fake):
    gh = connected(fake)
    fake.inject("POST", r"/issues$", "drop_after")
    number = create_issue(gh, REPO, flag_marker(SCALAR), "t", f"{flag_marker(SCALAR)}\nbody", [])
    assert number == 1 and len(fake.issues(REPO)) == 1


def test_mass_failure_becomes_one_alert(fake):
    broken = snapshot("k1", {SCALAR: MODELS, DYNAMIC: MODELS})
    publication = run(fake, [broken], max_writes=2)
    assert publication.held and publication.held_writes == 4  # two labels, two issues
    assert fake.repos[REPO].labels == {}  # the alert itself needs no label
    issues = fake.issues(REPO)
    assert len(issues) == 1 and "held" in issues[0]["title"]
    assert "over the limit of 2" in issues[0]["body"]
    writes = len(fake.writes)
    assert run(fake, [broken], max_writes=2).plan.writes == []
    assert len(fake.writes) == writes


def test_dry_run_and_no_token_write_files_not_github(fake, tmp_path):
    n1 = snapshot("k1", {SCALAR: ["Bert"]})
    publication = run(fake, [n1], dry_run=True, out_dir=tmp_path / "dry")
    assert fake.writes == [] and publication.github_read
    desired = desired_issues(night_of([n1]).linked({}, author="triagebot-bot"), TrackerSettings(repo=REPO))
    planned = next(issue for issue in desired if issue.flag == SCALAR)
    # The body as it would be published, byte for byte, as the report folder's; the title in the plan.
    assert (tmp_path / "dry" / f"issue-{SCALAR}.md").read_text() == planned.body
    plan = (tmp_path / "dry" / "plan.txt").read_text()
    assert "create issue for capture_scalar_outputs" in plan and f"title of {SCALAR}: {planned.title}" in plan

    desired = desired_issues(night_of([n1]), TrackerSettings())
    offline = publish(desired, key="k1", repo=REPO, gh=None, max_writes=50, out_dir=tmp_path / "off")
    assert not offline.github_read and [a.verb for a in offline.plan.writes] == [Verb.create]
    assert (tmp_path / "off" / f"issue-{SCALAR}.md").exists()


def test_issues_found_by_marker_from_the_bot_only_across_pages(fake):
    fake.max_per_page = 2
    for index in range(5):  # people quoting the marker in their own issues are not the bot
        fake.add_issue(REPO, f"human {index}", f"{flag_marker(SCALAR)} copied", "someone")
    fake.add_issue(REPO, "unrelated", "nothing", "triagebot-bot")
    fake.add_issue(REPO, "tracked", f"{flag_marker(SCALAR)}\nold", "triagebot-bot")
    run(fake, [snapshot("k1", {SCALAR: ["Bert"]})])
    assert len(fake.issues(REPO)) == 7
    assert (
        fake.issues(REPO)[6]["body"].startswith(flag_marker(SCALAR))
        and "old" not in fake.issues(REPO)[6]["body"]
    )
    assert ("GET", f"/repos/{REPO}/issues") in fake.requests
    assert not any("search" in path for _, path in fake.requests)


def test_retries_honour_rate_limits_and_backoff(fake):
    slept: list[float] = []
    gh = connected(fake, slept=slept, write_interval=0)
    fake.inject("GET", r"/issues$", "secondary", retry_after=42)
    fake.inject("GET", r"/issues$", "primary", reset_in=300)
    fake.inject("GET", r"/issues$", "error", status=503, times=2)
    fake.inject("GET", r"/issues$", "drop")
    assert list_bot_issues(gh, REPO) == []
    assert slept == [42.0, 301.0, 4.0, 8.0, 16.0]

    fake.inject("GET", r"/issues$", "primary", reset_in=5000)
    with pytest.raises(GitHubFault, match="over 900s"):
        list_bot_issues(gh, REPO)
    fake.inject("GET", r"/issues$", "error", status=500, times=10)
    with pytest.raises(GitHubFault, match="after 6 attempts"):
        list_bot_issues(gh, REPO)


def test_not_found_right_after_create_is_retried(fake):
    gh = connected(fake)
    fake.lag_after_create = 2
    number = create_issue(gh, REPO, "<!-- m -->", "t", "<!-- m -->", [])
    post_comment(gh, REPO, number, "<!-- c -->", "<!-- c --> hi", fresh=True)
    assert len(fake.comments(REPO, number)) == 1
    fake.lag_after_create = 1
    other = create_issue(gh, REPO, "<!-- n -->", "t", "<!-- n -->", [])
    with pytest.raises(GitHubError, match=r"comment on pytorch/pytorch#2: GitHub answered 404: Not Found"):
        post_comment(gh, REPO, other, "<!-- c -->", "<!-- c --> hi")  # a 404 on an old object is an answer


def test_writes_are_paced_and_capped(fake):
    slept: list[float] = []
    gh = connected(fake, slept=slept)
    for index in range(3):
        post_comment(
            gh, REPO, create_issue(gh, REPO, f"<!-- {index} -->", "t", f"<!-- {index} -->", []), "m", "m"
        )
    assert slept == [1.0] * 5  # the fake clock stands still: a full second before each write
    gh.max_writes = gh.writes
    from triagebot.tracker.github import WriteBudgetExceeded

    with pytest.raises(WriteBudgetExceeded):
        create_issue(gh, REPO, "<!-- x -->", "t", "<!-- x -->", [])


def test_actions_token_is_github_actions_bot(fake):
    assert connected(fake, token=ACTIONS_TOKEN).login == "github-actions[bot]"
    assert connected(fake).login == "triagebot-bot"
    login = r"read the token's login from http://\S+: GitHub answered 401: Bad"
    with pytest.raises(GitHubError, match=login):
        connected(fake, token="wrong")


def test_human_labels_are_kept_and_missing_ones_added(fake):
    fake.add_issue(REPO, "t", f"{flag_marker(SCALAR)}\n", "triagebot-bot")
    gh = connected(fake)
    gh.repo(REPO).get_issue(1).add_to_labels("high priority")
    run(fake, [snapshot("k1", {SCALAR: ["Bert"]})])
    assert {label["name"] for label in fake.issues(REPO)[0]["labels"]} == {
        "high priority",
        "module: dynamo",
        "triagebot",
    }


def test_desired_state_is_records():
    nightly = night_of([snapshot("k1", {}), snapshot("k2", {SCALAR: ["Bert"]})])
    desired = desired_issues(nightly, TrackerSettings())
    assert all(isinstance(issue, TrackedIssue) for issue in desired)
    scalar = next(i for i in desired if i.flag == SCALAR)
    assert scalar.open and [n.kind for n in scalar.notices] == ["regression", "close", "reopen"]
    dynamic = next(i for i in desired if i.flag == DYNAMIC)
    assert not dynamic.open


def test_new_issues_link_each_other_in_the_run_that_opens_them(fake, monkeypatch, tmp_path):

    from triagebot.config import Config
    from triagebot.tracker.publish_night import publish_tracking_issues

    point_tracker_at(fake, monkeypatch)
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.example")
    nightly = snapshot("2.12.0.dev20260401", {SCALAR: ["Bert", "Llama"], DYNAMIC: ["Bert"]})
    config = Config(tracker=TrackerSettings(repo=REPO))

    night = analysed(nightly, [nightly], config)
    publish_tracking_issues(night, config, "bot-token", False, tmp_path, say=lambda _: None)
    issues = {issue["body"].splitlines()[0]: issue for issue in fake.issues(REPO)}
    scalar, dynamic = issues[flag_marker(SCALAR)], issues[flag_marker(DYNAMIC)]
    assert f"https://github.example/{REPO}/issues/{dynamic['number']}" in scalar["body"]
    assert f"https://github.example/{REPO}/issues/{scalar['number']}" in dynamic["body"]

    writes = len(fake.writes)
    publish_tracking_issues(night, config, "bot-token", False, tmp_path, say=lambda _: None)
    assert len(fake.writes) == writes  # the links were already there: nothing to write
