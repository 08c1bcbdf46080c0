"""`/rerun-sweep bisect MODEL`, `link GROUP #N` and `unlink GROUP`: the same grammar and the
same permission rules as a rerun; the pin and the bisection are kept in the store and answered,
and the issue's entry for the group says them from its next update."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import crash, nightly, result
from climain import run_main
from fakegithub import serve
from test_commands import (
    FLAGS,
    MODELS,
    REPO,
    SCALAR,
    command_payload,
    gh_for,
    issue_flag,
    poll,
    rerun_settings,
    tracked_issue,
)

from triagebot.report.markers import result_marker
from triagebot.results import (
    BASELINE,
    Accuracy,
    AccuracyCheck,
    Bisection,
    Outcome,
    Probe,
    Reproduction,
    Snapshot,
    Status,
    Verdict,
    signature_id,
    wrong_result_signature,
)
from triagebot.store import LocalStore, bisections_by_signature
from triagebot.tracker import commands, rerun
from triagebot.tracker.commands import Kind
from triagebot.tracker.upstream_memory import stored_pins

GUARD = "GuardOnDataDependentSymNode: Could not guard on data-dependent expression Eq(u*, N)"
PENDING = "PendingUnbackedSymbolNotFound: Pending unbacked symbols {u*} not in returned outputs"
UPSTREAM = "pytorch/pytorch"


def stored(verified: bool = True) -> Snapshot:
    """The newest stored nightly: BertModel and T5Model crash under SCALAR with GUARD, and
    LlamaForCausalLM with PENDING; a verified reproduction of the GUARD group."""
    guard, pending = crash(signature=GUARD, error=None), crash(signature=PENDING, error=None)
    crashes = {SCALAR: {"BertModel": guard, "T5Model": guard, "LlamaForCausalLM": pending}}
    night = nightly("2.12.0.dev20260410", crashes, MODELS, flags=FLAGS, corpus="smoke")
    repro = Reproduction(flag=SCALAR, signature=GUARD, model="BertModel", script="raise", verified=verified)
    return night.model_copy(update={"reproductions": [repro]})


def parse(body: str) -> commands.Command:
    known = {signature_id(signature): signature for signature in (GUARD, PENDING)}
    return commands.parse_command(body, MODELS, FLAGS, known_groups=known)


def test_the_grammar_of_link_unlink_and_bisect():
    ident = signature_id(GUARD)
    for text in (ident, ident[:6], "Could not guard"):
        command = parse(f"/rerun-sweep link {text} #1234")
        assert (command.kind, command.signature, command.number) == (Kind.link, GUARD, 1234), text
    unlinked = parse(f"/rerun-sweep unlink {ident}")
    assert (unlinked.kind, unlinked.signature, unlinked.number) == (Kind.link, GUARD, None)
    assert parse("/rerun-sweep bisect T5Model").models == ["T5Model"]
    refused = {
        "/rerun-sweep link #12": "name the crash group",
        f"/rerun-sweep link {ident}": "link GROUP #N",
        f"/rerun-sweep link {ident} 12": "link GROUP #N",
        f"/rerun-sweep link {ident} #0": "#0 is no issue",  # never carried out as an unlink
        f"/rerun-sweep link {ident} #000": "#0 is no issue",
        "/rerun-sweep link Inductor #12": "no crash group",
        "/rerun-sweep link u* #12": "names 2 crash groups",
        "/rerun-sweep link @octocat #12": "no crash group",
        "/rerun-sweep bisect": "bisect takes one model",
        "/rerun-sweep bisect T5Model BertModel": "bisect takes one model",
        "/rerun-sweep bisect GPT9": "unknown model `GPT9`",
        "/rerun-sweep bisect $(id)": "not a model name",
    }
    for body, reason in refused.items():
        command = parse(body)
        assert command.kind == Kind.refuse and reason in command.reason, (body, command.reason)
        assert "@octocat" not in command.reason.replace("`@octocat`", "")  # quoted back inert
    assert commands.GRAMMAR.count("/rerun-sweep") == 5


def decided(body: str, *, permission: str = "admin", snapshot: Snapshot | None = None, upstream=UPSTREAM):
    return rerun.decide(
        rerun.read_event(command_payload(body)),
        rerun_settings(snapshot or stored(), upstream=upstream),
        bot_login="triagebot-bot",
        issue_flag=issue_flag,
        permission=lambda login: permission,
    )


def test_link_is_decided_like_a_rerun_and_its_outputs_are_names_and_numbers():
    ident = signature_id(GUARD)
    accepted = decided("/rerun-sweep link Could not guard #77")
    assert accepted.kind == Kind.link and accepted.pin.number == 77 and accepted.pin.by == "Codertocat"
    assert rerun.outputs(accepted) == {
        "run": "false",
        "link": "true",
        "group": ident,
        "number": "77",
        "repo": REPO,
        "issue": "1",
        "comment_id": "492700400",
    }
    assert rerun.outputs(decided(f"/rerun-sweep unlink {ident}"))["number"] == "0"
    reader = decided(f"/rerun-sweep link {ident} #77", permission="read")
    assert reader.kind == Kind.refuse and "write access" in reader.reason
    assert "no upstream repository" in decided(f"/rerun-sweep link {ident} #77", upstream=None).reason


def test_bisect_needs_a_crash_of_the_issues_flag_with_a_verified_reproduction():
    accepted = decided("/rerun-sweep bisect T5Model")  # in the GUARD group, reproduced by BertModel
    assert accepted.kind == Kind.bisect
    outputs = rerun.outputs(accepted)
    assert outputs["bisect"] == "true" and outputs["run"] == "false"
    assert (outputs["models"], outputs["flags"]) == ("T5Model", SCALAR)
    nothing_crashes = nightly("2.12.0.dev20260410", {}, MODELS, flags=FLAGS, corpus="smoke")
    clean = decided("/rerun-sweep bisect T5Model", snapshot=nothing_crashes)
    assert clean.kind == Kind.refuse and "has no confirmed crash under" in clean.reason
    unverified = decided("/rerun-sweep bisect LlamaForCausalLM")
    assert unverified.kind == Kind.refuse and "no verified reproduction" in unverified.reason
    reader = decided("/rerun-sweep bisect T5Model", permission="triage")
    assert reader.kind == Kind.refuse and "write access" in reader.reason


def test_bisect_of_a_wrong_result_is_refused_when_the_command_is_read():
    where = "logits"
    wrong = Outcome(
        status=Status.ok, graphs=2, accuracy=AccuracyCheck(verdict=Accuracy.mismatch, where=where)
    )
    night = stored()
    mismatch = result("T5Model", night.result("T5Model").outcomes[BASELINE], {SCALAR: wrong})
    repro = Reproduction(
        flag=SCALAR, signature=wrong_result_signature(where), model="T5Model", script="raise", verified=True
    )
    night = night.model_copy(
        update={
            "results": [mismatch if r.model == "T5Model" else r for r in night.results],
            "reproductions": [*night.reproductions, repro],
        }
    )
    refused = decided("/rerun-sweep bisect T5Model", snapshot=night)
    # The bisect job looks for a crash group only: no GPU job is started to refuse it there.
    assert refused.kind == Kind.refuse and "has no confirmed crash under" in refused.reason
    assert rerun.outputs(refused) == {"run": "false"}


# --- carried out and answered, on the fake GitHub ----------------------------------------------------


@pytest.fixture
def fake():
    yield from serve(repo=REPO)


def keep(monkeypatch, capsys, fake, store: Path, *options: str):
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.setenv("GITHUB_TOKEN", "bot-token")
    return run_main(monkeypatch, capsys, "command", *options, "--store", str(store), "--repo", REPO)


def test_a_pin_is_accepted_kept_and_answered(fake, monkeypatch, capsys, tmp_path):
    gh = gh_for(fake)
    number = tracked_issue(fake)
    fake.permissions["maintainer"] = "maintain"
    ident = signature_id(GUARD)
    asked = fake.add_comment(REPO, number, f"/rerun-sweep link {ident[:8]} #4242", "maintainer")
    decision = poll(gh, stored=stored(), upstream=UPSTREAM)
    assert decision.kind == Kind.link and fake.reactions(REPO, asked["id"]) == ["eyes"]
    store = LocalStore(tmp_path / "store")
    store.put(stored())
    where = ("--issue", str(number), "--comment-id", str(asked["id"]))
    for _ in range(2):  # a rerun of the job answers once
        ran = keep(monkeypatch, capsys, fake, store.path, "--link", ident, "--number", "4242", *where)
        assert ran.status == 0, ran.err
    pin = stored_pins(store, UPSTREAM)[GUARD]
    assert (pin.number, pin.by, pin.comment_id) == (4242, "maintainer", asked["id"])
    answers = [
        c["body"] for c in fake.comments(REPO, number) if c["body"].startswith(result_marker(asked["id"]))
    ]
    assert len(answers) == 1 and "tracked upstream in pytorch/pytorch#4242" in answers[0]
    assert fake.reactions(REPO, asked["id"]) == ["eyes", "rocket"]
    assert poll(gh, stored=stored(), upstream=UPSTREAM).kind == Kind.none  # answered: settled

    ran = keep(monkeypatch, capsys, fake, store.path, "--link", ident, "--number", "0", *where)
    assert ran.status == 0 and stored_pins(store, UPSTREAM)[GUARD].number is None
    missing = keep(monkeypatch, capsys, fake, store.path, "--link", "0" * 12, "--number", "1", *where)
    assert missing.status != 0 and "has no crash group 000000000000" in missing.err


def bisection(first_bad: str = "2.12.0.dev20260405") -> Bisection:
    probes = [
        Probe(version="2.12.0.dev20260403", verdict=Verdict.good, reason="ran clean 3 times", runs=3),
        Probe(version="2.12.0.dev20260404", verdict=Verdict.skip, reason="install failed: @someone #12 |"),
        Probe(version=first_bad, verdict=Verdict.bad, reason="raised it", runs=1, raised=1),
    ]
    return Bisection(
        axis="torch",
        signature=GUARD,
        model="BertModel",
        flag=SCALAR,
        good="2.12.0.dev20260403",
        bad="2.12.0.dev20260406",
        index="https://download.pytorch.org/whl/nightly/cu128",
        installer="uv",
        last_good="2.12.0.dev20260403",
        first_bad=first_bad,
        last_good_git="a" * 40,
        first_bad_git="b" * 40,
        compare_url=f"https://github.com/pytorch/pytorch/compare/{'a' * 40}...{'b' * 40}",
        skipped=["2.12.0.dev20260404"],
        conclusive=True,
        probes=probes,
        seconds=42.0,
    )


def test_a_bisection_is_kept_and_answered_and_its_group_shows_it(fake, monkeypatch, capsys, tmp_path):
    number = tracked_issue(fake)
    asked = fake.add_comment(REPO, number, "/rerun-sweep bisect T5Model", "maintainer")
    store = LocalStore(tmp_path / "store")
    store.put(stored())
    found = tmp_path / "bisection.json"
    found.write_text(bisection().model_dump_json())
    where = ("--issue", str(number), "--comment-id", str(asked["id"]))
    ran = keep(monkeypatch, capsys, fake, store.path, "--bisection", str(found), *where)
    assert ran.status == 0, ran.err
    assert bisections_by_signature(store)[GUARD].first_bad == "2.12.0.dev20260405"
    text = fake.comments(REPO, number)[-1]["body"]
    assert text.startswith(result_marker(asked["id"]))
    assert "**First bad nightly**: `2.12.0.dev20260405`, last good `2.12.0.dev20260403`" in text
    assert f"[{'a' * 40}...{'b' * 40}](https://github.com/pytorch/pytorch/compare/" in text
    assert "`install failed: @someone #12 \\|`" in text  # untrusted: inert and table-safe
    assert "3 builds probed in 42 s (installed with `uv`)." in text
    assert fake.reactions(REPO, asked["id"]) == ["rocket"]

    from triagebot import pipeline
    from triagebot.config import Config
    from triagebot.report import issue_body

    body = issue_body(pipeline.night_of(stored(), store, Config()), SCALAR)
    assert "**First bad nightly**: `2.12.0.dev20260405`" in body
    assert "Could not be tested, so any may be the first bad: `2.12.0.dev20260404`." in body


def test_an_unreadable_bisection_file_is_one_line(fake, monkeypatch, capsys, tmp_path):
    found = tmp_path / "bisection.json"
    found.write_text(json.dumps({"axis": "torch"}))
    ran = keep(monkeypatch, capsys, fake, tmp_path / "store", "--bisection", str(found), "--issue", "1")
    assert ran.status != 0 and "Traceback" not in ran.err and "not bisection" in ran.err
