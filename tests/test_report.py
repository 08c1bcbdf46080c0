"""Golden files for every template, hostile error text, the body limit, and a verified repro.

Regenerate the golden files after an intended template change with
`TRIAGEBOT_UPDATE_GOLDEN=1 pytest tests/test_report.py`; the diff then shows in review.
"""

from __future__ import annotations

import ast
import difflib
import os
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from builders import DYNAMIC, SCALAR, crash, fixture_nightlies, ok, result, snapshot

from triagebot.analysis import night
from triagebot.report import (
    fixed_notice,
    issue_body,
    links,
    markers,
    nightly_summary,
    regression_notice,
)
from triagebot.report.repro import repro_script
from triagebot.reproduce import reproduce
from triagebot.results import (
    WRONG_RESULT,
    Environment,
    GraphRepro,
    InputSpec,
    ModelSpec,
    Reduction,
    Reproduction,
)

GOLDEN = Path(__file__).parent / "golden"
OLD, NEW = fixture_nightlies()
URLS = {SCALAR: "https://github.com/pytorch/pytorch/issues/180595"}


def fixture_night(snapshot=None, history=(OLD,), **options):
    """The fixture's newer nightly against the older one, cc'd as a routing rule would."""
    analysed = night(
        snapshot or NEW,
        list(history),
        OLD,
        cc=lambda flag, signatures: ["ezyang", "pytorch/dynamo"],
        **options,
    )
    return analysed.linked(URLS)


def a_week_of_old() -> list:
    """The older fixture nightly as the last of a week of nightlies that all ran alike (other
    builds, one day apart): its crashes are steady ones."""
    copies = [
        OLD.model_copy(
            update={
                "key": f"2.12.0.dev2026040{day}+cu128",
                "created": OLD.created - timedelta(days=8 - day),
                "environment": OLD.environment.model_copy(update={"torch_git_version": f"{day:040x}"}),
            }
        )
        for day in range(2, 8)
    ]
    return [*copies, OLD]


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


REPRODUCED = "T5ForConditionalGeneration"  # the fixture's real crash group given a verified repro


def t5_spec() -> ModelSpec:
    """A spec for the fixture's T5ForConditionalGeneration, which records none: the smoke night's
    T5Model's, built as the conditional-generation class (the same config)."""
    from triagebot.store import read_snapshot

    spec = read_snapshot(SMOKE).result("T5Model").spec
    assert spec is not None
    return spec.model_copy(
        update={"model": REPRODUCED, "class_path": "transformers:T5ForConditionalGeneration", "params": None}
    )


def with_repro(snapshot):
    """The snapshot as `triagebot report` sees it after reproduce(): one verified script, for a
    real model's crash group (a sentinel's group is in no issue)."""
    [signature] = [g.signature for g in analyse_groups(snapshot) if g.models == [REPRODUCED]]
    results = [
        result.model_copy(update={"spec": t5_spec()}) if result.model == REPRODUCED else result
        for result in snapshot.results
    ]
    spec_carrying = snapshot.model_copy(update={"results": results})
    script = repro_script(spec_carrying, DYNAMIC, REPRODUCED, signature)
    repro = Reproduction(flag=DYNAMIC, signature=signature, model=REPRODUCED, script=script, verified=True)
    return spec_carrying.model_copy(update={"reproductions": [repro]})


def analyse_groups(snapshot):
    from triagebot.analysis import flag_stats

    return flag_stats(snapshot, DYNAMIC).crash_groups


@pytest.mark.parametrize("flag", [SCALAR, DYNAMIC])
def test_issue_body_golden(flag: str) -> None:
    body = issue_body(fixture_night(with_repro(NEW)), flag)
    assert body.startswith(markers.flag_marker(flag) + "\n")
    assert markers.find_flag(body) == flag
    assert not [line for line in body.splitlines() if "\\|" in line and not line.startswith("|")]
    check_golden(f"issue-{flag}.md", body)


