"""`/rerun-sweep`: grammar, hostile input, real event payloads, permissions and answers."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from builders import DYNAMIC, SCALAR, crash, nightly, ok
from fakegithub import serve
from fakegithub.recorded import API_FIXTURES, WEBHOOK_FIXTURES
from typer.testing import CliRunner

from triagebot.config import Config, TrackerSettings
from triagebot.report.markers import find_flag, flag_marker
from triagebot.results import CorpusSelection, Snapshot
from triagebot.store import LocalStore
from triagebot.tracker import answer, commands, polling, rerun
from triagebot.tracker.commands import Kind
from triagebot.tracker.github import RetryPolicy, connect
from triagebot.tracker.ledger import Ledger
from triagebot.tracker.remote import first_line

REPO = "Codertocat/Hello-World"  # the repository of the recorded payloads
MODELS = ["BertModel", "LlamaForCausalLM", "T5Model"]
FLAGS = [SCALAR, DYNAMIC]


def parse(body: str) -> commands.Command:
    return commands.parse_command(body, MODELS, FLAGS)


def test_grammar():
    command = parse("/rerun-sweep models=BertModel,T5Model flags=capture_scalar_outputs confirm=3\nthanks!")
    assert (command.kind, command.models, command.flags, command.confirm) == (
        Kind.run,
        ["BertModel", "T5Model"],
        [SCALAR],
        3,
    )
    assert parse("/rerun-sweep").kind == Kind.run
    assert parse("  /rerun-sweep help  ").kind == Kind.help
    assert parse("/rerun-sweep models=BertModel,BertModel").models == ["BertModel"]
    assert "unknown model `GPT9`" in parse("/rerun-sweep models=GPT9").reason


def test_a_model_of_another_suite_is_named_by_its_key():
    keys = [*MODELS, "timm/resnet10t", "diffusers/UNet2DModel"]
    command = commands.parse_command("/rerun-sweep models=timm/resnet10t,BertModel", keys, FLAGS)
    assert command.kind == Kind.run and command.models == ["timm/resnet10t", "BertModel"]
    assert commands.parse_command("/rerun-sweep models=diffusers/UNet2DModel", keys, FLAGS).models == [
        "diffusers/UNet2DModel"
    ]
    assert parse("/rerun-sweep models=../../etc").kind != Kind.run
    assert "unknown key" in parse("/rerun-sweep model=BertModel").reason
    assert "given twice" in parse("/rerun-sweep confirm=1 confirm=2").reason
    assert "0 to 5" in parse("/rerun-sweep confirm=9").reason
    assert "not key=value" in parse("/rerun-sweep now please").reason


@pytest.mark.parametrize(
    "body",
    [
        "> /rerun-sweep models=BertModel",
        "```\n/rerun-sweep models=BertModel\n```",
        "~~~~\n/rerun-sweep\n~~~~",
        "Try this:\n/rerun-sweep",
        "please /rerun-sweep",
        "`/rerun-sweep`",
        "/rerun-sweeps",
        "/rerun-sweep-all",
        "",
    ],
)
def test_commands_in_quotes_code_or_prose_are_ignored(body):
    assert parse(body).kind == Kind.none


def test_own_text_after_a_quote_counts():
    assert parse("> can you rerun?\n\n/rerun-sweep models=T5Model").models == ["T5Model"]


def hostile_strings() -> list[str]:
    metacharacters = [
        ";",
        "&&",
        "|",
        "`id`",
        "$(id)",
        "${IFS}",
        ">",
        "<",
        "\\",
        "'",
        '"',
        "\x0b",
        "%0A",
        "*",
        "?",
    ]
    strings = [f"/rerun-sweep models=BertModel{m}rm -rf ~" for m in metacharacters]
    strings += [f"/rerun-sweep flags={SCALAR}{m}x" for m in metacharacters]
    strings += [
        f"/rerun-sweep models={name}" for name in ("GPT9", "../etc/passwd", "BertModel/..", "-rf", "*")
    ]
    strings += [
        f"/rerun-sweep models={name}" for name in ("Ｂertmodel", "BertΜodel", "Bert\u200bModel", "bertmodel")
    ]
    strings += ["/rerun-sweep " + "models=BertModel," * 5000, "/rerun-sweep models=" + "A" * 100_000]
    strings += ["/rerun-sweep models=" + ",".join(["BertModel"] * 3 + ["X"]), "/rerun-sweep flags=baseline"]
    strings += ["/rerun-sweep confirm=" + c for c in ("-1", "6", "1e9", "0x1", "１", "99999999999", "")]
    strings += ["/rerun-sweep run=true", "/rerun-sweep models=BertModel run=true", "/rerun-sweep =BertModel"]
    strings += ["/rerun-sweep models=@octocat", "/rerun-sweep models=#123", "/rerun-sweep models=<!--x-->"]
    strings += ["/rerun-sweep models=" + chr(code) for code in range(0x2600, 0x2600 + 40)]
    strings += ["/rerun-sweep help me", "/rerun-sweep models= flags="]
    strings += ["/rerun-sweep models=BertModel\x00", "/rerun-sweep flags=" + "x" * 2000]
    return strings[:100]


def test_hundred_hostile_strings_run_nothing():
    strings = hostile_strings()
    assert len(strings) == 100
    for body in strings:
        command = parse(body)
        assert command.kind in (Kind.refuse, Kind.none), body
        assert rerun.outputs(rerun.Decision(command.kind)) == {"run": "false"}
        if command.kind == Kind.refuse:
            assert "\n" not in command.reason and len(command.reason) < 200
    assert sum(parse(body).kind == Kind.refuse for body in strings) == 100  # each refused in words


# --- real payloads ---


def test_the_kept_github_data_matches_its_source():
    source = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
    if not source.is_dir():
        pytest.skip(f"the source of tests/data/github is not at {source}")
    for kept, folder in ((API_FIXTURES, "github-api"), (WEBHOOK_FIXTURES, "github-webhooks")):
        for path in kept.iterdir():
            assert path.read_bytes() == (source / folder / path.name).read_bytes(), path.name


def payload(name: str) -> dict:
    return json.loads((WEBHOOK_FIXTURES / name).read_text())


def command_payload(
    body: str, *, author: str = "Codertocat", name: str = "issue_comment.created.json"
) -> dict:
    data = copy.deepcopy(payload(name))
    data["comment"]["body"] = body
    data["comment"]["user"]["login"] = author
    data["issue"]["user"]["login"] = "triagebot-bot"
    data["issue"]["body"] = f"{flag_marker(SCALAR)}\nreport"
    return data


def issue_flag(number: int, body: str) -> str | None:
    return find_flag(first_line(body))


def rerun_settings(stored: Snapshot | None = None, **tracker) -> rerun.RerunSettings:
    """The default configuration (its flags are FLAGS, `sweep.confirm` is 1) with `tracker`'s
    keys over its `[tracker]`, and `stored` as the newest stored nightly."""
    return rerun.RerunSettings(Config(tracker=TrackerSettings(**tracker)), stored)


def decide(event, *, permission="admin", bot="triagebot-bot", **settings):
    settings.setdefault("stored", stored_snapshot())  # its models are MODELS
    return rerun.decide(
        event,
        rerun_settings(**settings),
        bot_login=bot,
        issue_flag=issue_flag,
        permission=lambda login: permission,
    )


def test_read_event_on_real_payloads():
    event = rerun.read_event(payload("issue_comment.created.json"))
    assert (event.repo, event.issue, event.comment_id, event.author, event.action) == (
        REPO,
        1,
        492700400,
        "Codertocat",
        "created",
    )
    assert rerun.read_event(payload("issue_comment.created.with-organization.json")).repo == REPO
    assert rerun.read_event(payload("workflow_dispatch.json")) is None
    assert rerun.read_event(payload("issues.opened.json")) is None
    assert decide(rerun.read_event(payload("issue_comment.created.json"))).kind == Kind.none  # no command
    with pytest.raises(rerun.EventError, match="lacks"):
        rerun.read_event({"comment": {}, "issue": {}})


def test_decisions_on_real_payloads():
    accepted = decide(rerun.read_event(command_payload("/rerun-sweep models=T5Model confirm=2")))
    assert accepted.kind == Kind.run
    assert rerun.outputs(accepted) == {
        "run": "true",
        "repo": REPO,
        "issue": "1",
        "comment_id": "492700400",
        "models": "T5Model",
        "flags": SCALAR,
        "confirm": "2",
        "corpus": "smoke",  # the stored nightly's, whose models a command may name
    }
    reader = decide(rerun.read_event(command_payload("/rerun-sweep")), permission="read")
    assert reader.kind == Kind.refuse and "write access" in reader.reason
    assert rerun.outputs(reader) == {"run": "false"}
    edited = rerun.read_event(
        command_payload("/rerun-sweep models=T5Model", name="issue_comment.edited.json")
    )
    assert decide(edited).kind == Kind.none and decide(edited, commands_on_edited=True).kind == Kind.run
    deleted = rerun.read_event(command_payload("/rerun-sweep", name="issue_comment.deleted.json"))
    assert decide(deleted).kind == Kind.none
    # The token's account may be the maintainer's own: only its answers (a marker first) are skipped.
    own = rerun.read_event(command_payload("/rerun-sweep", author="triagebot-bot"))
    assert decide(own).kind == Kind.run
    own_answer = rerun.read_event(
        command_payload("<!-- triagebot:answer=1 -->\n/rerun-sweep", author="triagebot-bot")
    )
    assert decide(own_answer).kind == Kind.none
    untracked = command_payload("/rerun-sweep")
    untracked["issue"]["body"] = "a human issue"
    assert "not one of the bot's tracking issues" in decide(rerun.read_event(untracked)).reason
    quoted = rerun.read_event(command_payload("> /rerun-sweep\nno"))
    assert decide(quoted).kind == Kind.none


# --- on the fake GitHub ---


@pytest.fixture
def fake():
    yield from serve(repo=REPO)


def gh_for(fake):
    return connect(
        "bot-token", base_url=fake.base_url, sleep=lambda s: None, clock=fake.clock, policy=RetryPolicy()
    )


def tracked_issue(fake) -> int:
    return fake.add_issue(REPO, "tracking", f"{flag_marker(SCALAR)}\nreport", "triagebot-bot")["number"]


def poll(gh, ledger=None, **settings):
    from datetime import UTC, datetime

    now = settings.pop("now", None) or datetime(2026, 4, 10, tzinfo=UTC)
    settings.setdefault("stored", stored_snapshot())
    return polling.poll(
        gh,
        REPO,
        issue_flag=issue_flag,
        settings=rerun_settings(**settings),
        ledger=ledger if ledger is not None else Ledger(REPO),
        now=now,
        say=lambda _: None,
    )


def rerun_snapshot() -> Snapshot:
    """A rerun of SCALAR: BertModel crashes (confirmed), T5Model runs, LlamaForCausalLM's crash was flaky."""
    guard = crash(signature="Guard: @x #12 | y", error=None)
    return nightly(
        "2.12.0.dev20260410",
        {SCALAR: {"BertModel": guard, "LlamaForCausalLM": guard}},
        ["BertModel", "T5Model", "LlamaForCausalLM"],
        flags=[SCALAR],
        reruns={SCALAR: {"LlamaForCausalLM": ok(3)}},
        corpus=CorpusSelection(name="rerun", models=MODELS),
    )


