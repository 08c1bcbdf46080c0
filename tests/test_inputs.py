"""What every command reads and refuses before it works: one reader for a snapshot or a stream
(`pipeline.read_input`), a stream never overwritten (`sweep --out`), the whole configuration
checked (`triagebot config`, flag patches against torch._dynamo.config), and a test corpus never
published to a repository unless the configuration says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import SCALAR, crash, ok
from climain import run_main

from triagebot.config import Config, StoreSettings, check_patches, parse_config
from triagebot.errors import ConfigError, StoreError
from triagebot.pipeline import Snapshots
from triagebot.results import BASELINE, CorpusSelection, Environment, RunRecord, SweepHeader
from triagebot.store import write_snapshot
from triagebot.sweep.stream import StreamWriter, merge

ENVIRONMENT = Environment(torch_version="2.13.0+cpu", torch_git_version="abc")


def stream(path: Path, *, crashing: bool) -> Path:
    """A whole sweep's stream of two models, B crashing (confirmed) under SCALAR if `crashing`."""
    header = SweepHeader(
        environment=ENVIRONMENT,
        flags={SCALAR: {SCALAR: True}},
        corpus=CorpusSelection(name="transformers", models=["A", "B"]),
    )
    writer = StreamWriter.create(path, header)
    for model in ("A", "B"):
        writer.write(RunRecord(model=model, config=BASELINE, outcome=ok(2, ["break"])))
        outcome = crash() if crashing and model == "B" else ok(1)
        writer.write(RunRecord(model=model, config=SCALAR, outcome=outcome))
        if outcome.status == "crash":
            writer.write(RunRecord(model=model, config=SCALAR, attempt=1, outcome=outcome))
    writer.close()
    return path


