"""What the hosted jobs run needs no model code: `run --snapshot` (the nightly's publish job),
`publish`, `site` and the `/rerun-sweep` answer, each run as the console command runs them, in a
child interpreter where torch, transformers, diffusers, timm and scipy cannot be imported (tests/torchless),
against the fake GitHub. Every module such a run imports must come from the standard library,
triagebot, or the dependencies pyproject.toml declares besides the model code (and theirs)."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import sysconfig
import tomllib
from importlib import metadata
from pathlib import Path

import github
import pytest
from builders import DYNAMIC, REPO, SCALAR, crash, fixture_nightlies, nightly
from fakegithub import serve
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from triagebot.report.markers import flag_marker, result_marker
from triagebot.store import LocalStore, write_snapshot

ROOT = Path(__file__).resolve().parent.parent
TORCHLESS = Path(__file__).resolve().parent / "torchless"
# as tests/torchless/sitecustomize.py refuses them
MODEL_CODE = {"torch", "transformers", "diffusers", "timm", "scipy"}


def allowed_distributions() -> set[str]:
    """triagebot's declared dependencies but the model code, and everything they require."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = [Requirement(text) for text in project["dependencies"]]
    assert {canonicalize_name(r.name) for r in declared} >= MODEL_CODE  # what the child refuses is declared
    pending = [r for r in declared if canonicalize_name(r.name) not in MODEL_CODE]
    seen: set[tuple[str, frozenset[str]]] = set()
    while pending:
        wanted = pending.pop()
        key = (canonicalize_name(wanted.name), frozenset(wanted.extras))
        if key in seen:
            continue
        seen.add(key)
        for text in metadata.requires(wanted.name) or []:
            needed = Requirement(text)
            extras = wanted.extras | {""}
            if needed.marker is None or any(needed.marker.evaluate({"extra": e}) for e in extras):
                pending.append(needed)
    return {name for name, _ in seen}


@functools.cache
def allowed_files() -> frozenset[Path]:
    """The installed files of the allowed distributions."""
    files = set()
    for name in allowed_distributions():
        distribution = metadata.distribution(name)
        files |= {Path(distribution.locate_file(file)).resolve() for file in distribution.files or []}
    return frozenset(files)


def foreign_imports(files: list[str]) -> list[str]:
    """The imported module files that are neither the standard library's, nor triagebot's, nor
    an allowed distribution's."""
    paths = sysconfig.get_paths()
    stdlib = [Path(paths[key]).resolve() for key in ("stdlib", "platstdlib")]
    installed = [Path(paths[key]).resolve() for key in ("purelib", "platlib")]

    def allowed(path: Path) -> bool:
        if any(path.is_relative_to(folder) for folder in installed):
            return path in allowed_files()
        return path.is_relative_to(ROOT / "triagebot") or any(path.is_relative_to(f) for f in stdlib)

    return [file for file in files if not allowed(Path(file).resolve())]


def environment(work: Path, **extra: str) -> dict[str, str]:
    inherited = {
        k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "TRIAGEBOT_"))
    }
    path = os.pathsep.join([str(TORCHLESS), str(ROOT)])
    return {**inherited, "PYTHONPATH": path, "TRIAGEBOT_IMPORTS": str(work / "imports.txt"), **extra}