def stored_snapshot() -> Snapshot:
    """The newest stored nightly: BertModel and T5Model crash under SCALAR, BertModel under DYNAMIC."""
    guard = crash(signature="Guard", error=None)
    crashes = {SCALAR: {"BertModel": guard, "T5Model": guard}, DYNAMIC: {"BertModel": guard}}
    return nightly("2.12.0.dev20260410", crashes, MODELS, flags=FLAGS, corpus="smoke")


def test_reader_refused_maintainer_runs_and_is_answered(fake):
    gh = gh_for(fake)
    number = tracked_issue(fake)
    fake.permissions.update({"reader": "read", "maintainer": "maintain"})
    refused = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model", "reader")
    ignored = fake.add_comment(REPO, number, "```\n/rerun-sweep\n```", "maintainer")
    accepted = fake.add_comment(REPO, number, "/rerun-sweep models=T5Model,BertModel", "maintainer")

    decision = poll(gh)
    assert decision.kind == Kind.run and decision.request.models == ["T5Model", "BertModel"]
    assert decision.request.requested_by == "maintainer"
    assert fake.reactions(REPO, refused["id"]) == ["confused"]
    assert fake.reactions(REPO, ignored["id"]) == []
    assert fake.reactions(REPO, accepted["id"]) == ["eyes"]
    answers = [c["body"] for c in fake.comments(REPO, number) if c["user"]["login"] == "triagebot-bot"]
    assert len(answers) == 1 and "needs write access" in answers[0] and "@reader" in answers[0]

    writes = len(fake.writes)
    assert poll(gh).kind == Kind.none and len(fake.writes) == writes  # each command handled once

    assert answer.pending_command(gh, REPO, number) == accepted["id"]
    answer.post_answer(gh, REPO, number, accepted["id"], rerun_snapshot(), stored_snapshot())
    answer.post_answer(gh, REPO, number, accepted["id"], rerun_snapshot(), stored_snapshot())  # job rerun
    text = fake.comments(REPO, number)[-1]["body"]
    assert "1 still crashing, 1 no longer crashing, 0 crashing now that did not crash there, 1 flaky" in text
    assert "| `BertModel` |" in text and "`Guard: @x #12 \\| y`" in text  # inert and table-safe
    assert sum("rerun-result" in c["body"] for c in fake.comments(REPO, number)) == 1
    assert fake.reactions(REPO, accepted["id"]) == ["eyes", "rocket"]
    assert answer.pending_command(gh, REPO, number) is None


