"""A stored history that no night expected never stops the nights: `triagebot run --snapshot`
end to end against the fake GitHub, with an older night left pending (published by hand, or
yesterday's publish job re-run after today's) and with a stored snapshot that can no longer be
read (truncated, or of a schema that changed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import REPO, SCALAR
from fakegithub import point_tracker_at, serve
from test_cli import triagebot
from test_publish_faults import N1, N2, N3, configured_night
from test_publish_faults import states as publish_states

from triagebot.store import LocalStore, mark_night


@pytest.fixture
def fake(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_TOKEN", "bot-token")
    for fake in serve():
        point_tracker_at(fake, monkeypatch)
        yield fake


def run_snapshot(capsys, tmp_path: Path, snapshot) -> tuple[int, str, str]:
    path = tmp_path / f"{snapshot.key}.json"
    path.write_text(snapshot.model_dump_json(), encoding="utf-8")
    return triagebot(capsys, "run", "--snapshot", path, "--repo", REPO, "--store", "store", "--out", "night")


def test_an_older_night_left_pending_is_superseded_and_the_newer_ones_publish(fake, tmp_path, capsys):
    store = LocalStore(tmp_path / "store")
    store.put(N1)
    store.put(N2)
    mark_night(store, REPO, N1.key, "pending")  # an older nightly swept on demand, never published
    mark_night(store, REPO, N2.key, "published")  # published by hand

    code, out, err = run_snapshot(capsys, tmp_path, N3)

    assert code == 0, err
    assert "Traceback" not in err
    assert f"nightly {N1.key} was never published to {REPO}, and a newer one was" in out
    assert publish_states(store) == {N1.key: "superseded", N2.key: "published", N3.key: "published"}
    assert "2 models crash" in fake.issues(REPO)[0]["title"]  # tonight's (N3) issue
    # The next night is not stopped by it either.
    later = configured_night("2.12.0.dev20260404", {SCALAR: ["T5"]})
    code, _, err = run_snapshot(capsys, tmp_path, later)
    assert code == 0, err
    assert publish_states(store)[later.key] == "published"


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (lambda text: text[: len(text) // 2], "truncated"),
        (lambda text: text.replace('"results"', '"rows"', 1), "no longer valid"),
    ],
    ids=["truncated", "invalid"],
)
def test_an_unreadable_stored_snapshot_is_skipped_with_a_line_naming_it(fake, tmp_path, capsys, damage, why):
    store = LocalStore(tmp_path / "store")
    for stored in (N1, N2):
        store.put(stored)
    broken = store.file(N2.key)
    broken.write_text(damage(broken.read_text(encoding="utf-8")), encoding="utf-8")

    code, _, err = run_snapshot(capsys, tmp_path, N3)

    assert code == 0, f"{why}: {err}"
    assert "Traceback" not in err
    (warning,) = [line for line in err.splitlines() if str(broken.name) in line]
    assert warning.endswith("skipped"), warning
    assert publish_states(store)[N3.key] == "published"
    # Tonight is compared with the last night that can be read.
    night = json.loads((tmp_path / "night" / "report" / "night.json").read_text(encoding="utf-8"))
    assert night["previous_key"] == N1.key
    assert SCALAR in fake.issues(REPO)[0]["body"]
