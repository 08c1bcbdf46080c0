"""The dashboard site (triagebot/report/site/): what it writes, from what, under which names.

What a person sees in a browser (sorting, filtering, charts, links from an issue) is
tests/test_site_browser.py; this file checks the files themselves.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Annotated, NamedTuple

import pytest

from tests.sitestore import HOSTILE, HOSTILE_ERROR, THIRD_KEY, make_store, nightlies
from tests.snapshots import DYNAMIC, SCALAR
from triagebot.analysis import CRASH_EFFECTS, classify, diff, history
from triagebot.analysis.compact import (
    RUN_FIELDS,
    Run,
    RunField,
    declared_fields,
    night_data,
    night_script,
    read_night_data,
)
from triagebot.config import Config, pages_url, parse_config, with_site_url
from triagebot.errors import SiteError
from triagebot.report import links, words
from triagebot.results import Effect, Snapshot
from triagebot.store import LocalStore, read_snapshot, write_snapshot

ROOT = Path(__file__).resolve().parent.parent
OLD, NEW, THIRD = (snapshot.key for snapshot in nightlies())


def build_site(store, out, config: Config | None = None, **options):
    """`triagebot site`: the whole site, the newest nightly rendered from its night."""
    from triagebot import pipeline

    say = options.pop("say", lambda line: None)
    return pipeline.build_site(store, out, config or Config(), say=say, **options)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("site")
    build_site(make_store(root / "store"), root / "site")
    return root / "site"


class Page(HTMLParser):
    """The links, ids, scripts and table rows of one page."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()
        self.repeated: set[str] = set()  # ids given to more than one element
        self.scripts: list[str] = []
        self.rows: dict[str, int] = {}  # table id -> rows in its body
        self._table: list[str | None] = []
        self._in_body = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        found = dict(attrs)
        if "id" in found:
            if found["id"] in self.ids:
                self.repeated.add(found["id"])
            self.ids.add(found["id"])
        if tag == "a" and "href" in found:
            self.hrefs.append(found["href"])
        if tag in ("script", "link") and (found.get("src") or found.get("href")):
            self.scripts.append(found.get("src") or found["href"])
        if tag == "table":
            self._table.append(found.get("id"))
        if tag == "tbody":
            self._in_body = True
        if tag == "tr" and self._in_body and self._table and self._table[-1]:
            self.rows[self._table[-1]] = self.rows.get(self._table[-1], 0) + 1

    def handle_endtag(self, tag):
        if tag == "table" and self._table:
            self._table.pop()
        if tag == "tbody":
            self._in_body = False


def page(site: Path, name: str) -> Page:
    return Page((site / name).read_text(encoding="utf-8"))


# --- names ---------------------------------------------------------------------------------------


def test_names_are_plain_where_they_can_be_and_distinct_where_they_cannot():
    assert links.model_page("LlamaForCausalLM") == "models/LlamaForCausalLM.html"
    assert links.flag_page(SCALAR) == f"flags/{SCALAR}.html"
    # A torch version keeps its name but its `+`, which a server may read as a space.
    assert re.fullmatch(r"2\.12\.0\.dev20260408_cu128-[0-9a-f]{8}", links.slug(OLD))
    assert links.compare_page(OLD, NEW) == f"compare/{links.slug(OLD)}...{links.slug(NEW)}.html"
    assert links.night_data(OLD) == f"data/nights/{links.slug(OLD)}.js"
    odd = links.slug(HOSTILE)
    for name in (odd, links.slug(OLD)):
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name)
    assert links.slug(HOSTILE) == odd  # stable
    assert links.slug("a/b") != links.slug("a_b") and links.slug("..") != links.slug(".")
    assert links.slug("../../etc/passwd").startswith("etc_passwd-")


def test_a_crash_anchor_is_a_stable_id_whatever_the_signature():
    anchor = links.crash_anchor(HOSTILE_ERROR)
    assert re.fullmatch(r"crash-[0-9a-f]{12}", anchor)
    assert anchor == links.crash_anchor(HOSTILE_ERROR)
    assert anchor != links.crash_anchor(HOSTILE_ERROR + " ")
    assert links.crash_group(SCALAR, HOSTILE_ERROR) == f"flags/{SCALAR}.html#{anchor}"


