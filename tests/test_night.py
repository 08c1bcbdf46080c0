"""One night, computed once: the report folder, the published issues and the step summary are
renderings of one record, and every command compares a nightly with the same history."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import builders
import pytest
from builders import REPO, SCALAR, crash
from fakegithub import point_tracker_at, serve
from typer.testing import CliRunner

from triagebot import pipeline
from triagebot.cli import app
from triagebot.config import CcRoute, Config, TrackerSettings
from triagebot.report import markers
from triagebot.results import Snapshot
from triagebot.store import LocalStore, MemoryStore, write_snapshot


def nightly(day: int, crashing: int, models: int = 600) -> Snapshot:
    """`models` models; the first `crashing` crash under SCALAR (confirmed); DYNAMIC helps them all."""
    names = [f"Model{index:03d}" for index in range(models)]
    key = f"2.12.0.dev202604{day:02d}"
    return builders.nightly(
        key,
        {SCALAR: dict.fromkeys(names[:crashing], crash())},
        names,
        git=f"{day:040x}",
        created=datetime(2026, 4, day, tzinfo=UTC),
    )


@pytest.fixture
def fake(monkeypatch):
    for server in serve():
        point_tracker_at(server, monkeypatch)
        yield server


def test_the_report_folder_holds_the_published_bodies_byte_for_byte(fake, tmp_path: Path) -> None:
    """With cc routes, the report's body and the issue's are one rendering of one night."""
    config = Config(
        tracker=TrackerSettings(
            repo=REPO,
            cc={SCALAR: ["alice", "bob"]},
            cc_routes=[CcRoute(pattern="GuardOnDataDependent", people=["carol", "triagebot-bot"])],
        )
    )
    stages = {"sweeper": None, "renderer": pipeline.render_report, "publisher": pipeline.publish_under_lock}
    store = MemoryStore([nightly(1, 0)])
    for day in (2, 3):  # a night that opens the issues, then one that edits them
        merged = write_snapshot(nightly(day, 5 * day), tmp_path / f"merged-{day}.json")
        options = pipeline.RunOptions(out=tmp_path / f"night-{day}", token="bot-token", snapshot=merged)
        run = pipeline.run(config, options, store=store, say=lambda _: None, **stages)  # type: ignore[arg-type]

        published = {markers.find_flag(issue["body"]): issue for issue in fake.issues(REPO)}
        assert list(published) == [SCALAR]  # the other flag crashes nowhere: no issue
        folder = (run.reports_dir / f"issue-{SCALAR}.md").read_text(encoding="utf-8")
        assert folder == published[SCALAR]["body"]
        assert folder.rstrip().endswith("cc @alice @bob @carol")  # routed, the bot itself left out
        summary = (run.reports_dir / "summary.md").read_text(encoding="utf-8")
        assert f"/{REPO}/issues/{published[SCALAR]['number']})" in summary
    comments = fake.comments(REPO, 1)
    regression = (tmp_path / "night-3" / "report" / f"regression-{SCALAR}.md").read_text(encoding="utf-8")
    assert regression in [comment["body"] for comment in comments]


def test_a_dry_runs_bodies_are_the_report_folders_byte_for_byte(tmp_path: Path) -> None:
    """One writer of issue bodies: without a token, the plan's folder holds what the report
    folder holds, each the body that would be published."""
    stages = {"sweeper": None, "renderer": pipeline.render_report, "publisher": pipeline.publish_under_lock}
    merged = write_snapshot(nightly(2, 10), tmp_path / "merged.json")
    options = pipeline.RunOptions(out=tmp_path / "night", snapshot=merged)
    config = Config(tracker=TrackerSettings(repo=REPO))
    run = pipeline.run(config, options, store=MemoryStore([nightly(1, 0)]), say=lambda _: None, **stages)  # type: ignore[arg-type]
    assert run.issues_dir is not None and run.reports_dir is not None
    planned = (run.issues_dir / f"issue-{SCALAR}.md").read_text(encoding="utf-8")
    assert planned == (run.reports_dir / f"issue-{SCALAR}.md").read_text(encoding="utf-8")
    assert planned.startswith(markers.flag_marker(SCALAR))
    assert "create issue for" in (run.issues_dir / "plan.txt").read_text(encoding="utf-8")


def test_publish_with_previous_closes_by_the_history_it_diffed_against(fake, tmp_path: Path) -> None:
    """`publish SNAP --previous OLD` with OLD not in the store: one clean night after 600
    crashes is not two, so with close_after = 2 the issue stays open."""
    (tmp_path / "triagebot.toml").write_text(
        f'[tracker]\nrepo = "{REPO}"\nclose_after = 2\n', encoding="utf-8"
    )
    old, new = nightly(1, 600), nightly(2, 0)
    old_file = write_snapshot(old, tmp_path / "old.json")
    new_file = write_snapshot(new, tmp_path / "new.json")
    common = [
        "--config",
        str(tmp_path / "triagebot.toml"),
        "--store",
        str(tmp_path / "store"),
        "--token",
        "bot-token",
    ]

    opened = CliRunner().invoke(app, ["publish", str(old_file), *common, "--out", str(tmp_path / "a")])
    assert opened.exit_code == 0, opened.output
    assert [issue["state"] for issue in fake.issues(REPO)] == ["open"]

    result = CliRunner().invoke(
        app, ["publish", str(new_file), "--previous", str(old_file), *common, "--out", str(tmp_path / "b")]
    )
    assert result.exit_code == 0, result.output
    assert LocalStore(tmp_path / "store").keys() == []  # OLD was never stored
    [issue] = [issue for issue in fake.issues(REPO) if markers.find_flag(issue["body"]) == SCALAR]
    assert issue["state"] == "open"
    # Nor are the 600 said fixed: a crash seen on one nightly is over only after a clean week.
    bodies = [comment["body"] for comment in fake.comments(REPO, issue["number"])]
    assert not any(markers.find_notice(body) == ("fixed", SCALAR, new.key) for body in bodies)

    # The same history in every command: the night `report` renders says what `publish` did.
    night = pipeline.night_of(new, LocalStore(tmp_path / "store"), Config(), previous=old)
    assert night.history == [old.key] and [p.crashes for p in night.flags[SCALAR].trend] == [600, 0]


def test_a_night_from_the_stored_history_is_the_night_from_the_store(tmp_path: Path) -> None:
    """What earlier nights stored, read once (and read back from a site's data files), gives the
    night that reading every stored snapshot gives."""
    from triagebot.analysis.history import read_history
    from triagebot.report.site import write_site

    store = LocalStore(tmp_path / "store")
    for day, crashing in ((8, 0), (9, 3), (10, 1), (11, 2)):
        store.put(nightly(day, crashing, models=40))
    newest = store.get(store.keys()[-1])
    config = Config(tracker=TrackerSettings(repo=REPO))
    from_store = pipeline.night_of(newest, store, config)
    stored = read_history(store, tmp_path / "site", readers=1)
    assert stored.read == store.keys()[:-1] and stored.kept is not None
    assert pipeline.night_of(newest, store, config, stored=stored) == from_store
    write_site(stored, from_store, tmp_path / "site")
    again = read_history(store, tmp_path / "site", readers=1)
    assert again.read == [] and again.kept is None  # every earlier nightly from its data file
    assert pipeline.night_of(newest, store, config, stored=again) == from_store
    older = store.get(store.keys()[1])  # not the newest: its night reads the store
    assert pipeline.night_of(older, store, config, stored=again) == pipeline.night_of(older, store, config)


def whole_night(snapshot: Snapshot, store, config: Config, previous: Snapshot | None = None):
    """The night as it was made when every stored snapshot up to it was read whole."""
    from triagebot import analysis
    from triagebot.analysis.night_analysis import choose_history
    from triagebot.tracker.cc import cc_for

    history, before = choose_history(snapshot, store.history(until=snapshot.key), previous)
    tonight = analysis.night(
        snapshot,
        history,
        before,
        cc=lambda flag, signatures: cc_for(flag, signatures, config.tracker),
        dashboard_url=config.tracker.dashboard_url,
        close_after=config.tracker.close_after,
    )
    from triagebot.pipeline.analysing import with_triage

    return with_triage(tonight, store, config)


def test_an_older_night_reads_its_history_as_compact_data_never_every_snapshot_whole(
    tmp_path: Path, monkeypatch
) -> None:
    """`report`, `publish` and the replay of owed nights: the night of any stored nightly (and
    of one not stored), from the nightlies' compact data, each snapshot read once, one at a time."""
    store = LocalStore(tmp_path / "store")
    for day, crashing in ((8, 0), (9, 3), (10, 1), (11, 2), (12, 2), (13, 0)):
        store.put(nightly(day, crashing, models=40))
    config = Config(tracker=TrackerSettings(repo=REPO, close_after=2))
    keys = store.keys()
    expected = {key: whole_night(store.get(key), store, config) for key in keys}
    late = nightly(14, 4, models=40)  # not stored: a report of a file
    expected[late.key] = whole_night(late, store, config)
    old = store.get(store.keys()[1])
    with_previous = whole_night(store.get(store.keys()[4]), store, config, previous=old)

    def never_whole(*args, **kwargs):
        raise AssertionError("every stored snapshot read whole")

    monkeypatch.setattr(LocalStore, "history", never_whole)
    for key in keys:
        assert pipeline.night_of(store.get(key), store, config) == expected[key], key
    assert pipeline.night_of(late, store, config) == expected[late.key]
    assert pipeline.night_of(store.get(store.keys()[4]), store, config, previous=old) == with_previous
