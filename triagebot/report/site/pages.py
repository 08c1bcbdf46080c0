"""The dashboard's pages, rendered from templates/site/ and handed to the site's writer.

Every page gets `link` (relative links from itself), `links` (the names) and what `Pages` holds
for all of them (the latest nightly, every nightly, the newest night's flags). The newest
nightly's pages read its `Night`; the index, the model pages and the compare pages read every
stored nightly's `NightData` (`data` derives what they show across nightlies, `charts` their
charts).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from triagebot.analysis.compact import ModelNight, NightData, Run
from triagebot.analysis.diff import COMPARE_URL, TRANSFORMERS_COMPARE
from triagebot.analysis.effects import RAN_EFFECTS
from triagebot.report import links
from triagebot.report.render import EFFECT_LABELS, environment
from triagebot.report.site.charts import compile_chart, flag_chart, index_charts, model_charts
from triagebot.report.site.data import (
    Groups,
    ModelNightRow,
    break_reason_changes,
    crash_group_links,
    history_columns,
    model_row,
    model_spans,
    run_columns,
)
from triagebot.report.site.writer import SiteWriter
from triagebot.results import BASELINE, Bisection, Effect, FlagNight, LibraryFinding, ModelSpec, Night


class Pages:
    """Renders templates/site/* to the writer, counting the pages written."""

    def __init__(self, writer: SiteWriter, common: dict[str, Any]) -> None:
        self.writer = writer
        self.common = common
        self.written = 0
        self.env = environment(True)
        self._templates: dict[str, Any] = {}

    def write(self, page: str, template: str, **context: Any) -> str:
        compiled = self._templates.get(template) or self.env.get_template(f"site/{template}")
        self._templates[template] = compiled

        def link(target: str) -> str:
            return links.relative(target, page)

        self.writer.write(page, compiled.render(**self.common, **context, page=page, link=link, links=links))
        self.written += 1
        return page


def write_pages(
    pages: Pages,
    nights: list[NightData],
    night: Night,
    histories: dict[str, list[ModelNightRow]],
    specs: dict[str, ModelSpec],
) -> str:
    """Every page of the site, from every nightly's data (`nights`, oldest first, the newest
    made from `night`) and the newest night; returns the index's path."""
    index = _index(pages, nights, night)
    for flag, view in night.flags.items():
        _flag_page(pages, night, flag, view)
    _model_pages(pages, nights[-1], night, histories, specs)
    _models_page(pages, nights[-1], night, histories)
    for old, new in itertools.pairwise(nights):
        pages.write(
            links.compare_page(old.key, new.key), "compare.html.j2", old=old, new=new, change=new.diff
        )
    _compare_view(pages, nights, histories)
    return index


def _index(pages: Pages, nights: list[NightData], night: Night) -> str:
    every_flag = list(dict.fromkeys(flag for nightly in nights for flag in nightly.flags))
    return pages.write(
        links.INDEX,
        "index.html.j2",
        flags=night.flags,
        every_flag=every_flag,
        charts=index_charts(nights, every_flag),
        health=night.health,
        compiler_wrong=night.compiler_wrong,
        reasons=break_reason_changes(nights[-1], nights[-2] if len(nights) > 1 else None),
    )


def _flag_page(pages: Pages, night: Night, flag: str, view: FlagNight) -> None:
    groups = view.stats.crash_groups + view.stats.wrong_result_groups + view.stats.flaky_groups
    pages.write(
        links.flag_page(flag),
        "flag.html.j2",
        view=view,
        night=night,
        repros={
            repro.signature: repro
            for repro in night.snapshot.reproductions
            if repro.flag == flag and repro.backend is None
        },
        chart=flag_chart(view),
        compile_chart=compile_chart(cost) if (cost := view.figures.compile_time) and cost.models else None,
        strata=sorted({row.stratum for row in view.effects}),
        effects=[effect.value for effect in Effect if view.stats.counts.get(effect)],
        signatures=sorted({row.signature for row in view.effects if row.signature}),
        grouped={model: group for group in groups for model in group.models},  # the group it is listed in
    )


def _model_pages(
    pages: Pages,
    latest: NightData,
    night: Night,
    histories: dict[str, list[ModelNightRow]],
    specs: dict[str, ModelSpec],
) -> None:
    groups = crash_group_links(night)
    in_latest = {row.model for row in latest.models}
    tonight: dict[str, dict[str, str]] = {}  # model -> flag -> its effect tonight
    for row in night.effects:
        tonight.setdefault(row.model, {})[row.flag] = row.effect.value
    bisected = model_bisections(night)
    findings = {finding.model: finding for finding in night.health.library_findings} if night.health else {}
    for model, rows in sorted(histories.items()):
        newest = rows[-1].night is latest
        mine = bisected.get(model, []) if newest else []
        page_groups = groups if newest else {}
        found = findings.get(model) if newest else None
        _model_page(
            pages, model, rows, page_groups, specs, model in in_latest, tonight.get(model, {}), mine, found
        )


def model_bisections(night: Night) -> dict[str, list[tuple[str, Bisection]]]:
    """model -> (flag, bisection) for each crash group of `night` it is in whose signature was
    bisected, and (baseline, bisection) for its baseline graph-count regression: what its page
    says of the first bad nightly."""
    found: dict[str, list[tuple[str, Bisection]]] = {}
    for flag, view in night.flags.items():
        for group in view.stats.crash_groups:
            triage = view.triage_of(group)
            if triage is not None and triage.bisection is not None:
                for model in group.models:
                    found.setdefault(model, []).append((flag, triage.bisection))
    for model, bisection in night.baseline_bisections.items():
        found.setdefault(model, []).append((BASELINE, bisection))
    return found


def _model_page(
    pages: Pages,
    model: str,
    rows: list[ModelNightRow],
    groups: Groups,
    specs: dict[str, ModelSpec],
    in_latest: bool,
    tonight: dict[str, str],
    bisections: list[tuple[str, Bisection]],
    finding: LibraryFinding | None = None,
) -> None:
    configs = list(dict.fromkeys(config for entry in rows for config in entry.night.configs))
    flags = [config for config in configs if config != BASELINE]
    changed = [entry for entry in rows if entry.changes]
    pages.write(
        links.model_page(model),
        "model.html.j2",
        model=model,
        rows=rows,
        spans=model_spans(rows, configs, flags, groups),
        configs=configs,
        flags=flags,
        spec=specs.get(model),
        in_latest=in_latest,
        tonight=tonight,
        first_change=changed[0] if changed else None,
        changes=len(changed),
        columns=history_columns(rows),
        charts=model_charts([entry.night.key for entry in rows], run_columns(rows, configs)),
        bisections=bisections,
        finding=finding,
    )


def _models_page(
    pages: Pages, latest: NightData, night: Night, histories: dict[str, list[ModelNightRow]]
) -> None:
    model_list = [(model, rows[-1]) for model, rows in sorted(histories.items())]
    listed = [model_row(model, entry, list(night.flags)) for model, entry in model_list]
    pages.write(
        links.MODELS,
        "models.html.j2",
        models=model_list,
        rows=listed,
        latest_rows={row.model: row for row in latest.models},
        strata=sorted({row.stratum for row in listed}),
        statuses=sorted({row.status for row in listed if row.status}),
        effects=sorted({effect for row in listed for effect in row.effects if effect}),
    )


def _compare_view(
    pages: Pages, nights: Sequence[NightData], histories: dict[str, list[ModelNightRow]]
) -> None:
    """The page that compares any two nightlies in the browser, from their data files."""
    pages.write(
        links.COMPARE,
        "compare-any.html.j2",
        settings={
            "compareUrl": COMPARE_URL,  # the commit range, as `analysis.diff` links it
            "transformersCompareUrl": TRANSFORMERS_COMPARE,  # a transformers release's changes
            "ran": sorted(effect.value for effect in RAN_EFFECTS),
            "crash": Effect.crashes.value,
            "effectWords": EFFECT_LABELS,  # what the tables say for each effect
            "baseline": BASELINE,
            "fields": {"model": list(ModelNight._fields), "run": list(Run._fields)},  # a data file's arrays
            "nights": [
                {
                    "key": nightly.key,
                    "data": links.night_data(nightly.key),
                    "page": links.compare_page(nights[i - 1].key, nightly.key) if i else None,
                }
                for i, nightly in enumerate(nights)
            ],
            "modelPage": {model: links.model_page(model) for model in histories},
        },
    )