def test_a_reduced_repro_says_what_it_saved_and_shows_the_minifiers_graph_repro() -> None:
    plain = with_repro(NEW)
    (repro,) = plain.reproductions
    spec = t5_spec()
    reduction = Reduction(
        spec=spec,
        steps=["num_hidden_layers 4 -> 1", "input attention_mask left out @ezyang"],
        lines_before=120,
        lines_after=80,
        seconds_before=9.04,
        seconds_after=4.5,
        probes=7,
        kept_from="2.12.0",
    )
    graph = GraphRepro(after="aot", script="import torch\nprint('graph')\n", lines=2, verified=True)
    reduced = plain.model_copy(
        update={"reproductions": [repro.model_copy(update={"reduction": reduction, "graph": graph})]}
    )
    body = issue_body(fixture_night(reduced), DYNAMIC)
    said = (
        "Reduced from 120 to 80 lines, 9.0 s to 4.5 s a run: num\\_hidden\\_layers 4 -&gt; 1; input"
        " attention\\_mask left out @\u200bezyang (the reduction found on `2.12.0`, still raising it"
        " on this nightly)."
    )
    assert said in body
    assert "Graph-level repro written by PyTorch's minifier (after aot, 2 lines, verified)" in body
    assert "```python\nimport torch\nprint('graph')\n```" in body
    # unreduced, unverified or too long a graph repro: neither is said
    long_graph = graph.model_copy(update={"lines": 5000})
    unverified = reduced.model_copy(
        update={"reproductions": [repro.model_copy(update={"graph": long_graph})]}
    )
    assert "Reduced from" not in (plain_body := issue_body(fixture_night(unverified), DYNAMIC))
    assert "Graph-level repro" not in plain_body


def test_notices_and_summary_golden() -> None:
    # Closing after one clean nightly: the steady crash the older nightly had, which the newer one
    # ran clean, is over, so it is said fixed.
    noticed = fixture_night(history=a_week_of_old(), close_after=1)
    fixed, regression = fixed_notice(noticed, SCALAR), regression_notice(noticed, DYNAMIC)
    assert markers.find_notice(fixed) == ("fixed", SCALAR, NEW.key)
    assert markers.find_notice(regression) == ("regression", DYNAMIC, NEW.key)
    assert fixed_notice(noticed, DYNAMIC) is None and regression_notice(noticed, SCALAR) is None
    # A crash seen on one nightly only is not said fixed the next.
    tonight = fixture_night(close_after=1)
    assert fixed_notice(tonight, SCALAR) is None
    assert fixed_notice(night(OLD, [OLD], OLD), SCALAR) is None  # one build: never news
    check_golden("fixed.md", fixed)
    check_golden("regression.md", regression)
    check_golden("summary.md", nightly_summary(tonight))


SITE = "https://someone.github.io/triagebot/"


def test_with_a_dashboard_every_model_group_and_comparison_links_to_its_page_golden() -> None:
    """The same night with `tracker.dashboard_url`: the bodies above, with links into the site."""
    tonight = fixture_night(with_repro(NEW), dashboard_url=SITE)
    noticed = fixture_night(with_repro(NEW), history=a_week_of_old(), dashboard_url=SITE, close_after=1)
    body = issue_body(tonight, DYNAMIC)
    state = tonight.flags[DYNAMIC]
    for group in state.stats.crash_groups:
        assert f"]({SITE}{links.crash_group(DYNAMIC, group.signature)})" in body
        for model in group.models:
            assert f"[`{model}`]({SITE}{links.model_page(model)})" in body
    for row in state.helped:
        assert f"[`{row.model}`]({SITE}{links.model_page(row.model)})" in body
    # Nothing else changed: without its links and its last line, it is the body without a site.
    unlinked = re.sub(r"\[(`[^`]*`|[^\]`]*)\]\(" + re.escape(SITE) + r"[^)]*\)", r"\1", body)
    flag_page = f"{SITE}{links.flag_page(DYNAMIC)}"
    last = f"\n\nEvery table, and each model night by night, on the dashboard: {flag_page}\n"
    assert unlinked.replace(last, "\n") == issue_body(fixture_night(with_repro(NEW)), DYNAMIC)
    check_golden(f"issue-{DYNAMIC}.linked.md", body)
    regression = regression_notice(noticed, DYNAMIC)
    compared = f"{SITE}{links.compare_page(OLD.key, NEW.key)}"
    assert f"The two nightlies compared: {compared}" in regression
    check_golden("regression.linked.md", regression)
    check_golden("fixed.linked.md", fixed_notice(noticed, SCALAR))
    summary = nightly_summary(tonight)
    assert f"The two nightlies compared: {compared}" in summary and f": {SITE}\n" in summary
    check_golden("summary.linked.md", summary)


