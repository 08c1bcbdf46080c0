"""Sentinels never count as evidence that a flag helps (issue 41): the smoke night's two helped
sentinels are left out of the verdict's figures, the issue's and the flag page's helped models,
the trend, the overlap, the ratio and the reductions, and are named where they show the
detector works."""

from __future__ import annotations

from pathlib import Path

from builders import DYNAMIC, SCALAR, crash, night_of, ok, result, snapshot

from triagebot.analysis import flag_stats
from triagebot.config import Config
from triagebot.pipeline import build_site
from triagebot.report import issue_body, links, words
from triagebot.results import Effect, ModelSpec
from triagebot.store import MemoryStore, read_snapshot

SMOKE = Path(__file__).parent / "data" / "smoke-2.13.0+cpu.json"
SCALAR_FLAG = "capture_scalar_outputs"
HELPED_SENTINELS = ["AliasingCustomOp", "ItemMatmul", "WrongGradUnderScalarCapture"]


def test_the_smoke_nights_helped_sentinels_are_no_evidence_of_help() -> None:
    night = night_of(read_snapshot(SMOKE))
    view = night.flags[SCALAR_FLAG]
    # The sentinels are in no count (`effects.real_rows`), only named apart.
    assert view.stats.counts[Effect.reduces_graphs] == 6
    assert view.stats.affectable == 7  # not 11: the four sentinels the flag ran on are apart
    assert view.stats.sentinels_helped == HELPED_SENTINELS
    assert view.helps == view.figures.helped == 6 == len(view.helped)
    assert not {row.model for row in view.helped} & set(HELPED_SENTINELS)
    assert view.trend[-1].helps == 6
    assert view.stats.percentages[Effect.reduces_graphs] == round(100 * 6 / view.stats.affectable, 1)
    assert view.stats.crash_to_benefit == round(view.crashes / 6, 2)
    assert words.of(6, view.figures) in issue_body(night, SCALAR_FLAG)


def test_the_issue_names_them_as_the_detector_at_work_not_in_its_helped_table() -> None:
    night = night_of(read_snapshot(SMOKE))
    body = issue_body(night, SCALAR_FLAG)
    helped = body.split("## Models the flag helps", 1)[1].split("Mean reduction", 1)[0]
    assert not any(name in helped for name in HELPED_SENTINELS)
    assert (
        f"{words.SENTINELS_HELPED}: `AliasingCustomOp` (sentinel), `ItemMatmul` (sentinel), "
        "`WrongGradUnderScalarCapture` (sentinel)." in body
    )
    # The results table counts the real models alone; the sentinels are on a line of their own.
    assert "| Effect | Models | % of the 7 models it could affect |" in body
    assert "| fewer graphs | 6 | 85.7% |" in body
    assert "sentinels, not counted as help" not in body
    assert "\n\nSentinels: 7 of 7 behaved as built.\n" in body


def test_the_flag_page_lists_them_apart(tmp_path: Path) -> None:
    smoke = read_snapshot(SMOKE)
    build_site(MemoryStore([smoke]), tmp_path, Config(), readers=1, say=lambda line: None)
    page = (tmp_path / links.flag_page(SCALAR_FLAG)).read_text(encoding="utf-8")
    table = page.split('id="helped-table"', 1)[1].split("</table>", 1)[0]
    assert "ItemMatmul" not in table and "AliasingCustomOp" not in table
    apart = page.split('id="sentinels-helped"', 1)[1].split("</p>", 1)[0]
    assert words.SENTINELS_HELPED in apart and "ItemMatmul" in apart and "AliasingCustomOp" in apart
    assert 'id="sentinels-counted-apart"' not in page  # in no table: on lines of their own
    built = page.split('id="sentinels-built"', 1)[1].split("</p>", 1)[0]
    assert built == ">Sentinels: 7 of 7 behaved as built."


def test_a_flag_that_helps_only_sentinels_helps_no_model_and_its_overlap_says_so() -> None:
    """A sentinel helped under one flag and crashing (confirmed) under the other is no model
    "crashing there, helped here"; the real model helped stays evidence."""
    guard = crash()
    helped_sentinel = result(
        "ItemBreak", ok(2, ["item"]), {SCALAR: ok(1), DYNAMIC: guard}, reruns={DYNAMIC: guard}
    ).model_copy(update={"spec": ModelSpec(model="ItemBreak", source="sentinel")})
    real = result("Real", ok(2, ["item"]), {SCALAR: ok(1), DYNAMIC: guard}, reruns={DYNAMIC: guard})
    tonight = snapshot([helped_sentinel, real], flags=(SCALAR, DYNAMIC))
    scalar, dynamic = flag_stats(tonight, SCALAR), flag_stats(tonight, DYNAMIC)
    assert (scalar.helps, scalar.sentinels_helped, scalar.mean_graph_reduction) == (1, ["ItemBreak"], 1.0)
    assert scalar.overlap_rescued[DYNAMIC] == ["Real"] and dynamic.overlap_helped[SCALAR] == ["Real"]
    assert dynamic.crash_to_benefit is None and scalar.crash_to_benefit == 0.0
    night = night_of(tonight)
    assert [row.model for row in night.flags[SCALAR].helped] == ["Real"]
