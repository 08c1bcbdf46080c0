"""`/rerun-sweep` keeps its word: what a bare command sweeps, the cap on `models=`, honest
answers of any size, failed sweeps answered, no command lost, bounded polling."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from builders import crash, nightly
from climain import run_main
from fakegithub import serve
from test_commands import (
    FLAGS,
    MODELS,
    REPO,
    SCALAR,
    command_payload,
    decide,
    gh_for,
    issue_flag,
    parse,
    poll,
    rerun_snapshot,
    stored_snapshot,
    tracked_issue,
)

from triagebot.config import TrackerSettings, parse_config
from triagebot.report.markers import result_marker
from triagebot.results import Snapshot
from triagebot.store import LocalStore, MemoryStore, write_snapshot
from triagebot.tracker import answer, commands, rerun
from triagebot.tracker.commands import Kind
from triagebot.tracker.dispatch import CommandOptions, Step
from triagebot.tracker.ledger import Ledger

NOW = datetime.fromtimestamp(1_700_000_000, UTC)  # the fake GitHub's clock


@pytest.fixture
def fake():
    yield from serve(repo=REPO)


def crashing_night(key: str, groups: dict[str, list[str]], flag: str = SCALAR) -> Snapshot:
    """signature -> models crashing (confirmed) under `flag`; nothing else crashes."""
    crashing = {model: signature for signature, models in groups.items() for model in models}
    crashes = {model: crash("E", signature=signature, error=None) for model, signature in crashing.items()}
    return nightly(
        key, {flag: crashes}, [*sorted(crashing), "CleanModel"], flags=[flag], corpus="transformers"
    )


# --- what a command sweeps ---------------------------------------------------------------------


def test_a_bare_command_reruns_what_the_issue_lists_as_crashing_not_the_corpus():
    accepted = decide(rerun.read_event(command_payload("/rerun-sweep")), stored=stored_snapshot())
    assert accepted.kind == Kind.run
    assert accepted.request.models == ["BertModel", "T5Model"]  # crashing under SCALAR, not all MODELS
    assert rerun.outputs(accepted)["models"] == "BertModel,T5Model"
    assert rerun.outputs(accepted)["corpus"] == "smoke"

    nothing = decide(rerun.read_event(command_payload("/rerun-sweep")), stored=None)
    assert nothing.kind == Kind.refuse and "name the models with models=" in nothing.reason


def test_a_bare_command_over_the_cap_takes_every_signature_first():
    big = crashing_night(
        "2.12.0.dev20260410", {"A: big": [f"A{i:03}" for i in range(30)], "B: small": ["B1"]}
    )
    models, total = rerun.crashing_models(big, SCALAR, 5)
    assert total == 31 and len(models) == 5 and "B1" in models and models[0] == "A000"


def test_models_beyond_the_cap_are_refused_naming_the_cap():
    many = ",".join(MODELS)
    command = commands.parse_command(f"/rerun-sweep models={many}", MODELS, FLAGS, max_models=2)
    assert command.kind == Kind.refuse
    assert command.reason == "it names 3 models, and a rerun takes at most 2 (`tracker.rerun_max_models`)"
    assert TrackerSettings().rerun_max_models == 20
    accepted = decide(rerun.read_event(command_payload(f"/rerun-sweep models={many}")), rerun_max_models=3)
    assert accepted.kind == Kind.run


def test_a_command_is_decided_under_the_configs_own_keys(tmp_path):
    # What deciding needs is read once from triagebot.toml and the store, under the keys' names.
    config = parse_config("[sweep]\nconfirm = 3\n[tracker]\nrerun_max_models = 1\n")
    store = MemoryStore([stored_snapshot()])
    step = Step(CommandOptions(), config, store, store.get, lambda _: None, lambda _: None)
    settings = step.rerun_settings()
    assert settings.stored is not None and settings.known_models == MODELS
    event = rerun.read_event(command_payload("/rerun-sweep"))
    decision = rerun.decide(
        event, settings, bot_login="triagebot-bot", issue_flag=issue_flag, permission=lambda _: "admin"
    )
    assert decision.kind == Kind.run and decision.request.confirm == 3  # `sweep.confirm`
    assert decision.request.models == ["BertModel"]  # one, `tracker.rerun_max_models`


@pytest.mark.parametrize(
    "body",
    [
        "    /rerun-sweep",
        "\t/rerun-sweep models=BertModel",
        "  \t/rerun-sweep",
        "> can you rerun?\n/rerun-sweep",  # a lazy continuation of the quote
        "<!--\n/rerun-sweep\n-->",
        "<!-- /rerun-sweep -->",
        " > /rerun-sweep",
    ],
)
def test_commands_in_indented_code_lazy_quotes_and_html_comments_never_run(body):
    assert parse(body).kind == Kind.none


def test_plain_commands_still_run():
    assert parse("   /rerun-sweep models=BertModel").kind == Kind.run  # three spaces: still text
    assert parse("<!-- note -->\n/rerun-sweep models=BertModel").kind == Kind.run
    assert parse("> quoted\n\n/rerun-sweep models=BertModel").kind == Kind.run


# --- honest answers of any size ----------------------------------------------------------------


def test_no_longer_crashing_lists_only_models_that_crashed_in_the_stored_snapshot():
    rows = answer.answer_rows(rerun_snapshot(), stored_snapshot())
    # T5Model crashed in the store and runs now; LlamaForCausalLM never crashed there: flaky now.
    assert [row.model for row in rows["fixed"]] == ["T5Model"]
    clean_stored = stored_snapshot().model_copy(update={"results": []})
    rows = answer.answer_rows(rerun_snapshot(), clean_stored)
    assert rows["fixed"] == [] and [row.model for row in rows["clean"]] == ["T5Model"]
    assert [row.model for row in rows["new"]] == ["BertModel"] and rows["still"] == []


def test_the_answer_to_a_600_model_rerun_fits_and_keeps_its_counts():
    signatures = {f"Error{i}: crash number {i} " + "x" * 150: [f"Model{i:04}"] for i in range(600)}
    stored = crashing_night("2.12.0.dev20260409", signatures)
    still = crashing_night("2.12.0.dev20260410", signatures)
    body = answer.answer_body(7, "maintainer", still, stored, None)
    assert len(body) <= 65_536 and body.startswith(result_marker(7))
    shown = re.findall(r"^\| `Model\d{4}` \|", body, re.M)
    more = re.search(r"^And (\d+) more rows\.$", body, re.M)
    assert "600 still crashing" in body and shown and more
    assert len(shown) + int(more[1]) == 600


def test_a_failed_sweep_is_answered_with_its_reason_and_a_confused_reaction(
    fake, monkeypatch, capsys, tmp_path
):
    number = tracked_issue(fake)
    fake.permissions["maintainer"] = "write"
    comment = fake.add_comment(REPO, number, "/rerun-sweep", "maintainer")
    gh = gh_for(fake)
    answer.react(gh, REPO, number, comment["id"], "eyes")
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.setenv("GITHUB_TOKEN", "bot-token")
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "someone/triagebot-fork")
    monkeypatch.setenv("GITHUB_RUN_ID", "42")
    argv = ["command", "--failed", "failure", "--repo", REPO, "--issue", str(number)]
    argv += ["--comment-id", str(comment["id"]), "--store", str(tmp_path / "store")]
    for _ in range(2):  # the answer job run twice still answers once
        ran = run_main(monkeypatch, capsys, *argv)
        assert ran.status == 0, ran.err
    answers = [c["body"] for c in fake.comments(REPO, number) if c["user"]["login"] == "triagebot-bot"]
    assert len(answers) == 1
    assert (
        "@maintainer, this `/rerun-sweep` got no result: its job failed, or ran past its time limit"
        in answers[0]
    )
    assert "https://github.com/someone/triagebot-fork/actions/runs/42" in answers[0]
    assert fake.reactions(REPO, comment["id"]) == ["eyes", "confused"]


def test_in_actions_the_answer_links_each_model_to_its_page_on_the_dashboard(
    fake, monkeypatch, capsys, tmp_path
):
    number = tracked_issue(fake)
    fake.permissions["maintainer"] = "write"
    comment = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model,BertModel", "maintainer")
    answer.react(gh_for(fake), REPO, number, comment["id"], "eyes")
    LocalStore(tmp_path / "store").put(stored_snapshot())
    write_snapshot(rerun_snapshot(), tmp_path / "rerun.json")
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.setenv("GITHUB_TOKEN", "bot-token")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_REPOSITORY", "someone/triagebot-fork")  # the site: its Pages address
    argv = ["command", "--answer", str(tmp_path / "rerun.json"), "--repo", REPO, "--issue", str(number)]
    ran = run_main(
        monkeypatch, capsys, *argv, "--comment-id", str(comment["id"]), "--store", str(tmp_path / "store")
    )
    assert ran.status == 0, ran.err
    text = fake.comments(REPO, number)[-1]["body"]
    site = "https://someone.github.io/triagebot-fork/"
    assert f"| [`BertModel`]({site}models/BertModel.html) |" in text
    assert f"| [`T5Model`]({site}models/T5Model.html) |" in text
    assert answer.answer_body(7, "maintainer", rerun_snapshot(), stored_snapshot(), None).count(site) == 0


# --- no command lost ---------------------------------------------------------------------------


def test_polling_finds_an_accepted_command_that_never_got_an_answer(fake):
    gh = gh_for(fake)
    number = tracked_issue(fake)
    fake.permissions["maintainer"] = "write"
    comment = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "maintainer")
    # The event workflow accepted it; its sweep was lost.
    answer.react(gh, REPO, number, comment["id"], "eyes")
    ledger = Ledger(REPO)

    assert poll(gh, ledger, now=NOW).kind == Kind.none  # in flight, as far as anyone knows
    assert ledger.get(comment["id"]).state == "accepted"
    assert poll(gh, ledger, now=NOW + timedelta(hours=1)).kind == Kind.none

    again = poll(gh, ledger, now=NOW + timedelta(hours=7))  # stale: its sweep is started again
    assert again.kind == Kind.run and again.request.comment_id == comment["id"]
    assert again.request.models == ["T5Model"] and ledger.get(comment["id"]).attempts == 2

    assert poll(gh, ledger, now=NOW + timedelta(hours=14)).kind == Kind.none  # twice lost: answered
    assert ledger.get(comment["id"]).state == "failed"
    failed = fake.comments(REPO, number)[-1]["body"]
    assert "got no result: no result came back from 2 sweeps" in failed
    assert fake.reactions(REPO, comment["id"]) == ["eyes", "confused"]


def test_a_restarted_command_never_runs_text_edited_after_it_was_accepted(fake):
    gh = gh_for(fake)
    number = tracked_issue(fake)
    fake.permissions["maintainer"] = "write"
    comment = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "maintainer")
    answer.react(gh, REPO, number, comment["id"], "eyes")  # accepted; its sweep was lost
    ledger = Ledger(REPO)
    assert poll(gh, ledger, now=NOW).kind == Kind.none
    fake.edit_comment(REPO, comment["id"], "/rerun-sweep models=BertModel confirm=3")

    stale = poll(gh, ledger, now=NOW + timedelta(hours=7))
    assert stale.kind == Kind.none  # commands_on_edited is off: the edited text never runs
    assert ledger.get(comment["id"]).state == "failed"
    failed = fake.comments(REPO, number)[-1]["body"]
    assert "it cannot start again" in failed and "edited" in failed
    assert fake.reactions(REPO, comment["id"]) == ["eyes", "confused"]


def test_polling_learns_of_an_answer_from_its_marker(fake):
    gh = gh_for(fake)
    number = tracked_issue(fake)
    fake.permissions["maintainer"] = "write"
    comment = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "maintainer")
    ledger = Ledger(REPO)
    assert poll(gh, ledger, now=NOW).kind == Kind.run
    answer.post_answer(gh, REPO, number, comment["id"], rerun_snapshot(), stored_snapshot())
    assert poll(gh, ledger, now=NOW + timedelta(hours=9)).kind == Kind.none
    assert ledger.get(comment["id"]).state == "answered"


def test_the_bot_s_own_account_is_read_as_a_maintainer_but_never_its_own_answers(fake):
    """A deployment whose token is the maintainer's own account: their /rerun-sweep is read on
    both paths, the answers the account writes (each opening with a marker) never are."""
    gh = gh_for(fake)
    number = tracked_issue(fake)
    fake.permissions["triagebot-bot"] = "admin"
    comment = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "triagebot-bot", "OWNER")
    ledger = Ledger(REPO)

    accepted = poll(gh, ledger, now=NOW)
    assert accepted.kind == Kind.run and accepted.request.comment_id == comment["id"]
    event = decide(rerun.read_event(command_payload("/rerun-sweep models=T5Model", author="triagebot-bot")))
    assert event.kind == Kind.run

    answer.post_answer(gh, REPO, number, comment["id"], rerun_snapshot(), stored_snapshot())
    (posted,) = [c for c in fake.comments(REPO, number) if c["id"] != comment["id"]]
    assert posted["body"].startswith(result_marker(comment["id"]))
    assert poll(gh, ledger, now=NOW + timedelta(hours=9)).kind == Kind.none
    assert ledger.get(comment["id"]).state == "answered" and posted["id"] not in ledger.records
    own_answer = f"{result_marker(comment['id'])}\n/rerun-sweep help"
    assert decide(rerun.read_event(command_payload(own_answer, author="triagebot-bot"))).kind == Kind.none


# --- bounded polling ---------------------------------------------------------------------------


def test_thirty_commands_from_a_reader_get_one_refusal_and_no_reaction_is_read_twice(fake):
    gh = gh_for(fake)
    number = tracked_issue(fake)
    fake.permissions["reader"] = "read"
    posted = [fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "reader") for _ in range(30)]
    store = MemoryStore()
    ledger = Ledger.load(store, REPO)
    assert poll(gh, ledger, now=NOW).kind == Kind.none
    ledger.save(store)
    bot = [c for c in fake.comments(REPO, number) if c["user"]["login"] == "triagebot-bot"]
    assert len(bot) == 1 and "needs write access" in bot[0]["body"]
    assert sum(len(fake.reactions(REPO, c["id"])) for c in posted) == 1
    states = [record.state for record in Ledger.load(store, REPO).records.values()]
    assert sorted(states) == ["quiet"] * 29 + ["refused"]

    fake.requests.clear()
    writes = len(fake.writes)
    assert poll(gh, Ledger.load(store, REPO), now=NOW + timedelta(days=3)).kind == Kind.none
    assert len(fake.writes) == writes
    assert not any(path.endswith("/reactions") for _, path in fake.requests)  # the ledger knows


def test_a_poll_stays_within_max_writes(fake):
    gh = gh_for(fake)
    number = tracked_issue(fake)
    for index in range(10):
        fake.add_comment(REPO, number, "/rerun-sweep help", f"person{index}")
    writes = len(fake.writes)
    ledger = Ledger(REPO)
    poll(gh, ledger, now=NOW, max_writes=5)
    assert len(fake.writes) - writes == 4  # two help answers of two writes each; a third won't fit
    poll(gh, ledger, now=NOW, max_writes=5)
    assert len(fake.writes) - writes == 8
    helps = [c for c in fake.comments(REPO, number) if c["user"]["login"] == "triagebot-bot"]
    assert len(helps) == 4


def test_polling_obeys_commands_on_edited(fake):
    gh = gh_for(fake)
    number = tracked_issue(fake)
    fake.permissions["maintainer"] = "write"
    comment = fake.add_comment(REPO, number, "thanks for the report", "maintainer")
    fake.edit_comment(REPO, comment["id"], "/rerun-sweep models=T5Model")
    ledger = Ledger(REPO)
    assert poll(gh, ledger, now=NOW).kind == Kind.none
    assert fake.reactions(REPO, comment["id"]) == [] and ledger.get(comment["id"]).state == "ignored"
    fake.requests.clear()
    assert poll(gh, ledger, now=NOW).kind == Kind.none
    assert not any(path.endswith("/reactions") for _, path in fake.requests)  # not looked at again
    assert poll(gh, Ledger(REPO), now=NOW, commands_on_edited=True).kind == Kind.run


@pytest.mark.parametrize("on_edited", [False, True])
def test_an_edited_comment_on_the_event_path_is_decided_as_polling_decides_it(
    fake, monkeypatch, capsys, tmp_path, on_edited
):
    """rerun-sweep.yml's issue_comment trigger takes `edited` too: `commands_on_edited` decides
    there as it does for a poll (`rerun.decide` on both paths)."""
    number = tracked_issue(fake)
    fake.permissions["maintainer"] = "write"
    comment = fake.add_comment(REPO, number, "thanks for the report", "maintainer")
    fake.edit_comment(REPO, comment["id"], "/rerun-sweep models=T5Model")
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.setenv("GITHUB_TOKEN", "bot-token")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "triagebot.toml").write_text(f"[tracker]\ncommands_on_edited = {str(on_edited).lower()}\n")
    LocalStore(tmp_path / "store").put(stored_snapshot())
    data = command_payload(
        "/rerun-sweep models=T5Model", author="maintainer", name="issue_comment.edited.json"
    )
    data["comment"].update(id=comment["id"], created_at=comment["created_at"])
    data["issue"]["number"] = number
    (tmp_path / "event.json").write_text(json.dumps(data))

    ran = run_main(
        monkeypatch, capsys, "command", "--event", "event.json", "--store", "store", "--output", "o"
    )

    assert ran.status == 0, ran.err
    assert data["action"] == "edited" and f"run={str(on_edited).lower()}" in ran.out
    # As test_polling_obeys_commands_on_edited: an edited comment ignored is not even reacted to.
    assert bool(fake.reactions(REPO, comment["id"])) is on_edited


@pytest.mark.parametrize(
    ("toml", "missing"),
    [
        ("", "no tracker repository ([tracker] repo in triagebot.toml, or the TRIAGEBOT_REPO variable)"),
        (
            f'[tracker]\nrepo = "{REPO}"\n',
            f"no token to read {REPO}'s issues with (the TRIAGEBOT_TOKEN secret)",
        ),
    ],
)
def test_a_poll_with_nothing_to_poll_ends_with_a_notice(monkeypatch, capsys, tmp_path, toml, missing):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("TRIAGEBOT_TOKEN", raising=False)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    (tmp_path / "triagebot.toml").write_text(toml)

    ran = run_main(monkeypatch, capsys, "command", "--poll", "--store", "store", "--output", "o")

    assert ran.status == 0, ran.err
    assert ran.out.splitlines()[0] == f"::notice::nothing polled: {missing}"
    assert "run=false" in (tmp_path / "o").read_text()


def test_the_event_path_answers_a_reader_once_a_day(fake, monkeypatch, capsys, tmp_path):
    number = tracked_issue(fake)
    fake.permissions["reader"] = "read"
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.setenv("GITHUB_TOKEN", "bot-token")
    LocalStore(tmp_path / "store").put(stored_snapshot())
    for index in range(3):
        comment = fake.add_comment(REPO, number, "/rerun-sweep", "reader")
        data = command_payload(comment["body"], author="reader")
        data["comment"].update(id=comment["id"], created_at=comment["created_at"])
        data["issue"]["number"] = number
        event = tmp_path / f"event{index}.json"
        event.write_text(json.dumps(data))
        argv = [
            "command",
            "--event",
            str(event),
            "--store",
            str(tmp_path / "store"),
            "--output",
            str(tmp_path / "o"),
        ]
        ran = run_main(monkeypatch, capsys, *argv)
        assert ran.status == 0 and "run=false" in ran.out
    refusals = [c for c in fake.comments(REPO, number) if c["user"]["login"] == "triagebot-bot"]
    assert len(refusals) == 1


def test_a_comment_that_cannot_fit_is_refused_never_cut():
    from triagebot.errors import RenderError
    from triagebot.tracker.render import render

    body = render("tracker-refusal.md.j2", marker="<!-- m -->", user="someone", reason="x" * 60_000)
    assert len(body) <= 65_536 and body.startswith("<!-- m -->")
    with pytest.raises(RenderError, match="does not fit"):
        render("tracker-refusal.md.j2", marker="<!-- m -->", user="someone", reason="x" * 100_000)


def test_the_daily_refusal_reads_githubs_times_so_it_holds_without_a_ledger(fake):
    gh = gh_for(fake)
    number = tracked_issue(fake)
    fake.permissions["reader"] = "read"
    for _ in range(3):
        fake.add_comment(REPO, number, "/rerun-sweep", "reader")
    poll(gh, Ledger(REPO), now=NOW)
    poll(gh, Ledger(REPO), now=NOW + timedelta(days=3))  # a store that forgot everything
    bot = [c for c in fake.comments(REPO, number) if c["user"]["login"] == "triagebot-bot"]
    assert len(bot) == 1

    fake.clock = lambda: NOW.timestamp() + 3 * 86_400  # a new command, days after the refusal
    fake.add_comment(REPO, number, "/rerun-sweep", "reader")
    poll(gh, Ledger(REPO), now=NOW + timedelta(days=3))
    bot = [c for c in fake.comments(REPO, number) if c["user"]["login"] == "triagebot-bot"]
    assert len(bot) == 2