@pytest.mark.torch
@pytest.mark.skipif(sys.platform == "win32", reason="runs torch in a subprocess")
def test_the_repro_for_the_sentinel_crash_reproduces_it() -> None:
    # Only the sentinel carries a spec in the fixture, so one script runs: torch in a child process.
    [repro] = reproduce(OLD, python=sys.executable, timeout=240)
    assert repro.model == "NonzeroGuardCrash"
    assert repro.verified, repro.observed
    assert "import triagebot" not in repro.script and "from_pretrained" not in repro.script


@pytest.mark.torch
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


@pytest.mark.torch
def test_the_repro_rebuilds_collections_and_instances_item_by_item_as_the_sweep_made_them() -> None:
    from triagebot.corpus.inputs import materialize_inputs
    from triagebot.results import InputSpec, instance, tensor_list

    snapshot = OLD.model_copy(deep=True)
    result = snapshot.result("NonzeroGuardCrash")
    result.spec.inputs = [
        InputSpec(name="before", shape=[2], dtype="float32"),
        tensor_list(
            "x",
            [
                InputSpec(name="x[0]", shape=[4, 1, 2, 2], dtype="float32"),
                InputSpec(name="x[1]", shape=[3, 5], dtype="int64", kind="randint", low=0, high=9),
                InputSpec(name="x[2]", shape=[2], dtype="bool", kind="ones"),
            ],
        ),
        InputSpec(name="after", shape=[3], dtype="float32"),
        tensor_list(
            "features",
            [
                InputSpec(name="mask", shape=[1, 4], dtype="bool", kind="ones"),
                InputSpec(name="coordinates", shape=[1, 4, 3], dtype="float32"),
            ],
            kind="dict",
        ),
        instance("cache", "collections:Counter", a=2),
        tensor_list(
            "pairs",
            [
                tensor_list(
                    f"pairs[{index}]",
                    [
                        InputSpec(name="encoding", shape=[1, 2, 4], dtype="float32"),
                        InputSpec(name="mask", shape=[1, 2], dtype="int64", kind="ones"),
                    ],
                )
                for index in range(2)
            ],
        ),
    ]
    script = repro_script(snapshot, "capture_dynamic_output_shape_ops", "NonzeroGuardCrash")
    assert "'items': None" not in script  # only a list carries items
    namespace: dict = {"__name__": "repro_under_test"}
    exec(script, namespace)
    rebuilt = namespace["build_inputs"]()
    expected = materialize_inputs(result.spec.inputs, result.spec.seed)
    assert isinstance(rebuilt["x"], list) and [t.shape for t in rebuilt["x"]] == [(4, 1, 2, 2), (3, 5), (2,)]
    for got, want in zip(rebuilt["x"], expected["x"], strict=True):
        assert got.equal(want) and got.dtype == want.dtype
    assert rebuilt["before"].equal(expected["before"]) and rebuilt["after"].equal(expected["after"])
    assert list(rebuilt["features"]) == ["mask", "coordinates"]
    for name, want in expected["features"].items():
        assert rebuilt["features"][name].equal(want) and rebuilt["features"][name].dtype == want.dtype
    assert rebuilt["cache"] == expected["cache"] == {"a": 2}  # an object made from its class
    assert rebuilt["cache"] is not namespace["build_inputs"]()["cache"]  # afresh for each call
    assert [[tensor.shape for tensor in pair] for pair in rebuilt["pairs"]] == [[(1, 2, 4), (1, 2)]] * 2
    for got, want in zip(rebuilt["pairs"], expected["pairs"], strict=True):
        assert got[0].equal(want[0]) and got[1].equal(want[1])


