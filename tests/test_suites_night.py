"""A night of several suites read on every surface: per-suite figures from one count
(`analysis.figures.suite_counts`) in the verdict, the health, the diff and the site's index;
a crash group of two suites; a suite the night could not sweep, said; a one-suite night as
before. Synthetic nights at the corpus's scale (hundreds of models)."""

from __future__ import annotations

from builders import GUARD_ERROR, SCALAR, crash, night_of, ok, result, snapshot
from markdown_it import MarkdownIt

from triagebot.analysis.figures import suite_counts
from triagebot.config import Config
from triagebot.report.bodies import nightly_summary, run_summary
from triagebot.report.render import render
from triagebot.report.site import MemoryWriter, write_site
from triagebot.results import HEALTH_ISSUE, CorpusSelection, SuiteCount, model_key
from triagebot.store import MemoryStore
from triagebot.tracker.desired import desired_issues

# Error text as hostile as a real one: a mention, a fence, a table's pipe, a marker.
MESSAGE = "Could not guard on data-dependent expression Eq(u0, 0) @pytorch/compiler | ``` <!-- x -->"
POPULATION = {"transformers": 180, "diffusers": 40, "timm": 30}
CRASHING = {"transformers": 12, "diffusers": 3, "timm": 0}


def keys(suite: str, count: int) -> list[str]:
    return [model_key(suite, f"{suite.title()}Model{index:03d}") for index in range(count)]


def suites_night(key: str = "2.13.0.dev20261128", skipped: dict[str, str] | None = None, suites=POPULATION):
    """`suites`' models (suite -> how many), the first CRASHING of each crashing under the
    scalar flag with one signature, the rest helped (three graphs to two)."""
    results = []
    for suite, count in suites.items():
        for index, model in enumerate(keys(suite, count)):
            flagged = crash(GUARD_ERROR, MESSAGE) if index < CRASHING[suite] else ok(2)
            results.append(result(model, ok(3, ["Tensor.item"]), {SCALAR: flagged}, stratum=suite))
    names = [*suites, *(skipped or {})]
    selection = CorpusSelection(
        name="+".join(names), models=[r.model for r in results], skipped=skipped or {}
    )
    return snapshot(results, key=key, corpus=selection)


def test_suite_counts_are_per_suite_and_nothing_for_one_suite():
    population = keys("transformers", 3) + keys("timm", 2)
    counted = [population[0], population[3], population[3]]

    assert suite_counts(counted, population) == [
        SuiteCount(suite="transformers", count=1, total=3),
        SuiteCount(suite="timm", count=1, total=2),
    ]
    assert suite_counts(population[:1], population[:3]) == []


def test_the_verdict_says_crashes_per_suite_and_one_group_holds_two_suites():
    night = night_of(suites_night())
    flag = night.flags[SCALAR]

    assert [(c.suite, c.count, c.total) for c in flag.figures.crash_suites] == [
        ("transformers", 12, 180),
        ("diffusers", 3, 40),
        ("timm", 0, 30),
    ]
    (group,) = flag.stats.crash_groups
    assert {model.split("/")[0] for model in group.models if "/" in model} == {"diffusers"}
    assert len(group.models) == 15 and sum("/" not in model for model in group.models) == 12
    assert [(c.suite, c.count) for c in group.suites] == [("transformers", 12), ("diffusers", 3), ("timm", 0)]
    (issue,) = [issue for issue in desired_issues(night, Config().tracker) if issue.flag == SCALAR]
    assert (
        "15 models crash (12 of 180 transformers models, 3 of 40 diffusers models, 0 of 30 timm models; "
        "GuardOnDataDependentSymNode," in issue.body
    )
    assert "<!-- x -->" not in issue.body  # the error text never forms a marker
    assert len(issue.body) <= 65_536


def test_a_one_suite_night_reads_as_before():
    night = night_of(suites_night(suites={"transformers": 180}))
    flag = night.flags[SCALAR]

    assert flag.figures.crash_suites == [] and night.health.suites == []
    (issue,) = [issue for issue in desired_issues(night, Config().tracker) if issue.flag == SCALAR]
    assert (
        "transformers models" not in issue.body
        and "12 models crash (GuardOnDataDependentSymNode," in issue.body
    )
    assert flag.stats.crash_groups[0].suites == []
    assert "by suite" not in nightly_summary(night)