def test_relative_links_between_pages():
    assert links.relative("models/A.html", "flags/f.html") == "../models/A.html"
    assert links.relative("flags/f.html#crash-1", "index.html") == "flags/f.html#crash-1"
    assert links.relative("index.html", "compare/a...b.html") == "../index.html"
    assert links.relative("assets/site.js", "models/A.html") == "../assets/site.js"


def test_site_url_joins_the_configured_address_and_a_page():
    page = links.crash_group(SCALAR, "X: y")
    assert links.site_url("https://o.github.io/r/", page) == f"https://o.github.io/r/{page}"
    assert links.site_url("https://o.github.io/r", page) == f"https://o.github.io/r/{page}"
    assert links.site_url("https://h/x/dashboard.html", page) == f"https://h/x/{page}"
    assert links.site_url("https://o.github.io/r/") == "https://o.github.io/r/"
    assert links.site_url(None, page) is None


def test_dashboard_url_defaults_to_the_pages_address_in_actions_only():
    actions = {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "Someone/triagebot"}
    assert pages_url("Someone/triagebot") == "https://someone.github.io/triagebot/"
    assert pages_url("someone/Someone.github.io") == "https://someone.github.io/"
    assert with_site_url(Config(), actions).tracker.dashboard_url == "https://someone.github.io/triagebot/"
    assert with_site_url(Config(), {}).tracker.dashboard_url is None
    assert (
        with_site_url(Config(), {**actions, "GITHUB_REPOSITORY": "not a repo"}).tracker.dashboard_url is None
    )
    configured = parse_config('[tracker]\ndashboard_url = "https://example.org/site/"\n')
    assert with_site_url(configured, actions).tracker.dashboard_url == "https://example.org/site/"
    unpublished = parse_config('[dashboard]\npublish = "none"\n')
    assert with_site_url(unpublished, actions).tracker.dashboard_url is None


def test_dashboard_settings_are_checked_when_read():
    assert Config().dashboard.publish == "pages" and Config().dashboard.branch == "gh-pages"
    assert parse_config('[dashboard]\npublish = "branch"\nbranch = "site"\n').dashboard.branch == "site"
    for bad in ('publish = "netlify"', 'branch = "-x"', 'branch = "a b"', "url = 1"):
        with pytest.raises(Exception, match="dashboard"):
            parse_config(f"[dashboard]\n{bad}\n")


def test_a_diff_from_rows_already_classified_is_the_same_diff():
    """The site passes each nightly's classified rows to the diff instead of classifying twice."""
    for old, new in itertools.pairwise(nightlies()):
        assert diff(old, new, old_rows=classify(old), new_rows=classify(new)) == diff(old, new)
    old, new = nightlies()[0], nightlies()[2]
    assert diff(old, new, old_rows=classify(old), new_rows=classify(new)) == diff(old, new)


def test_each_nightly_keeps_the_corpus_health_the_night_computes():
    """The site's per-nightly data carries the health points of `analysis.health`, the numbers
    the summary and the health issue show: one computation of the corpus's health."""
    from triagebot.analysis.health import ALL, health_points

    snapshot = nightlies()[0]
    points = night_data(snapshot)[0].health
    assert points == health_points(snapshot)
    corpus = points[ALL]
    # Bart cannot be built; Detr's baseline timed out, Whisper's crashed: 7 of 10 compiled.
    assert (corpus.models, corpus.ran_eagerly, corpus.compiled, corpus.one_graph) == (10, 9, 7, 0)
    assert corpus.mean_graphs == round(36 / 7, 2) and corpus.p90_graphs == 12
    assert points["vision"].models == 2 and points["vision"].compiled == 1


def test_a_model_page_run_carries_the_recompiles_of_its_second_shape():
    """The sweep records a second call's recompiles (`Outcome.recompile`); the compact nightly
    keeps them per run, for the model page's column, and leaves None where no second call ran."""
    from triagebot.results import BASELINE, RecompileCheck

    snapshot = nightlies()[0].model_copy(deep=True)
    first = snapshot.results[0]
    first.outcomes[BASELINE].recompile = RecompileCheck(change="sequence 8 -> 12", status="ok", recompiles=2)
    data = night_data(snapshot)[0]
    runs = {row.model: row.runs for row in data.models}
    assert runs[first.model][data.config_index[BASELINE]].recompiles == 2
    others = [run for row in data.models if row.model != first.model for run in row.runs if run is not None]
    assert others and all(run.recompiles is None for run in others)


