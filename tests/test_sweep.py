"""The sweep engine on the sentinel corpus: outcomes, isolation failures, streams, resume, shards."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from builders import DYNAMIC
from builders import SCALAR as SCALARS

from triagebot.analysis.frames import pattern_of
from triagebot.config import DEFAULT_FLAGS
from triagebot.corpus import load_corpus
from triagebot.corpus.selection import select_shard
from triagebot.results import BASELINE, CorpusSelection, InputSpec, ModelSpec, RunRecord, Status
from triagebot.sweep import (
    CHECK_CONFIG,
    StreamError,
    SweepError,
    SweepPlan,
    check_models,
    merge,
    read_stream,
    run_sweep,
)
from triagebot.sweep import pool as pool_module
from triagebot.sweep.parent import parent_pid
from triagebot.sweep.tasks import RunKey, run_task

pytestmark = pytest.mark.torch

ITEM = "Unsupported Tensor.item() call with capture_scalar_outputs=False"
NONZERO = "Dynamic shape operator"
PROXY = "Failed to convert args/kwargs to proxy"  # a generator argument
TIMEOUT = 6.0

# model -> config -> (status, graphs, ops, first line of each break reason, error_type), both
# default flags acting only at graph breaks that name them (`when = "named_in_breaks"`): a
# nonzero's break names capture_dynamic_output_shape_ops, a user's `.item()` capture_scalar_outputs
EXPECTED = {
    "Plain": {
        BASELINE: ("ok", 1, 3, [], None),
        SCALARS: ("skipped", None, None, [], None),
        DYNAMIC: ("skipped", None, None, [], None),
    },
    "ItemBreak": {
        BASELINE: ("ok", 2, 5, [ITEM], None),
        SCALARS: ("ok", 1, 6, [], None),
        DYNAMIC: ("skipped", None, None, [], None),
    },
    "NonzeroBreak": {
        BASELINE: ("ok", 2, 5, [NONZERO], None),
        SCALARS: ("skipped", None, None, [], None),
        DYNAMIC: ("ok", 1, 11, [], None),
    },
    "NonzeroGuardCrash": {
        BASELINE: ("ok", 2, 2, [NONZERO], None),
        SCALARS: ("skipped", None, None, [], None),
        DYNAMIC: ("crash", None, None, [], "GuardOnDataDependentSymNode"),
    },
    "ItemMatmul": {
        BASELINE: ("ok", 2, 7, [ITEM], None),
        SCALARS: ("ok", 1, 10, [], None),
        DYNAMIC: ("skipped", None, None, [], None),
    },
    "AliasingCustomOp": {
        BASELINE: ("ok", 2, 4, [ITEM], None),
        SCALARS: ("ok", 1, 5, [], None),
        DYNAMIC: ("skipped", None, None, [], None),
    },
    "BatchNormOut": {
        BASELINE: ("ok", 1, 10, [], None),
        SCALARS: ("skipped", None, None, [], None),
        DYNAMIC: ("skipped", None, None, [], None),
    },
    "OwnGenerator": {  # a break that no flag's setting would trace through
        BASELINE: ("ok", 1, 1, [PROXY], None),
        SCALARS: ("skipped", None, None, [], None),
        DYNAMIC: ("skipped", None, None, [], None),
    },
    "RangeLoop": {
        BASELINE: ("ok", 1, 26, [], None),
        SCALARS: ("skipped", None, None, [], None),
        DYNAMIC: ("skipped", None, None, [], None),
    },
    "WrongUnderScalarCapture": {
        BASELINE: ("ok", 2, 4, [ITEM], None),
        SCALARS: ("ok", 1, 5, [], None),  # outputs differ from eager's: a wrong result (test_stack)
        DYNAMIC: ("skipped", None, None, [], None),
    },
    "SlowUnderScalarCapture": {  # its loop compiles only under the flag (test_compile_time)
        BASELINE: ("ok", 1, 2, [ITEM], None),
        SCALARS: ("ok", 1, 164, [], None),
        DYNAMIC: ("skipped", None, None, [], None),
    },
    "WrongGradUnderScalarCapture": {  # its gradients differ only on the backward rung (test_backward_rung)
        BASELINE: ("ok", 2, 5, [ITEM], None),
        SCALARS: ("ok", 1, 6, [], None),
        DYNAMIC: ("skipped", None, None, [], None),
    },
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


def sweep(tmp: Path, name: str, specs, progress=None, flags=None, **options) -> tuple[Path, list[RunRecord]]:
    out = tmp / name
    options = {"device": "cpu", "jobs": 2, "timeout": TIMEOUT, "corpus": "sentinels", **options}
    result = run_sweep(SweepPlan(specs, dict(flags or DEFAULT_FLAGS), out, **options), progress)
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
    # The stored traceback keeps the exception line, the compiler's frames and the user frames
    # once, so the pattern names the model code and where the compiler gives up.
    stored = crash.outcome.traceback
    assert "\ntorch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode: Could not guard" in stored
    assert stored.count("if idx.numel():") == 2  # the source under its frame, and the message's "Caused by"
    pattern = pattern_of(stored)
    assert (pattern.model_frame.file, pattern.model_frame.source) == (
        "triagebot/corpus/sentinels.py",
        "if idx.numel():",
    )
    assert pattern.compiler_frame.file == "torch/fx/experimental/symbolic_shapes.py"
    assert pattern.operation_frame is None  # Dynamo gave up on the model's own `if`


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
        # seen asleep under compile for a whole second, whatever the machine's load (a child
        # forked ahead of need sleeps too, before its log says anything).
        asleep: dict[int, float] = {}
        while not stop.is_set():
            parent = parent_pid()
            now = time.monotonic()
            for pid, state in _children(parent) if parent else ():
                if state != "S" or not _compiling(pid):
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
    assert by[("ItemBreak", BASELINE)].status == by[("ItemBreak", SCALARS)].status == Status.ok
    assert by[("Plain", BASELINE)].status == Status.ok


def _compiling(pid: int) -> bool:
    """Whether a worker's log (its stderr) says it is in its compile stage."""
    try:
        with open(os.readlink(f"/proc/{pid}/fd/2"), errors="replace") as log:
            stages = re.findall(r"^\[triagebot:stage\] (\w+)$", log.read(), re.M)
    except OSError:
        return False
    return stages[-1:] == ["compile"]


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

    def phase(self, name, total, recorded=(), note=""):
        pass

    def step(self, what):
        pass

    def resize(self, runs):
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
            SweepPlan(
                specs, dict(DEFAULT_FLAGS), out, corpus="sentinels", device="cpu", jobs=2, timeout=TIMEOUT
            ),
            progress=StopAfter(6),
        )
    kept = read_stream(out)[1]
    assert len(kept) == 6
    with open(out, "a") as stream:  # the sweep was killed in the middle of writing a line
        stream.write('{"kind": "run", "model": "Plain", "config": "base')
    result = run_sweep(
        SweepPlan(
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
    )
    assert result.ran == len(FAST) * 3 - 6 + 1  # nothing recorded was redone; one confirmation
    expected = [r for r in full[1] if r.model in FAST]
    assert essences(read_stream(out)[1]) == essences(expected)
    assert len(merge([out]).results) == len(FAST)  # the resumed stream is whole


def test_resume_refuses_a_stream_of_other_flags(tmp_path):
    out, _ = sweep(tmp_path, "plain.jsonl", sentinels(["Plain"]))
    with pytest.raises(StreamError, match="other flags"):
        run_sweep(
            SweepPlan(
                sentinels(["Plain"]),
                {SCALARS: {SCALARS: True}},
                out,
                corpus="sentinels",
                device="cpu",
                resume=True,
            )
        )


def test_shards_merged_equal_a_single_sweep(tmp_path, full):
    specs = sentinels()
    whole = CorpusSelection(name="sentinels", models=[spec.model for spec in specs])
    paths = []
    for i in (1, 2):
        part = select_shard(specs, (i, 2))
        paths.append(sweep(tmp_path, f"shard{i}.jsonl", part, corpus=whole, shard=f"{i}/2", confirm=1)[0])
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
    assert merged.flags == single.flags == {name: flag.patch for name, flag in DEFAULT_FLAGS.items()}
    assert merged.when == single.when == dict.fromkeys(DEFAULT_FLAGS, "named_in_breaks")
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


def test_a_torn_last_line_is_skipped_when_reading(full, tmp_path):
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(full[0].read_bytes()[:-7])
    _, records = read_stream(torn)
    assert len(records) == len(full[1]) - 1


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (
            {"capture_scaler_outputs": True},
            "flag 'typo': unknown torch._dynamo.config setting 'capture_scaler_outputs' "
            "(did you mean 'capture_scalar_outputs'?)",
        ),
        (
            {"capture_scalar_outputs": "yes"},
            "flag 'typo': torch._dynamo.config.capture_scalar_outputs takes a bool, not 'yes'",
        ),
    ],
)
def test_a_bad_dynamo_setting_is_refused_before_any_model_runs(tmp_path, patch, message):
    with pytest.raises(SweepError) as caught:
        run_sweep(SweepPlan(sentinels(["Plain"]), {"typo": patch}, tmp_path / "x.jsonl", device="cpu"))
    assert str(caught.value) == message
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
        "SlowUnderScalarCapture": "ok",
        "WrongGradUnderScalarCapture": "ok",
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
        "[sweep 6/6 crashing pairs 0" in done.stderr  # both baselines run again: the noise floor
        and "/4 " not in done.stderr
        and "ItemBreak [capture_scalar_outputs] ok, 1 graph," in done.stderr
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
        [
            *triagebot,
            "sweep",
            "--corpus",
            "sentinels",
            "--models",
            "Nope",
            "--out",
            str(tmp_path / "bad.jsonl"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2
    assert bad.stderr.startswith("triagebot: error: unknown model 'Nope' in corpus 'sentinels' (known: ")
    assert len(bad.stderr.splitlines()) == 1


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


def test_a_dead_warm_parent_is_started_again():
    spec = sentinels(["Plain"])[0]
    task = run_task(RunKey(spec.model, BASELINE), spec, {})
    with pool_module.Pool(jobs=1, timeout=60) as pool:
        assert [r.outcome.status for r in pool.run([task])] == [Status.ok]
        os.kill(parent_pid(), signal.SIGKILL)
        time.sleep(0.2)
        assert [r.outcome.status for r in pool.run([task, task])] == [Status.ok, Status.ok]


# --- which runs are made: `when`, skipped runs, engine errors, the order of the queue ---------


def _spy_starts(monkeypatch) -> list[tuple[str, str, int]]:
    """(model, config, attempt) of every run task handed to a child, in the order they start."""
    started = []
    start = pool_module.Pool._start

    def spy(pool, task):
        if task.kind == "run":
            started.append((task.key.model, task.key.config, task.key.attempt))
        return start(pool, task)

    monkeypatch.setattr(pool_module.Pool, "_start", spy)
    return started


def _always(flags):
    return {name: flag.model_copy(update={"when": "always"}) for name, flag in flags.items()}


def test_a_flag_acting_only_at_graph_breaks_is_skipped_on_a_model_without_one(full):
    _, records = full
    plain = {r.config: r for r in records if r.model == "Plain"}
    for flag in DEFAULT_FLAGS:
        # recorded like any run, with the baseline's spec, and never rerun to confirm
        assert plain[flag].outcome.status == Status.skipped and plain[flag].attempt == 0
        assert plain[flag].spec == plain[BASELINE].spec
    # a baseline that crashes, hangs or dies is followed by every flag's run
    assert all(r.outcome.status != Status.skipped for r in records if r.model == "HangUnderCompile")
    # one that breaks, by the flags its breaks name: a user's `.item()` names capture_scalar_outputs,
    # a nonzero capture_dynamic_output_shape_ops, a generator argument neither
    for model, runs in {
        "ItemBreak": {SCALARS},
        "NonzeroBreak": {DYNAMIC},
        "NonzeroGuardCrash": {DYNAMIC},
        "OwnGenerator": set(),
    }.items():
        made = {r.config for r in records if r.model == model and r.outcome.status != Status.skipped}
        assert made - {BASELINE} == runs, model


def test_no_child_is_forked_for_a_skipped_run_and_always_runs_every_flag(tmp_path, monkeypatch):
    started = _spy_starts(monkeypatch)
    specs = sentinels(["Plain", "ItemBreak"])
    _, skipping = sweep(tmp_path, "skipping.jsonl", specs, jobs=1)
    skipped = [(r.model, r.config) for r in skipping if r.outcome.status == Status.skipped]
    assert sorted(skipped) == [("ItemBreak", DYNAMIC), ("Plain", DYNAMIC), ("Plain", SCALARS)]
    made = [("Plain", BASELINE, 0), ("ItemBreak", BASELINE, 0), ("ItemBreak", SCALARS, 0)]
    assert sorted(started) == sorted(made)
    started.clear()
    out = tmp_path / "always.jsonl"
    result = run_sweep(
        SweepPlan(
            specs, _always(DEFAULT_FLAGS), out, corpus="sentinels", device="cpu", jobs=1, timeout=TIMEOUT
        )
    )
    assert len(started) == 6
    assert {r.config: r.outcome.graphs for r in result.records if r.model == "Plain"} == dict.fromkeys(
        (BASELINE, SCALARS, DYNAMIC), 1
    )
    assert read_stream(out)[0].when == dict.fromkeys(DEFAULT_FLAGS, "always")
    # a bare patch takes the default `when` of its settings
    bare = run_sweep(
        SweepPlan(
            sentinels(["Plain"]),
            {SCALARS: {SCALARS: True}, "guards": {"assume_static_by_default": False}},
            tmp_path / "bare.jsonl",
            device="cpu",
            jobs=1,
            timeout=TIMEOUT,
        )
    )
    assert bare.header.when == {SCALARS: "named_in_breaks", "guards": "always"}
    assert {r.config: r.outcome.status for r in bare.records} == {
        BASELINE: Status.ok,
        SCALARS: Status.skipped,
        "guards": Status.ok,
    }


def test_resume_writes_the_skipped_runs_a_stream_lacks_without_running_them(tmp_path, full, monkeypatch):
    """A sweep stopped between a baseline and its skipped records, and one stopped after them."""
    lines = full[0].read_text().splitlines()
    header, runs = lines[0], [json.loads(line) for line in lines[1:]]
    fast = [r for r in runs if r["model"] in FAST]
    cut = tmp_path / "cut.jsonl"
    # Plain's baseline is kept, its skipped records are lost; ItemBreak has none of its runs
    kept = [
        r
        for r in fast
        if not (r["model"] == "Plain" and r["config"] != BASELINE) and r["model"] != "ItemBreak"
    ]
    cut.write_text("\n".join([header, *map(json.dumps, kept)]) + "\n")
    started = _spy_starts(monkeypatch)
    _, records = sweep(tmp_path, cut.name, sentinels(FAST), resume=True, confirm=1)
    assert sorted(started) == sorted([("ItemBreak", c, 0) for c in (BASELINE, SCALARS)])
    assert len(records) - len(kept) == 2 + 3  # Plain's skipped records, ItemBreak's; no confirmation
    expected = [r for r in full[1] if r.model in FAST]
    assert essences(read_stream(cut)[1]) == essences(records) == essences(expected)
    snapshot = merge([cut])
    assert {c: o.status for c, o in snapshot.result("Plain").outcomes.items()} == {
        BASELINE: Status.ok,
        SCALARS: Status.skipped,
        DYNAMIC: Status.skipped,
    }
    started.clear()  # a whole stream with skipped records: nothing to do
    _, again = sweep(tmp_path, cut.name, sentinels(FAST), resume=True, confirm=1)
    assert len(again) == len(records) and started == []


def test_resume_and_merge_refuse_a_stream_that_ran_a_flag_with_another_when(tmp_path, full):
    with pytest.raises(StreamError, match="with when = 'named_in_breaks', not 'always'"):
        run_sweep(
            SweepPlan(
                sentinels(["Plain"]),
                _always(DEFAULT_FLAGS),
                full[0],
                corpus="sentinels",
                device="cpu",
                resume=True,
            )
        )
    lines = full[0].read_text().splitlines()
    header = json.loads(lines[0])
    del header["when"]  # a stream older than `when`: every flag ran on every model
    old = tmp_path / "old.jsonl"
    old.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    assert read_stream(old)[0].when == {}
    assert merge([old]).when == dict.fromkeys(DEFAULT_FLAGS, "always")
    with pytest.raises(StreamError, match="with when = 'always', not 'named_in_breaks'"):
        merge([old, full[0]])


def test_a_flag_run_that_cannot_rebuild_its_baselines_model_is_an_engine_error(tmp_path, monkeypatch):
    """The flag runs get a spec their children cannot build (as a config that does not survive
    the round trip would): an engine error with its error and traceback, loud, never untestable,
    never confirmed again."""
    from triagebot.analysis import classify
    from triagebot.results import Effect
    from triagebot.sweep import schedule
    from triagebot.sweep.progress import PlainProgress
    from triagebot.sweep.summary import engine_error_table

    task = schedule.run_task

    def broken(key, spec, *args, **options):
        if key.config != BASELINE:
            spec = spec.model_copy(update={"class_path": "triagebot.corpus.sentinels:Missing"})
        return task(key, spec, *args, **options)

    monkeypatch.setattr(schedule, "run_task", broken)
    log = tmp_path / "progress.log"
    with open(log, "w") as stream:
        _, records = sweep(
            tmp_path,
            "engine.jsonl",
            sentinels(["ItemBreak"]),
            confirm=1,
            progress=PlainProgress(stream),
            flags=_always(DEFAULT_FLAGS),  # both flags' runs made, to fail
        )
    runs = {r.config: r.outcome for r in records}
    assert runs[BASELINE].status == Status.ok and len(records) == 3  # nothing rerun
    for flag in DEFAULT_FLAGS:
        assert runs[flag].status == Status.engine_error and not runs[flag].untestable
        assert runs[flag].error_type == "KeyError" and "Missing" in runs[flag].error
        assert "KeyError" in runs[flag].traceback
    effects = {row.flag: row.effect for row in classify(merge([tmp_path / "engine.jsonl"]))}
    assert effects == dict.fromkeys(DEFAULT_FLAGS, Effect.engine_error)
    text = log.read_text()
    assert "ENGINE ERROR: KeyError" in text and "ENGINE ERRORS 2" in text
    assert text.rstrip().splitlines()[-1].startswith("ENGINE ERRORS: 2 flag runs could not rebuild")
    table = engine_error_table(records)
    assert table is not None and table.row_count == 2 and "ENGINE ERRORS" in str(table.title)


def test_the_longest_models_by_recorded_cost_start_first_after_those_without_one(tmp_path, monkeypatch):
    started = _spy_starts(monkeypatch)
    specs = sentinels(["Plain", "ItemBreak", "NonzeroBreak", "EagerError"])  # in corpus order
    costs = {"Plain": 1.0, "NonzeroBreak": 9.0, "EagerError": 4.0}  # ItemBreak is new
    sweep(tmp_path, "costs.jsonl", specs, jobs=1, costs=costs)
    baselines = [model for model, config, _ in started if config == BASELINE]
    assert baselines == ["ItemBreak", "NonzeroBreak", "EagerError", "Plain"]
    # with one worker, a model's flag runs start right after its baseline
    assert [m for m, _, _ in started] == ["ItemBreak"] * 2 + ["NonzeroBreak"] * 2 + ["EagerError", "Plain"]


def test_the_header_records_the_libraries_of_the_night_s_swept_suites_only(tmp_path):
    import importlib.metadata

    def installed(package):
        try:
            return importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            return ""

    skipped = {"timm": "the timm corpus needs the timm package"}
    selection = CorpusSelection(name="sentinels+diffusers+timm", models=["Plain"], skipped=skipped)
    out, _ = sweep(tmp_path, "suites.jsonl", sentinels(["Plain"]), corpus=selection)
    environment = read_stream(out)[0].environment
    assert environment.libraries == ({"diffusers": installed("diffusers")} if installed("diffusers") else {})
    assert environment.transformers_version == installed("transformers")
