"""The jinja2 environment every template renders in.

Templates live in `templates/` at the repository root and ship inside the package as
`triagebot/report/templates` (a link to them that setuptools copies as package data).
Untrusted text reaches them only through the escaper's filters (`code`, `cell`, `prose`,
`html_text`, `fenced`, `tail`, `plain`, `commit`, `compare_link`, and `upstream_ref(number,
repo, local)`, the one cross-link to an upstream issue); the others format numbers and words:

- `percent`: 25% or 33.3%, `n/a` for none;
- `plural(count, word, words=None)`: "1 model", "2 models", "1 crash", "3 crashes";
- a night's numbers in `report.words`' words (a global, `words`, and filters): `of(count,
  figures)` "1 of 11 models it could affect (9.1%)", `of_recompiled`, `population`, a crash
  group's `reach` ("also aot_eager") and `checked` (its backends and device), the verdict's
  sentence (`words.verdict_sentence`);
- `names(models, limit, cell=False)`: model names as code spans, the first `limit` of them,
  then "and N more";
- `effect`: an effect in words ("fewer graphs", "untestable (build or eager run failed)");
- `mention`: `@login` for a configured cc entry.

Links into the dashboard site are made with `report.links` (a global, `links`) and nothing
else; `site` is the site's address (`tracker.dashboard_url`), and without one they are no links
at all, only the text:

- `model(name, site, cell=False)`: a model name as a code span, linked to its model page;
- `names(..., site=site)`: the same for each name of a list;
- `linked(text, page, site)`: Markdown `text` linked to `page` of the site (a `links` name);
- `site_url(page, site)`: the address of `page`, or None without a site.
"""

from __future__ import annotations

import json
import pprint
from collections.abc import Callable, Collection, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from triagebot.analysis.ladder import at_baseline_too
from triagebot.report import first_news, links, safety, words
from triagebot.report.words import percent, plural

TEMPLATES = Path(__file__).resolve().parent / "templates"


# What would end a Markdown link's destination or break it; a configured address may hold them.
_HREF_UNSAFE = {" ": "%20", "(": "%28", ")": "%29", "<": "%3C", ">": "%3E", "\n": "%0A"}


def site_url(page: str, site: str | None) -> str | None:
    """The address of `page` (a `links` name) on the site at `site`; None without a site."""
    return links.site_url(site, page)


def linked(text: str, page: str, site: str | None) -> str:
    """Markdown `text` (already escaped) linked to `page` of the site at `site`; the text alone
    without a site."""
    url = site_url(page, site)
    if url is None:
        return text
    return f"[{text}]({''.join(_HREF_UNSAFE.get(char, char) for char in url)})"


SENTINEL = " (sentinel)"  # after a sentinel model's name, wherever it is named


def model(
    name: Any, site: str | None = None, cell: bool = False, sentinels: Collection[str] = frozenset()
) -> str:
    """A model name as a code span (`cell`: for a table), linked to its page on the site, marked
    when it is one of `sentinels` (the test corpus's models built to fail)."""
    text = (safety.cell if cell else safety.code)(name)
    text = linked(text, links.model_page(str(name)), site) if text else text
    return text + SENTINEL if str(name) in sentinels else text


def names(
    models: Sequence[Any],
    limit: int | None = None,
    cell: bool = False,
    site: str | None = None,
    sentinels: Collection[str] = frozenset(),
) -> str:
    """Model names as code spans joined by commas: the first `limit`, then "and N more"; each
    linked to its model page when `site` is given."""
    shown = list(models if limit is None else models[:limit])
    text = ", ".join(model(name, site, cell, sentinels) for name in shown)
    rest = len(models) - len(shown)
    if rest:
        text = f"{text} and {rest} more" if text else plural(rest, "model")
    return text


EFFECT_LABELS = {
    "reduces_graphs": "fewer graphs",
    "no_effect": "no effect",
    "increases_graphs": "more graphs",
    "crashes": "crashes",
    "fixes_crash": "fixes a baseline crash",
    "both_crash": "crashes with and without the flag",
    "untestable": "untestable (build or eager run failed)",
    "timeout": "timed out",
    "signal": "worker died (signal)",
    "flaky": "flaky (crashed once, not counted)",
    "wrong_result": "wrong result",
    "skipped": "skipped (nothing for the flag to act on)",
    "engine_error": "sweep fault (the flag run did not rebuild the model)",
}


def effect(value: Any) -> str:
    """An effect in words, for tables a person reads."""
    if value is None:
        return ""
    return EFFECT_LABELS.get(str(value), str(value))


def _pyblock(value: Any) -> str:
    """A Python literal spread over lines as `pprint` spreads it, keys in their order: a config
    a person reads key by key, and whose reduction shows in the script's length."""
    return pprint.pformat(value, width=100, sort_dicts=False)


def _pyline(value: Any) -> str:
    """Text for a docstring line of a generated script: one line, no quotes that could end it."""
    return safety.one_line(value, 300).replace('"""', "'''").replace("\\", "/")


def _marked(function: Callable[..., str]) -> Callable[..., str]:
    """`model` or `names` as a filter that marks the sentinels of the night it renders (a
    template's `night`), so that no row that names one forgets to say so."""

    @jinja2.pass_context
    def marked(context: jinja2.runtime.Context, value: Any, *args: Any, **kwargs: Any) -> str:
        night = context.get("night")
        sentinels = getattr(night, "sentinels", frozenset())
        return function(value, *args, sentinels=sentinels, **kwargs)

    return marked


@cache
def environment(autoescape: bool = False) -> jinja2.Environment:
    """Markdown templates (`*.md.j2`, `*.py.j2`) render unescaped; HTML (`*.html.j2`) escaped."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=autoescape,
    )
    env.filters.update(
        code=safety.code,
        cell=safety.cell,
        prose=safety.prose,
        html_text=safety.html_text,
        breakable=safety.breakable,
        code_spans=safety.code_spans,
        fenced=safety.fenced,
        tail=safety.tail,
        mention=safety.mention,
        plain=safety.plain,
        commit=safety.commit,
        compare_link=safety.compare_link,
        upstream_ref=safety.issue_reference,
        percent=percent,
        effect=effect,
        plural=plural,
        of=words.of,
        of_recompiled=words.of_recompiled,
        population=words.population,
        skipped_because=words.skipped_because,
        reach=words.reach,
        recurred=words.recurred,
        checked=words.checked,
        answer=words.answer,
        names=_marked(names),
        model=_marked(model),
        linked=linked,
        site_url=site_url,
        pyrepr=repr,
        pyblock=_pyblock,
        pyline=_pyline,
        tojson_compact=lambda value: json.dumps(value, separators=(",", ":"), sort_keys=True),
    )
    env.tests["at_baseline_too"] = at_baseline_too
    env.globals["links"] = links
    env.globals["words"] = words
    env.globals["first_news"] = first_news
    return env


def render(name: str, **context: Any) -> str:
    return environment(name.endswith(".html.j2")).get_template(name).render(**context)