def test_a_field_of_the_history_declared_without_its_run_field_is_said_at_import():
    assert [field.name for field in RUN_FIELDS] == list(Run._fields)

    class Forgotten(NamedTuple):
        status: Annotated[str, RunField("status", "Status")]
        breaks: int | None = None

    with pytest.raises(TypeError, match=r"Forgotten\.breaks needs one RunField"):
        declared_fields(Forgotten)


def _history_headings(text: str) -> tuple[list[str], list[str]]:
    """A model page's history table: the colspan of each config's group, and the headings under them."""
    head = re.search(r'<table id="history".*?<thead>(.*?)</thead>', text, re.S)
    assert head, "no history table"
    groups = re.findall(r'<th colspan="(\d+)" class="group">', head[1])
    under = re.findall(r"<th>([^<]*)</th>", head[1].split("</tr>")[1])
    return groups, under


def test_a_model_pages_history_has_the_declared_columns_and_an_optional_one_only_where_recorded(
    tmp_path: Path,
):
    """The history's columns are `Run`'s fields with a heading (`RUN_FIELDS`); recompiles, an
    optional one, only on the page of a model some nightly recorded them for, and a change of it
    is a change like any other."""
    from triagebot.results import BASELINE, RecompileCheck

    *earlier, newest = nightlies()
    newest = newest.model_copy(deep=True)
    recorded = newest.results[0]
    recorded.outcomes[BASELINE].recompile = RecompileCheck(
        change="sequence 8 -> 12", status="ok", recompiles=2
    )
    other = next(
        result.model for result in newest.results[1:] if len(result.outcomes) == len(recorded.outcomes)
    )
    store = LocalStore(tmp_path / "store")
    for snapshot in [*earlier, newest]:
        store.put(snapshot)
    build_site(store, tmp_path / "site")

    every = [field.heading for field in RUN_FIELDS if field.heading]
    always = [field.heading for field in RUN_FIELDS if field.heading and not field.optional]
    assert "Recompiles" in every and "Recompiles" not in always
    configs = len(recorded.outcomes)
    text = (tmp_path / "site" / links.model_page(recorded.model)).read_text(encoding="utf-8")
    assert _history_headings(text) == ([str(len(every))] * configs, every * configs)
    assert f"({', '.join(heading.lower() for heading in every)}, error or effect)" in text
    assert f"{BASELINE} recompiles: none → <strong>2</strong>" in text
    text = (tmp_path / "site" / links.model_page(other)).read_text(encoding="utf-8")
    assert _history_headings(text) == ([str(len(always))] * configs, always * configs)
    assert f"({', '.join(heading.lower() for heading in always)}, error or effect)" in text


# --- what the site holds -----------------------------------------------------------------------------


def test_every_page_kind_is_written(site: Path):
    for name in ("index.html", "models.html", "compare.html", ".nojekyll"):
        assert (site / name).is_file(), name
    assert {path.name for path in (site / "flags").iterdir()} == {f"{SCALAR}.html", f"{DYNAMIC}.html"}
    every_model = {result.model for snapshot in nightlies() for result in snapshot.results}
    assert {path.name for path in (site / "models").iterdir()} == {
        Path(links.model_page(name)).name for name in every_model
    }
    assert {path.name for path in (site / "compare").iterdir()} == {
        Path(links.compare_page(OLD, NEW)).name,
        Path(links.compare_page(NEW, THIRD)).name,
    }
    assert {path.name for path in (site / "data" / "nights").iterdir()} == {
        Path(links.night_data(key)).name for key in (OLD, NEW, THIRD)
    }
    for asset in ("site.js", "site.css", "chart.umd.min.js", "chart.js.LICENSE.md"):
        assert (site / "assets" / asset).stat().st_size > 0


def test_every_link_is_relative_and_lands_on_a_written_page_and_anchor(site: Path):
    pages = {path.relative_to(site).as_posix(): page(site, path.relative_to(site).as_posix())
             for path in site.rglob("*.html")}  # fmt: skip
    for name, found in pages.items():
        for reference in found.scripts:
            if reference.startswith("data:"):
                continue
            assert not re.match(r"(?i)^(https?:)?//", reference), (
                f"{name} loads {reference} from another site"
            )
            assert (site / Path(name).parent / reference).resolve().is_file(), f"{name}: {reference}"
        for href in found.hrefs:
            if re.match(r"(?i)^https?://", href):
                assert href.startswith(("https://github.com/pytorch/pytorch/", "https://github.com/")), href
                continue
            assert found.repeated == set(), f"{name}: ids given twice: {found.repeated}"
            target, _, anchor = href.partition("#")
            resolved = (site / Path(name).parent / target).resolve() if target else (site / name)
            assert resolved.is_file(), f"{name} links to a missing page: {href}"
            if anchor:
                key = resolved.relative_to(site.resolve()).as_posix()
                assert anchor in pages[key].ids, f"{name} links to a missing anchor: {href}"


