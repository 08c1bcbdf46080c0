"""The first bad nightly, wired in: which bisections a night owes (a crash new since a stored
nightly more than a day older), the one `/rerun-sweep bisect MODEL` asks for, and the night's
bisections made on the command line, kept by `run --bisections` and shown in the issue."""

from __future__ import annotations

import copy
import itertools
import json
import subprocess
from datetime import date, timedelta
from pathlib import Path

import pytest
from builders import SCALAR, crash, ok
from builders import nightly as built_nightly
from climain import run_main
from test_bisect import FIRST_BAD, MESSAGE, SIGNATURE, envs, git_hash, index, nightly, reproduction  # noqa: F401

from triagebot.bisect import (
    BisectOptions,
    BisectRequest,
    Deadline,
    adjacent,
    bisect_all,
    crash_request,
    describe,
    graph_change_request,
    owed_bisections,
    verify_requests,
)
from triagebot.errors import BisectError, StoreError
from triagebot.results import (
    BASELINE,
    Bisection,
    Environment,
    Reproduction,
    Snapshot,
    Status,
    Verdict,
    error_signature,
)
from triagebot.store import (
    GitStore,
    LocalStore,
    MemoryStore,
    keep_bisection,
    keep_bisections_in,
    read_snapshot,
)

MODELS = ["BertModel", "T5Model"]


def night(day: date, *, crashing: bool, swept: bool = True, repro: bool = False) -> Snapshot:
    """A nightly of `day` in which BertModel crashes under SCALAR with the test index's error
    (or runs); `swept=False`: BertModel was not swept at all."""
    key = nightly(day)
    crashes = {SCALAR: {"BertModel": crash("RuntimeError", MESSAGE)}} if crashing else {}
    models = MODELS if swept else MODELS[1:]
    found = built_nightly(key, crashes, models, flags=[SCALAR], git=git_hash(key), corpus="test")
    if repro:
        found = found.model_copy(update={"reproductions": [reproduction()]})
    return found


def day(number: int) -> date:
    return date(2026, 4, 1) + timedelta(number - 1)


def test_nightlies_a_day_apart_are_adjacent():
    one, two, four = (
        Environment(torch_version=nightly(day(n)), torch_git_version=f"g{n}") for n in (1, 2, 4)
    )
    assert adjacent(one, two) and not adjacent(one, four)
    assert not adjacent(one, one)  # the same build: nothing between, nothing to bisect either
    moved = two.model_copy(update={"transformers_version": "5.25.0"})
    assert not adjacent(one, moved)
    assert not adjacent(Environment(torch_version="2.12.0"), Environment(torch_version="2.12.1"))


def test_a_crash_new_across_missed_nights_owes_one_bisection():
    before, tonight = night(day(1), crashing=False), night(day(4), crashing=True, repro=True)
    (request,) = owed_bisections(tonight, before, MemoryStore())
    assert (request.axis, request.good, request.bad) == ("torch", before.key, tonight.key)
    assert request.reproduction.signature == SIGNATURE
    # Adjacent nightlies owe none (the diff's commit range is the answer); nor does a crash
    # already there, one without a verified reproduction, or a first night.
    assert owed_bisections(night(day(2), crashing=True, repro=True), before, None) == []
    assert owed_bisections(tonight, night(day(2), crashing=True), None) == []
    assert owed_bisections(night(day(4), crashing=True), before, None) == []
    assert owed_bisections(tonight, None, None) == []


def season(letters: str) -> list[Snapshot]:
    """One stored nightly a day per letter for BertModel under SCALAR: `C` a confirmed crash,
    `?` an engine error (no verdict), `.` clean, `_` a nightly missed (nothing stored); the
    last carries the crash's verified reproduction."""
    nights = []
    for number, letter in enumerate(letters, start=1):
        if letter == "_":
            continue
        found = night(day(number), crashing=letter == "C", repro=number == len(letters))
        if letter == "?":
            broken = {SCALAR: {"BertModel": ok(2).model_copy(update={"status": Status.engine_error})}}
            found = built_nightly(
                found.key, broken, MODELS, flags=[SCALAR], git=git_hash(found.key), corpus="test"
            )
        nights.append(found)
    return nights


