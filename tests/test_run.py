"""`triagebot run` (triagebot/pipeline/): the order of the stages, the skip, and what it reports.

These tests give the pipeline stand-in stages so that they pin down its own logic; the end to
end run with the real sweep, renderer and publisher is tests/test_run_end_to_end.py.
"""

from __future__ import annotations

from pathlib import Path

import builders
import pytest
from builders import SCALAR as FLAG
from builders import ok

from triagebot.config import Config, parse_config
from triagebot.pipeline import RunOptions, already_swept, run, summary_markdown
from triagebot.results import (
    BASELINE,
    Environment,
    ModelResult,
    Night,
    Outcome,
    Snapshot,
    Status,
)
from triagebot.store import LocalStore, MemoryStore, write_snapshot


def snapshot(key: str, git: str, flag_status: Status = Status.ok) -> Snapshot:
    crash = dict(error_type="RuntimeError", error="boom", signature="RuntimeError: boom")
    flag_outcome = Outcome(status=flag_status, graphs=1, **(crash if flag_status == Status.crash else {}))
    model = ModelResult(model="M", outcomes={BASELINE: ok(2), FLAG: flag_outcome})
    return builders.snapshot([model], key=key, git=git, corpus="sentinels")


SENTINELS = Config.model_validate({"sweep": {"corpus": "sentinels"}})
"""The configuration these nights are the configured nights of (another corpus makes them trials)."""


class Stages:
    """Stand-in stages that record what they were given."""

    def __init__(self, swept: Snapshot) -> None:
        self.swept = swept
        self.calls: list[str] = []
        self.published_dry: bool | None = None

    def sweeper(self, config: Config, work: Path, resume: bool) -> Snapshot:
        self.calls.append("sweep")
        return self.swept

    def renderer(self, night: Night, out: Path) -> Path:
        self.calls.append(f"render {night.key} after {night.previous_key}")
        self.rendered = night
        out.mkdir(parents=True, exist_ok=True)
        return out

    def publisher(self, night: Night, config, token, dry_run, out) -> tuple[str, Night]:
        self.calls.append("publish")
        self.published_dry = dry_run
        return "dry run: 1 issue planned", night.linked({FLAG: "https://example.org/issues/1"})

    def stages(self) -> dict:
        return {"sweeper": self.sweeper, "renderer": self.renderer, "publisher": self.publisher}


def test_first_run_sweeps_stores_renders_publishes_and_says_where(tmp_path: Path, monkeypatch):
    summary_file = tmp_path / "step-summary.md"
    output_file = tmp_path / "github-output"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    monkeypatch.setenv("GITHUB_OUTPUT", str(output_file))
    store = LocalStore(tmp_path / "store")
    new = snapshot("2.12.0.dev20260409", "bbb", Status.crash)
    stages = Stages(new)
    lines: list[str] = []

    report = run(
        Config(),
        RunOptions(out=tmp_path / "out"),
        store=store,
        build=new.environment,
        say=lines.append,
        **stages.stages(),
    )

    assert report.swept and stages.calls == ["sweep", "publish", f"render {new.key} after None"]
    # The report folder is rendered from the night as published: its issue links included.
    assert stages.rendered.flags[FLAG].issue_url == "https://example.org/issues/1"
    assert store.keys() == [new.key] and report.stored_file == store.file(new.key)
    assert report.snapshot_file is not None and report.snapshot_file.exists()
    assert report.diff_file is None  # nothing to compare with
    assert stages.published_dry is True  # no token, no repo
    assert lines[0] == (
        f"torch {new.key} (bbb) is not in the store: "
        "sweeping corpus 'transformers+diffusers+timm' under 2 flags"
    )
    assert any(line.startswith(f"snapshot {new.key}: ") for line in lines)
    assert any("diff: none (first snapshot)" in line for line in lines)
    step_summary = summary_file.read_text(encoding="utf-8")
    assert "publishing: dry run: 1 issue planned" in step_summary
    assert f"## triagebot: `{new.key}`" in step_summary  # the night's own summary follows
    assert f"[`{FLAG}`](https://example.org/issues/1)" in step_summary
    outputs = dict(line.split("=", 1) for line in output_file.read_text(encoding="utf-8").splitlines())
    assert outputs["swept"] == "true" and Path(outputs["snapshot"]) == report.snapshot_file


def test_second_build_is_diffed_against_the_previous_one(tmp_path: Path):
    old = snapshot("2.12.0.dev20260408", "aaa")
    new = snapshot("2.12.0.dev20260409", "bbb", Status.crash)
    store = MemoryStore([old])
    stages = Stages(new)

    report = run(
        Config(),
        RunOptions(out=tmp_path),
        store=store,
        build=new.environment,
        say=lambda _: None,
        **stages.stages(),
    )

    assert report.previous_key == old.key
    assert stages.calls[2] == f"render {new.key} after {old.key}"
    change = report.diff_file.read_text(encoding="utf-8")
    assert '"newly_crashing"' in change and '"model": "M"' in change
    assert "1 newly crashing" in report.summary_file.read_text(encoding="utf-8")


