"""The store never loses a night (triagebot/store/selection.py, `Store.put`), a diff compares
like with like (`Store.previous_of`), and a flag added to the configuration is swept alone into
the stored night that lacks it (`pipeline.sweep_flags`)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from builders import DYNAMIC, SCALAR, crash, ok, result, snapshot

from triagebot.config import Config
from triagebot.errors import PipelineError, StoreError
from triagebot.pipeline import RunOptions, already_swept, night_of, run
from triagebot.results import BASELINE, CorpusSelection, Environment, Night, RunRecord, Snapshot
from triagebot.store import LocalStore, MemoryStore, write_snapshot
from triagebot.store.selection import comparable, is_configured_night, replacement_problem
from triagebot.sweep.stream import StreamWriter, merge, read_stream

MODELS = ["A", "B", "C"]
TRANSFORMERS = Config.model_validate({"sweep": {"corpus": "transformers"}})  # the one suite


def night(key: str, git: str, models=MODELS, *, corpus: str = "smoke", flags=(SCALAR,)) -> Snapshot:
    results = [result(model, ok(3), {flag: ok(2) for flag in flags}) for model in models]
    return snapshot(results, key=key, git=git, corpus=corpus, flags=flags)


def test_a_one_model_snapshot_of_the_same_build_never_replaces_the_stored_night(tmp_path: Path):
    store = LocalStore(tmp_path)
    whole = night("2.13.0+cpu", "aaa")
    store.put(whole)
    before = store.file(whole.key).read_bytes()

    with pytest.raises(StoreError) as refused:
        store.put(night("2.13.0+cpu", "aaa", ["A"]))

    message = str(refused.value)
    assert "3 models" in message and "1 models" in message and "another selection" in message
    assert "kept the stored one" in message and "--store DIR" in message
    assert store.file(whole.key).read_bytes() == before


def test_another_build_under_the_same_key_is_refused(tmp_path: Path):
    store = MemoryStore([night("2.13.0+cpu", "aaa")])
    with pytest.raises(StoreError, match="another build"):
        store.put(night("2.13.0+cpu", "bbb"))


def test_the_same_night_again_or_with_a_flag_more_replaces_it():
    store = MemoryStore([night("2.13.0+cpu", "aaa")])
    store.put(night("2.13.0+cpu", "aaa"))
    store.put(night("2.13.0+cpu", "aaa", flags=(SCALAR, DYNAMIC)))
    assert list(store.get("2.13.0+cpu").flags) == [SCALAR, DYNAMIC]
    with pytest.raises(StoreError, match=f"lacks flag '{DYNAMIC}'"):
        store.put(night("2.13.0+cpu", "aaa", flags=(SCALAR,)))


def test_stored_files_are_readable_by_the_group(tmp_path: Path):
    store = LocalStore(tmp_path)
    store.put(night("2.13.0+cpu", "aaa"))
    mode = stat.S_IMODE(store.file("2.13.0+cpu").stat().st_mode)
    assert mode & stat.S_IRGRP and mode & stat.S_IRUSR, oct(mode)
    assert not list(tmp_path.glob(".*.tmp"))  # the atomic write left no temporary file


def test_a_diff_compares_like_with_like_and_says_with_which():
    smoke = night("2.12.0.dev20260407", "aaa")
    other_corpus = night("2.12.0.dev20260408", "bbb", ["X", "Y"], corpus="transformers")
    one_model = night("2.12.0.dev20260409", "ccc", ["A"])
    store = MemoryStore([smoke, other_corpus, one_model])
    tonight = night("2.12.0.dev20260410", "ddd")

    assert night_of(tonight, store, Config()).previous_key == smoke.key
    # A corpus that gained a model with a new transformers still compares with its last night.
    grown = night("2.12.0.dev20260410", "ddd", [*MODELS, "D"])
    assert night_of(grown, store, Config()).previous_key == smoke.key
    # A sample is compared with the same draw.
    drawn = CorpusSelection(name="transformers", sample=2, seed=0, models=["X", "Y"])
    sampled = snapshot([result("X", ok(1), {SCALAR: ok(1)})], key="2.12.0.dev20260411", git="e", corpus=drawn)
    assert night_of(sampled, store, Config()).previous_key is None


def test_the_first_night_of_suites_compares_with_the_last_transformers_night():
    models = ["A", "B", "C"]
    transformers = night("2.12.0.dev20260407", "aaa", models, corpus="transformers")
    smoke = night("2.12.0.dev20260408", "bbb", models, corpus="smoke")
    store = MemoryStore([transformers, smoke])
    selection = CorpusSelection(
        name="transformers+diffusers+timm",
        models=[*models, "timm/resnet10t"],
        skipped={"diffusers": "missing"},
    )
    suites = night("2.12.0.dev20260409", "ccc", models).model_copy(update={"corpus": selection})

    assert comparable(transformers.corpus, selection) and not comparable(smoke.corpus, selection)
    assert night_of(suites, store, Config()).previous_key == transformers.key
    drawn = selection.model_copy(update={"sample": 3, "seed": 0})
    assert not comparable(transformers.corpus.model_copy(update={"sample": 3, "seed": 0}), drawn)


def test_a_sample_whose_strata_moved_with_the_corpus_is_still_compared():
    # A release added a model to vision_other, whose proportional share took a draw from decoder_llm.
    before = CorpusSelection(
        name="transformers",
        sample=3,
        seed=0,
        strata={"decoder_llm": 2, "vision_other": 1},
        models=["A", "B", "V"],
    )
    moved = {"decoder_llm": 1, "vision_other": 2}
    assert comparable(before, before.model_copy(update={"strata": moved, "models": ["A", "V", "W"]}))
    # Configured strata of other sizes draw other models: not the same sample.
    other = before.model_copy(update={"strata": {"vision_other": 3}, "models": ["V", "W", "X"]})
    assert not comparable(before, other)
    # The same strata drawn compare whatever the models (a draw of an earlier sampling rule).
    assert comparable(before, before.model_copy(update={"models": ["C", "D", "W"]}))
    assert not comparable(before, before.model_copy(update={"seed": 1}))


class FlagSweeper:
    """Stands in for the sweep: resumes the stream it is given, as the real one does, adding
    the runs of the flags in its configuration (DYNAMIC crashes on B)."""

    def __init__(self) -> None:
        self.configs: list[Config] = []
        self.seeded: list[RunRecord] = []

    def __call__(self, config: Config, work: Path, resume: bool) -> Snapshot:
        self.configs.append(config)
        stream = work / "sweep.jsonl"
        assert resume and stream.exists()
        header, self.seeded = read_stream(stream)
        writer, _ = StreamWriter.resume(stream, header)
        for model in sorted({record.model for record in self.seeded}):
            for flag in config.flags:
                outcome = crash() if model == "B" else ok(1)
                writer.write(RunRecord(model=model, config=flag, outcome=outcome))
                if model == "B":
                    writer.write(RunRecord(model=model, config=flag, attempt=1, outcome=outcome))
        writer.close()
        return merge([stream])


def test_a_flag_added_to_the_config_is_swept_alone_into_the_stored_night(tmp_path: Path):
    stored = night("2.13.0+cpu", "aaa")
    store = MemoryStore([stored])
    config = Config.model_validate({"sweep": {"corpus": "smoke"}})  # both default flags
    published: list[Night] = []

    def publisher(tonight: Night, config, token, dry_run, out) -> tuple[str, Night]:
        published.append(tonight)
        return "dry run", tonight

    sweeper = FlagSweeper()
    printed: list[str] = []
    options = RunOptions(out=tmp_path / "run")
    stages = {"sweeper": sweeper, "renderer": lambda n, out: out, "publisher": publisher}

    def check() -> None:  # run --check
        build = stored.environment
        run(config, RunOptions(check_only=True), store=store, build=build, say=printed.append, **stages)

    check()
    assert printed[:2] == ["sweep=true", f"flags={DYNAMIC}"]

    report = run(config, options, store=store, build=stored.environment, say=lambda _: None, **stages)

    # Only the new flag was swept, on the stored baseline runs.
    assert [list(c.flags) for c in sweeper.configs] == [[DYNAMIC]]
    assert {(r.model, r.config) for r in sweeper.seeded} == {(m, BASELINE) for m in MODELS}
    merged = store.get(stored.key)
    assert list(merged.flags) == [SCALAR, DYNAMIC] and merged.corpus == stored.corpus
    for before, after in zip(stored.results, merged.results, strict=True):
        assert after.outcomes[BASELINE] == before.outcomes[BASELINE]
        assert after.outcomes[SCALAR] == before.outcomes[SCALAR]
    assert report.swept and len(published[0].flags[DYNAMIC].stats.crash_groups) == 1
    # Nothing is left to do on that build.
    printed.clear()
    check()
    assert printed[0] == "sweep=false"


def test_a_snapshot_the_store_refuses_is_kept_in_the_run_folder(tmp_path: Path):
    store = MemoryStore([night("2.13.0+cpu", "aaa")])
    given = write_snapshot(night("2.13.0+cpu", "aaa", ["A"]), tmp_path / "one.json")
    stages = {"sweeper": None, "renderer": lambda n, out: out, "publisher": None}

    with pytest.raises(PipelineError, match="another selection") as refused:
        run(Config(), RunOptions(out=tmp_path / "run", snapshot=given), store=store, say=print, **stages)

    assert str(tmp_path / "run" / "snapshot.json") in str(refused.value)
    assert len(store.get("2.13.0+cpu").results) == 3


def test_the_trial_run_then_the_real_night_of_the_same_build_sweeps_and_stores_it(
    tmp_path: Path, monkeypatch
):
    """The deploy page's trial (the nightly dispatched with corpus=smoke, no token) stores a
    night of the build; the configured night of the same build is still asked for (`ask`, `run
    --check`), swept, and replaces the trial in the store."""
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "outputs"))
    configured = Config()  # the whole transformers corpus
    flags = list(configured.flags)
    build = Environment(torch_version="2.13.0+cpu", torch_git_version="aaa")
    store = MemoryStore()
    swept: list[str] = []

    def sweeper(config: Config, work: Path, resume: bool) -> Snapshot:
        swept.append(config.sweep.corpus_name)
        return night(
            build.torch_version, "aaa", ["X", "Y", "Z", "W"], corpus=config.sweep.corpus_name, flags=flags
        )

    stages = {"sweeper": sweeper, "renderer": lambda n, out: out, "publisher": lambda n, *_: ("dry run", n)}

    def ask() -> bool:  # the ask job (`nightly --check`) and the plan job (`run --check`) agree
        printed: list[str] = []
        run(configured, RunOptions(check_only=True), store=store, build=build, say=printed.append, **stages)
        stored = already_swept(store, Environment(torch_version=build.torch_version), configured, flags)
        assert (printed[0] == "sweep=true") is (stored is None), printed
        return stored is None

    # The trial: its shards swept the smoke corpus; the publish job stores their merge.
    assert ask()
    trial = write_snapshot(
        night(build.torch_version, "aaa", corpus="smoke", flags=flags), tmp_path / "trial.json"
    )
    run(configured, RunOptions(out=tmp_path / "trial", snapshot=trial), store=store, say=print, **stages)
    assert store.get(build.torch_version).corpus.name == "smoke"

    # The first real night of the same build.
    assert ask()
    report = run(
        configured, RunOptions(out=tmp_path / "night"), store=store, build=build, say=print, **stages
    )

    assert report.swept and swept == ["transformers+diffusers+timm"]
    stored = store.get(build.torch_version)
    assert stored.corpus.name == "transformers+diffusers+timm" and len(stored.results) == 4
    assert not ask()


def test_a_trial_never_replaces_the_configured_night_nor_another_trial_of_another_selection():
    configured = TRANSFORMERS
    real = night("2.13.0+cpu", "aaa", corpus="transformers")
    trial = night("2.13.0+cpu", "aaa", corpus="smoke")
    sampled = real.model_copy(update={"corpus": real.corpus.model_copy(update={"sample": 2, "seed": 0})})

    assert replacement_problem(real, trial, configured) == "it sweeps another selection"
    assert replacement_problem(trial, real, configured) is None
    assert replacement_problem(trial, sampled, configured) == "it sweeps another selection"
    assert replacement_problem(trial, real) == "it sweeps another selection"  # without the configuration


def test_the_configured_night_is_the_corpus_drawn_as_configured():
    whole = CorpusSelection(name="transformers", models=["A", "B"])
    drawn = CorpusSelection(name="transformers", sample=2, seed=7, models=["A", "B"])
    sample_of_two = Config.model_validate(
        {"sweep": {"corpus": "transformers"}, "corpus": {"sample": 2, "seed": 7}}
    )
    strata_only = Config.model_validate(
        {"sweep": {"corpus": "transformers"}, "corpus": {"strata": {"text": 2}, "seed": 7}}
    )

    assert is_configured_night(whole, TRANSFORMERS) and not is_configured_night(drawn, TRANSFORMERS)
    assert is_configured_night(drawn, sample_of_two) and not is_configured_night(whole, sample_of_two)
    assert not is_configured_night(drawn.model_copy(update={"seed": 8}), sample_of_two)
    assert not is_configured_night(drawn.model_copy(update={"sample": 1}), sample_of_two)
    assert is_configured_night(drawn, strata_only)  # strata size the draw: no sample to compare
    assert not is_configured_night(whole.model_copy(update={"name": "smoke"}), TRANSFORMERS)


def test_the_configured_night_of_suites_is_them_all_whether_or_not_one_was_skipped():
    suites = CorpusSelection(name="transformers+diffusers+timm", models=["A", "timm/resnet10t"])
    missing = suites.model_copy(update={"skipped": {"timm": "the timm package is not installed"}})

    assert is_configured_night(suites, Config()) and is_configured_night(missing, Config())
    assert not is_configured_night(CorpusSelection(name="transformers", models=["A"]), Config())
    assert missing.swept_suites() == ["transformers", "diffusers"]
