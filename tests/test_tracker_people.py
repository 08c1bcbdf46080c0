"""The bot's issues are its own, and people win: markers only on the first line of the bot's
bodies, the store's memory of flag -> issue, an issue a person closed stays closed until
something new crashes, and people a body edit adds are reached by a comment."""

from __future__ import annotations

import pytest
from builders import DYNAMIC, REPO, SCALAR, crash, night_of, nightly
from fakegithub import point_tracker_at, serve
from test_tracker import MODELS

from triagebot.config import CcRoute, Config, TrackerSettings
from triagebot.report.markers import flag_marker
from triagebot.results import IssueRecord, Snapshot
from triagebot.store import MemoryStore
from triagebot.tracker.publish_night import publish_tracking_issues

GUARD = "GuardOnDataDependentSymNode: Could not guard on data-dependent expression Eq(u*, 0)"
PENDING = "PendingUnbackedSymbolNotFound: Pending unbacked symbols {u*} not in returned outputs"


def night(key: str, crashes: dict[str, dict[str, str]]) -> Snapshot:
    """flag -> {model: signature}: those crash (confirmed); every other run is clean."""
    outcomes = {
        flag: {
            model: crash(*signature.split(": ", 1), signature=signature)
            for model, signature in by_model.items()
        }
        for flag, by_model in crashes.items()
    }
    return nightly(key, outcomes, MODELS, git=f"git{key}")


@pytest.fixture
def fake(monkeypatch):
    for fake in serve():
        point_tracker_at(fake, monkeypatch)
        yield fake


def publish(
    nights: list[Snapshot], store=None, settings: TrackerSettings | None = None, tmp_path=None
) -> str:
    config = Config(tracker=settings or TrackerSettings(repo=REPO))
    night = night_of(nights[-1], nights[:-1], config)
    return publish_tracking_issues(
        night, config, "bot-token", False, tmp_path, store=store, say=lambda _: None
    ).line


def test_a_marker_quoted_in_crash_text_does_not_take_over_another_issue(fake, tmp_path):
    # An issue of the bot for DYNAMIC whose body quotes SCALAR's marker below its first line, as
    # crash text from model code could: SCALAR still gets an issue of its own.
    quoting = f"{flag_marker(DYNAMIC)}\nerror: {flag_marker(SCALAR)}"
    fake.add_issue(REPO, "dynamic", quoting, "triagebot-bot")
    nights = [night("2.12.0.dev20260401", {SCALAR: {"Bert": GUARD}, DYNAMIC: {"T5": GUARD}})]
    publish(nights, tmp_path=tmp_path)
    publish(nights, tmp_path=tmp_path)
    firsts = [issue["body"].splitlines()[0] for issue in fake.issues(REPO)]
    assert firsts == [flag_marker(DYNAMIC), flag_marker(SCALAR)]


def test_a_removed_marker_does_not_open_a_duplicate(fake, tmp_path):
    store = MemoryStore()
    first = night("2.12.0.dev20260401", {SCALAR: {"Bert": GUARD}})
    publish([first], store, tmp_path=tmp_path)
    (issue,) = fake.issues(REPO)
    assert store.records(f"issues/{REPO}", IssueRecord)[SCALAR].number == issue["number"]
    fake.edit_issue(REPO, issue["number"], "a-maintainer", body="my notes, no marker")

    second = night("2.12.0.dev20260402", {SCALAR: {"Bert": GUARD, "T5": GUARD}})
    publish([first, second], store, tmp_path=tmp_path)
    (issue,) = fake.issues(REPO)  # no duplicate: the store knew the number
    assert issue["body"].startswith(flag_marker(SCALAR))  # the body is the bot's again


def test_an_issue_a_person_closed_stays_closed_until_a_new_signature(fake, tmp_path):
    store = MemoryStore()
    site = "https://someone.github.io/triagebot/"
    settings = TrackerSettings(repo=REPO, dashboard_url=site)
    nights = [night("2.12.0.dev20260401", {SCALAR: {"Bert": GUARD}})]
    publish(nights, store, settings, tmp_path=tmp_path)
    number = fake.issues(REPO)[0]["number"]
    fake.edit_issue(REPO, number, "a-maintainer", state="closed", state_reason="not_planned")

    # The same signature, in more models: the person's decision stands.
    nights.append(night("2.12.0.dev20260402", {SCALAR: {"Bert": GUARD, "Llama": GUARD}}))
    publish(nights, store, settings, tmp_path=tmp_path)
    assert fake.issues(REPO)[0]["state"] == "closed"
    assert fake.comments(REPO, number) == [] or all(
        "Reopened" not in c["body"] for c in fake.comments(REPO, number)
    )
    record = store.records(f"issues/{REPO}", IssueRecord)[SCALAR]
    assert record.closed_by == "a-maintainer" and record.closed_signatures == [GUARD]

    # A signature it did not show when it was closed: reopened, the comment names it.
    nights.append(night("2.12.0.dev20260403", {SCALAR: {"Bert": GUARD, "T5": PENDING}}))
    publish(nights, store, settings, tmp_path=tmp_path)
    assert fake.issues(REPO)[0]["state"] == "open"
    reopened = [c["body"] for c in fake.comments(REPO, number) if "Reopened" in c["body"]]
    assert len(reopened) == 1
    assert "PendingUnbackedSymbolNotFound" in reopened[0] and "@a-maintainer closed it" in reopened[0]
    assert "GuardOnDataDependentSymNode" not in reopened[0]
    assert f"([1 model]({site}flags/{SCALAR}.html#crash-" in reopened[0]  # the group, on the dashboard
    writes = len(fake.writes)
    publish(nights, store, settings, tmp_path=tmp_path)
    assert len(fake.writes) == writes