def test_tables_are_rendered_on_the_server(site: Path):
    flag = page(site, links.flag_page(SCALAR))
    latest = nightlies()[-1]
    assert flag.rows["effects"] == sum(SCALAR in result.outcomes for result in latest.results)
    models = page(site, links.MODELS)
    assert models.rows["models"] == len({r.model for s in nightlies() for r in s.results})
    index = page(site, links.INDEX)
    assert index.rows["nightlies"] == 3


def test_untrusted_text_is_shown_as_text(site: Path):
    text = (site / links.flag_page(SCALAR)).read_text(encoding="utf-8")
    assert "<script>alert" not in text and "<img src=x" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text
    model_page = (site / links.model_page(HOSTILE)).read_text(encoding="utf-8")
    assert "<script>alert" not in model_page and "OddModel&lt;/td&gt;&lt;script&gt;" in model_page
    # The charts' data blocks cannot be closed by the text they carry.
    for path in site.rglob("*.html"):
        for block in re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', path.read_text()):
            assert "<" not in block


def test_crash_groups_carry_their_anchor_first_nightly_and_repro(site: Path):
    text = (site / links.flag_page(DYNAMIC)).read_text(encoding="utf-8")
    flag = page(site, links.flag_page(DYNAMIC))
    latest = nightlies()[-1]
    crashed = [row for row in classify(latest) if row.flag == DYNAMIC and row.effect in CRASH_EFFECTS]
    grouped = [row for row in crashed if row.model not in latest.sentinels]
    assert grouped and len(grouped) < len(crashed)
    for row in grouped:
        assert links.crash_anchor(row.signature, confirmed=row.effect != Effect.flaky) in flag.ids
    # A sentinel's crash is in no group of the flag's: it is on the sentinels' line alone.
    [sentinel] = [row for row in crashed if row.model in latest.sentinels]
    assert links.crash_anchor(sentinel.signature) not in flag.ids
    assert "First seen" in text and OLD in text


def test_a_flaky_group_and_a_confirmed_group_of_one_signature_have_their_own_anchors(tmp_path: Path):
    """On the second fixture nightly one signature is both a confirmed group (T5) and a flaky one
    (Mistral) under capture_dynamic_output_shape_ops: each has its own section and link."""
    from triagebot.analysis import night

    store = LocalStore(tmp_path / "store")
    for snapshot in nightlies()[:2]:
        store.put(snapshot)
    stats = night(nightlies()[1]).flags[DYNAMIC].stats
    shared = {g.signature for g in stats.crash_groups} & {g.signature for g in stats.flaky_groups}
    assert shared
    build_site(store, tmp_path / "site")
    flag = page(tmp_path / "site", links.flag_page(DYNAMIC))
    assert flag.repeated == set()
    for signature in shared:
        anchors = {links.crash_anchor(signature), links.crash_anchor(signature, confirmed=False)}
        assert len(anchors) == 2 and anchors <= flag.ids
        assert {f"#{anchor}" for anchor in anchors} <= set(flag.hrefs)


def test_a_model_page_says_when_it_first_changed(site: Path):
    text = (site / links.model_page("MistralForCausalLM")).read_text(encoding="utf-8")
    first = re.search(r'<section class="first-change" id="first-change">(.*?)</section>', text, re.S)
    assert first and THIRD in first[1] and "baseline graphs: 4 → <strong>3</strong>" in first[1]
    unchanged = (site / links.model_page("WhisperModel")).read_text(encoding="utf-8")
    assert "Nothing changed across the 3 nightlies" in unchanged


def test_the_compare_pages_hold_the_diff_and_its_commit_range(site: Path):
    text = (site / links.compare_page(NEW, THIRD)).read_text(encoding="utf-8")
    old_git, new_git = (s.environment.torch_git_version for s in nightlies()[1:])
    assert f"https://github.com/pytorch/pytorch/compare/{old_git}...{new_git}" in text
    fixed = re.search(rf'id="{DYNAMIC}-fixed".*?</table>', text, re.S)
    assert fixed and "T5ForConditionalGeneration" in fixed[0]


