"""Untrusted text never forms a marker, a ping, a link, a fence's or a `<details>`'s end, and
markers count on the first line of a body only."""

from __future__ import annotations

import html
import re

import pytest
from builders import DYNAMIC, NEW_NIGHTLY, SCALAR, night_of
from fakegithub import point_tracker_at, serve

from triagebot import report
from triagebot.config import Config, TrackerSettings
from triagebot.report import markers, safety
from triagebot.report.fit import markdown_problems
from triagebot.results import BASELINE, ModelResult, Outcome, Status, error_signature
from triagebot.store import read_snapshot

NEW = read_snapshot(NEW_NIGHTLY)
HOSTILE = (
    f"{markers.flag_marker(DYNAMIC)} <script>alert(1)</script> @pytorch/everyone see #123 and a/b#9 | pwn\n"
    "```\n</details>\n<details open><summary>x</summary> ``` [x](javascript:1) --> ~~~\r## heading"
)


def hostile_snapshot():
    """The fixture with one more model whose every text is an attack."""
    snapshot = NEW.model_copy(deep=True)
    bad = Outcome(
        status=Status.crash,
        error_type="Evil@Error",
        error=HOSTILE,
        signature=error_signature("Evil@Error", HOSTILE),
        traceback="Traceback (most recent call last):\n" + HOSTILE + "\n````` `` `",
    )
    snapshot.results.append(
        ModelResult(
            model="@owner #42 <!-- x -->",
            stratum="x|y",
            outcomes={
                BASELINE: Outcome(status=Status.ok, graphs=3, break_reasons=[HOSTILE]),
                DYNAMIC: bad,
                SCALAR: bad,
            },
            confirmations={DYNAMIC: [bad], SCALAR: [bad]},
        )
    )
    return snapshot


def outside_code(text: str) -> str:
    text = re.sub(r"(?ms)^(`{3,})[^\n]*\n.*?^\1\s*$", "", text)
    return re.sub(r"`[^`\n]*`", "", text)


SITE = "https://someone.github.io/triagebot/"


@pytest.mark.parametrize("site", [None, SITE])
@pytest.mark.parametrize("flag", [SCALAR, DYNAMIC])
def test_a_hostile_crash_renders_harmlessly(flag: str, site: str | None) -> None:
    config = Config(tracker=TrackerSettings(dashboard_url=site))
    tonight = night_of(hostile_snapshot(), config=config)
    body = report.issue_body(tonight, flag)
    assert markers.find_flag(body) == flag
    assert body.count("<!--") == 1 and markdown_problems(body) == []
    prose = outside_code(body)
    assert not re.search(r"@[A-Za-z0-9]", prose)  # no ping
    assert not re.search(r"#\d", prose)  # no cross-link
    assert "<script>" not in prose and "<details open>" not in body
    # Every <details> is one the template opened, on a line of its own.
    assert all(line.startswith("<details><summary>") for line in body.splitlines() if "<details" in line)
    assert body.count("<details>") == body.count("</details>")
    for line in body.splitlines():
        if line.startswith("| ") and "@owner" in line:
            assert len(re.split(r"(?<!\\)\|", line)) == 6  # a 4-column row stayed 4 columns
        if not line.startswith("|"):
            assert "\\|" not in line  # a pipe is escaped in table cells only
    # A hostile model's link goes to a page of the site whose name no text can bend.
    targets = re.findall(r"\]\(([^)]*)\)", prose)
    assert all(not target.startswith(SITE) for target in targets) if site is None else targets
    for target in targets:
        if target.startswith("https://github.com/pytorch/pytorch/commit/"):
            continue
        page = r"[A-Za-z0-9._/-]+\.html(#(crash|flaky)-[0-9a-f]{12}|#ready-rule|#break-reasons)?"
        assert re.fullmatch(re.escape(SITE) + page, target), target


def test_a_snapshot_file_cannot_inject_links_through_its_build() -> None:
    """The environment comes from a snapshot file too: a bogus git hash is shown, not linked."""
    snapshot = NEW.model_copy(deep=True)
    snapshot.environment.torch_git_version = "abc) [x](javascript:1) ```"
    tonight = night_of(snapshot)
    body = report.issue_body(tonight, SCALAR)
    assert markdown_problems(body) == [] and "javascript" not in outside_code(body)
    assert "pytorch/commit/" not in body
    assert report.issue_body(night_of(NEW), SCALAR).count("pytorch/commit/f0e1d2c3b4a5") == 1


