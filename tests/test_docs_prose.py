"""The front door and the deploy page stay short and plain: the README at most about 250 lines,
and no sentence in either over 40 words (code blocks, tables and HTML comments aside)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PLAIN_PAGES = ["README.md", "docs/deploy.md"]
MOST_WORDS = 40
MOST_README_LINES = 250


def prose_blocks(markdown: str) -> list[str]:
    """The page's paragraphs and list items, each joined into one line: no fenced code, no table
    rows, no HTML comments, a quote's text without its `>`."""
    markdown = re.sub(r"<!--.*?-->", "", markdown, flags=re.S)
    blocks, current, fenced = [], [], False
    for raw in markdown.splitlines():
        line = raw.lstrip(">").strip() if raw.startswith(">") else raw.strip()
        if line.startswith("```"):
            fenced = not fenced
            line = ""
        starts_item = bool(re.match(r"([-*]|\d+\.)\s", line)) or line.startswith("#")
        if fenced or not line or line.startswith("|") or starts_item:
            if current:
                blocks.append(" ".join(current))
            current = (
                []
                if fenced or not line or line.startswith("|")
                else [re.sub(r"^([-*]|\d+\.|#+)\s+", "", line)]
            )
            continue
        current.append(line)
    if current:
        blocks.append(" ".join(current))
    return blocks


def sentences(block: str) -> list[str]:
    """A block's sentences: a link counts as its text, a sentence ends at `.`, `!` or `?` before a space."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", block)
    return [part for part in re.split(r"(?<=[.!?])\s+", text) if part.strip()]


def too_long(markdown: str) -> list[str]:
    return [s for block in prose_blocks(markdown) for s in sentences(block) if len(s.split()) > MOST_WORDS]


@pytest.mark.parametrize("name", PLAIN_PAGES)
def test_no_sentence_is_over_forty_words(name):
    long = too_long((ROOT / name).read_text(encoding="utf-8"))
    assert long == [], f"{name}: {len(long)} sentence(s) over {MOST_WORDS} words, the first: {long[:1]}"


def test_the_checker_finds_a_long_sentence_and_skips_code_and_tables():
    sentence = " ".join(["word"] * (MOST_WORDS + 1)) + "."
    assert too_long(f"Intro.\n\n{sentence[:40]}\n{sentence[40:]}\n") == [sentence]
    assert too_long(f"- {sentence}\n") == [sentence]
    assert too_long(f"> {sentence}\n") == [sentence]
    assert too_long(f"```\n{sentence}\n```\n| {sentence} |\n<!-- {sentence} -->\n") == []
    assert too_long("Short one. " * 30) == []


def test_the_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= MOST_README_LINES
    assert "make run" in readme and "make test" in readme
    assert "(docs/deploy.md)" in readme


def test_the_readme_maps_every_docs_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pages = sorted(path.name for path in (ROOT / "docs").glob("*.md"))
    assert [name for name in pages if f"](docs/{name})" not in readme] == []