@pytest.mark.parametrize(("letters", "good"), [("CC?_C", None), (".?_C", 1), ("..?_C", 2), (".C?_C", None)])
def test_a_night_without_a_verdict_before_tonight_is_looked_past(letters, good):
    nights = season(letters)
    owed = owed_bisections(nights[-1], nights[-2], MemoryStore(nights[:-1]))
    if good is None:  # a steady crash behind an engine-error night: nothing new to bisect
        assert owed == []
    else:  # new since the last night that ran it: bisected from there
        (request,) = owed
        assert (request.good, request.bad) == (nightly(day(good)), nights[-1].key)


def test_a_range_answered_in_the_store_is_not_owed_again():
    before, tonight = night(day(1), crashing=False), night(day(4), crashing=True, repro=True)
    store = MemoryStore()
    answer = Bisection(
        axis="torch",
        signature=SIGNATURE,
        model="BertModel",
        flag=SCALAR,
        good=before.key,
        bad=tonight.key,
        index="local",
        last_good=nightly(day(2)),
        first_bad=nightly(day(3)),
        conclusive=True,
    )
    keep_bisection(store, answer)
    assert owed_bisections(tonight, before, store) == []
    keep_bisection(store, answer.model_copy(update={"conclusive": False}))  # cut short: owed again
    assert len(owed_bisections(tonight, before, store)) == 1


def test_a_models_crash_is_bisected_from_the_last_night_it_ran_in():
    store = MemoryStore(
        [
            night(day(1), crashing=False),
            night(day(3), crashing=False, swept=False),  # not swept: says nothing
            night(day(5), crashing=True),
            night(day(7), crashing=True, repro=True),
        ]
    )
    request = crash_request(store, "BertModel", SCALAR)
    assert (request.good, request.bad) == (nightly(day(1)), nightly(day(5)))
    with pytest.raises(BisectError, match="T5Model has no confirmed crash under capture_scalar_outputs"):
        crash_request(store, "T5Model", SCALAR)
    alone = MemoryStore([night(day(5), crashing=True), night(day(7), crashing=True, repro=True)])
    with pytest.raises(BisectError, match=r"no stored nightly before .*20260405.* in which BertModel ran"):
        crash_request(alone, "BertModel", SCALAR)
    unverified = MemoryStore([night(day(1), crashing=False), night(day(7), crashing=True)])
    with pytest.raises(BisectError, match="no verified reproduction"):
        crash_request(unverified, "BertModel", SCALAR)


def test_a_night_owing_a_bisection_gets_its_first_bad_nightly_into_the_issue(
    index,  # noqa: F811
    envs,  # noqa: F811
    tmp_path: Path,
    monkeypatch,
    capsys,
):
    monkeypatch.chdir(tmp_path)
    store = LocalStore(tmp_path / "store")
    store.put(night(day(1), crashing=False))
    tonight = night(day(12), crashing=True, repro=True)
    swept = tmp_path / "tonight.json"
    swept.write_text(tonight.model_dump_json())
    where = ("--store", str(store.path), "--cache", str(envs.root), "--variant", "cpu")
    where = (*where, "--installer", envs.installer.name)  # the same bisection by uv and by pip
    indexes = ("--index", f"{index.url}/whl/nightly", "--pypi", f"{index.url}/simple")
    ran = run_main(monkeypatch, capsys, "bisect", "--owed", str(swept), *where, *indexes, "--out", "found")
    assert ran.status == 0, ran.err
    assert "1 bisection(s) owed by" in ran.out
    assert f"first bad nightly: {nightly(FIRST_BAD)}" in ran.out
    (written,) = (tmp_path / "found").glob("*.json")
    assert json.loads(written.read_text())["first_bad"] == nightly(FIRST_BAD)

    ran = run_main(
        monkeypatch, capsys, "run", "--snapshot", str(swept), "--bisections", "found",
        "--store", str(store.path), "--dry-run", "--out", "run",
    )  # fmt: skip
    assert ran.status == 0, ran.err
    assert "bisections: 1 kept from found" in ran.out
    body = (tmp_path / "run" / "report" / f"issue-{SCALAR}.md").read_text()
    assert (
        f"**First bad nightly**: `{nightly(FIRST_BAD)}`, last good `{nightly(FIRST_BAD - timedelta(1))}`"
        in body
    )
    assert "the changes between them: [" in body

    # The next run owes nothing: the store has the answer.
    again = run_main(monkeypatch, capsys, "bisect", "--owed", str(swept), *where, *indexes)
    assert again.status == 0 and "0 bisection(s) owed by" in again.out


