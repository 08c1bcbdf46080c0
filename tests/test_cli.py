"""The command line as a maintainer meets it: every subcommand on bad input answers with one line
on stderr and exit status 2 (never a traceback), every subcommand's happy path runs, and the help
reads right.

Commands run in this process through `triagebot.cli.main`, as the console script runs them.
GitHub is tests/fakegithub, or a closed local port for an unreachable one; the one real sweep is
two sentinels.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from builders import DATA, DYNAMIC, REPO, crash, ok, result, snapshot
from builders import NEW_NIGHTLY as NEW
from builders import OLD_NIGHTLY as OLD
from fakegithub import serve

from triagebot.cli import main
from triagebot.results import (
    Environment,
)
from triagebot.store import write_snapshot

EVENT = DATA / "github" / "webhooks" / "issue_comment.created.json"
BAD_TITLE = '[tracker]\ntitle = "{flag}: {crash} crashes"\n'


def triagebot(capsys, *arguments: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `triagebot ARGUMENTS...`."""
    with pytest.raises(SystemExit) as exit_:
        main([str(argument) for argument in arguments])
    out, err = capsys.readouterr()
    code = exit_.value.code
    return (0 if code is None else code), out, err


def assert_one_line_error(code: int, err: str, *expected: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("triagebot: error: "), err
    for text in expected:
        assert text in lines[0], err


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch) -> Path:
    """A folder with a bad triagebot.toml beside a good one, a corrupt stream, and no GitHub."""
    monkeypatch.chdir(tmp_path)
    for name in ("GITHUB_TOKEN", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_API_URL"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "bad.toml").write_text(BAD_TITLE, encoding="utf-8")
    lines = NEW.read_text(encoding="utf-8")
    # A sweep stream whose header is cut off: a stream is accepted, this one cannot be read.
    (tmp_path / "corrupt.jsonl").write_text('{"kind":"header","environment":\n', encoding="utf-8")
    (tmp_path / "snapshot.json").write_text(lines, encoding="utf-8")
    return tmp_path


def closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


MISSING = [
    ("run", "--snapshot", "missing.json"),
    ("sweep", "--config", "missing.toml"),
    ("merge", "missing.jsonl", "--out", "x.json"),
    ("reproduce", "missing.json"),
    ("effects", "missing.json"),
    ("diff", "missing.json", "snapshot.json"),
    ("report", "missing.json", "--out", "reports"),
    ("publish", "missing.json"),
    ("command", "--event", "missing.json"),
    pytest.param(("corpus", "list", "--only-breaking-in", "missing.json"), marks=pytest.mark.torch),
    ("corpus", "check", "--config", "missing.toml"),
    ("config", "--config", "missing.toml"),
]

CORRUPT_STREAM = [
    ("run", "--snapshot", "corrupt.jsonl"),
    ("merge", "corrupt.jsonl", "--out", "x.json"),
    ("reproduce", "corrupt.jsonl"),
    ("effects", "corrupt.jsonl"),
    ("diff", "snapshot.json", "corrupt.jsonl"),
    ("report", "corrupt.jsonl", "--out", "reports"),
    ("publish", "corrupt.jsonl"),
    pytest.param(("corpus", "list", "--only-breaking-in", "corrupt.jsonl"), marks=pytest.mark.torch),
]

BAD_CONFIG = [
    ("run", "--snapshot", "snapshot.json"),
    ("sweep",),
    ("effects", "snapshot.json"),
    ("diff", "snapshot.json", "snapshot.json"),
    ("report", "snapshot.json", "--out", "reports"),
    ("publish", "snapshot.json"),
    ("command", "--event", str(EVENT)),
    ("corpus", "list"),
    ("corpus", "check"),
    ("config",),
]

UNREACHABLE = [
    ("run", "--snapshot", "snapshot.json", "--repo", REPO, "--store", "store", "--out", "night"),
    ("publish", "snapshot.json", "--repo", REPO, "--store", "store"),
    ("command", "--poll", "--repo", REPO, "--store", "store"),
    ("command", "--event", str(EVENT), "--store", "store"),
    ("command", "--answer", "snapshot.json", "--repo", REPO, "--issue", "1", "--store", "store"),
]


@pytest.mark.parametrize("command", [("sweep",), ("run",), ("config",), ("corpus", "check")], ids=" ".join)
@pytest.mark.parametrize("jobs", ["0", "many"])
def test_jobs_is_the_sweeps_workers_checked_by_one_rule_in_every_command(workdir, capsys, command, jobs):
    code, _, err = triagebot(capsys, *command, "--jobs", jobs)
    assert_one_line_error(code, err, '--jobs: expected a number of workers (1 or more) or "auto"')


@pytest.mark.parametrize("arguments", MISSING, ids=" ".join)
def test_a_missing_file_is_one_line(workdir, capsys, arguments):
    code, _, err = triagebot(capsys, *arguments)
    assert_one_line_error(code, err, "missing.")


@pytest.mark.parametrize("arguments", CORRUPT_STREAM, ids=" ".join)
def test_a_corrupt_stream_where_a_snapshot_goes_is_one_line(workdir, capsys, arguments):
    code, _, err = triagebot(capsys, *arguments)
    assert_one_line_error(code, err, "corrupt.jsonl")


@pytest.mark.parametrize("arguments", BAD_CONFIG, ids=" ".join)
def test_a_bad_config_is_one_line_naming_the_key(workdir, capsys, arguments):
    code, _, err = triagebot(capsys, *arguments, "--config", "bad.toml")
    assert_one_line_error(code, err, "bad.toml", "'tracker.title'", "{crash}")


@pytest.mark.parametrize("arguments", UNREACHABLE, ids=" ".join)
def test_an_unreachable_github_is_one_line(workdir, capsys, monkeypatch, arguments):
    from triagebot.tracker import github

    monkeypatch.setenv("GITHUB_API_URL", closed_port())
    monkeypatch.setenv("GITHUB_TOKEN", "bot-token")
    monkeypatch.setitem(github.connect.__kwdefaults__, "sleep", lambda seconds: None)  # no backoff waits
    code, _, err = triagebot(capsys, *arguments)
    assert_one_line_error(code, err, "GitHub")


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (("run", "--device", "tpu"), "--device: input should be 'auto', 'cpu' or 'cuda', not 'tpu'"),
        (("run", "--repo", "nope"), "--repo: 'nope' is not OWNER/NAME"),
        (("publish", "snapshot.json", "--repo", "a/b/c"), "--repo: 'a/b/c' is not OWNER/NAME"),
        (("sweep", "--flags", "capture_scalar_output"), "did you mean 'capture_scalar_outputs'?"),
        (("sweep", "--corpus", "sentinel"), "unknown corpus 'sentinel' (did you mean 'sentinels'?)"),
        pytest.param(
            ("sweep", "--corpus", "sentinels", "--models", "plain"),
            "unknown model 'plain' in corpus 'sentinels' (did you mean 'Plain'?)",
            marks=pytest.mark.torch,
        ),
        (("sweep", "--corpus", "sentinels", "--shard", "3/2"), "--shard '3/2'"),
        pytest.param(
            ("corpus", "list", "--corpus", "sentinels", "--stratum", "audio"),
            "unknown stratum 'audio'",
            marks=pytest.mark.torch,
        ),
        (("diff", str(NEW), str(OLD)), "is newer than"),
        (("command",), "give exactly one of"),
    ],
)
def test_a_mistake_on_the_command_line_is_one_line(workdir, capsys, arguments, expected):
    code, _, err = triagebot(capsys, *arguments)
    assert_one_line_error(code, err, expected)


