"""A short season (a dozen nightlies) replayed as `bench/season.py` does: the same seed gives the
same season, its noise is what the snapshots record, and the lifecycle meets its targets."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from triagebot.results import Status
from triagebot.store import read_snapshot

_SPEC = importlib.util.spec_from_file_location(
    "season", Path(__file__).resolve().parent.parent / "bench" / "season.py"
)
season = importlib.util.module_from_spec(_SPEC)
sys.modules["season"] = season  # dataclasses look their module up
_SPEC.loader.exec_module(season)

NIGHTS = 12


@pytest.fixture(scope="module")
def stages():
    return [read_snapshot(path) for path in season.DEFAULT_SNAPSHOTS[1:]]  # the two 2.12 nightlies


def test_the_noise_rates_are_the_ones_the_snapshots_record(stages):
    rates = season.rates_of(stages)
    assert rates.repeat == 0.5  # of the four confirmation reruns, two crashed again
    assert rates.timeout == pytest.approx(3 / 56)  # two timeouts and a death in 56 runs made


def test_the_same_seed_builds_the_same_season(stages):
    rates = season.rates_of(stages)
    first, again = (season.draw_script(stages, NIGHTS, 3, rates) for _ in range(2))
    assert first == again and season.draw_script(stages, NIGHTS, 4, rates) != first
    night = season.night_snapshot(stages, 5, first, 3)
    assert night == season.night_snapshot(stages, 5, again, 3)
    assert night.key == "2.13.0.dev20260606+cuda" and len(first.engine_nights) == season.ENGINE_NIGHTS
    engine = min(first.engine_nights)
    statuses = {
        o.status for r in season.night_snapshot(stages, engine, first, 3).results for o in r.outcomes.values()
    }
    assert Status.engine_error in statuses


def test_a_model_away_is_not_in_the_nightlies_it_left(stages):
    script = season.draw_script(stages, NIGHTS, 0, season.rates_of(stages))
    model, nights = next(iter(script.away.items()))
    assert model not in {r.model for r in season.night_snapshot(stages, nights.start, script, 0).results}
    assert model in {r.model for r in season.night_snapshot(stages, nights.stop, script, 0).results}


def test_a_short_season_meets_the_lifecycle_targets(stages, tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_API_URL", "https://github.example")
    counts = season.replay(stages, NIGHTS, 0, tmp_path, say=lambda _: None)
    assert os.environ["GITHUB_API_URL"] == "https://github.example"  # the fake is let go
    assert counts.opened == 2 and counts.nights == NIGHTS
    assert counts.noise_flip_flops == 0
    assert counts.most_comments <= 1
    assert counts.contradicted == 0
    assert counts.invisible_edits == 0
    assert (counts.reworded_continued, counts.reworded_as_new) == (1, 0)  # said once, never new


def test_a_folded_comment_is_cut_into_its_notices():
    marker = "<!-- triagebot:notice=fixed flag=capture_scalar_outputs snapshot=k -->"
    state = "<!-- triagebot:state=close flag=capture_scalar_outputs snapshot=k -->"
    parts = season.sections(f"{marker}\nBert fixed\n\n{state}\nclosed")
    assert parts == [f"{marker}\nBert fixed\n", f"{state}\nclosed"]
    assert season.named(parts[0], ["Bert", "BertModel"]) == {"Bert"}


def test_a_bad_snapshot_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    assert season.main([str(bad), "--nights", "3"]) == 1
    assert capsys.readouterr().err.startswith(f"error: {bad}: not a snapshot")
    assert season.main(["--nights", "1"]) == 1
    assert season.main(["--nights", "3", "--fixed-share", "2"]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == "error: --fixed-share must be between 0 and 1, not 2.0"