def test_a_cuda_build_swept_on_the_cpu_says_so_on_its_pages(tmp_path: Path):
    store = LocalStore(tmp_path / "store")
    *earlier, newest = nightlies()
    on_the_cpu = newest.environment.model_copy(
        update={"device": "cpu", "gpu_name": None, "cuda_version": "13.0"}
    )
    for snapshot in [*earlier, newest.model_copy(update={"environment": on_the_cpu})]:
        store.put(snapshot)
    build_site(store, tmp_path / "site")
    said = "cpu (torch built for CUDA 13.0)"
    assert f" on {said},\n" in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    flag_page = (tmp_path / "site" / links.flag_page(DYNAMIC)).read_text(encoding="utf-8")
    assert "Measured on the CPU only, with torch built for CUDA 13.0: nothing here ran on a GPU" in flag_page
    assert f"GPT2LMHeadModel on {said}: counting backend: crashed" in flag_page  # where it lives


def test_the_ladder_sentence_names_the_bare_device_whatever_the_build(tmp_path: Path):
    # The ladder's rungs depend on the device alone (Inductor compiles C++ on the CPU).
    smoke = read_snapshot(ROOT / "tests" / "data" / "smoke-2.13.0+cpu.json")
    cuda_wheel = smoke.environment.model_copy(update={"cuda_version": "13.0"})
    store = LocalStore(tmp_path / "store")
    store.put(smoke.model_copy(update={"environment": cuda_wheel}))
    build_site(store, tmp_path / "site")
    flag_page = (tmp_path / "site" / links.flag_page(SCALAR)).read_text(encoding="utf-8")
    assert f"climbed the backend ladder under the flag on cpu ({' → '.join(smoke.ladder)})." in flag_page


# --- building again, and from what ---------------------------------------------------------------


def test_a_build_into_the_same_folder_reads_only_what_changed(tmp_path: Path):
    store = make_store(tmp_path / "store")
    first = build_site(store, tmp_path / "site")
    assert (first.read, first.nights) == (3, 3)
    again = build_site(store, tmp_path / "site")
    assert again.read == 1 and again.pages == first.pages  # the newest, for its night
    # A rerun of the middle nightly: it and the one diffed against it are read again.
    rerun = nightlies()[1]
    rerun.results = [r for r in rerun.results if r.model != "GPT2LMHeadModel"]
    write_snapshot(rerun, store.file(rerun.key))
    changed = build_site(store, tmp_path / "site")
    assert changed.read == 2
    data = read_night_data(tmp_path / "site" / links.night_data(THIRD))
    assert data is not None and data.diff is not None and "GPT2LMHeadModel" in data.diff.models_added


def test_worker_processes_build_the_same_site(tmp_path: Path, monkeypatch):
    store = make_store(tmp_path / "store")
    build_site(store, tmp_path / "serial", readers=1)
    monkeypatch.setattr(history, "PARALLEL_FROM", 1)
    said: list[str] = []
    parallel = build_site(store, tmp_path / "parallel", readers=2, say=said.append)
    assert parallel.read == 3 and said == ["reading 3 of 3 stored nightlies"]  # no fallback
    for name in [links.night_data(key) for key in (OLD, NEW, THIRD)] + [links.INDEX, links.flag_page(SCALAR)]:
        assert (tmp_path / "parallel" / name).read_bytes() == (tmp_path / "serial" / name).read_bytes(), name


def test_pages_of_models_that_left_the_store_are_removed(tmp_path: Path):
    store = make_store(tmp_path / "store")
    build_site(store, tmp_path / "site")
    assert (tmp_path / "site" / links.model_page(HOSTILE)).exists()
    store.file(THIRD).unlink()
    build_site(store, tmp_path / "site")
    assert not (tmp_path / "site" / links.model_page(HOSTILE)).exists()
    assert not (tmp_path / "site" / links.night_data(THIRD)).exists()


def test_a_damaged_data_file_is_made_again(tmp_path: Path):
    store = make_store(tmp_path / "store")
    build_site(store, tmp_path / "site")
    (tmp_path / "site" / links.night_data(OLD)).write_text("triagebotNight({);\n", encoding="utf-8")
    assert build_site(store, tmp_path / "site").read == 2  # it and the newest