def test_help_is_answered_with_the_grammar(fake):
    gh = gh_for(fake)
    number = tracked_issue(fake)
    asked = fake.add_comment(REPO, number, "/rerun-sweep help", "passerby")
    assert poll(gh).kind == Kind.none
    assert commands.GRAMMAR.splitlines()[0] in fake.comments(REPO, number)[-1]["body"]
    assert fake.reactions(REPO, asked["id"]) == ["rocket"]


def test_command_cli_writes_outputs_from_an_event(fake, tmp_path, monkeypatch):
    from triagebot.cli import app

    number = tracked_issue(fake)
    fake.permissions["maintainer"] = "admin"
    comment = fake.add_comment(
        REPO, number, "/rerun-sweep flags=capture_dynamic_output_shape_ops", "maintainer"
    )
    data = command_payload(comment["body"], author="maintainer")
    data["comment"]["id"] = comment["id"]
    data["issue"]["number"] = number
    event = tmp_path / "event.json"
    event.write_text(json.dumps(data))
    outputs = tmp_path / "outputs"
    LocalStore(tmp_path / "store").put(stored_snapshot())
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.setenv("GITHUB_TOKEN", "bot-token")
    monkeypatch.setenv("GITHUB_OUTPUT", str(outputs))
    result = CliRunner().invoke(app, ["command", "--event", str(event), "--store", str(tmp_path / "store")])
    assert result.exit_code == 0, result.output
    written = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert written["run"] == "true" and written["flags"] == DYNAMIC and written["issue"] == str(number)
    assert written["models"] == "BertModel,T5Model"  # what this (SCALAR) issue lists as crashing
    assert written["corpus"] == "smoke"
    assert "/rerun-sweep" not in outputs.read_text()  # never the raw comment
    assert fake.reactions(REPO, comment["id"]) == ["eyes"]