def test_the_repo_in_the_file_is_named_as_the_file_names_it(workdir, capsys):
    (workdir / "triagebot.toml").write_text('[tracker]\nrepo = "pytorch"\n', encoding="utf-8")
    code, _, err = triagebot(capsys, "publish", "snapshot.json")
    assert_one_line_error(code, err, "triagebot.toml: 'tracker.repo': 'pytorch' is not OWNER/NAME")
    assert "--repo" not in err


@pytest.mark.torch
def test_ctrl_c_in_run_says_where_the_finished_runs_are(workdir, capsys, monkeypatch):
    from triagebot.pipeline import run_stages  # the module whose `run` reads the build
    from triagebot.sweep import command

    started: list[bool] = []

    def interrupted(plan, progress=None):
        if started:  # some runs had finished: the stream holds them
            plan.path.write_text('{"kind":"header"}\n', encoding="utf-8")
        raise KeyboardInterrupt

    monkeypatch.setattr(run_stages, "installed_build", lambda: Environment(torch_version="2.13.0"))
    monkeypatch.setattr(command, "start_parent", lambda: None)
    monkeypatch.setattr(command, "run_sweep", interrupted)
    arguments = ("run", "--corpus", "sentinels", "--store", "store", "--out", "night")
    code, _, err = triagebot(capsys, *arguments)
    assert code == 130
    assert err == "triagebot: error: interrupted before the first run finished: nothing to resume\n"
    started.append(True)
    code, _, err = triagebot(capsys, *arguments)
    assert code == 130 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"the finished runs are in {Path('night') / 'sweep.jsonl'}" in err
    assert "run the same command again to resume" in err

    def reading_the_build():
        raise KeyboardInterrupt

    monkeypatch.setattr(run_stages, "installed_build", reading_the_build)
    assert triagebot(capsys, *arguments)[::2] == (130, "triagebot: interrupted\n")


