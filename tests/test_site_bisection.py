"""The model page says the first bad nightly of each of its crashes that was bisected, from the
store, its untrusted text shown as text."""

from __future__ import annotations

from pathlib import Path

from tests.sitestore import HOSTILE_ERROR, THIRD_KEY, make_store
from tests.snapshots import SCALAR
from triagebot import pipeline
from triagebot.config import Config
from triagebot.report import links
from triagebot.results import BASELINE, Bisection, error_signature
from triagebot.store import keep_bisection


def test_a_bisected_crash_shows_its_first_bad_nightly_on_the_models_page(tmp_path: Path):
    store = make_store(tmp_path / "store")
    signature = error_signature("RuntimeError", HOSTILE_ERROR)
    compare = f"https://github.com/pytorch/pytorch/compare/{'a' * 40}...{'b' * 40}"
    bisection = Bisection(
        axis="torch",
        signature=signature,
        model="ScriptyModel",
        flag=SCALAR,
        good="2.12.0.dev20260401+cu128",
        bad=THIRD_KEY,
        index="https://download.pytorch.org/whl/nightly/cu128",
        last_good="2.12.0.dev20260405+cu128",
        first_bad="2.12.0.dev20260406+cu128",
        compare_url=compare,
        skipped=["<b>x</b>"],
        conclusive=True,
    )
    keep_bisection(store, bisection)
    graphs = bisection.model_copy(
        update={
            "flag": BASELINE,
            "model": "MistralForCausalLM",
            "signature": "MoreGraphs: MistralForCausalLM compiles to more than N graphs at baseline",
        }
    )
    keep_bisection(store, graphs)
    fewer = bisection.model_copy(
        update={
            "flag": BASELINE,
            "model": "GPT2LMHeadModel",
            "change": "improvement",
            "signature": "FewerGraphs: GPT2LMHeadModel compiles to fewer than N graphs at baseline",
        }
    )
    keep_bisection(store, fewer)
    pipeline.build_site(store, tmp_path / "site", Config(), say=lambda line: None)
    text = (tmp_path / "site" / links.model_page("ScriptyModel")).read_text(encoding="utf-8")
    assert '<section id="bisections">' in text
    assert (
        "first bad nightly <strong>2.12.0.dev20260406+cu128</strong>, last good 2.12.0.dev20260405+cu128"
        in text
    )
    assert f'<a href="{compare}">the changes between them</a>' in text
    assert "&lt;/b&gt; (the reproduction of ScriptyModel" in text  # a space before what follows
    assert "&lt;img src=x onerror=alert(...)&gt;" in text and "<img src=x" not in text
    assert "&lt;b&gt;x&lt;/b&gt;" in text
    other = (tmp_path / "site" / links.model_page("T5ForConditionalGeneration")).read_text(encoding="utf-8")
    assert 'id="bisections"' not in other
    mistral = (tmp_path / "site" / links.model_page("MistralForCausalLM")).read_text(encoding="utf-8")
    assert (
        "<strong>baseline</strong>, <code>MoreGraphs: MistralForCausalLM compiles to more than N" in mistral
    )
    # An improvement bisected says which build first improved, not which was bad.
    gpt2 = (tmp_path / "site" / links.model_page("GPT2LMHeadModel")).read_text(encoding="utf-8")
    assert (
        "first improved nightly <strong>2.12.0.dev20260406+cu128</strong>, "
        "last unimproved 2.12.0.dev20260405+cu128" in gpt2
    )
    assert "first bad" not in gpt2