def test_a_build_in_memory_holds_every_file_a_folder_build_writes(tmp_path: Path):
    from triagebot.analysis.history import read_history
    from triagebot.pipeline import newest_night
    from triagebot.report.site import MemoryWriter, write_site

    store = make_store(tmp_path / "store")
    on_disk = build_site(store, tmp_path / "site")
    stored = read_history(store)
    memory = MemoryWriter()
    silent = Config().tracker.stale_after_days  # what build_site reads from the configuration
    in_memory = write_site(stored, newest_night(store, Config(), stored), memory, silent_after_days=silent)
    files = {
        path.relative_to(tmp_path / "site").as_posix(): path.read_bytes()
        for path in (tmp_path / "site").rglob("*")
        if path.is_file()
    }
    held = {path: text.encode() if isinstance(text, str) else text for path, text in memory.files.items()}
    assert held == files
    assert (in_memory.out, in_memory.index, in_memory.pages) == (None, None, on_disk.pages)


def test_a_folder_that_holds_something_else_is_never_emptied(tmp_path: Path):
    store = make_store(tmp_path / "store")
    (tmp_path / "work" / "models").mkdir(parents=True)
    (tmp_path / "work" / "models" / "weights.bin").write_bytes(b"keep")
    with pytest.raises(SiteError, match="holds no site built by triagebot"):
        build_site(store, tmp_path / "work")
    assert (tmp_path / "work" / "models" / "weights.bin").read_bytes() == b"keep"
    build_site(store, tmp_path / "empty")  # a new folder, and a folder built before, are fine
    build_site(store, tmp_path / "empty")


def test_a_place_the_site_cannot_be_written_is_one_clear_error(tmp_path: Path):
    make_store(tmp_path / "store")
    (tmp_path / "a-file").write_text("not a folder")
    done = run_cli("site", "--store", "store", "--out", "a-file/site", "--readers", "1", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("triagebot: error: a-file/site: cannot write the site there")
    assert len(done.stderr.strip().splitlines()) == 1


def test_an_empty_store_is_one_clear_error(tmp_path: Path):
    with pytest.raises(SiteError, match="no snapshot in the store"):
        build_site(LocalStore(tmp_path / "none"), tmp_path / "site")


def run_cli(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "triagebot", *arguments]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


def test_the_site_command_builds_and_says_where(tmp_path: Path):
    make_store(tmp_path / "store")
    done = run_cli("site", "--store", "store", "--out", "out", "--jobs", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"site: 3 nightlies (3 read), {len(list((tmp_path / 'out').rglob('*.html')))} pages" in done.stdout
    assert (tmp_path / "out" / "index.html").is_file()
    empty = run_cli("site", "--store", "nothing", "--out", "out", cwd=tmp_path)
    assert empty.returncode == 2
    assert empty.stderr.strip().splitlines() == [
        "triagebot: error: no snapshot in the store at nothing: nothing to build a site from"
    ]


def test_the_site_command_links_the_tracking_issues_the_store_remembers(tmp_path: Path):
    from triagebot.tracker.memory import IssueMemory

    store = make_store(tmp_path / "store")
    memory = IssueMemory.load(store, "someone/triagebot")
    memory.remember(SCALAR, 7)
    memory.save(store)
    build_site(store, tmp_path / "site", parse_config('[tracker]\nrepo = "someone/triagebot"\n'))
    issue = "https://github.com/someone/triagebot/issues/7"
    assert issue in page(tmp_path / "site", links.flag_page(SCALAR)).hrefs
    assert issue in page(tmp_path / "site", links.INDEX).hrefs
    assert not any("/issues/" in href for href in page(tmp_path / "site", links.flag_page(DYNAMIC)).hrefs)


def test_the_vendored_chart_library_is_the_release_its_readme_names():
    vendor = ROOT / "triagebot" / "report" / "vendor"
    version = re.search(r"Chart\.js (\d+\.\d+\.\d+)", (vendor / "README.md").read_text())[1]
    assert f"Chart.js v{version}" in (vendor / "chart.umd.min.js").read_text(encoding="utf-8")[:200]
    assert "MIT License" in (vendor / "chart.js.LICENSE.md").read_text(encoding="utf-8")


def test_run_builds_the_site_after_publishing_and_names_it_for_the_workflow(tmp_path: Path, monkeypatch):
    from tests.test_run import Stages
    from triagebot.pipeline import RunOptions, SiteStage, run

    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "github-output"))
    store = make_store(tmp_path / "store")
    latest = nightlies()[-1].model_copy(update={"key": "2.12.0.dev20260411+cu128"})
    latest.environment = latest.environment.model_copy(update={"torch_git_version": "f" * 40})
    stages = Stages(latest)
    config = parse_config('[dashboard]\npublish = "branch"\nbranch = "site"\n')
    report = run(
        config,
        RunOptions(out=tmp_path / "night"),
        store=store,
        build=latest.environment,
        say=lambda line: None,
        site=SiteStage(),
        **stages.stages(),
    )
    assert report.site_dir == tmp_path / "night" / "site"
    assert (report.site_dir / links.model_page("LlamaForCausalLM")).is_file()
    assert f"site: {report.site_dir / 'index.html'}" in report.lines
    outputs = dict(line.split("=", 1) for line in (tmp_path / "github-output").read_text().splitlines())
    assert outputs["site"] == str(report.site_dir)
    assert (outputs["site_publish"], outputs["site_branch"]) == ("branch", "site")
    data = read_night_data(report.site_dir / links.night_data(latest.key))
    assert data is not None and data.previous == THIRD_KEY
    # The flag pages are the night as published: they link its tracking issue.
    assert "https://example.org/issues/1" in page(report.site_dir, links.flag_page(SCALAR)).hrefs