def test_help_shows_brackets_no_bool_metavar_and_the_night_order(capsys):
    code, out, _ = triagebot(capsys, "--help")
    assert code == 0
    listed = [line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.strip()]
    night = ["run", "sweep", "merge", "reproduce", "effects", "diff", "report", "publish", "site", "command"]
    assert listed == [*night, "nightly", "bisect", "corpus", "config", "doctor"]
    for name in [*night, "config", "doctor", "corpus list", "corpus check"]:
        code, out, _ = triagebot(capsys, *name.split(), "--help")
        assert code == 0 and "Usage: triagebot" in out
        assert "<bool>" not in out and "default:  " not in out, out
    _, out, _ = triagebot(capsys, "sweep", "--help")
    assert "[sweep] jobs" in out and "--resume " in out


def test_version_names_triagebot_torch_and_transformers(capsys):
    from importlib.metadata import version

    code, out, _ = triagebot(capsys, "--version")
    assert code == 0
    assert out.strip() == (
        f"triagebot {version('triagebot')}, torch {version('torch')}, transformers {version('transformers')}"
    )


def test_effects_keeps_every_column_whole_in_a_log(workdir, capsys):
    signature = "GuardOnDataDependentSymNode: " + "a long explanation of the guard " * 4
    guard = crash(signature=signature, error=None)
    qwen = result(
        "Qwen2VLForConditionalGeneration", ok(25), {DYNAMIC: guard}, stratum="vl_multimodal", confirmations={}
    )
    write_snapshot(snapshot([qwen], flags=[DYNAMIC]), workdir / "long.json")
    code, out, _ = triagebot(capsys, "effects", "long.json")
    assert code == 0
    assert "capture_dynamic_output_shape_ops" in out and "Qwen2VLForConditionalGeneration" in out
    assert signature.strip() in out and "…" not in out
    assert max(len(line) for line in out.splitlines()) < 400  # no padding to the console width


