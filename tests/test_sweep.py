"""The sweep engine on the sentinel corpus: outcomes, isolation failures, streams, resume, shards."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from triagebot.config import DEFAULT_FLAGS
from triagebot.corpus import load_corpus
from triagebot.results import BASELINE, InputSpec, ModelSpec, RunRecord, Status
from triagebot.sweep import (
    CHECK_CONFIG,
    StreamError,
    SweepError,
    check_models,
    confirm_crashes,
    merge,
    parse_shard,
    read_stream,
    run_sweep,
    select_shard,
)
from triagebot.sweep import pool as pool_module

SCALARS = "capture_scalar_outputs"
DYNAMIC = "capture_dynamic_output_shape_ops"
ITEM = "Unsupported Tensor.item() call with capture_scalar_outputs=False"
NONZERO = "Dynamic shape operator"
PROXY = "Failed to convert args/kwargs to proxy"  # a generator argument
TIMEOUT = 6.0

# model -> config -> (status, graphs, ops, first line of each break reason, error_type)
EXPECTED = {
    "Plain": dict.fromkeys((BASELINE, SCALARS, DYNAMIC), ("ok", 1, 3, [], None)),
    "ItemBreak": {
        BASELINE: ("ok", 2, 5, [ITEM], None),
        SCALARS: ("ok", 1, 6, [], None),
        DYNAMIC: ("ok", 2, 5, [ITEM], None),
    },
    "NonzeroBreak": {
        BASELINE: ("ok", 2, 5, [NONZERO], None),
        SCALARS: ("ok", 2, 5, [NONZERO], None),
        DYNAMIC: ("ok", 1, 11, [], None),
    },
    "NonzeroGuardCrash": {
        BASELINE: ("ok", 2, 2, [NONZERO], None),
        SCALARS: ("ok", 2, 2, [NONZERO], None),
        DYNAMIC: ("crash", None, None, [], "GuardOnDataDependentSymNode"),
    },
    "ItemMatmul": {
        BASELINE: ("ok", 2, 7, [ITEM], None),
        SCALARS: ("ok", 1, 10, [], None),
        DYNAMIC: ("ok", 2, 7, [ITEM], None),
    },
    "AliasingCustomOp": {
        BASELINE: ("ok", 2, 4, [ITEM], None),
        SCALARS: ("ok", 1, 5, [], None),
        DYNAMIC: ("ok", 2, 4, [ITEM], None),
    },
    "BatchNormOut": dict.fromkeys((BASELINE, SCALARS, DYNAMIC), ("ok", 1, 10, [], None)),
    "OwnGenerator": dict.fromkeys((BASELINE, SCALARS, DYNAMIC), ("ok", 1, 1, [PROXY], None)),
    "RangeLoop": dict.fromkeys((BASELINE, SCALARS, DYNAMIC), ("ok", 1, 26, [], None)),
    "WrongUnderScalarCapture": dict.fromkeys((BASELINE, SCALARS, DYNAMIC), ("ok", 1, 1, [], None)),
    "EagerError": dict.fromkeys(
        (BASELINE, SCALARS, DYNAMIC), ("eager_error", None, None, [], "RuntimeError")
    ),
    "BuildError": dict.fromkeys(
        (BASELINE, SCALARS, DYNAMIC), ("create_error", None, None, [], "RuntimeError")
    ),
    "Segfault": dict.fromkeys((BASELINE, SCALARS, DYNAMIC), ("signal", None, None, [], "SIGSEGV")),
    "HangUnderCompile": dict.fromkeys((BASELINE, SCALARS, DYNAMIC), ("timeout", None, None, [], "Timeout")),
}
FAST = ["Plain", "ItemBreak", "NonzeroGuardCrash", "EagerError", "Segfault"]


def essence(record: RunRecord) -> tuple:
    """What must not depend on how or where a run was done (no times, no tracebacks)."""
    o = record.outcome
    reasons = [reason.splitlines()[0] for reason in o.break_reasons]
    return (
        record.model,
        record.config,
        record.attempt,
        o.status.value,
        o.graphs,
        o.ops,
        reasons,
        o.error_type,
        o.signature,
    )


def essences(records) -> list[tuple]:
    return sorted(essence(r) for r in records)


def sentinels(names=None):
    specs = load_corpus("sentinels")
    return [s for s in specs if names is None or s.model in names]


def sweep(tmp: Path, name: str, specs, **options) -> tuple[Path, list[RunRecord]]:
    out = tmp / name
    options = {"device": "cpu", "jobs": 2, "timeout": TIMEOUT, "corpus": "sentinels", **options}
    result = run_sweep(specs, dict(DEFAULT_FLAGS), out, **options)
    return out, result.records


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """One uninterrupted sweep of every sentinel under every config, crashes confirmed once."""
    return sweep(tmp_path_factory.mktemp("full"), "full.jsonl", sentinels(), confirm=1)


@pytest.mark.parametrize("model", sorted(EXPECTED))
def test_every_sentinel_outcome_under_every_config(full, model):
    _, records = full
    runs = {r.config: r for r in records if r.model == model and r.attempt == 0}
    assert sorted(runs) == sorted(EXPECTED[model])
    for config, (status, graphs, ops, reasons, error_type) in EXPECTED[model].items():
        outcome = runs[config].outcome
        got = (
            outcome.status.value,
            outcome.graphs,
            outcome.ops,
            [r.splitlines()[0] for r in outcome.break_reasons],
            outcome.error_type,
        )
        assert got == (status, graphs, ops, reasons, error_type), (model, config)
        assert runs[config].spec is not None and runs[config].spec.code
        if status == "ok":
            assert set(outcome.stage_seconds) == {"build", "eager", "compile"}


def test_a_model_untestable_at_baseline_is_not_run_again_under_the_flags(full):
    _, records = full
    for model in ("EagerError", "BuildError"):
        runs = {r.config: r for r in records if r.model == model}
        # The flags' records are the baseline's, times included: build and eager do not depend
        # on the Dynamo patch, so nothing is run again.
        for flag in DEFAULT_FLAGS:
            assert runs[flag].outcome == runs[BASELINE].outcome, (model, flag)


def test_crash_keeps_type_first_line_signature_and_traceback(full):
    _, records = full
    crash = next(r for r in records if r.model == "NonzeroGuardCrash" and r.config == DYNAMIC)
    assert crash.outcome.error.startswith("Could not guard on data-dependent expression")
    assert crash.outcome.signature.startswith("GuardOnDataDependentSymNode: ")
    assert "u*" in crash.outcome.signature and "u0" not in crash.outcome.signature
    assert "GuardOnDataDependentSymNode" in crash.outcome.traceback


def test_crash_is_confirmed_by_running_it_again(full):
    _, records = full
    reruns = [r for r in records if r.attempt > 0]
    assert [(r.model, r.config, r.attempt) for r in reruns] == [("NonzeroGuardCrash", DYNAMIC, 1)]
    assert reruns[0].outcome.status == Status.crash


def test_hang_hits_the_timeout_and_names_its_stage(full):
    _, records = full
    for r in (r for r in records if r.model == "HangUnderCompile"):
        assert r.outcome.error == f"no result after {TIMEOUT:g} s in compile: killed"
        assert TIMEOUT <= r.outcome.seconds < TIMEOUT + 5
        assert "in forward" in r.outcome.traceback  # faulthandler's dump of the hung stack


def test_segfault_is_an_outcome_with_the_crashing_stack(full):
    _, records = full
    segv = next(r for r in records if r.model == "Segfault")
    assert segv.outcome.error == "segmentation fault in eager"
    assert "Segmentation fault" in segv.outcome.traceback and "in forward" in segv.outcome.traceback


def test_stream_starts_with_a_header_and_has_one_line_per_run(full):
    path, records = full
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["kind"] == "header"
    assert len(lines) == 1 + len(records) == 1 + len(EXPECTED) * 3 + 1
    header, again = read_stream(path)
    assert header.environment.device == "cpu" and header.corpus.name == "sentinels"
    assert essences(again) == essences(records)


def test_sigkilled_worker_mid_sweep_is_a_signal_outcome_and_the_sweep_goes_on(tmp_path):
    """A worker killed from outside (as the OOM killer would) while the others work."""
    stop = threading.Event()

    def killer():
        # The hanging model's worker sleeps in the kernel; the others compute. Kill a worker
        # seen asleep for a whole second, whatever the machine's load.
        asleep: dict[int, float] = {}
        while not stop.is_set():
            parent = pool_module.parent_pid()
            now = time.monotonic()
            for pid, state in _children(parent) if parent else ():
                if state != "S":
                    asleep.pop(pid, None)
                elif now - asleep.setdefault(pid, now) > 1.0:
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        _, records = sweep(
            tmp_path, "killed.jsonl", sentinels(["Plain", "HangUnderCompile", "ItemBreak"]), timeout=60
        )
    finally:
        stop.set()
        thread.join()
    by = {(r.model, r.config): r.outcome for r in records}
    assert len(by) == 9
    for config in (BASELINE, SCALARS, DYNAMIC):
        killed = by[("HangUnderCompile", config)]
        assert (killed.status, killed.error_type) == (Status.signal, "SIGKILL")
        assert killed.error.startswith("killed by SIGKILL") and killed.error.endswith("in compile")
        assert killed.seconds < 30
        assert by[("Plain", config)].status == by[("ItemBreak", config)].status == Status.ok


def _children(parent: int) -> list[tuple[int, str]]:
    """(pid, state) of the processes whose parent is `parent`."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == parent:
                pids.append((int(entry), fields[0]))
    return pids