@pytest.fixture
def here(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in ("GITHUB_TOKEN", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def one_line(ran, *expected: str) -> str:
    assert ran.status == 2 and "Traceback" not in ran.err, ran.err
    line = ran.err.strip()
    assert "\n" not in line and line.startswith("triagebot: error: "), ran.err
    for text in expected:
        assert text in line, line
    return line


@pytest.mark.parametrize(
    "command",
    [
        ("report", "{}", "--out", "out"),
        ("publish", "{}", "--dry-run", "--out", "out"),
        ("run", "--snapshot", "{}", "--out", "out", "--store", "store"),
    ],
    ids=lambda command: command[0],
)
def test_a_stream_with_crashes_is_refused_naming_the_file_it_needs(here, monkeypatch, capsys, command):
    given = stream(here / "night.jsonl", crashing=True)
    ran = run_main(monkeypatch, capsys, *(part.format(given) for part in command), "--store", "store")
    one_line(ran, str(given), "triagebot reproduce", str(here / "night.json"))
    assert not (here / "store").exists() or not list((here / "store").glob("*.json"))


def test_a_stream_gives_what_its_snapshot_gives(here, monkeypatch, capsys):
    given = stream(here / "night.jsonl", crashing=False)
    merged = write_snapshot(merge([given]), here / "night.json")
    for source, out in ((given, "from-stream"), (merged, "from-snapshot")):
        ran = run_main(monkeypatch, capsys, "report", str(source), "--out", out, "--store", "store")
        assert ran.status == 0, ran.err
    written = sorted(path.name for path in (here / "from-stream").iterdir())
    assert written == sorted(path.name for path in (here / "from-snapshot").iterdir())
    for name in written:
        if name.endswith(".md"):
            assert (here / "from-stream" / name).read_text() == (here / "from-snapshot" / name).read_text()
    # effects and diff render no reproductions: a stream with crashes is read as its snapshot.
    crashing = stream(here / "crashing.jsonl", crashing=True)
    ran = run_main(monkeypatch, capsys, "effects", str(crashing), "--json", "--store", "store")
    assert ran.status == 0 and '"effect":"crashes"' in ran.out.replace(" ", ""), ran.err


def test_sweep_never_overwrites_a_stream(here, monkeypatch, capsys):
    (here / "old.jsonl").write_text("kept\n", encoding="utf-8")
    ran = run_main(monkeypatch, capsys, "sweep", "--corpus", "sentinels", "--out", "old.jsonl")
    one_line(ran, "old.jsonl", "--resume", "--force")
    assert (here / "old.jsonl").read_text(encoding="utf-8") == "kept\n"
    ran = run_main(monkeypatch, capsys, "sweep", "--out", "old.jsonl", "--resume", "--force")
    one_line(ran, "not both")


def test_a_test_corpus_is_published_only_where_the_config_opts_in(here, monkeypatch, capsys):
    given = stream(here / "night.jsonl", crashing=False)
    snapshot = merge([given])
    for corpus in ("smoke", "sentinels"):
        test_night = snapshot.model_copy(
            update={"corpus": snapshot.corpus.model_copy(update={"name": corpus})}
        )
        path = write_snapshot(test_night, here / f"{corpus}.json")
        for command in (("publish", str(path)), ("run", "--snapshot", str(path))):
            ran = run_main(
                monkeypatch, capsys, *command, "--repo", "owner/name", "--token", "t", "--store", "store"
            )
            one_line(ran, f"corpus {corpus!r} is a test corpus", "owner/name", "publish_test_corpus")
    assert not list((here / "store").glob("*.json"))
    with pytest.raises(ConfigError, match="test corpus"):
        Config().check_publishable(["smoke"], "owner/name")
    parse_config("[tracker]\npublish_test_corpus = true\n").check_publishable(["smoke"], "owner/name")
    Config().check_publishable(["transformers"], "owner/name")


def test_a_night_sweeps_the_three_suites_unless_the_config_says_otherwise():
    assert Config().sweep.corpus == ["transformers", "diffusers", "timm"]
    assert Config().sweep.corpus_name == "transformers+diffusers+timm"
    assert parse_config('[sweep]\ncorpus = "smoke"\n').sweep.corpus == ["smoke"]
    assert parse_config('[sweep]\ncorpus = "smoke"\n').sweep.corpus_name == "smoke"
    listed = parse_config('[sweep]\ncorpus = ["transformers", "timm"]\n')
    assert listed.sweep.corpus == ["transformers", "timm"]
    assert parse_config("", options={"--corpus": "transformers,timm"}).sweep == listed.sweep
    # a stored night's corpus name, as /rerun-sweep hands it to the GPU job, is the same suites
    again = parse_config("", options={"--corpus": "transformers+diffusers+timm"}).sweep
    assert again.corpus == Config().sweep.corpus and again.corpus_name == "transformers+diffusers+timm"


def test_a_corpus_list_with_no_name_or_a_name_twice_is_one_line():
    for text in ("corpus = []", 'corpus = ["smoke", "smoke"]', 'corpus = ""'):
        with pytest.raises(ConfigError, match="corpus"):
            parse_config(f"[sweep]\n{text}\n")


def test_a_night_of_suites_with_a_test_corpus_among_them_is_not_published():
    with pytest.raises(ConfigError, match="'smoke' is a test corpus"):
        Config().check_publishable(["transformers", "smoke"], "owner/name")
    Config().check_publishable(["transformers", "diffusers", "timm"], "owner/name")


def test_a_misspelt_key_anywhere_is_refused_with_the_nearest(here, monkeypatch, capsys):
    (here / "flag.toml").write_text('[flags.x]\npatch = { capture_scalar_outputs = true }\nwehn = "always"\n')
    one_line(run_main(monkeypatch, capsys, "config", "--config", "flag.toml"), "'flags.x.when'")
    (here / "cc.toml").write_text('[[tracker.cc_routes]]\npattern = "x"\npeople = ["a"]\npeeple = []\n')
    one_line(run_main(monkeypatch, capsys, "config", "--config", "cc.toml"), "'tracker.cc_routes.0.people'")
    (here / "board.toml").write_text('[dashboard]\npublsh = "none"\n')
    one_line(
        run_main(monkeypatch, capsys, "publish", "x.json", "--config", "board.toml"), "'dashboard.publish'"
    )


def test_a_misspelt_patch_is_refused_against_the_names_given():
    config = parse_config("[flags.scalars]\npatch = { capture_scalar_output = true }\n", "mine.toml")
    names = frozenset({"capture_scalar_outputs", "capture_dynamic_output_shape_ops"})
    with pytest.raises(ConfigError) as refused:
        check_patches(config, names)
    assert str(refused.value) == (
        "mine.toml: 'flags.scalars.patch': unknown torch._dynamo.config setting 'capture_scalar_output' "
        "(did you mean 'capture_scalar_outputs'?)"
    )
    check_patches(Config(), names)
    check_patches(config, None)  # no torch to check against: the sweep checks it


@pytest.fixture(scope="module")
def dynamo_cache(tmp_path_factory) -> Path:
    """A cache of torch._dynamo.config's names of this module's own: read in a child once."""
    return tmp_path_factory.mktemp("cache")


@pytest.mark.torch
@pytest.mark.parametrize("command", [("config",), ("publish", "x.json"), ("run", "--check")])
def test_every_command_checks_patches_against_the_installed_torch(
    here, monkeypatch, capsys, dynamo_cache, command
):
    monkeypatch.setenv("XDG_CACHE_HOME", str(dynamo_cache))
    (here / "triagebot.toml").write_text("[flags.scalars]\npatch = { capture_scalar_output = true }\n")
    ran = run_main(monkeypatch, capsys, *command)
    one_line(ran, "triagebot.toml", "'capture_scalar_output'", "did you mean 'capture_scalar_outputs'")
    assert list((dynamo_cache / "triagebot").glob("dynamo-config-*.json"))


def test_config_shows_every_section_and_where_each_value_came_from(here, monkeypatch, capsys):
    (here / "triagebot.toml").write_text('[dashboard]\npublish = "none"\n', encoding="utf-8")
    ran = run_main(monkeypatch, capsys, "config", "--repo", "owner/name")
    assert ran.status == 0, ran.err
    for section in ("[flags]", "[sweep]", "[corpus]", "[store]", "[tracker]", "[dashboard]"):
        assert section in ran.out
    lines = ran.out.splitlines()
    assert any(line.startswith('publish = "none"') and line.endswith("# triagebot.toml") for line in lines)
    assert any(line.startswith('branch = "gh-pages"') and line.endswith("# default") for line in lines)
    assert any(line.startswith('repo = "owner/name"') and line.endswith("# --repo") for line in lines)


def test_diff_compares_like_with_like_unless_told(here, monkeypatch, capsys):
    night = merge([stream(here / "night.jsonl", crashing=False)])
    older = night.model_copy(update={"key": "2.13.0.dev20260401+cpu"})
    smoke = night.model_copy(update={"corpus": night.corpus.model_copy(update={"name": "smoke"})})
    write_snapshot(older, here / "older.json")
    write_snapshot(smoke, here / "smoke.json")
    ran = run_main(monkeypatch, capsys, "diff", "older.json", "smoke.json", "--store", "store")
    one_line(ran, "different selections", "corpus 'transformers'", "corpus 'smoke'", "--any-selection")
    ran = run_main(
        monkeypatch, capsys, "diff", "older.json", "smoke.json", "--any-selection", "--store", "store"
    )
    assert ran.status == 0, ran.err
    # A command that renders no reproductions (effects, diff, the rerun's answer) reads a stream
    # with crashes as its snapshot; the others refuse it.
    crashing = stream(here / "rerun.jsonl", crashing=True)
    assert Snapshots(StoreSettings(), reproductions=False).get(crashing) == merge([crashing])
    with pytest.raises(StoreError, match="triagebot reproduce"):
        Snapshots(StoreSettings()).get(crashing)


def test_reproduce_tries_the_newest_stored_reductions_and_goes_on_without_a_readable_store(tmp_path):
    from builders import result, snapshot

    from triagebot.pipeline import newest_stored
    from triagebot.store import LocalStore

    store = LocalStore(tmp_path / "store")
    stored = snapshot([result("M", ok(2), {SCALAR: crash()})], key="2.13.0")
    store.put(stored)
    assert newest_stored(Snapshots(StoreSettings(path=str(tmp_path / "store")))).key == "2.13.0"
    said: list[str] = []
    unreadable = Snapshots(StoreSettings(branch="data", remote="nowhere", path=str(tmp_path / "data")))
    assert newest_stored(unreadable, say=said.append) is None
    where = Path(".").resolve()
    refused = f"store.remote 'nowhere' is not a git remote of {where}"
    assert said == [f"no earlier reductions tried: the store cannot be read ({refused})"]