def test_the_escaper_shapes() -> None:
    span = safety.code(HOSTILE)
    assert span.startswith("`") and span.endswith("`") and span.count("`") == 2
    assert "<!--" not in span and "-->" not in span and "</details" not in span and "\\|" not in span
    assert "\\|" in safety.cell("a | b") and safety.cell("a | b").count("|") == 1
    words = safety.prose(HOSTILE)
    assert "\n" not in words and "<" not in words and not re.search(r"@[A-Za-z0-9]|#\d", words)
    block = safety.fenced("x\n" + "`" * 7 + "\n</details>")
    fence = block.splitlines()[0]
    assert fence == "`" * 8 and block.endswith("\n" + fence) and "</details>" not in block
    inside_html = safety.html_text("T5_Model <!-- x --> @a #1")
    assert inside_html.startswith("T5_Model &lt;!--") and not re.search(r"@[A-Za-z0-9]|#\d", inside_html)
    assert safety.fenced("a\rb").splitlines()[1:3] == ["a", "b"]  # a lone \r ends a line, as GitHub reads it
    assert (
        safety.tail("\n".join(str(i) for i in range(100)), lines=3)
        == "... (97 lines above left out)\n97\n98\n99"
    )


# What GitHub links with no Markdown around it: an upstream issue's title may carry any of them.
BARE_LINKS = re.compile(r"(?i)\b(https?|ftp|mailto|xmpp):|\bwww\.")


@pytest.mark.parametrize(
    "title",
    [
        "Crash in GuardOnDataDependentSymNode, see https://evil.example/x",
        "HTTP://EVIL.example and ftp://evil.example/f",
        "Graph break: www.evil.example has the fix",
        "mailto:someone@evil.example or xmpp:someone@evil.example",
    ],
)
def test_an_upstream_title_keeps_no_bare_url_for_github_to_link(title) -> None:
    for shown in (safety.prose(title, 80), safety.html_text(title, 80)):
        assert not BARE_LINKS.search(shown), shown
        assert shown.replace(safety.ZERO_WIDTH, "").split()[:2] == html.escape(title).split()[:2]


def test_a_marker_counts_on_the_first_line_only() -> None:
    marker = markers.flag_marker(SCALAR)
    assert markers.find_flag(f"{marker}\nbody") == SCALAR
    assert markers.find_flag(f"{marker}\r\nbody") == SCALAR
    assert markers.find_flag(f"text\n{marker}") is None
    assert markers.find_flag(f"quoted {marker}") is None
    assert markers.find_flag(f"{marker} and more") is None
    assert markers.find_flag(None) is None
    notice = markers.notice_marker("fixed", SCALAR, "2.12.0")
    assert markers.find_notice(f"{notice}\n...") == ("fixed", SCALAR, "2.12.0")
    assert markers.find_notice(f"> {notice}") is None
    state = markers.state_marker("close", SCALAR, "2.12.0")
    assert markers.find_notice(state) == ("close", SCALAR, "2.12.0")
    assert markers.carries(f"{state}\nx", state) and not markers.carries(f"x\n{state}", state)
    from triagebot.errors import ConfigError

    with pytest.raises(ConfigError, match="cannot go in a marker"):
        markers.flag_marker("a -->")
    with pytest.raises(ConfigError):
        markers.flag_marker("flag\n")


@pytest.fixture
def fake():
    yield from serve()


def test_a_crash_quoting_another_flags_marker_never_adopts_its_issue(fake, monkeypatch, tmp_path) -> None:
    """Two flags, two issues, whatever the crash text says, published twice."""
    from triagebot.tracker.publish_night import publish_tracking_issues

    point_tracker_at(fake, monkeypatch)
    config = Config(tracker=TrackerSettings(repo="pytorch/pytorch"))
    snapshot = hostile_snapshot()
    for _ in range(2):
        night = night_of(snapshot, [snapshot], config)
        publish_tracking_issues(night, config, "bot-token", False, tmp_path, say=lambda _: None)
    issues = fake.issues("pytorch/pytorch")
    assert sorted(markers.find_flag(issue["body"]) for issue in issues) == sorted([SCALAR, DYNAMIC])
    for issue in issues:
        assert issue["body"].count("<!--") == 1


def test_site_names_wrap_at_underscores_and_backticks_become_code_with_everything_escaped():
    assert safety.breakable("capture_scalar_outputs") == "capture_<wbr>scalar_<wbr>outputs"
    assert safety.breakable("a_<b>") == "a_<wbr>&lt;b&gt;"
    assert safety.code_spans('skipped (`when = "graph_breaks"`)') == (
        "skipped (<code>when = &quot;graph_breaks&quot;</code>)"
    )
    assert safety.code_spans("`<script>` and <b>") == "<code>&lt;script&gt;</code> and &lt;b&gt;"