def test_without_a_memory_a_person_closed_issue_stays_closed_on_the_same_crashes(fake, tmp_path):
    nights = [night("2.12.0.dev20260401", {SCALAR: {"Bert": GUARD}})]
    publish(nights, tmp_path=tmp_path)
    fake.edit_issue(REPO, 1, "a-maintainer", state="closed")
    nights.append(night("2.12.0.dev20260402", {SCALAR: {"Bert": GUARD}}))
    publish(nights, tmp_path=tmp_path)
    assert fake.issues(REPO)[0]["state"] == "closed"


def test_the_bot_reopens_what_it_closed_itself(fake, tmp_path):
    store = MemoryStore()
    nights = [night(f"2.12.0.dev202604{day:02}", {SCALAR: {"Bert": GUARD}}) for day in range(1, 8)]
    nights += [night(f"2.12.0.dev202604{day:02}", {}) for day in (8, 9)]
    for end in (1, len(nights) - 1, len(nights)):
        publish(nights[:end], store, tmp_path=tmp_path)
    assert fake.issues(REPO)[0]["state"] == "closed"
    nights.append(night("2.12.0.dev20260410", {SCALAR: {"Bert": GUARD}}))
    publish(nights, store, tmp_path=tmp_path)
    assert fake.issues(REPO)[0]["state"] == "open"


def test_a_person_routed_onto_an_existing_issue_is_mentioned_once_in_a_comment(fake, tmp_path):
    store = MemoryStore()
    settings = TrackerSettings(
        repo=REPO, cc={SCALAR: ["ezyang"]}, cc_routes=[CcRoute(pattern="PendingUnbacked", people=["bobren"])]
    )
    nights = [night("2.12.0.dev20260401", {SCALAR: {"Bert": GUARD}})]
    publish(nights, store, settings, tmp_path=tmp_path)
    number = fake.issues(REPO)[0]["number"]
    assert "@ezyang" in fake.issues(REPO)[0]["body"] and fake.comments(REPO, number) == []  # opening pings

    nights.append(night("2.12.0.dev20260402", {SCALAR: {"Bert": GUARD, "T5": PENDING}}))
    publish(nights, store, settings, tmp_path=tmp_path)
    assert "@bobren" in fake.issues(REPO)[0]["body"]
    # One comment a night: the cc notice is folded into the regression notice's comment.
    cc = [c["body"] for c in fake.comments(REPO, number) if "triagebot:cc" in c["body"]]
    assert len(cc) == 1 and "@bobren" in cc[0] and "@ezyang" not in cc[0]
    assert "PendingUnbackedSymbolNotFound" in cc[0]

    publish(nights, store, settings, tmp_path=tmp_path)  # a rerun of the same night
    nights.append(night("2.12.0.dev20260403", {SCALAR: {"T5": PENDING}}))
    publish(nights, store, settings, tmp_path=tmp_path)  # still routed: already reached
    mentions = [c for c in fake.comments(REPO, number) if "@bobren" in c["body"]]
    assert len(mentions) == 1


def test_a_crash_torch_reworded_does_not_undo_a_persons_close(fake, tmp_path):
    reworded = "GuardOnDataDependentSymNode: Could not guard on data-dependent expression Ne(u*, 0)"
    store = MemoryStore()
    nights = [night("2.12.0.dev20260401", {SCALAR: {"Bert": GUARD}})]
    publish(nights, store, tmp_path=tmp_path)
    number = fake.issues(REPO)[0]["number"]
    fake.edit_issue(REPO, number, "a-maintainer", state="closed", state_reason="not_planned")
    # The group says it continues the old signature: the same crash, in torch's new words.
    for day in ("02", "03", "04"):
        nights.append(night(f"2.12.0.dev202604{day}", {SCALAR: {"Bert": reworded}}))
        publish(nights, store, tmp_path=tmp_path)
        assert fake.issues(REPO)[0]["state"] == "closed", day
    assert all("Reopened" not in c["body"] for c in fake.comments(REPO, number))
    # A crash it never showed still reopens it.
    nights.append(night("2.12.0.dev20260405", {SCALAR: {"Bert": reworded, "T5": PENDING}}))
    publish(nights, store, tmp_path=tmp_path)
    assert fake.issues(REPO)[0]["state"] == "open"
