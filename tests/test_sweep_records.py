"""The sweep's records, without children: the checks a run makes (one `Check` from the config to
the stored snapshot), and a run's task as the driver makes it and the child reads it."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from triagebot.config import parse_config
from triagebot.errors import StoreError
from triagebot.results import (
    BASELINE,
    AccuracyCheck,
    Check,
    ModelSpec,
    Outcome,
    RecompileCheck,
    Status,
)
from triagebot.store.base import read_snapshot, write_snapshot
from triagebot.sweep.plan import checks_for
from triagebot.sweep.pool import Result
from triagebot.sweep.schedule import CHECK_CONFIG, run_record
from triagebot.sweep.tasks import RunKey, RunRequest, run_task

SMOKE = Path(__file__).parent / "data" / "smoke-2.13.0+cpu.json"


def test_a_stored_snapshot_reads_its_checks_as_checks_and_writes_them_back_byte_for_byte(tmp_path):
    snapshot = read_snapshot(SMOKE)
    assert snapshot.checks == [Check.accuracy] and all(isinstance(c, Check) for c in snapshot.checks)
    # The file was written before some fields existed: what it holds comes back as it was, but
    # for the libraries' own fields of that time, read into the one mapping (none recorded).
    stored = json.loads(SMOKE.read_text())
    environment = stored["environment"]
    assert [environment.pop(field) for field in ("diffusers_version", "timm_version")] == ["", ""]
    environment["libraries"] = {}
    assert json.loads(snapshot.model_dump_json(exclude_unset=True)) == stored
    # Written by the store and read again, a snapshot is a fixed point, byte for byte.
    first = write_snapshot(snapshot, tmp_path / "first.json")
    again = write_snapshot(read_snapshot(first), tmp_path / "again.json")
    assert again.read_bytes() == first.read_bytes() and read_snapshot(again) == snapshot
    assert '"checks": [\n  "accuracy"\n ]' in first.read_text()


def test_a_snapshot_with_a_check_nobody_makes_is_one_line_naming_it(tmp_path):
    data = json.loads(SMOKE.read_text())
    data["checks"] = ["accurracy"]
    path = tmp_path / "typo.json"
    path.write_text(json.dumps(data))
    with pytest.raises(StoreError, match=r"not a snapshot: 'checks\.0': Input should be 'accuracy'") as error:
        read_snapshot(path)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("sweep", "checks"),
    [
        ("", {Check.accuracy}),  # the defaults: outputs judged, the second shape on the ladder only
        ('recompiles = "all"', {Check.accuracy, Check.recompiles}),
        ('accuracy = false\nrecompiles = "none"', set()),
    ],
)
def test_what_every_run_checks_is_what_sweep_asks(sweep, checks):
    assert checks_for(parse_config(f"[sweep]\n{sweep}\n").sweep) == checks


def test_the_checks_a_run_made_are_those_whose_result_it_holds_sorted():
    recompiled = RecompileCheck(change="sequence 16 -> 24", status="ok")
    judged = AccuracyCheck(verdict="match")
    assert Outcome(status=Status.ok).checks_made == []
    assert Outcome(status=Status.ok, recompile=recompiled).checks_made == [Check.recompiles]
    both = Outcome(status=Status.ok, recompile=recompiled, accuracy=judged)
    assert both.checks_made == [Check.accuracy, Check.recompiles]


def test_a_run_request_crosses_the_pipe_with_its_spec_as_the_stream_stores_it():
    spec = ModelSpec(model="Tiny", config={"image_size": (8, 8)})
    task = run_task(RunKey("Tiny", BASELINE), spec, {"capture_scalar_outputs": True}, {Check.accuracy})
    assert task.kind == "run" and task.spec == spec
    message = pickle.loads(pickle.dumps(task.message()))  # as the pool's pipe carries it
    read = RunRequest.from_message(message)
    assert read.spec == ModelSpec.model_validate(spec.model_dump(mode="json"))  # (8, 8) as [8, 8]
    assert read.spec.config == {"image_size": [8, 8]}
    assert (read.patch, read.checks, read.backend, read.eager_only) == (
        {"capture_scalar_outputs": True},
        {Check.accuracy},
        None,
        False,
    )


def test_a_run_that_could_not_rebuild_its_model_is_an_engine_error_unless_it_only_checked_it():
    spec = ModelSpec(model="Tiny")
    failed = Outcome(status=Status.create_error, error_type="ImportError")

    def record(key: RunKey):
        return run_record(Result(run_task(key, spec, {}), outcome=failed, spec=spec))

    assert record(RunKey("Tiny", BASELINE)).outcome.status == Status.create_error  # untestable
    assert record(RunKey("Tiny", BASELINE, attempt=1)).outcome.status == Status.engine_error
    assert record(RunKey("Tiny", "capture_scalar_outputs")).outcome.status == Status.engine_error
    checked = record(RunKey("Tiny", CHECK_CONFIG))
    assert (checked.config, checked.attempt, checked.backend) == (CHECK_CONFIG, 0, None)
    assert checked.outcome.status == Status.create_error