def test_bisect_takes_one_way_of_naming_what_to_bisect(monkeypatch, capsys, tmp_path):
    for arguments in (("a",), ("a", "b", "--crash", "BertModel"), ("--owed", "x", "--crash", "y"), ()):
        ran = run_main(monkeypatch, capsys, "bisect", *arguments, "--store", str(tmp_path))
        assert ran.status == 2 and "give GOOD and BAD, or --owed SNAPSHOT, or --crash MODEL" in ran.err
    ran = run_main(monkeypatch, capsys, "bisect", "--crash", "BertModel", "--store", str(tmp_path))
    assert ran.status == 2 and "--crash needs --flag" in ran.err


SMOKE = Path(__file__).parent / "data" / "smoke-2.13.0+cpu.json"


def smoke_nights(longformer_before: int) -> tuple[Snapshot, Snapshot]:
    """The committed smoke sweep as tonight (a nightly of 2026-04-10), and the same sweep three
    nights before it in which LongformerModel compiled to `longformer_before` graphs at baseline."""
    tonight = read_snapshot(SMOKE)

    def dated(snapshot: Snapshot, day: str, git: str) -> Snapshot:
        environment = snapshot.environment.model_copy(
            update={"torch_version": f"2.13.0.dev{day}+cpu", "torch_git_version": git}
        )
        return snapshot.model_copy(update={"key": environment.torch_version, "environment": environment})

    before = dated(tonight, "20260407", "a" * 40)
    results = []
    for result in before.results:
        if result.model == "LongformerModel":
            baseline = result.outcomes[BASELINE].model_copy(update={"graphs": longformer_before})
            result = result.model_copy(update={"outcomes": {**result.outcomes, BASELINE: baseline}})
        results.append(result)
    return before.model_copy(update={"results": results}), dated(tonight, "20260410", "b" * 40)


def test_a_baseline_graph_regression_across_missed_nights_is_owed_with_a_graph_count_script():
    before, tonight = smoke_nights(longformer_before=5)
    requests = owed_bisections(tonight, before, MemoryStore())
    (graphs,) = [request for request in requests if request.reproduction.flag == BASELINE]
    repro = graphs.reproduction
    assert repro.model == "LongformerModel" and not repro.verified
    assert repro.signature == "MoreGraphs: LongformerModel compiles to more than N graphs at baseline"
    assert "GRAPH_LIMIT = 5" in repro.script and repro.script.rstrip().endswith("main()")
    assert (graphs.good, graphs.bad) == (before.key, tonight.key)