def test_a_build_already_in_the_store_is_not_swept_again(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "github-output"))
    stored = snapshot("2.12.0.dev20260409", "bbb")
    # The same build under another version string (a rebuilt wheel): still the same git hash.
    installed = Environment(torch_version="2.12.0.dev20260409+cu128", torch_git_version="bbb")
    stages = Stages(stored)
    lines: list[str] = []

    report = run(
        SENTINELS.with_flags([FLAG]),
        RunOptions(out=tmp_path),
        store=MemoryStore([stored]),
        build=installed,
        say=lines.append,
        **stages.stages(),
    )

    assert not report.swept and report.existing_key == stored.key
    assert stages.calls == []
    assert lines == [
        f"torch {installed.torch_version} (bbb) was already swept: snapshot {stored.key}, every "
        "configured flag (--force sweeps again); in the store: nothing to do"
    ]
    assert "swept=false" in (tmp_path / "github-output").read_text(encoding="utf-8")


def test_force_sweeps_a_build_that_is_already_stored(tmp_path: Path):
    stored = snapshot("2.12.0.dev20260409", "bbb")
    stages = Stages(stored)

    report = run(
        Config(),
        RunOptions(out=tmp_path, force=True),
        store=MemoryStore([stored]),
        build=stored.environment,
        say=lambda _: None,
        **stages.stages(),
    )

    assert report.swept and stages.calls[0] == "sweep"


def test_check_only_answers_whether_a_sweep_is_needed(tmp_path: Path, monkeypatch):
    output = tmp_path / "github-output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    stored = snapshot("2.12.0.dev20260408", "aaa")
    stages = Stages(stored)
    fresh = Environment(torch_version="2.12.0.dev20260409", torch_git_version="bbb")

    printed: list[str] = []
    for build in (stored.environment, fresh):
        run(
            SENTINELS.with_flags([FLAG]),
            RunOptions(check_only=True),
            store=MemoryStore([stored]),
            build=build,
            say=printed.append,
            **stages.stages(),
        )

    # What it prints is what it writes: lines $GITHUB_OUTPUT takes as they are.
    assert output.read_text(encoding="utf-8").splitlines() == printed
    outputs = [dict(line.split("=", 1) for line in printed[i : i + 3]) for i in (0, 3)]
    assert [answer["sweep"] for answer in outputs] == ["false", "true"]
    assert outputs[0]["reason"].startswith("torch 2.12.0.dev20260408 (aaa) was already swept")
    assert outputs[1]["reason"] == "torch 2.12.0.dev20260409 (bbb) is not in the store"
    assert stages.calls == []


def test_a_merged_snapshot_is_stored_and_published_without_sweeping(tmp_path: Path):
    merged = snapshot("2.12.0.dev20260409", "bbb")
    path = write_snapshot(merged, tmp_path / "merged.json")
    stages = Stages(merged)
    store = MemoryStore()

    report = run(
        Config(),
        RunOptions(out=tmp_path / "out", snapshot=path),
        store=store,
        say=lambda _: None,
        **stages.stages(),
    )

    assert "sweep" not in stages.calls and report.swept
    assert store.keys() == [merged.key]


def test_publishing_is_real_only_with_a_token_and_a_repo(tmp_path: Path):
    config = parse_config('[tracker]\nrepo = "owner/name"\npublish_test_corpus = true\n')
    new = snapshot("2.12.0.dev20260409", "bbb")
    for token, dry_run, expected in [(None, False, True), ("t", True, True), ("t", False, False)]:
        stages = Stages(new)
        run(
            config,
            RunOptions(out=tmp_path, token=token, dry_run=dry_run, force=True),
            store=MemoryStore(),
            build=new.environment,
            say=lambda _: None,
            **stages.stages(),
        )
        assert stages.published_dry is expected, (token, dry_run)


def test_build_identity_falls_back_to_the_version_without_a_git_hash():
    local = snapshot("2.13.0+cpu", "")
    store = MemoryStore([local])
    assert already_swept(store, Environment(torch_version="2.13.0+cpu"), SENTINELS) == "2.13.0+cpu"
    assert already_swept(store, Environment(torch_version="2.13.1+cpu"), SENTINELS) is None


@pytest.mark.parametrize("swept", [True, False])
def test_summary_names_the_build(swept: bool):
    from triagebot.pipeline import RunReport

    build = Environment(torch_version="2.12.0.dev20260409", torch_git_version="0123456789abcdef")
    report = RunReport(
        build=build, swept=swept, existing_key="2.12.0.dev20260409", snapshot_key="2.12.0.dev20260409"
    )
    night = None
    if swept:
        from triagebot.analysis import night as analyse

        night = analyse(snapshot("2.12.0.dev20260409", "0123456789abcdef"))
    text = summary_markdown(report, night)
    assert text.startswith("### triagebot run: torch 2.12.0.dev20260409 (`0123456789ab`)")
    assert ("Already swept" in text) is not swept


def test_an_unknown_corpus_is_refused_as_the_configuration_is_read():
    """Before anything is written or swept, and whether or not the build needs a sweep: a run
    (`run --check` included) is never handed a misspelt corpus."""
    from triagebot.errors import ConfigError

    with pytest.raises(ConfigError, match=r"unknown corpus 'sentinel' \(did you mean 'sentinels'\?\)"):
        parse_config('[sweep]\ncorpus = "sentinel"\n')
    with pytest.raises(ConfigError, match="did you mean 'transformers'"):
        parse_config("", options={"--corpus": "timm,transformer"})
