"""Known upstream issues and the labels a triager would set: the PT2 triage rubric from where a
group lives, the words a search looks for, and the searches against the fake GitHub's search
endpoint (a match, an empty result, a 422 on a long query, the search rate limit), once per
night and signature, never writing into the issues found."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from builders import DYNAMIC, REPO, SCALAR, crash, nightly
from fakegithub import FakeGitHub, serve

from triagebot import pipeline
from triagebot.analysis.triage import (
    compiler_frame,
    pin_for,
    search_words,
    suggested_labels,
)
from triagebot.config import Config, TrackerSettings
from triagebot.errors import ConfigError
from triagebot.report.fit import markdown_problems
from triagebot.results import FailureGroup, Snapshot, UpstreamPin, people_only, signature_id
from triagebot.store import LocalStore
from triagebot.tracker import github, publish_night
from triagebot.tracker.upstream import MAX_QUERY, queries
from triagebot.tracker.upstream_memory import stored_searches

UPSTREAM = "pytorch/pytorch"
MODELS = ["Bert", "Llama", "T5"]
PENDING = (
    "PendingUnbackedSymbolNotFound: Pending unbacked symbols {u3} not in returned outputs (FakeTensor(...),)"
)
TRACEBACK = """Traceback (most recent call last):
  File "/opt/venv/lib/python3.11/site-packages/torch/_dynamo/utils.py", line 3215, in set_example_value
    if symbol_to_path := compute_unbacked_bindings(shape_env, example_value):
  File "/opt/venv/lib/python3.11/site-packages/torch/fx/experimental/symbolic_shapes.py", line 13, \