def test_graph_count_regressions_owe_one_bisection_per_change_not_per_model():
    before, tonight = smoke_nights(longformer_before=5)
    risen = {
        "LongformerModel": 5,
        "JetMoeForCausalLM": 16,
        "Idefics3Model": 8,
        "LlavaForConditionalGeneration": 3,
    }
    new_break = "Graph break: a new one in this nightly"
    results = []
    for result in before.results:  # each of these compiled to one graph fewer before
        if result.model in risen:
            baseline = result.outcomes[BASELINE].model_copy(update={"graphs": risen[result.model]})
            result = result.model_copy(update={"outcomes": {**result.outcomes, BASELINE: baseline}})
        results.append(result)
    before = before.model_copy(update={"results": results})
    results = []
    for result in tonight.results:  # two of them hit a break reason they did not before
        if result.model in ("Idefics3Model", "LlavaForConditionalGeneration"):
            baseline = result.outcomes[BASELINE]
            baseline = baseline.model_copy(update={"break_reasons": [*baseline.break_reasons, new_break]})
            result = result.model_copy(update={"outcomes": {**result.outcomes, BASELINE: baseline}})
        results.append(result)
    tonight = tonight.model_copy(update={"results": results})
    graphs = [r for r in owed_bisections(tonight, before, MemoryStore()) if r.reproduction.flag == BASELINE]
    # The new break reason's group, and the rest of what the nightly changed: each bisected
    # with its first model by name.
    assert sorted(request.reproduction.model for request in graphs) == ["Idefics3Model", "JetMoeForCausalLM"]


@pytest.mark.torch
def test_a_graph_count_script_is_verified_with_this_torch_before_it_is_bisected():
    before, tonight = smoke_nights(longformer_before=5)
    (request,) = [r for r in owed_bisections(tonight, before, None) if r.reproduction.flag == BASELINE]
    # Tonight it compiles to 6 graphs: bad above 5; the same script above 7 raises nothing.
    above_seven = request.reproduction.script.replace("GRAPH_LIMIT = 5", "GRAPH_LIMIT = 7")
    requests = [request, copy.copy(request)]
    requests[1].reproduction = request.reproduction.model_copy(update={"script": above_seven})
    said: list[str] = []
    (kept,) = verify_requests(requests, timeout=300, say=said.append)
    assert kept.reproduction.verified and "GRAPH_LIMIT = 5" in kept.reproduction.script
    assert len(said) == 1 and "not bisected" in said[0]


def test_a_graph_count_that_fell_is_bisected_as_an_improvement():
    before, tonight = smoke_nights(longformer_before=7)  # 7 graphs then, 6 tonight
    request = graph_change_request(before, tonight, "LongformerModel")
    repro = request.reproduction
    assert request.change == "improvement" and (request.good, request.bad) == (before.key, tonight.key)
    assert repro.signature == "FewerGraphs: LongformerModel compiles to fewer than N graphs at baseline"
    assert "GRAPH_LIMIT = 7" in repro.script and "if backend.graphs < GRAPH_LIMIT:" in repro.script
    compile(repro.script, "repro.py", "exec")
    risen = graph_change_request(*smoke_nights(longformer_before=5), "LongformerModel")
    assert risen.change == "regression" and risen.reproduction.signature.startswith("MoreGraphs:")
    assert "if backend.graphs > GRAPH_LIMIT:" in risen.reproduction.script


def test_a_graph_count_that_did_not_change_or_was_not_counted_has_nothing_to_bisect():
    before, tonight = smoke_nights(longformer_before=6)
    with pytest.raises(BisectError, match="compiles to 6 graphs at baseline in both"):
        graph_change_request(before, tonight, "LongformerModel")
    with pytest.raises(
        BisectError, match=r"NoSuchModel has no baseline graph count in 2\.13\.0\.dev20260407"
    ):
        graph_change_request(before, tonight, "NoSuchModel")


def test_an_improvements_answer_names_the_first_improved_build():
    answer = Bisection(
        axis="torch",
        signature="FewerGraphs: LongformerModel compiles to fewer than N graphs at baseline",
        change="improvement",
        model="LongformerModel",
        flag=BASELINE,
        good="2.13.0",
        bad="2.14.1",
        index="https://pypi.org/simple",
        torch_releases=True,
        last_good="2.13.0",
        first_bad="2.14.0",
        conclusive=True,
        pinned={"transformers": "5.24.0"},
    )
    lines = describe(answer)
    assert lines[0] == "first improved torch release: 2.14.0; last unimproved: 2.13.0"
    assert [answer.said(verdict) for verdict in Verdict] == ["unimproved", "improved", "skip"]
    cut = answer.model_copy(update={"conclusive": False, "untested": 1, "stopped": "out of time"})
    assert describe(cut)[0] == (
        "first improved torch release between 2.13.0 (unimproved) and 2.14.0 (improved), "
        "1 untested: out of time"
    )
    assert not any("bad" in line or "good" in line for line in describe(answer) + describe(cut))


