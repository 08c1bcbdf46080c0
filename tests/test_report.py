"""Golden files for every template, hostile error text, the body limit, and a verified repro.

Regenerate the golden files after an intended template change with
`TRIAGEBOT_UPDATE_GOLDEN=1 pytest tests/test_report.py`; the diff then shows in review.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from pathlib import Path

import pytest

from triagebot.analysis import diff
from triagebot.report import (
    BODY_LIMIT,
    dashboard_html,
    fixed_notice,
    issue_body,
    markers,
    nightly_summary,
    regression_notice,
)
from triagebot.report.repro import repro_script, reproduce
from triagebot.results import BASELINE, ModelResult, Outcome, Reproduction, Status, error_signature
from triagebot.store import read_snapshot

DATA = Path(__file__).parent / "data"
GOLDEN = Path(__file__).parent / "golden"
OLD = read_snapshot(DATA / "2.12.0.dev20260408+cu128.json")
NEW = read_snapshot(DATA / "2.12.0.dev20260409+cu128.json")
SCALAR = "capture_scalar_outputs"
DYNAMIC = "capture_dynamic_output_shape_ops"
URLS = {SCALAR: "https://github.com/pytorch/pytorch/issues/180595"}


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("TRIAGEBOT_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        changes = "".join(
            difflib.unified_diff(expected.splitlines(True), text.splitlines(True), name, "rendered")
        )
        pytest.fail(f"{name} differs from its golden file (TRIAGEBOT_UPDATE_GOLDEN=1 to accept):\n{changes}")


def with_repro(snapshot):
    """The snapshot as `triagebot report` sees it after reproduce(): one verified script."""
    signature = next(g.signature for g in analyse_groups(snapshot) if g.models == ["NonzeroGuardCrash"])
    script = repro_script(snapshot, DYNAMIC, "NonzeroGuardCrash", signature)
    repro = Reproduction(
        flag=DYNAMIC, signature=signature, model="NonzeroGuardCrash", script=script, verified=True
    )
    return snapshot.model_copy(update={"reproductions": [repro]})


def analyse_groups(snapshot):
    from triagebot.analysis import flag_stats

    return flag_stats(snapshot, DYNAMIC).crash_groups


@pytest.mark.parametrize("flag", [SCALAR, DYNAMIC])
def test_issue_body_golden(flag: str) -> None:
    body = issue_body(with_repro(NEW), flag, history=[OLD], issue_urls=URLS, cc=["ezyang", "pytorch/dynamo"])
    assert body.startswith(markers.flag_marker(flag) + "\n")
    assert markers.find_flag(body) == flag
    check_golden(f"issue-{flag}.md", body)


def test_notices_summary_and_dashboard_golden() -> None:
    change = diff(OLD, NEW)
    fixed, regression = fixed_notice(change, SCALAR), regression_notice(change, DYNAMIC)
    assert markers.find_notice(fixed) == ("fixed", SCALAR, NEW.key)
    assert markers.find_notice(regression) == ("regression", DYNAMIC, NEW.key)
    assert fixed_notice(change, DYNAMIC) is None and regression_notice(change, SCALAR) is None
    assert fixed_notice(diff(OLD, OLD), SCALAR) is None  # one build: never news
    check_golden("fixed.md", fixed)
    check_golden("regression.md", regression)
    check_golden("summary.md", nightly_summary(NEW, change, [OLD]))
    check_golden("dashboard.html", dashboard_html(NEW, [OLD], URLS))


HOSTILE = "<script>alert(1)</script> @pytorch/everyone see #123 | pwn\n```\n</details> ``` [x](javascript:1)"


def hostile_snapshot():
    snapshot = NEW.model_copy(deep=True)
    bad = Outcome(
        status=Status.crash,
        error_type="Evil@Error",
        error=HOSTILE,
        signature=error_signature("Evil@Error", HOSTILE),
        traceback=HOSTILE,
    )
    snapshot.results.append(
        ModelResult(
            model="@owner #42",
            stratum="x|y",
            outcomes={
                BASELINE: Outcome(status=Status.ok, graphs=3, break_reasons=[HOSTILE]),
                DYNAMIC: bad,
                SCALAR: bad,
            },
        )
    )
    return snapshot


def test_a_hostile_error_message_renders_harmlessly() -> None:
    snapshot = hostile_snapshot()
    body = issue_body(snapshot, DYNAMIC)
    outside_code = re.sub(r"`[^`\n]*`", "", body)
    assert not re.search(r"@[A-Za-z0-9]", outside_code)  # no ping
    assert not re.search(r"#\d", outside_code)  # no cross-link
    # Inside a code span GitHub shows HTML as text; outside one it must never appear.
    assert "<script>" not in outside_code and "</details>" not in outside_code.replace("\n</details>", "")
    assert body.count("```") % 2 == 0  # every fence closes
    for line in body.splitlines():
        if line.startswith("| ") and "`@owner #42`" in line:
            assert len(re.split(r"(?<!\\)\|", line)) == 5  # a 3-column row stayed 3 columns
    html = dashboard_html(snapshot)
    assert "<script>" not in html and "&lt;script&gt;" in html
    notice = regression_notice(diff(NEW, snapshot), DYNAMIC)
    assert notice is None or "<script>" not in notice


def test_a_body_over_the_limit_folds_then_truncates_with_a_link() -> None:
    snapshot = NEW.model_copy(deep=True)
    template = snapshot.result("T5ForConditionalGeneration")
    for index in range(1500):
        snapshot.results.append(template.model_copy(update={"model": f"GeneratedModel{index:04d}Long" * 3}))
    body = issue_body(snapshot, DYNAMIC, dashboard_url="https://example.org/dashboard.html")
    assert len(body) <= BODY_LIMIT
    assert "<details>" in body or "truncated" in body
    assert "https://example.org/dashboard.html" in body
    assert body.count("```") % 2 == 0


@pytest.mark.skipif(sys.platform == "win32", reason="runs torch in a subprocess")
def test_the_repro_for_the_sentinel_crash_reproduces_it() -> None:
    # Only the sentinel carries a spec in the fixture, so one script runs: torch in a child process.
    [repro] = reproduce(OLD, python=sys.executable, timeout=240)
    assert repro.model == "NonzeroGuardCrash"
    assert repro.verified, repro.observed
    assert "import triagebot" not in repro.script and "from_pretrained" not in repro.script


def test_the_repro_rebuilds_the_inputs_the_sweep_fed() -> None:
    from triagebot.corpus.inputs import materialize_inputs
    from triagebot.results import InputSpec

    snapshot = OLD.model_copy(deep=True)
    result = snapshot.result("NonzeroGuardCrash")
    result.spec.inputs = [
        InputSpec(name="x", shape=[2, 3], dtype="float32"),
        InputSpec(name="ids", shape=[4], dtype="int64", kind="randint", low=1, high=7),
        InputSpec(name="grid", shape=[1, 3], dtype="int64", kind="values", values=[[1, 2, 2]]),
        InputSpec(name="codebook_idx", shape=[], dtype="int64", kind="literal", values=3),
    ]
    namespace: dict = {"__name__": "repro_under_test"}
    exec(repro_script(snapshot, "capture_dynamic_output_shape_ops", "NonzeroGuardCrash"), namespace)
    rebuilt = namespace["build_inputs"]()
    expected = materialize_inputs(result.spec.inputs, result.spec.seed)
    assert rebuilt.keys() == expected.keys()
    assert rebuilt["codebook_idx"] == 3 and not hasattr(rebuilt["codebook_idx"], "shape")
    for name in ("x", "ids", "grid"):
        assert rebuilt[name].equal(expected[name])
