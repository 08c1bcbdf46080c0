"""What a night did not measure, said once under each verdict from the night's own record, and
the ladder's row of the verdict over the models that climbed it."""

from __future__ import annotations

from builders import SCALAR, night_of, ok, result, snapshot

from triagebot.report import issue_body, words
from triagebot.results import Check, FlagFigures, InputSpec, ModelSpec, VerdictRow


def spec(model: str, params: int, dtype: str = "float32") -> ModelSpec:
    return ModelSpec(model=model, params=params, inputs=[InputSpec(name="x", shape=[2], dtype=dtype)])


def tonight(**fields):
    results = [
        result("A", ok(2), {SCALAR: ok(1)}, spec=spec("A", 1_234)),
        result("B", ok(2), {SCALAR: ok(1)}, spec=spec("B", 56_789, dtype="bfloat16")),
        result("C", ok(2), {SCALAR: ok(1)}, spec=spec("C", 7, dtype="int64")),
    ]
    return snapshot(results, **fields)


def test_the_line_is_read_from_the_nights_record():
    said = words.not_measured(tonight(ladder=["counting", "aot_eager"]))
    assert said.startswith("Not measured tonight: training (every run is inference")
    assert "dtypes other than bfloat16, float32 (its inputs')" in said
    assert "at most 56,789 parameters" in said
    assert "outputs against eager's" in said  # the night did not compare them
    assert "inductor (not on the backend ladder)" in said
    assert said.endswith("time per call of the compiled model.")


def test_what_the_night_did_measure_is_not_listed():
    said = words.not_measured(
        tonight(ladder=["counting", "aot_eager", "inductor", words.BACKWARD_RUNG], checks=[Check.accuracy])
    )
    for measured in ("training", "outputs against", "inductor", "not on the backend ladder"):
        assert measured not in said, measured


def test_the_issue_says_it_once_under_the_verdict():
    night = night_of(tonight())
    body = issue_body(night, SCALAR)
    line = words.not_measured(night.snapshot)
    assert body.count("Not measured tonight:") == 1
    assert body.index("## Verdict") < body.index("Not measured tonight:") < body.index("## Summary")
    assert line.split(" (")[0] in body


def test_the_ladder_row_carries_its_denominator():
    figures = FlagFigures(flag=SCALAR, swept=10, testable=10, affectable=10, laddered=7, ladder_failures=0)
    said = words.verdict_share(VerdictRow.ladder_failures, 0, figures)
    assert said == "0 of 7 models that climbed the ladder under the flag"