def test_a_list_input_holds_tensors_only_one_per_item_and_survives_json():
    from triagebot.results import InputSpec, ModelSpec, tensor_list

    items = [InputSpec(name=f"x[{i}]", shape=[4, 1, 2, 2], dtype="float32") for i in range(3)]
    spec = ModelSpec(model="diffusers/Z", source="diffusers", inputs=[tensor_list("x", items)])
    assert ModelSpec.model_validate_json(spec.model_dump_json()) == spec
    nested = ModelSpec(model="m", inputs=[tensor_list("pairs", [tensor_list("pair", items[:2])])])
    assert ModelSpec.model_validate_json(nested.model_dump_json()) == nested
    literal = InputSpec(name="n", shape=[], dtype="int64", kind="literal", values=3)
    with pytest.raises(ValueError, match="holds items of kind literal"):
        InputSpec(name="x", shape=[1], dtype="int64", kind="list", items=[literal])
    with pytest.raises(ValueError, match="has no items"):
        InputSpec(name="x", shape=[0], dtype="float32", kind="list", items=[])
    with pytest.raises(ValueError, match=r"has shape \[2\], not \[3\]"):
        InputSpec(name="x", shape=[2], dtype="float32", kind="list", items=items)
    with pytest.raises(ValueError, match="needs values"):
        InputSpec(name="cache", shape=[], dtype="int64", kind="instance", values={"kwargs": {}})
    with pytest.raises(ValueError, match="names an item twice"):
        tensor_list("features", [items[0], items[0]], kind="dict")
    with pytest.raises(ValueError, match="only a list or dict has"):
        InputSpec(name="y", shape=[2], dtype="float32", items=items)