def test_a_suite_not_swept_is_said_in_the_summary_and_the_health():
    skipped = {
        "timm": "the timm corpus needs the timm package, which is not installed here: pip install timm"
    }
    night = night_of(suites_night(skipped=skipped, suites={"transformers": 180, "diffusers": 40}))
    summary = nightly_summary(night)

    assert night.health.skipped_suites == skipped
    step = run_summary(night.snapshot.environment, night, published="dry run")
    assert f"- suite timm not swept: {skipped['timm']}" in step
    assert f"Suite `timm` not swept: {skipped['timm']}" in summary
    assert (
        "Compile at baseline, by suite: 180 of 180 transformers models, 40 of 40 diffusers models." in summary
    )


def test_the_diff_from_a_transformers_night_says_new_crashes_per_suite():
    before = suites_night("2.13.0.dev20261127", suites={"transformers": 180, "diffusers": 40})
    before = before.model_copy(
        update={
            "results": [
                r.model_copy(update={"outcomes": {**r.outcomes, SCALAR: ok(2)}, "confirmations": {}})
                for r in before.results
            ]
        }
    )
    night = night_of(suites_night(suites={"transformers": 180, "diffusers": 40}), [before])

    change = night.diff.flags[SCALAR]
    assert [(c.suite, c.count, c.total) for c in change.newly_crashing_suites] == [
        ("transformers", 12, 180),
        ("diffusers", 3, 40),
    ]
    text = render("diff.txt.j2", diff=night.diff)
    assert "newly crashing 15 (12 of 180 transformers models, 3 of 40 diffusers models)" in text
    assert "15 newly crashing (12 of 180 transformers models, 3 of 40 diffusers models: " in nightly_summary(
        night
    )


def test_the_site_index_shows_the_suites(tmp_path):
    from triagebot.analysis.history import read_history

    tonight = suites_night(
        skipped={"timm": "timm is not installed"}, suites={"transformers": 180, "diffusers": 40}
    )
    store = MemoryStore([tonight])
    memory = MemoryWriter()
    write_site(read_history(store), night_of(tonight), memory)
    index = memory.files["index.html"]

    assert "Suites side by side: 180 transformers models, 40 diffusers models." in index
    assert "Suite timm not swept: timm is not installed." in index
    assert (
        "Compiled at baseline, by suite: 180 of 180 transformers models, 40 of 40 diffusers models." in index
    )
    assert any(path.startswith("models/diffusers_") for path in memory.files)
    flag_page = memory.files["flags/capture_scalar_outputs.html"]
    assert '<span class="suites">12 of 180 transformers models, 3 of 40 diffusers models</span>' in flag_page


def test_the_issue_of_two_suites_renders_as_github_shows_it():
    night = night_of(suites_night(suites={"transformers": 180, "diffusers": 40}))
    (issue,) = [issue for issue in desired_issues(night, Config().tracker) if issue.flag == SCALAR]
    markdown = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    html = markdown.render(issue.body)

    assert "15 models crash (12 of 180 transformers models, 3 of 40 diffusers models; Guard" in html
    # the group's fold says its suites, without the suites it has no member of
    assert "<summary>15 models: 12 of 180 transformers models, 3 of 40 diffusers models</summary>" in html
    assert html.count("<details>") == html.count("</details>") and "<table>" in html
    assert "diffusers/DiffusersModel000" in html


def test_a_stored_transformers_night_reads_as_one_suite_with_its_keys_unchanged():
    from builders import fixture_nightlies

    old, new = fixture_nightlies()
    night = night_of(new, [old])

    assert new.corpus.suites() == [new.corpus.name] and new.corpus.skipped == {}
    assert {result.suite for result in new.results} == {"transformers"}
    assert all("/" not in result.model for result in new.results)  # bare keys, as stored
    assert night.health.suites == [] and night.health.skipped_suites == {}
    assert all(flag.figures.crash_suites == [] for flag in night.flags.values())
    assert all(not group.suites for flag in night.flags.values() for group in flag.stats.crash_groups)


