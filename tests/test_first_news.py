"""A wrong result of torch.compile at the default config is the night's first news: the summary's
first lines, the step summary and the site's index name the model and its figures, computed once
(`Night.compiler_wrong`); a library finding (eager disagreeing with itself) is never one."""

from __future__ import annotations

from builders import SCALAR, night_of, ok, result, snapshot

from triagebot import pipeline
from triagebot.analysis.compiler_wrong import rmses
from triagebot.config import Config
from triagebot.report import bodies, links, run_summary, write_report
from triagebot.results import (
    BASELINE,
    COMPILER_WRONG_ISSUE,
    Accuracy,
    AccuracyCheck,
    Check,
    CrossCheck,
    Reproduction,
    WrongLocus,
)
from triagebot.store import MemoryStore

COSMOS = "diffusers/AutoencoderKLCosmos"
DETAIL = "largest difference 6.48 above tolerance 0.001; RMSE to float64 1.79, eager's 6.4e-07"


def wrong(detail: str = DETAIL, where: str = "sample") -> AccuracyCheck:
    return AccuracyCheck(verdict=Accuracy.mismatch, where=where, detail=detail)


def inconsistent() -> AccuracyCheck:
    return AccuracyCheck(
        verdict=Accuracy.eager_inconsistent,
        where="last_hidden_state",
        detail="largest difference 2.79 above tolerance 0.001",
        cross_checks=[CrossCheck(name="eager_other_attention", implementation="eager", agrees=False)],
    )


def wrong_tonight(*, confirmed: bool = True, key: str = "2.13.0", locus: WrongLocus | None = None):
    """Cosmos wrong at baseline (its rerun too, unless not `confirmed`), a library finding, a clean model."""
    rerun = ok(1, accuracy=wrong()) if confirmed else ok(1, accuracy=AccuracyCheck(verdict=Accuracy.match))
    cosmos = result(COSMOS, ok(1, accuracy=wrong()), {SCALAR: ok(1)}, reruns={BASELINE: rerun})
    library = result("Aimv2TextModel", ok(1, accuracy=inconsistent()), {SCALAR: ok(1)})
    clean = result("GPT2Model", ok(2, accuracy=AccuracyCheck(verdict=Accuracy.match)), {SCALAR: ok(1)})
    repro = Reproduction(
        flag=BASELINE, signature="WrongResult: sample", model=COSMOS, script="...", verified=True, locus=locus
    )
    return snapshot([cosmos, library, clean], key=key, checks=[Check.accuracy], reproductions=[repro])


def test_the_figures_are_read_from_the_accuracy_checks_words():
    assert rmses(DETAIL) == (1.79, 6.4e-07)
    assert rmses("largest difference 3 above tolerance 0.001 (no float64 reference)") == (None, None)


def test_a_confirmed_wrong_result_at_baseline_is_computed_once_and_a_library_finding_is_not_one():
    night = night_of(wrong_tonight())
    (item,) = night.compiler_wrong.findings
    assert (item.model, item.where, item.compiled_rmse, item.eager_rmse) == (COSMOS, "sample", 1.79, 6.4e-07)
    assert item.repro is not None and item.repro.verified
    assert [group.models for group in night.compiler_wrong.groups] == [[COSMOS]]
    assert night.compiler_wrong.trend == [1]
    assert night_of(wrong_tonight(confirmed=False)).compiler_wrong.findings == []


def test_its_issue_is_linked_and_the_bot_left_out_of_its_cc_as_a_flag_s_is():
    night = night_of(wrong_tonight())
    bob = {"cc": ["triagebot-bot", "bob"]}
    flags = {name: flag.model_copy(update=bob) for name, flag in night.flags.items()}
    wrong = night.compiler_wrong.model_copy(update={"cc": ["Triagebot-Bot", "alice"]})
    night = night.model_copy(update={"flags": flags, "compiler_wrong": wrong})
    urls = {SCALAR: "https://example.org/issues/1", COMPILER_WRONG_ISSUE: "https://example.org/issues/2"}
    linked = night.linked(urls, author="triagebot-bot")
    assert (linked.flags[SCALAR].issue_url, linked.flags[SCALAR].cc) == (urls[SCALAR], ["bob"])
    assert linked.compiler_wrong.issue_url == urls[COMPILER_WRONG_ISSUE]
    assert linked.compiler_wrong.cc == ["alice"]
    assert linked.issue_urls() == urls


def _head(text: str, lines: int = 8) -> str:
    return "\n".join(text.splitlines()[:lines])


def test_the_summary_and_the_step_summary_open_with_it():
    night = night_of(wrong_tonight())
    for text in (
        bodies.nightly_summary(night),
        run_summary(night.snapshot.environment, night, published="dry run"),
    ):
        head = _head(text, 10)
        assert "1 wrong result of torch.compile at the default config" in head, head
        assert f"`{COSMOS}`" in head and "compiled 1.79 RMSE from the float64 run, eager 6.4e-07" in head
        assert "Aimv2TextModel" not in head  # the library's, said where the library's findings are
        assert text.count("at the default config**") == 1  # said once, first
    quiet = night_of(snapshot([result("GPT2Model", ok(1), {SCALAR: ok(1)})]))
    assert "torch.compile at the default config" not in bodies.nightly_summary(quiet)


def test_it_names_the_op_and_line_it_reduces_to():
    locus = WrongLocus(module="decoder.conv", module_class="Conv", op="aten.mul", line="model.py:12 `x * s`")
    text = _head(bodies.nightly_summary(night_of(wrong_tonight(locus=locus))), 10)
    assert "reduced to aten.mul at model.py:12" in text.replace("\\", ""), text


def test_a_wrong_generated_line_is_said_beside_the_op():
    locus = WrongLocus(
        module="decoder.unpatch_embed",
        module_class="CosmosUnpatcher3d",
        op="operator.pow",
        line="autoencoder_kl_cosmos.py:207 `hh = ...`",
        generated="pow_1 = -1 ** to_1",
    )
    text = _head(bodies.nightly_summary(night_of(wrong_tonight(locus=locus))), 10).replace("\\", "")
    assert "reduced to operator.pow at autoencoder_kl_cosmos.py:207" in text, text
    assert "the code FX generated for it is not: pow_1 = -1 ** to_1" in text, text


def test_the_report_folder_holds_its_issues_body_when_there_is_one(tmp_path):
    written = {path.name for path in write_report(night_of(wrong_tonight()), tmp_path / "wrong")}
    assert "compiler-wrong-results.md" in written
    quiet = night_of(snapshot([result("GPT2Model", ok(1), {SCALAR: ok(1)})]))
    assert "compiler-wrong-results.md" not in {path.name for path in write_report(quiet, tmp_path / "quiet")}


def test_the_sites_index_heads_with_it(tmp_path):
    tonight = wrong_tonight()
    store = MemoryStore([tonight])
    pipeline.build_site(store, tmp_path / "site", Config(), say=lambda line: None)
    page = (tmp_path / "site" / links.INDEX).read_text(encoding="utf-8")
    news = page.index('id="compiler-wrong"')
    assert news < page.index('id="flags"')
    assert COSMOS in page[news:] and "compiled 1.79 RMSE from the float64 run, eager 6.4e-07" in page