def triagebot(work: Path, *arguments: str, **extra: str) -> str:
    """`python -m triagebot ARGUMENTS` without model code, in `work`; its stdout. Fails the test
    when it fails or imports a module outside the allowed dependencies."""
    done = subprocess.run(
        [sys.executable, "-m", "triagebot", *arguments],
        cwd=work,
        env=environment(work, **extra),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    imported = (work / "imports.txt").read_text(encoding="utf-8").splitlines()
    assert any(Path(file).is_relative_to(ROOT / "triagebot") for file in imported)  # the hook wrote it
    assert foreign_imports(imported) == []
    return done.stdout


def first_lines(fake) -> set[str]:
    """The first line of every issue on the fake GitHub: the bot's markers."""
    return {issue["body"].splitlines()[0] for issue in fake.issues(REPO)}


@pytest.fixture
def fake():
    yield from serve(repo=REPO)


@pytest.fixture
def on_github(fake) -> dict[str, str]:
    return {"GITHUB_API_URL": fake.base_url, "GITHUB_TOKEN": "bot-token"}


def test_the_child_interpreter_has_no_model_code(tmp_path: Path):
    script = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    for name in sorted(MODEL_CODE):
        done = subprocess.run(
            [sys.executable, "-c", script, name], env=environment(tmp_path), capture_output=True, text=True
        )
        assert f"ModuleNotFoundError: No module named '{name}'" in done.stderr
    plain = [sys.executable, "-c", script, "pydantic", "jinja2", "github", "httpx", "typer", "rich"]
    plain = subprocess.run(plain, env=environment(tmp_path))
    assert plain.returncode == 0
    installed = Path(sysconfig.get_paths()["purelib"])
    files = [installed / "torch" / "__init__.py", installed / "numpy" / "__init__.py"]
    files += [json.__file__, github.__file__, str(ROOT / "triagebot" / "errors.py")]
    assert foreign_imports([str(file) for file in files]) == [str(file) for file in files[:2]]


def test_the_publish_job_runs_without_torch(tmp_path: Path, fake, on_github):
    """`run --snapshot`: store, diff, render, publish and build the site from a merged snapshot."""
    old, new = fixture_nightlies()
    LocalStore(tmp_path / "store").put(old)
    write_snapshot(new, tmp_path / "merged.json")
    arguments = ["run", "--snapshot", "merged.json", "--store", "store", "--repo", REPO, "--out", "night"]
    said = triagebot(tmp_path, *arguments, **on_github)
    assert f"diff against {old.key}" in said
    assert {flag_marker(SCALAR), flag_marker(DYNAMIC)} <= first_lines(fake)
    assert (tmp_path / "night" / "site" / "index.html").is_file()
    assert LocalStore(tmp_path / "store").keys() == [old.key, new.key]


def test_publish_runs_without_torch(tmp_path: Path, fake, on_github):
    old, new = fixture_nightlies()
    LocalStore(tmp_path / "store").put(old)
    write_snapshot(new, tmp_path / "new.json")
    said = triagebot(
        tmp_path, "publish", "new.json", "--store", "store", "--repo", REPO, "--out", "issues", **on_github
    )
    assert "applied" in said
    assert {flag_marker(SCALAR), flag_marker(DYNAMIC)} <= first_lines(fake)


def test_the_site_builds_without_torch(tmp_path: Path):
    store = LocalStore(tmp_path / "store")
    for nightly_snapshot in fixture_nightlies():
        store.put(nightly_snapshot)
    said = triagebot(tmp_path, "site", "--store", "store", "--out", "site")
    assert "2 nightlies" in said
    site = tmp_path / "site"
    assert (site / "index.html").is_file() and (site / "flags" / f"{SCALAR}.html").is_file()


def test_a_rerun_is_answered_without_torch(tmp_path: Path, fake, on_github):
    number = fake.add_issue(REPO, "tracking", f"{flag_marker(SCALAR)}\nreport", "triagebot-bot")["number"]
    fake.permissions["maintainer"] = "write"
    comment = fake.add_comment(REPO, number, "/rerun-sweep models=Bert", "maintainer")
    models = ["Bert", "Llama"]
    LocalStore(tmp_path / "store").put(
        nightly("2.13.0.dev1", {SCALAR: {"Bert": crash()}}, models, flags=[SCALAR])
    )
    write_snapshot(nightly("2.13.0.dev2", {}, ["Bert"], flags=[SCALAR]), tmp_path / "rerun.json")
    arguments = ["command", "--answer", "rerun.json", "--repo", REPO, "--issue", str(number)]
    triagebot(tmp_path, *arguments, "--comment-id", str(comment["id"]), "--store", "store", **on_github)
    answers = [c["body"] for c in fake.comments(REPO, number) if c["user"]["login"] == "triagebot-bot"]
    assert len(answers) == 1 and answers[0].startswith(result_marker(comment["id"]))
    assert "1 no longer crashing" in answers[0] and "| `Bert` | `capture_scalar_outputs` |" in answers[0]