def imports_and_uses(script: str) -> tuple[set[str], set[str]]:
    """The names a script's imports bind, and the names it reads."""
    tree = ast.parse(script)
    bound, used = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bound.update((alias.asname or alias.name).partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            bound.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            used.add(node.id)
    return bound, used


def transformers_snapshot():
    """The fixture with one transformers model that carries a spec to rebuild it from."""
    snapshot = OLD.model_copy(deep=True)
    result = snapshot.result("LlavaForConditionalGeneration")
    result.spec = ModelSpec(
        model="LlavaForConditionalGeneration",
        class_path="transformers:LlavaForConditionalGeneration",
        config={"vocab_size": 99},
        inputs=[InputSpec(name="input_ids", shape=[1, 4], dtype="int64", kind="randint", low=0, high=99)],
    )
    return snapshot


def three_suites(**versions: str):
    """A night of one model of each suite, crashing under SCALAR, with `versions` recorded."""
    specs = [
        ModelSpec(model="BertModel", class_path="transformers:BertModel"),
        ModelSpec(
            model="diffusers/AutoencoderKL", source="diffusers", class_path="diffusers.models:AutoencoderKL"
        ),
        ModelSpec(
            model="timm/test_vit2", source="timm", class_path="timm.models.vision_transformer:test_vit2"
        ),
    ]
    night = snapshot([result(spec.model, ok(1), {SCALAR: crash()}, spec=spec) for spec in specs])
    # Through validation, as a stored snapshot is read: the libraries' own fields become `libraries`.
    night.environment = Environment.model_validate({**night.environment.model_dump(), **versions})
    return night


def versions_said(script: str) -> str:
    """What the docstring's snapshot line says in parentheses: the versions the script depends on."""
    line = next(line for line in script.splitlines() if line.startswith("from triagebot snapshot 2.13.0 ("))
    return line.partition("(")[2].removesuffix(").")


def test_a_repro_names_the_version_of_the_library_it_builds_its_model_with() -> None:
    versions = {
        "transformers_version": "5.24.0",
        "diffusers_version": "0.42.1",
        "timm_version": "1.0.31",
        "libraries": {"torchvision": "0.28.0"},
    }
    night = three_suites(**versions)
    said = {each.model: versions_said(repro_script(night, SCALAR, each.model)) for each in night.results}
    assert said == {
        "BertModel": "torch 2.13.0, transformers 5.24.0",
        "diffusers/AutoencoderKL": "torch 2.13.0, diffusers 0.42.1",
        "timm/test_vit2": "torch 2.13.0, timm 1.0.31 with torchvision 0.28.0",
    }
    # A night whose suite library moved under the same torch (one snapshot key): its repro says so.
    moved = three_suites(**{**versions, "timm_version": "1.0.32"})
    assert versions_said(repro_script(moved, SCALAR, "timm/test_vit2")).endswith(
        "timm 1.0.32 with torchvision 0.28.0"
    )
    # A snapshot made before environments recorded the libraries names torch alone.
    assert versions_said(repro_script(three_suites(), SCALAR, "timm/test_vit2")) == "torch 2.13.0"


@pytest.mark.parametrize(
    ("snapshot", "flag", "model"),
    [
        (OLD, DYNAMIC, "NonzeroGuardCrash"),
        (transformers_snapshot(), SCALAR, "LlavaForConditionalGeneration"),
    ],
)
def test_a_rendered_script_imports_only_what_it_uses(snapshot, flag, model, tmp_path: Path) -> None:
    script = repro_script(snapshot, flag, model)
    compile(script, "repro.py", "exec")
    bound, used = imports_and_uses(script)
    assert bound and bound <= used, f"imported and never used: {sorted(bound - used)}"
    path = tmp_path / "repro.py"
    path.write_text(script, encoding="utf-8")
    ruff = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--isolated",
            "--select",
            "F401,F811",
            str(path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ruff.returncode == 0, ruff.stdout


SMOKE = Path(__file__).parent / "data" / "smoke-2.13.0+cpu.json"


def wrong_result_script() -> tuple[str, str]:
    """The wrong-result repro of the committed smoke sweep's sentinel (a group apart, reproduced
    as any), and its group's signature."""
    from triagebot.analysis import flag_stats
    from triagebot.store import read_snapshot

    smoke = read_snapshot(SMOKE)
    [group] = [
        g for g in flag_stats(smoke, SCALAR).sentinel_groups if g.error_type == WRONG_RESULT and not g.backend
    ]
    model = group.models[0]
    return repro_script(smoke, SCALAR, model, group.signature, wrong=True), group.signature


def test_a_wrong_result_repro_is_short_beyond_the_models_build():
    script, _ = wrong_result_script()
    compile(script, "repro.py", "exec")
    tail = script.split('        tensors[item["name"]] = tensor.to(DEVICE)', 1)[1].split("\n", 2)[2]
    lines = [line for line in tail.splitlines() if line.strip()]
    assert len(lines) <= 45, "\n".join(lines)
    assert "raise WrongResult" in script and "torch.allclose" in script and "import triagebot" not in script


@pytest.mark.torch
@pytest.mark.skipif(sys.platform == "win32", reason="runs torch in a subprocess")
def test_a_wrong_result_repro_runs_standalone_and_raises_the_mismatch(tmp_path: Path) -> None:
    script, signature = wrong_result_script()
    path = tmp_path / "repro.py"
    path.write_text(script, encoding="utf-8")
    ran = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert ran.stderr.rstrip().splitlines()[-2].startswith(f"WrongResult: {signature.partition(': ')[2]}")


SMOKE = Path(__file__).parent / "data" / "smoke-2.13.0+cpu.json"


def lines_beyond_the_build(script: str) -> int:
    """The script's lines after the model's build (its module or class path): from `SEED =` on."""
    lines = script.splitlines()
    return len(lines) - next(number for number, line in enumerate(lines) if line.startswith("SEED ="))


def test_a_wrong_result_repro_is_short_and_compiles_with_the_eager_backend() -> None:
    from triagebot.store import read_snapshot

    smoke = read_snapshot(SMOKE)
    script = repro_script(smoke, SCALAR, "WrongUnderScalarCapture", wrong=True)
    assert lines_beyond_the_build(script) < 60
    assert "backend='eager'" in script and "CountingBackend" not in script
    assert '"eager" runs the graphs Dynamo captured as they are' in script  # its semantics, stated
    # Only what the model needs: its one input kind, no config decoding, no output path to walk.
    assert "def decode" not in script and "randint" not in script and "import re" not in script
    ast.parse(script)


def test_an_inlined_module_keeps_only_the_imports_it_uses_or_may_need_for_their_effect() -> None:
    from triagebot.store import read_snapshot

    smoke = read_snapshot(SMOKE)
    script = repro_script(smoke, SCALAR, "WrongUnderScalarCapture", wrong=True)
    # The sentinels' shared header imports os, signal and time; this sentinel uses none of them.
    assert "import os" not in script and "import signal" not in script and "import time" not in script
    assert "import torch\nfrom torch import nn\n" in script
    spec = smoke.result("WrongUnderScalarCapture").spec
    spec.code = "import json\nimport triagebot_ops  # registers an operator\n" + spec.code
    script = repro_script(smoke, SCALAR, "WrongUnderScalarCapture", wrong=True)
    assert "import json" not in script and "import triagebot_ops  # registers an operator" in script
    ast.parse(script)


def test_a_repro_builds_only_the_input_kinds_it_has_and_decodes_only_a_tagged_config() -> None:
    from triagebot.store import read_snapshot

    smoke = read_snapshot(SMOKE)
    mistral = repro_script(smoke, SCALAR, "Mistral3ForConditionalGeneration")
    kinds = {item.kind for item in smoke.result("Mistral3ForConditionalGeneration").spec.inputs}
    assert kinds == {"values", "ones", "randn"}
    assert "'randint'" not in mistral and "'zeros'" not in mistral and "'literal'" not in mistral
    assert "from_dict(decode(CONFIG))" in mistral  # its config holds a dict with integer keys
    assert "CountingBackend()" in mistral  # a crash's script still counts graphs, as bisection reads
    ast.parse(mistral)


def on_the_cpu(snapshot, cuda_version: str | None):
    """`snapshot` as swept on the CPU, by a CUDA build of torch (`cuda_version`) or a CPU build."""
    swept = {"device": "cpu", "gpu_name": None, "cuda_version": cuda_version}
    if cuda_version:
        swept["torch_version"] = "2.14.1+cu130"
    return snapshot.model_copy(update={"environment": snapshot.environment.model_copy(update=swept)})


def test_a_cuda_build_swept_on_the_cpu_says_so_wherever_the_environment_is_named() -> None:
    tonight = fixture_night(on_the_cpu(NEW, "13.0"))
    body, summary = issue_body(tonight, DYNAMIC), nightly_summary(tonight)
    assert "- **Device**: cpu (torch built for CUDA 13.0)\n" in body
    assert "Measured on the CPU only, with torch built for CUDA 13.0: nothing here ran on a GPU" in body
    assert "on cpu (torch built for CUDA 13.0): counting backend: crashed" in body  # where it lives
    assert "torch `2.14.1+cu130` (`f0e1d2c3b4a5`), cpu (torch built for CUDA 13.0).\n" in summary


def test_a_cpu_build_on_the_cpu_reads_as_before() -> None:
    tonight = fixture_night(on_the_cpu(NEW, None))
    body, summary = issue_body(tonight, DYNAMIC), nightly_summary(tonight)
    assert "- **Device**: cpu\n" in body
    assert "Measured on the CPU only: nothing here ran on a GPU" in body
    assert "CUDA 13" not in body + summary and "torch built for" not in body + summary
    assert "(`f0e1d2c3b4a5`), cpu.\n" in summary