def test_the_health_issue_names_the_suites_and_a_transformers_night_as_before():
    tracker = Config.model_validate({"tracker": {"health_issue": True}}).tracker
    titles = {
        suites: next(
            issue.title for issue in desired_issues(night_of(night), tracker) if issue.flag == HEALTH_ISSUE
        )
        for suites, night in (
            (
                "three",
                suites_night(skipped={"timm": "not installed"}, suites={"transformers": 9, "diffusers": 4}),
            ),
            (
                "one",
                suites_night(suites={"transformers": 9}).model_copy(
                    update={"corpus": CorpusSelection(name="transformers")}
                ),
            ),
        )
    }
    assert titles["three"].startswith("[triagebot] Dynamo on the transformers, diffusers and timm corpora: ")
    assert titles["one"].startswith("[triagebot] Dynamo on the transformers corpus: ")


LIBRARIES = {"transformers_version": "5.23.0", "diffusers_version": "0.42.0", "timm_version": "1.0.31"}


def with_libraries(night, **versions):
    return night.model_copy(update={"environment": with_versions(night.environment, **versions)})


def with_versions(environment, **versions):
    """`environment` with `versions` given as a snapshot stored before `libraries` gave them:
    one field per library."""
    return type(environment).model_validate({**environment.model_dump(), **versions})


def surfaces(night) -> dict[str, str]:
    """Every text a reader sees the night's environment in: the summary, the step summary, a
    tracking issue, the health issue and the site's index."""
    from triagebot.analysis.history import read_history

    tracker = Config.model_validate({"tracker": {"health_issue": True}}).tracker
    issues = {issue.flag: issue.body for issue in desired_issues(night, tracker)}
    memory = MemoryWriter()
    write_site(read_history(MemoryStore([night.snapshot])), night, memory)
    return {
        "summary": nightly_summary(night),
        "step summary": run_summary(night.snapshot.environment, night, published="dry run"),
        "issue": issues[SCALAR],
        "health": issues[HEALTH_ISSUE],
        "index": memory.files["index.html"],
    }


def test_every_surface_says_the_libraries_of_a_night_of_three_suites():
    night = night_of(with_libraries(suites_night(), **LIBRARIES))

    shown = surfaces(night)
    said = "transformers 5.23.0, diffusers 0.42.0, timm 1.0.31"
    assert f"; built with {said}." in shown["summary"] and f"; built with {said}." in shown["step summary"]
    assert f"; models built with {said}." in shown["health"]
    assert "- **diffusers**: `0.42.0`\n- **timm**: `1.0.31`\n" in shown["issue"]
    assert "- **transformers**: `5.23.0`\n" in shown["issue"]
    assert f"250 models of {said} on cpu" in shown["index"]


def test_a_transformers_night_reads_as_before_though_the_libraries_are_recorded():
    transformers = suites_night(suites={"transformers": 180})
    night = night_of(with_libraries(transformers, transformers_version="5.23.0"))

    shown = surfaces(night)
    assert not [name for name, text in shown.items() if "diffusers" in text or "timm" in text]
    assert "built with" not in shown["summary"] and "built with" not in shown["health"]
    assert "- **transformers**: `5.23.0`\n- **Device**" in shown["issue"]
    assert "180 models of transformers 5.23.0 on cpu" in shown["index"]


def test_a_stored_snapshot_without_the_libraries_loads_unchanged():
    from pathlib import Path

    from triagebot.results import Snapshot

    for path in sorted((Path(__file__).parent / "data").glob("*.json")):
        if path.name == "crash-labels.json":
            continue
        stored = Snapshot.model_validate_json(path.read_text())
        environment = stored.environment
        assert environment.libraries == {}, path.name
        assert set(environment.library_versions()) <= {"transformers"}
        again = Snapshot.model_validate_json(stored.model_dump_json())
        assert again == stored and again.key == stored.key


def test_the_libraries_name_no_build_and_a_diff_says_which_moved():
    from triagebot.analysis.diff import moved_between
    from triagebot.results import snapshot_key

    before = with_libraries(suites_night("2.13.0.dev20261127"), **LIBRARIES).environment
    released = with_versions(before, timm_version="1.0.32", diffusers_version="")
    assert before.same_build(released)
    assert snapshot_key(released, "torch+transformers") == snapshot_key(before, "torch+transformers")

    timm_moved = with_versions(released, torch_version="2.13.0.dev20261128", diffusers_version="0.42.0")

    moved, torch_moved, _ = moved_between(before, timm_moved)
    assert torch_moved and moved[1:] == ["timm 1.0.31 → 1.0.32"]
    # a library one of the nights did not sweep has not moved
    assert moved_between(before, released)[0] == ["timm 1.0.31 → 1.0.32"]