def test_bisect_graphs_asks_for_two_stored_nights_and_a_model(monkeypatch, capsys, tmp_path):
    ran = run_main(monkeypatch, capsys, "bisect", "a", "b", "--graphs", "--store", str(tmp_path))
    assert ran.status == 2 and "--graphs needs GOOD and BAD (stored snapshots) and --model" in ran.err
    store = LocalStore(tmp_path / "store")
    before, tonight = smoke_nights(longformer_before=6)
    for snapshot in (before, tonight):
        store.put(snapshot)
    where = ("--model", "LongformerModel", "--store", str(tmp_path / "store"))
    same = run_main(
        monkeypatch,
        capsys,
        "bisect",
        before.key,
        tonight.key,
        "--graphs",
        "--model",
        "LongformerModel",
        *where,
    )
    assert same.status == 2 and "compiles to 6 graphs at baseline in both" in same.err
    assert "Traceback" not in same.err and len(same.err.strip().splitlines()) == 1
    version = run_main(monkeypatch, capsys, "bisect", "2.13.0", tonight.key, "--graphs", *where)
    assert (
        version.status == 2
        and "--graphs bisects between two stored snapshots: '2.13.0' is not one" in version.err
    )


@pytest.mark.torch
def test_an_improvements_script_raises_with_this_torch_where_the_count_fell():
    before, tonight = smoke_nights(longformer_before=7)
    request = graph_change_request(before, tonight, "LongformerModel")
    said: list[str] = []
    (kept,) = verify_requests([request], timeout=300, say=said.append)
    assert kept.reproduction.verified and kept.reproduction.observed == kept.reproduction.signature
    assert said == []


# GitHub refuses a push made with a token that may only read; the test's data branch does too.
REFUSE_READ_ONLY = """#!/bin/sh
if [ "$TRIAGEBOT_STORE_TOKEN" = "read-only" ]; then
  echo "Permission to the data branch denied: the token may only read" >&2
  exit 1
fi
"""


def data_branch(tmp_path: Path, *nights: Snapshot) -> Path:
    """A bare repository whose data branch holds `nights` and refuses read-only pushes."""
    remote = tmp_path / "data.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
    seed = GitStore(str(remote), "triagebot-data", tmp_path / "seed")
    for stored in nights:
        seed.put(stored)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(REFUSE_READ_ONLY)
    hook.chmod(0o755)
    return remote