class Counted:
    """Every classification (by snapshot key) and every diff (by pair) made while it is installed."""

    def __init__(self, monkeypatch) -> None:
        import sys

        self.classified: list[str] = []
        self.diffed: list[tuple[str, str]] = []
        self.effects_in_diffs = 0
        names = ("analysis.night_analysis", "analysis.stats", "analysis.compact")
        modules = {name: sys.modules[f"triagebot.{name}"] for name in names}
        for module in modules.values():
            if hasattr(module, "classify"):
                monkeypatch.setattr(module, "classify", self.classify(module.classify))
            if hasattr(module, "diff"):
                monkeypatch.setattr(module, "diff", self.diff(module.diff))
        diff_module = sys.modules["triagebot.analysis.diff"]
        real_effect = diff_module.model_effect

        def model_effect(result, flag):
            self.effects_in_diffs += 1
            return real_effect(result, flag)

        monkeypatch.setattr(diff_module, "model_effect", model_effect)

    def classify(self, real):
        def counting(snapshot):
            self.classified.append(snapshot.key)
            return real(snapshot)

        return counting

    def diff(self, real):
        def counting(old, new, **rows):
            self.diffed.append((old.key, new.key))
            return real(old, new, **rows)

        return counting


def test_run_classifies_and_diffs_each_stored_nightly_once(tmp_path: Path, monkeypatch):
    """The night reads its history from the site's data and its previous nightly from the site's
    last read; the site renders the newest nightly from the night: nothing is done twice."""
    from tests.test_run import Stages
    from triagebot.pipeline import RunOptions, SiteStage, run

    store = make_store(tmp_path / "store")
    latest = nightlies()[-1].model_copy(update={"key": "2.12.0.dev20260411+cu128"})
    latest.environment = latest.environment.model_copy(update={"torch_git_version": "f" * 40})
    counted = Counted(monkeypatch)
    run(
        Config(),
        RunOptions(out=tmp_path / "night"),
        store=store,
        build=latest.environment,
        say=lambda line: None,
        site=SiteStage(readers=1),
        **Stages(latest).stages(),
    )
    keys = [OLD, NEW, THIRD, latest.key]
    assert sorted(counted.classified) == sorted(keys)
    assert counted.diffed == list(itertools.pairwise(keys))
    assert counted.effects_in_diffs == 0  # every diff reads rows already made
    data = read_night_data(tmp_path / "night" / "site" / links.night_data(latest.key))
    assert data is not None and data.previous == THIRD and data.diff is not None


def test_the_site_command_classifies_and_diffs_each_stored_nightly_once(tmp_path: Path, monkeypatch):
    store = make_store(tmp_path / "store")
    counted = Counted(monkeypatch)
    build_site(store, tmp_path / "site")
    assert sorted(counted.classified) == sorted([OLD, NEW, THIRD])
    assert counted.diffed == [(OLD, NEW), (NEW, THIRD)] and counted.effects_in_diffs == 0
    counted.classified.clear()
    build_site(store, tmp_path / "site")  # again: the earlier nightlies come from their data files
    assert sorted(counted.classified) == sorted([NEW, THIRD])  # the newest, and what it is diffed against