def test_diff_names_models_the_commit_range_and_different_flag_sets(workdir, capsys):
    code, out, _ = triagebot(capsys, "diff", OLD, NEW)
    assert code == 0
    assert "https://github.com/pytorch/pytorch/compare/" in out
    assert "crashes now: T5ForConditionalGeneration" in out
    assert "fixed: LlavaForConditionalGeneration" in out
    code, reverse, _ = triagebot(capsys, "diff", NEW, OLD, "--any-order")
    assert code == 0 and "crashes now: LlavaForConditionalGeneration" in reverse
    fewer = json.loads(NEW.read_text(encoding="utf-8"))
    fewer["flags"].pop("capture_scalar_outputs")
    (workdir / "fewer.json").write_text(json.dumps(fewer), encoding="utf-8")
    code, out, _ = triagebot(capsys, "diff", OLD, "fewer.json")
    assert code == 0
    assert "flag sets differ: only in 2.12.0.dev20260408+cu128: capture_scalar_outputs;" in out


def test_config_says_where_each_value_came_from(workdir, capsys):
    (workdir / "triagebot.toml").write_text("[sweep]\njobs = 3\n", encoding="utf-8")
    code, out, _ = triagebot(capsys, "config", "--device", "cpu")
    assert code == 0
    rows = {line.split("=")[0].strip(): line.rsplit("# ", 1)[1] for line in out.splitlines() if " = " in line}
    assert rows["jobs"] == "triagebot.toml" and rows["device"] == "--device" and rows["timeout"] == "default"
    code, out, _ = triagebot(capsys, "config", "--json")
    assert json.loads(out)["sweep.jobs"] == {"value": 3, "source": "triagebot.toml"}


# --- every subcommand's happy path, once ---


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> Path:
    """One real sweep of two sentinels (a JSON Lines stream), through the command line."""
    folder = tmp_path_factory.mktemp("swept")
    stream = folder / "sweep.jsonl"
    arguments = ["sweep", "--corpus", "sentinels", "--models", "Plain,ItemBreak", "--device", "cpu"]
    arguments += ["--jobs", "2", "--timeout", "120", "--store", str(folder / "store"), "--out", str(stream)]
    with pytest.raises(SystemExit) as exit_:
        main(arguments)
    assert exit_.value.code in (0, None)
    return stream


@pytest.fixture
def fake():
    yield from serve(repo=REPO)


@pytest.mark.torch
def test_every_subcommand_runs_its_happy_path(swept, workdir, capsys, monkeypatch, fake):
    from triagebot.tracker import github

    def ok(*arguments) -> str:
        code, out, err = triagebot(capsys, *arguments)
        assert code == 0, err
        assert "Traceback" not in err
        return out

    assert "Plain" in ok("corpus", "list", "--corpus", "sentinels")
    assert "ItemBreak" in ok("effects", swept)  # a stream where a snapshot goes is merged
    assert "2 models from 1 streams" in ok("merge", swept, "--out", "merged.json")
    assert "0 of 0 reproductions verified, 0 reduced: merged.json" in ok("reproduce", "merged.json")
    assert "the same torch build" in ok("diff", "merged.json", swept)
    assert "summary.md" in ok("report", swept, "--out", "reports", "--store", "store")
    assert "GitHub not read" in ok("publish", "merged.json", "--store", "store", "--out", "issues")
    night = ok("run", "--snapshot", swept, "--store", "store", "--out", "night")
    assert "snapshot " in night and (workdir / "night" / "snapshot.json").exists()
    assert "[sweep]" in ok("config")
    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    monkeypatch.setenv("GITHUB_TOKEN", "bot-token")
    monkeypatch.setitem(github.connect.__kwdefaults__, "sleep", lambda seconds: None)  # no write pacing
    assert "applied " in ok("publish", NEW, "--repo", REPO, "--store", "store", "--out", "issues")
    assert fake.issues(REPO)  # the tracking issues of its crashes were opened
    assert "run=false" in ok("command", "--poll", "--repo", REPO, "--store", "store", "--output", "out.txt")
    check = ok("corpus", "check", "--corpus", "sentinels", "--models", "Plain", "--jobs", "1", "--json")
    assert json.loads(check)["covered"] == 1