class Interrupt(Exception):
    pass


class StopAfter:
    """A progress display that interrupts the sweep after `n` records (as Ctrl-C would)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def start(self, total, done, crashes):
        pass

    def add(self, runs):
        pass

    def update(self, record):
        self.n -= 1
        if self.n == 0:
            raise Interrupt

    def close(self):
        pass


def test_resume_after_an_interrupted_sweep_gives_the_records_of_an_uninterrupted_one(tmp_path, full):
    specs = sentinels(FAST)
    out = tmp_path / "resumed.jsonl"
    with pytest.raises(Interrupt):
        run_sweep(
            specs,
            dict(DEFAULT_FLAGS),
            out,
            corpus="sentinels",
            device="cpu",
            jobs=2,
            timeout=TIMEOUT,
            progress=StopAfter(6),
        )
    kept = read_stream(out)[1]
    assert len(kept) == 6
    with open(out, "a") as stream:  # the sweep was killed in the middle of writing a line
        stream.write('{"kind": "run", "model": "Plain", "config": "base')
    result = run_sweep(
        specs,
        dict(DEFAULT_FLAGS),
        out,
        corpus="sentinels",
        device="cpu",
        jobs=2,
        timeout=TIMEOUT,
        resume=True,
        confirm=1,
    )
    assert result.ran == len(FAST) * 3 - 6 + 1  # nothing recorded was redone; one confirmation
    expected = [r for r in full[1] if r.model in FAST]
    assert essences(read_stream(out)[1]) == essences(expected)
    assert len(merge([out]).results) == len(FAST)  # the resumed stream is whole


def test_resume_refuses_a_stream_of_other_flags(tmp_path):
    out, _ = sweep(tmp_path, "plain.jsonl", sentinels(["Plain"]))
    with pytest.raises(StreamError, match="other flags"):
        run_sweep(
            sentinels(["Plain"]),
            {SCALARS: {SCALARS: True}},
            out,
            corpus="sentinels",
            device="cpu",
            resume=True,
        )


def test_shards_merged_equal_a_single_sweep(tmp_path, full):
    specs = sentinels()
    paths = [sweep(tmp_path, f"shard{i}.jsonl", specs, shard=f"{i}/2", confirm=1)[0] for i in (1, 2)]
    merged, single = merge(paths), merge([full[0]])

    def table(snapshot):
        return sorted(
            (r.model, r.stratum, config, o.status.value, o.graphs, o.ops, o.signature, len(r.confirmations))
            for r in snapshot.results
            for config, o in r.outcomes.items()
        )

    assert table(merged) == table(single)
    assert [r.model for r in merged.results] == [r.model for r in single.results]
    assert merged.key == single.key == single.environment.torch_version
    assert merged.flags == single.flags == DEFAULT_FLAGS
    assert merged.result("NonzeroGuardCrash").confirmations[DYNAMIC][0].status == Status.crash

    with pytest.raises(StreamError, match="given twice"):
        merge([paths[0], paths[0]])
    other = tmp_path / "other.jsonl"
    lines = paths[1].read_text().splitlines()
    header = json.loads(lines[0])
    header["environment"]["torch_version"] = "2.99.0"
    other.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(StreamError, match="another environment") as caught:
        merge([paths[0], other])
    assert "\n" not in str(caught.value)
    header["environment"]["torch_version"] = json.loads(lines[0])["environment"]["torch_version"]
    header["flags"] = {SCALARS: {SCALARS: True}}
    other.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(StreamError, match="other flags"):
        merge([paths[0], other])


def test_shards_partition_the_models_deterministically():
    specs = sentinels()
    slices = [select_shard(specs, (i, 3)) for i in (1, 2, 3)]
    names = [spec.model for part in slices for spec in part]
    assert sorted(names) == sorted(spec.model for spec in specs)
    for i, part in zip((1, 2, 3), slices, strict=True):  # the corpus's order does not matter
        assert {s.model for s in part} == {s.model for s in select_shard(specs[::-1], (i, 3))}
    for bad in ("0/2", "3/2", "x", "1/0"):
        with pytest.raises(StreamError):
            parse_shard(bad)


def test_a_torn_last_line_is_skipped_when_reading(full, tmp_path):
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(full[0].read_bytes()[:-7])
    _, records = read_stream(torn)
    assert len(records) == len(full[1]) - 1


def test_unknown_dynamo_config_name_is_a_one_line_error_naming_it(tmp_path):
    with pytest.raises(SweepError) as caught:
        run_sweep(
            sentinels(["Plain"]),
            {"typo": {"capture_scaler_outputs": True}},
            tmp_path / "x.jsonl",
            device="cpu",
        )
    assert str(caught.value) == "flag 'typo': torch._dynamo.config has no setting 'capture_scaler_outputs'"
    assert not (tmp_path / "x.jsonl").exists()


def test_check_mode_builds_and_runs_eagerly_only():
    records = {r.model: r for r in check_models(sentinels(), device="cpu", jobs=2, timeout=TIMEOUT)}
    status = {model: r.outcome.status.value for model, r in records.items()}
    assert status == {
        "Plain": "ok",
        "ItemBreak": "ok",
        "NonzeroBreak": "ok",
        "NonzeroGuardCrash": "ok",
        "ItemMatmul": "ok",
        "AliasingCustomOp": "ok",
        "BatchNormOut": "ok",
        "OwnGenerator": "ok",
        "RangeLoop": "ok",
        "WrongUnderScalarCapture": "ok",
        "HangUnderCompile": "ok",
        "EagerError": "eager_error",
        "BuildError": "create_error",
        "Segfault": "signal",
    }
    assert all(r.config == CHECK_CONFIG and r.spec is not None for r in records.values())
    assert records["Plain"].outcome.graphs is None and "compile" not in records["Plain"].outcome.stage_seconds
    assert records["Plain"].spec.params == 72


def test_cli_sweep_prints_plain_lines_off_a_terminal_and_merge_writes_a_snapshot(tmp_path):
    out, snapshot = tmp_path / "cli.jsonl", tmp_path / "snapshot.json"
    triagebot = [sys.executable, "-m", "triagebot"]
    done = subprocess.run(
        [
            *triagebot,
            "sweep",
            "--corpus",
            "sentinels",
            "--models",
            "Plain,ItemBreak",
            "--flags",
            SCALARS,
            "--jobs",
            "2",
            "--device",
            "cpu",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "[4/4 crashes 0" in done.stderr and "ItemBreak [capture_scalar_outputs] ok, 1 graphs" in done.stderr
    )
    assert "sweep results" in done.stdout and str(out) in done.stdout
    merged = subprocess.run(
        [*triagebot, "merge", str(out), "--out", str(snapshot)], capture_output=True, text=True, timeout=60
    )
    assert merged.returncode == 0, merged.stderr
    data = json.loads(snapshot.read_text())
    assert [r["model"] for r in data["results"]] == ["Plain", "ItemBreak"]
    assert data["results"][1]["outcomes"][SCALARS]["graphs"] == 1
    bad = subprocess.run(
        [*triagebot, "sweep", "--corpus", "sentinels", "--models", "Nope", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and bad.stderr == "triagebot: error: corpus 'sentinels' has no model 'Nope'\n"


def test_memory_per_worker_is_bounded():
    """RLIMIT_AS on CPU: a model too big for the limit fails to build instead of eating the machine."""
    big = ModelSpec(
        model="BigLlama",
        class_path="transformers:LlamaForCausalLM",
        config={"hidden_size": 4096, "vocab_size": 131072, "num_attention_heads": 32, "num_hidden_layers": 1},
        inputs=[InputSpec(name="input_ids", shape=[1, 4], dtype="int64", kind="ones")],
    )
    (record,) = check_models([big], device="cpu", memory_limit_gb=2, timeout=120)
    assert record.outcome.status == Status.create_error
    assert "can't allocate memory" in record.outcome.error


def test_merge_refuses_an_incomplete_stream_and_a_model_in_two_streams(full, tmp_path):
    lines = full[0].read_text().splitlines()
    incomplete = tmp_path / "incomplete.jsonl"
    incomplete.write_text(
        "\n".join(line for line in lines if '"model":"Plain","config":"baseline"' not in line) + "\n"
    )
    with pytest.raises(StreamError, match="model 'Plain' has no 'baseline' run"):
        merge([incomplete])
    halves = []
    for i in (1, 2):
        header = json.loads(lines[0])
        header["shard"] = f"{i}/2"
        halves.append(tmp_path / f"half{i}.jsonl")
        halves[-1].write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(StreamError, match="is in both"):
        merge(halves)


def test_confirm_crashes_appends_more_attempts_to_a_stream(full, tmp_path):
    stream = tmp_path / "confirm.jsonl"
    stream.write_bytes(full[0].read_bytes())
    new = confirm_crashes(stream, 2, jobs=2, timeout=TIMEOUT)
    assert [(r.model, r.config, r.attempt, r.outcome.status) for r in new] == [
        ("NonzeroGuardCrash", DYNAMIC, 2, Status.crash)
    ]
    snapshot = merge([stream])
    assert [o.status for o in snapshot.result("NonzeroGuardCrash").confirmations[DYNAMIC]] == [
        Status.crash
    ] * 2


def test_a_dead_warm_parent_is_started_again():
    spec = sentinels(["Plain"])[0]
    task = pool_module.Task(
        key=0, payload={"spec": spec.model_dump(mode="json"), "patch": {}, "compile": True}
    )
    with pool_module.Pool(jobs=1, timeout=60) as pool:
        assert [r.outcome.status for r in pool.run([task])] == [Status.ok]
        os.kill(pool_module.parent_pid(), signal.SIGKILL)
        time.sleep(0.2)
        assert [r.outcome.status for r in pool.run([task, task])] == [Status.ok, Status.ok]