def test_the_newest_nightlys_data_from_its_night_is_the_data_its_snapshot_gives():
    """The data file of the newest nightly, made from its night, is what a later build makes of
    the same nightly from its snapshot, so a build reads it back as it would any other."""
    from triagebot.analysis import night
    from triagebot.analysis.compact import newest_data

    old, new = nightlies()[1:]
    from_snapshot, _ = night_data(new, old, source="b", previous_source="a")
    from_night = newest_data(night(new, [old], old), source="b", previous_source="a")
    assert from_night.model_dump() == from_snapshot.model_dump()
    assert night_script(from_night) == night_script(from_snapshot)


@pytest.mark.parametrize("required", [False, True])
def test_without_a_browser_the_browser_test_says_why(tmp_path: Path, required: bool):
    """Skipped with the reason on a machine without Chromium; failed where it must run (.ci/run)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("TRIAGEBOT_")}
    env["TRIAGEBOT_CHROMIUM"] = str(tmp_path / "no-chromium")
    if required:
        env["TRIAGEBOT_REQUIRE_BROWSER"] = "1"
    test = "tests/test_site_browser.py::test_tables_read_without_javascript"
    command = [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", test]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    reason = f"the dashboard's browser test cannot run: {tmp_path / 'no-chromium'} does not exist"
    assert reason in done.stdout, done.stdout[-2000:]
    assert "apt-get install chromium" in done.stdout
    assert done.returncode == (1 if required else 0), done.stdout[-2000:]


# --- a first night, read as a person reads it ----------------------------------------------------


class Prose(HTMLParser):
    """The text a page shows outside code, scripts and a select's options, and its charts' data."""

    CODE = ("code", "pre", "script", "option", "style")

    def __init__(self, text: str) -> None:
        super().__init__()
        self.words: list[str] = []
        self.charts: list[dict] = []
        self._inside: list[str] = []
        self._chart = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag in self.CODE:
            self._inside.append(tag)
            self._chart = tag == "script" and (dict(attrs).get("id") or "").startswith("data-")

    def handle_endtag(self, tag):
        if self._inside and self._inside[-1] == tag:
            self._inside.pop()
            self._chart = False

    def handle_data(self, data):
        if self._chart:
            self.charts.append(json.loads(data))
        elif not self._inside:
            self.words.append(data)

    @property
    def text(self) -> str:
        return " ".join(" ".join(self.words).split())


@pytest.fixture(scope="module")
def first_night(tmp_path_factory) -> Path:
    """The site of a store holding one nightly: the smoke night of a fresh clone."""
    root = tmp_path_factory.mktemp("first-night")
    store = LocalStore(root / "store")
    store.put(Snapshot.model_validate_json((ROOT / "tests/data/smoke-2.13.0+cpu.json").read_text()))
    build_site(store, root / "site")
    return root / "site"


def test_a_first_night_draws_no_chart_of_one_point_and_says_why(first_night: Path, site: Path):
    for path in first_night.rglob("*.html"):  # a distribution within the night (bars) is not across nightlies
        charts = Prose(path.read_text(encoding="utf-8")).charts
        assert [chart for chart in charts if chart["type"] != "bar"] == [], path.name
    assert "One nightly so far: the charts across nightlies start with the second." in (
        Prose((first_night / links.INDEX).read_text(encoding="utf-8")).text
    )
    charts = [
        chart for path in site.rglob("*.html") for chart in Prose(path.read_text(encoding="utf-8")).charts
    ]
    assert charts and all(len(chart["labels"]) >= 2 for chart in charts)


@pytest.mark.parametrize("which", ["first_night", "site"])
def test_pages_say_words_not_markdown_or_enum_names(which: str, request):
    built = request.getfixturevalue(which)
    raw = [effect.value for effect in Effect if "_" in effect.value]
    for path in built.rglob("*.html"):
        text = Prose(path.read_text(encoding="utf-8")).text
        assert "`" not in text, f"{path.name}: {text[text.index('`') - 60 : text.index('`') + 60]}"
        assert not [name for name in raw if re.search(rf"\b{name}\b", text)], path.name
        assert "Crashes per model helped" not in text, path.name  # the figure has one name
    if which == "first_night":  # the smoke night skips runs and helps models
        html = (built / links.flag_page(SCALAR)).read_text(encoding="utf-8")
        assert "(<code>when = &quot;named_in_breaks&quot;</code>)" in html
        assert (
            f"{words.CRASH_TO_BENEFIT}: 0.17 (1 crash for 6 models helped)" in Prose(html).text
        )  # no sentinel
