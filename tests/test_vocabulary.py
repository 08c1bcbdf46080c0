"""One name per idea: a name the project defines once (in `results`) is the one every package
uses, and what earlier nights stored under an older name still loads."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from builders import SCALAR, fixture_nightlies, night_of

from triagebot.analysis.compact import PREFIX, SUFFIX, night_data, read_night_data
from triagebot.results import COUNTING_BACKEND, FlagFigures, Night, VerdictRow

PACKAGE = Path(__file__).resolve().parent.parent / "triagebot"


def _spelled(text: str) -> list[str]:
    """The modules of triagebot/ whose code holds the string `text` itself (comments aside)."""
    return sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if any(
            isinstance(node, ast.Constant) and node.value == text
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    )


def test_the_counting_backend_is_named_by_its_constant_alone():
    assert _spelled(COUNTING_BACKEND) == ["results/rungs.py"]


def test_each_verdict_row_counts_the_figure_of_its_name():
    assert all(FlagFigures.model_fields[row].annotation is int for row in VerdictRow)


# --- what earlier nights stored under a former name -------------------------------------------------


def test_figures_stored_under_their_former_names_load_and_are_written_under_the_effects_names():
    figures = FlagFigures.model_validate({"flag": SCALAR, "swept": 9, "wrong": 1, "hurt": 2})
    assert (figures.wrong_results, figures.increases_graphs) == (1, 2)
    written = json.loads(figures.model_dump_json())
    assert (written["wrong_results"], written["increases_graphs"]) == (1, 2)
    assert "wrong" not in written and "hurt" not in written


def test_a_night_json_written_under_the_former_names_loads_as_the_same_night():
    old, new = fixture_nightlies()
    night = night_of(new, [old])
    stored = json.loads(night.model_dump_json())
    for flag in stored["flags"].values():
        flag["figures"]["wrong"] = flag["figures"].pop("wrong_results")
        flag["figures"]["hurt"] = flag["figures"].pop("increases_graphs")
        for point in flag["trend"]:
            point["wrong"] = point.pop("wrong_results")
        for line in flag["verdict"]["lines"]:
            line["what"] = "more_graphs" if line["what"] == VerdictRow.increases_graphs else line["what"]
    assert '"more_graphs"' in json.dumps(stored)
    assert Night.model_validate_json(json.dumps(stored)) == night


def test_a_site_data_file_written_under_the_former_names_is_read_back_not_discarded(tmp_path):
    old, new = fixture_nightlies()
    data, _ = night_data(new, old)
    stored = json.loads(data.model_dump_json())
    for point in stored["trend"].values():
        point["wrong"] = point.pop("wrong_results")
    path = tmp_path / "night.js"
    path.write_text(PREFIX + json.dumps(stored) + SUFFIX, encoding="utf-8")
    read = read_night_data(path)
    assert read is not None and read.trend == data.trend