in compute_unbacked_bindings
    raise PendingUnbackedSymbolNotFound(
  File "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1750, in _call_impl
    return forward_call(*args, **kwargs)
"""


def group(signature: str, **fields) -> FailureGroup:
    return FailureGroup(flag=SCALAR, signature=signature, models=["Llama"], **fields)


# --- the rubric and the words -------------------------------------------------------------------


ONCALL = "oncall: pt2"  # every group fails under torch.compile


def labels(found: FailureGroup) -> list[str]:
    return [reason.label for reason in suggested_labels(found)]


def test_each_place_a_group_lives_gets_its_module_label():
    sweep_crash = group("Unsupported: call_method UserDefinedObjectVariable", lives_in="Dynamo")
    dispatcher = group("RuntimeError: aliasing custom op", backend="aot_eager", lives_in="AOTAutograd")
    inductor = group("LoweringException: no lowering", backend="inductor")  # lives_in read from the rung
    assert labels(sweep_crash) == [ONCALL, "module: dynamo"]
    assert labels(dispatcher) == [ONCALL, "module: pt2-dispatcher"]
    assert labels(inductor) == [ONCALL, "module: inductor"]
    assert labels(group("RuntimeError: odd", backend="my_backend")) == [ONCALL]  # no module rubric for it


def test_data_dependent_groups_are_dynamic_shapes_and_wrong_results_high_priority():
    guard = group("GuardOnDataDependentSymNode: Could not guard on data-dependent expression Eq(u*, N)")
    item = group("Unsupported: Tensor.item", error="Dynamo does not know how to trace x.item()")
    wrong = group("WrongResult: logits", error_type="WrongResult", lives_in="Dynamo")
    assert labels(guard) == [ONCALL, "module: dynamo", "module: dynamic shapes"]
    assert labels(item) == [ONCALL, "module: dynamo", "module: dynamic shapes"]
    # A wrong result is a silent correctness bug: nothing failed while Dynamo traced.
    assert labels(wrong) == [ONCALL, "module: correctness (silent)", "module: dynamo", "high priority"]
    [dynamo] = [reason for reason in suggested_labels(wrong) if reason.label == "module: dynamo"]
    assert "fails" not in dynamo.reason and "counting backend" in dynamo.reason
    everything = [*labels(guard), *labels(item), *labels(wrong)]
    assert "triaged" not in everything


def test_search_words_are_the_error_its_leading_words_and_the_compiler_frame():
    pending = group(f"InternalTorchDynamoError: {PENDING} [in forward]", traceback=TRACEBACK)
    assert search_words(pending) == [
        "PendingUnbackedSymbolNotFound",
        "Pending unbacked symbols",
        "compute_unbacked_bindings",  # the innermost torch frame, not torch/nn's
    ]
    assert compiler_frame(TRACEBACK.replace("compute_unbacked_bindings", "inner")) == "set_example_value"
    # A bare RuntimeError names nothing: its leading words are searched alone.
    runtime = group("RuntimeError: Runtime assertion failed for expression Eq(Mod(u*, N), N)")
    assert search_words(runtime) == ["Runtime assertion failed for expression"]
    assert search_words(group("WrongResult: logits", error_type="WrongResult")) == []
    assert search_words(group("RuntimeError: N")) == []


def test_queries_drop_words_from_the_end_and_never_pass_githubs_limit():
    words = ["PendingUnbackedSymbolNotFound", "Pending unbacked symbols", "compute_unbacked_bindings"]
    assert queries(UPSTREAM, words) == [
        f'repo:{UPSTREAM} is:issue "PendingUnbackedSymbolNotFound" "Pending unbacked symbols" '
        '"compute_unbacked_bindings"',
        f'repo:{UPSTREAM} is:issue "PendingUnbackedSymbolNotFound" "Pending unbacked symbols"',
        f'repo:{UPSTREAM} is:issue "PendingUnbackedSymbolNotFound"',
    ]
    long = ["x" * 300, "y"]
    assert queries(UPSTREAM, ["a", *long]) == [f'repo:{UPSTREAM} is:issue "a"']
    assert all(len(query) <= MAX_QUERY for query in queries(UPSTREAM, ["b" * 200, "c" * 30]))


def test_a_pin_from_a_command_wins_over_the_configuration():
    signature = f"InternalTorchDynamoError: {PENDING}"
    links = {"PendingUnbackedSymbolNotFound": 111}
    assert pin_for(signature, {}, links, UPSTREAM).number == 111
    assert pin_for(signature, {}, {signature_id(signature): 222}, UPSTREAM).number == 222
    unlinked = UpstreamPin(repo=UPSTREAM, signature=signature, number=None, by="maintainer")
    assert pin_for(signature, {signature: unlinked}, links, UPSTREAM).number is None
    assert pin_for("GuardOnDataDependentSymNode: x", {}, links, UPSTREAM) is None


def test_the_configuration_refuses_triaged_and_bad_links():
    with pytest.raises(ValueError, match="hides an issue from the PT2 on-call"):
        TrackerSettings(labels=["triagebot", "triaged"])
    with pytest.raises(ValueError, match="not an issue number"):
        TrackerSettings(upstream_links={"Pending": 0})
    with pytest.raises(ValueError, match="is not OWNER/NAME"):
        TrackerSettings(upstream="pytorch")


@pytest.mark.parametrize("label", ["Triaged", "TRIAGED", "triaged ", " tRiAgEd"])
def test_triaged_is_refused_in_any_case_or_spacing_as_github_matches_labels(label):
    with pytest.raises(ValueError, match=f"{label!r} is set by people only"):
        TrackerSettings(labels=["triagebot", label])
    assert people_only(label) and not people_only("triage review")


def test_the_config_file_names_a_bad_link_in_one_line(tmp_path: Path):
    from triagebot.config import load_config

    path = tmp_path / "triagebot.toml"
    path.write_text('[tracker]\nupstream_links = { "" = 3 }\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="upstream_links"):
        load_config(path)


# --- searches against the fake GitHub -----------------------------------------------------------


class Clock:
    """The fake's clock, which the bot's waits move on: a rate limit's minute does end."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def fake():
    yield from serve()


@pytest.fixture
def clock(fake: FakeGitHub, monkeypatch) -> Clock:
    ticking = Clock()
    fake.clock = lambda: ticking.now
    monkeypatch.setattr(
        publish_night,
        "connect",
        functools.partial(
            github.connect, base_url=fake.base_url, sleep=ticking.sleep, clock=lambda: ticking.now
        ),
    )
    return ticking


def tonight(key: str, **crashes: str) -> object:
    """A nightly in which Llama crashes under SCALAR with `crashes[SCALAR]` (a signature's
    message), T5 under DYNAMIC with the guard error."""
    pending = crash("InternalTorchDynamoError", crashes.get("scalar", PENDING), traceback=TRACEBACK)
    return nightly(key, {SCALAR: {"Llama": pending}, DYNAMIC: {"T5": crash()}}, MODELS, git=f"git{key}")


def publish(
    fake, tmp_path: Path, snapshot, *, settings: TrackerSettings | None = None, dry_run: bool = False
):
    store = LocalStore(tmp_path / "store")
    store.put(snapshot)
    config = Config(tracker=settings or TrackerSettings(repo=REPO))
    night = pipeline.night_of(snapshot, store, config)
    said: list[str] = []
    published = publish_night.publish_tracking_issues(
        night, config, "bot-token", dry_run, tmp_path / "out", store=store, say=said.append
    )
    return published, store, said


def upstream_issue(fake: FakeGitHub, title: str, body: str, *, state: str = "open") -> int:
    return fake.add_issue(UPSTREAM, title, body, "someone", state=state)["number"]


def body_of(fake: FakeGitHub, flag: str) -> str:
    return next(i["body"] for i in fake.issues(REPO) if f"flag={flag} " in i["body"].splitlines()[0])


def test_possibly_known_issues_are_listed_with_their_words_and_never_written_to(fake, clock, tmp_path):
    known = upstream_issue(
        fake,
        "PendingUnbackedSymbolNotFound in compute_unbacked_bindings, cc @ezyang see #1234",
        "Pending unbacked symbols {u0} not in returned outputs",
    )
    closed = upstream_issue(
        fake,
        "PendingUnbackedSymbolNotFound with split",
        "Pending unbacked symbols, raised in compute_unbacked_bindings",
        state="closed",
    )
    guard = upstream_issue(
        fake, "GuardOnDataDependentSymNode", "Could not guard on data-dependent expression"
    )
    before = list(fake.writes)
    published, _, said = publish(fake, tmp_path, tonight("2.12.0.dev20260401"))

    body = body_of(fake, SCALAR)
    assert f"**Possibly known upstream**: #{closed} (closed: " in body  # GitHub ranks it first
    assert f"; #{known} (open: " in body
    assert (
        "matched `PendingUnbackedSymbolNotFound`, `Pending unbacked symbols`, `compute_unbacked_bindings`"
        in body
    )
    # The title is untrusted: it neither pings nor cross-links; the one reference meant is #N.
    assert "@ezyang" not in body and "#1234" not in body and "@\u200bezyang" in body
    assert markdown_problems(body) == []
    assert f"**Possibly known upstream**: #{guard} (open" in body_of(fake, DYNAMIC)
    # Nothing was written into the upstream issues; the bot's own issues were never a match.
    upstream_numbers = {known, closed, guard}
    written = [path for method, path in fake.writes[len(before) :]]
    assert not any(
        path.rstrip("/").split("/issues/")[-1].split("/")[0] in map(str, upstream_numbers) for path in written
    )
    own = {i["number"] for i in fake.issues(REPO) if i["user"]["login"] == fake.bot}
    for triage in (t for flag in published.night.flags.values() for t in flag.triage.values()):
        assert not own & {issue.number for issue in triage.known}
    assert any(line.startswith(f"searched the issues of {UPSTREAM} for 2 signature(s)") for line in said)


def test_a_signature_is_searched_once_per_night(fake, clock, tmp_path):
    upstream_issue(fake, "GuardOnDataDependentSymNode", "Could not guard on data-dependent expression")
    first = tonight("2.12.0.dev20260401")
    publish(fake, tmp_path, first)
    searched = len(fake.searches)
    assert searched >= 2
    publish(fake, tmp_path, first)  # the same night published again: the store answers
    assert len(fake.searches) == searched
    _, store, _ = publish(fake, tmp_path, tonight("2.12.0.dev20260402"))  # the next night searches again
    assert len(fake.searches) > searched
    assert {search.key for search in stored_searches(store, UPSTREAM).values()} == {"2.12.0.dev20260402"}


def test_an_empty_result_is_said_and_the_ladder_of_queries_is_tried(fake, clock, tmp_path):
    publish(fake, tmp_path, tonight("2.12.0.dev20260401"))
    assert "No issue of `pytorch/pytorch` matched its error" in body_of(fake, SCALAR)
    assert fake.searches[:3] == queries(
        UPSTREAM, ["PendingUnbackedSymbolNotFound", "Pending unbacked symbols", "compute_unbacked_bindings"]
    )


def test_a_query_github_refuses_gives_way_to_a_shorter_one(fake, clock, tmp_path):
    known = upstream_issue(fake, "PendingUnbackedSymbolNotFound", "in compute_unbacked_bindings")
    fake.max_query = 70  # the first two queries are refused (422), the third passes
    published, store, _ = publish(fake, tmp_path, tonight("2.12.0.dev20260401"))
    assert f"#{known} (open" in body_of(fake, SCALAR)
    search = stored_searches(store, UPSTREAM)[published.night.flags[SCALAR].stats.crash_groups[0].signature]
    assert (
        search.requests == 3
        and search.error == ""
        and search.query == f'repo:{UPSTREAM} is:issue "PendingUnbackedSymbolNotFound"'
    )

    fake.max_query = 10  # every query refused: said in the body, and the night is still published
    published, store, _ = publish(fake, tmp_path, tonight("2.12.0.dev20260402"))
    body = body_of(fake, SCALAR)
    assert "failed (nightly `2.12.0.dev20260402`): GitHub answered 422: The search is longer than 10" in body


def test_the_search_rate_limit_is_kept_by_waiting_for_its_minute(fake, clock, tmp_path):
    fake.search_limit = 2
    night = five_signatures()
    forbidden = len([r for r in fake.requests if r[1] == "/search/issues"])
    _, store, _ = publish(fake, tmp_path, night, settings=TrackerSettings(repo=REPO))
    assert len(stored_searches(store, UPSTREAM)) == 5  # every signature searched
    searches = [r for r in fake.requests if r[1] == "/search/issues"][forbidden:]
    assert len(searches) == len(fake.searches)  # no request was refused: the bot waited first
    assert sum(clock.slept) >= 60 * (len(searches) // 2 - 1)
    assert all(wait <= 61 for wait in clock.slept)


def five_signatures() -> Snapshot:
    messages = [f"Error{n}Found: Pending thing number {'abcde'[n]} went wrong" for n in range(5)]
    models = [f"Model{n}" for n in range(5)]
    crashes = {
        SCALAR: {m: crash("InternalTorchDynamoError", msg) for m, msg in zip(models, messages, strict=True)}
    }
    return nightly("2.12.0.dev20260401", crashes, models, flags=[SCALAR], git="g1")


def test_a_night_searches_at_most_its_cap_the_longest_unsearched_first(fake, clock, tmp_path):
    settings = TrackerSettings(repo=REPO, upstream_searches_per_night=2)
    _, store, said = publish(fake, tmp_path, five_signatures(), settings=settings)
    first = set(stored_searches(store, UPSTREAM))
    assert len(first) == 2
    assert f"upstream search of {UPSTREAM}: 2 of 5 signature(s) tonight, the rest the next nights" in said
    _, store, _ = publish(fake, tmp_path, five_signatures(), settings=settings)  # the next run
    second = set(stored_searches(store, UPSTREAM))
    assert len(second) == 4 and first < second  # those never searched came first


def test_each_search_is_kept_as_it_is_made(fake, clock, tmp_path, monkeypatch):
    from triagebot.tracker import upstream

    made = []
    search = upstream.Searcher.search

    def stopped_on_the_third(self, signature, words):
        if len(made) == 2:
            raise KeyboardInterrupt  # the job is stopped (its time limit) in the middle
        made.append(signature)
        return search(self, signature, words)

    monkeypatch.setattr(upstream.Searcher, "search", stopped_on_the_third)
    with pytest.raises(KeyboardInterrupt):
        publish(fake, tmp_path, five_signatures())
    assert set(stored_searches(LocalStore(tmp_path / "store"), UPSTREAM)) == set(made)


def test_a_limit_that_asks_too_long_leaves_the_rest_for_the_next_night(fake, clock, tmp_path, monkeypatch):
    from triagebot.tracker import upstream

    monkeypatch.setattr(upstream, "MAX_WAIT", 10.0)
    fake.search_limit = 1  # one search, which finds this at its first query
    upstream_issue(
        fake, "PendingUnbackedSymbolNotFound", "Pending unbacked symbols in compute_unbacked_bindings"
    )
    _, store, said = publish(fake, tmp_path, tonight("2.12.0.dev20260401"))
    assert len(stored_searches(store, UPSTREAM)) == 1
    assert any("left for the next night: the search limit asks to wait" in line for line in said)
    assert "2.12.0.dev20260401" in body_of(fake, DYNAMIC)  # published all the same


def test_a_pinned_group_says_where_it_is_tracked_and_is_not_searched(fake, clock, tmp_path):
    settings = TrackerSettings(repo=REPO, upstream_links={"PendingUnbackedSymbolNotFound": 4321})
    publish(fake, tmp_path, tonight("2.12.0.dev20260401"), settings=settings)
    body = body_of(fake, SCALAR)
    assert "**Tracked upstream in #4321**, pinned by the configuration." in body
    assert "Possibly known" not in body
    assert not any("PendingUnbackedSymbolNotFound" in query for query in fake.searches)


def test_labels_are_applied_only_where_the_configuration_allows(fake, clock, tmp_path):
    publish(fake, tmp_path, tonight("2.12.0.dev20260401"))
    names = {label["name"] for issue in fake.issues(REPO) for label in issue["labels"]}
    assert names == {"module: dynamo", "triagebot"}
    [said] = [line for line in body_of(fake, SCALAR).splitlines() if line.startswith("**Labels a PT2")]
    assert (
        said.startswith("**Labels a PT2 triager would set**: `oncall: pt2` (")
        and "`module: dynamo` (" in said
    )
    publish(
        fake, tmp_path, tonight("2.12.0.dev20260402"), settings=TrackerSettings(repo=REPO, triage_labels=True)
    )
    for issue in fake.issues(REPO):
        assert [label["name"] for label in issue["labels"]] == [
            "module: dynamo",
            "triagebot",
            "oncall: pt2",
            "module: dynamic shapes",
        ]


def test_a_dry_run_searches_but_keeps_nothing(fake, clock, tmp_path):
    _, store, _ = publish(fake, tmp_path, tonight("2.12.0.dev20260401"), dry_run=True)
    assert fake.searches and stored_searches(store, UPSTREAM) == {}


@pytest.mark.parametrize("groups", [60, 400])
def test_a_night_of_many_known_groups_still_fits_and_stays_whole(groups):
    from triagebot.analysis.triage import with_searches
    from triagebot.report.bodies import issue_rendering
    from triagebot.report.fit import GITHUB_LIMIT, github_length
    from triagebot.results import UpstreamIssue, UpstreamSearch

    models = [f"Model{index}" for index in range(groups)]
    crashes = {
        SCALAR: {m: crash(message=f"Could not guard on data-dependent op_{m.lower()}") for m in models}
    }
    snapshot = nightly("2.12.0.dev20260401", crashes, models, flags=[SCALAR], git="g")
    night = pipeline.night_of(snapshot, LocalStore("/nonexistent-store"), Config())
    hostile = "`x` <details> <!-- @ezyang #1 | ```" * 10
    found = [
        UpstreamIssue(number=n, title=hostile, state="open", url="u", matched=["a" * 50]) for n in (1, 2, 3)
    ]
    searches = {
        group.signature: UpstreamSearch(
            repo=UPSTREAM, signature=group.signature, key=night.key, matches=found
        )
        for group in night.flags[SCALAR].stats.crash_groups
    }
    text, detail = issue_rendering(with_searches(night, searches), SCALAR)
    assert github_length(text) <= GITHUB_LIMIT and markdown_problems(text) == []
    assert "@ezyang" not in text and "<!--" not in text.split("\n", 1)[1]
    # What is shed first: the titles and words; the issue numbers stay until a group is one line.
    listed = (
        "Possibly known upstream**: pytorch/pytorch#1 (open); pytorch/pytorch#2 (open); pytorch/pytorch#3"
    )
    assert (listed in text) == (not detail.compact)  # no tracker repository here: OWNER/NAME#N
    assert "x` <details>" not in text