def job_checkout(tmp_path: Path, name: str, remote: Path) -> Path:
    """A job's checkout: a repository whose origin is the data remote, configured to store there."""
    folder = tmp_path / name
    subprocess.run(["git", "init", "--quiet", str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", str(remote)], check=True)
    (folder / "triagebot.toml").write_text('[store]\nbranch = "triagebot-data"\npath = ".data"\n')
    return folder


def stored_bisections(remote: Path) -> list[str]:
    listed = subprocess.run(
        ["git", "--git-dir", str(remote), "ls-tree", "-r", "--name-only", "triagebot-data"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [path for path in listed.stdout.split() if "bisections/" in path]


def test_the_read_only_jobs_answers_reach_the_store_through_the_job_that_may_write(
    index,  # noqa: F811
    envs,  # noqa: F811
    tmp_path: Path,
    monkeypatch,
    capsys,
):
    tonight = night(day(12), crashing=True, repro=True)
    remote = data_branch(tmp_path, night(day(1), crashing=False), tonight)
    indexes = ("--index", f"{index.url}/whl/nightly", "--pypi", f"{index.url}/simple", "--variant", "cpu")
    where = ("--cache", str(envs.root), "--installer", envs.installer.name, *indexes)

    # The rerun's GPU job and the night's: they may read the data branch, never push to it.
    monkeypatch.setenv("TRIAGEBOT_STORE_TOKEN", "read-only")
    monkeypatch.chdir(job_checkout(tmp_path, "rerun-bisect", remote))
    ran = run_main(
        monkeypatch, capsys, "bisect", "--crash", "BertModel", "--flag", SCALAR, *where, "--out", "bisection",
    )  # fmt: skip
    assert ran.status == 0, ran.err
    answer = Bisection.model_validate_json(Path("bisection/bisection.json").read_text())
    assert answer.first_bad == nightly(FIRST_BAD)

    monkeypatch.chdir(job_checkout(tmp_path, "night-bisect", remote))
    swept = Path("snapshot.json")
    swept.write_text(tonight.model_dump_json())
    ran = run_main(monkeypatch, capsys, "bisect", "--owed", str(swept), *where, "--out", "found")
    assert ran.status == 0, ran.err
    assert "1 bisection(s) owed by" in ran.out
    assert stored_bisections(remote) == []  # nothing was pushed, and nothing was lost

    # The job holding write access keeps what the read-only one found.
    monkeypatch.setenv("TRIAGEBOT_STORE_TOKEN", "write")
    keeper = GitStore(str(remote), "triagebot-data", tmp_path / "keep")
    (kept,) = keep_bisections_in(keeper, Path("found"))
    assert (kept.good, kept.bad, kept.first_bad) == (answer.good, answer.bad, answer.first_bad)
    assert len(stored_bisections(remote)) == 1

    # So the range is never bisected twice.
    monkeypatch.setenv("TRIAGEBOT_STORE_TOKEN", "read-only")
    again = run_main(monkeypatch, capsys, "bisect", "--owed", str(swept), *where)
    assert again.status == 0 and "0 bisection(s) owed by" in again.out


def test_one_owed_bisection_that_fails_costs_the_others_nothing(
    index,  # noqa: F811
    envs,  # noqa: F811
    tmp_path: Path,
):
    before, tonight = night(day(1), crashing=False), night(day(12), crashing=True, repro=True)
    (owed,) = owed_bisections(tonight, before, MemoryStore())
    options = BisectOptions(
        good="", bad="", variant="cpu", index=f"{index.url}/whl/nightly", pypi=f"{index.url}/simple",
        cache=envs.root, installer=envs.installer.name,
    )  # fmt: skip
    kept, said = [], []

    def keep(answer: Bisection) -> None:
        if not kept:
            kept.append(None)
            raise StoreError("could not push records bisections/torch after 5 attempts")
        kept.append(answer)

    found = bisect_all(
        options, [owed, copy.deepcopy(owed)], MemoryStore(), said.append, each_alone=True, keep=keep
    )
    assert [answer.first_bad for answer in found] == [nightly(FIRST_BAD)]
    assert kept[1:] == found
    assert any("cannot bisect" in line and "could not push" in line for line in said)


def test_verifying_graph_counts_spends_the_bisections_budget():
    script = "def main():\n    raise RuntimeError('more graphs')\n"
    repro = Reproduction(
        flag=BASELINE, signature=error_signature("RuntimeError", "more graphs"), model="A", script=script
    )
    later = repro.model_copy(update={"model": "B"})
    requests = [BisectRequest(repro, "a", "b"), BisectRequest(later, "a", "b")]
    clock = itertools.chain([0.0, 0.0], itertools.repeat(100.0))  # the first run takes 100 s
    said: list[str] = []
    kept = verify_requests(requests, timeout=600, deadline=Deadline(50, lambda: next(clock)), say=said.append)
    assert [request.reproduction.model for request in kept] == ["A"]
    assert said == [
        "the time budget of 50 s ran out while verifying: 1 graph count(s) left for the next night"
    ]
