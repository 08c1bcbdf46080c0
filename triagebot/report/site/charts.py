"""The data blocks of the dashboard's charts: labels, then named series in legend order, and the
titles of the axes. The site's script draws them with Chart.js; the tables beside them hold the
same numbers for a reader without JavaScript. A series may carry a kind (`KINDS`) that fixes its
colour on every page: crashes red, models helped green."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from triagebot.analysis.compact import NightData
from triagebot.analysis.health import ALL
from triagebot.report.words import times
from triagebot.results import RATIO_EDGES, CompileTime, FlagNight

Chart = dict[str, Any]

KINDS = ("crash", "helped", "flaky", "wrong")
"""Series whose colour means something, the same on every page (site.js maps each to its colour)."""


def chart(
    labels: Sequence[str],
    series: dict[str, Sequence[Any]],
    y: str,
    x: str = "nightly",
    kinds: dict[str, str] | None = None,
    bars: bool = False,
) -> Chart:
    """A chart's data block: labels, then [name, values, kind] in legend order (kind: one of
    `KINDS`, or None for a colour of the palette), axis titles, and whether it is drawn as bars
    (a distribution) rather than lines (nightly by nightly)."""
    kinds = kinds or {}
    triples = [[name, list(values), kinds.get(name)] for name, values in series.items()]
    return {"labels": list(labels), "series": triples, "x": x, "y": y, "type": "bar" if bars else "line"}


_FLAG_SERIES = (("crashes", "crashes", "crash"), ("helped", "helps", "helped"))


def index_charts(nights: Sequence[NightData], every_flag: Sequence[str]) -> dict[str, Chart]:
    """The index's charts across `nights`: the corpus's health, its graphs per model, and every
    flag's crashes and models helped."""
    keys = [night.key for night in nights]
    corpus = [night.health.get(ALL) for night in nights]  # None: a nightly summarised before health

    def health(field: str) -> list:
        return [getattr(point, field) if point is not None else None for point in corpus]

    def trend(flag: str, field: str) -> list:
        return [getattr(night.trend[flag], field) if flag in night.trend else None for night in nights]

    return {
        "health": chart(
            keys,
            {
                "models swept": health("models"),
                "built and ran eagerly": health("ran_eagerly"),
                "compiled (baseline)": health("compiled"),
                "one graph": health("one_graph"),
            },
            "models",
        ),
        "graphs": chart(
            keys,
            {"mean graphs per model": health("mean_graphs"), "90th percentile": health("p90_graphs")},
            "graphs per compiled model",
        ),
        "flags": chart(
            keys,
            {f"{flag}: {what}": trend(flag, field) for flag in every_flag for what, field, _ in _FLAG_SERIES},
            "models",
            kinds={f"{flag}: {what}": kind for flag in every_flag for what, _, kind in _FLAG_SERIES},
        ),
    }


def flag_chart(view: FlagNight) -> Chart:
    """A flag's trend: its confirmed crashes, models helped, wrong results and flaky crashes,
    night by night."""
    return chart(
        [point.key for point in view.trend],
        {
            "confirmed crashes": [point.crashes for point in view.trend],
            "fewer graphs": [point.helps for point in view.trend],
            "wrong results": [point.wrong_results for point in view.trend],
            "flaky": [point.flaky for point in view.trend],
        },
        "models",
        kinds={
            "confirmed crashes": "crash",
            "fewer graphs": "helped",
            "wrong results": "wrong",
            "flaky": "flaky",
        },
    )


def ratio_labels() -> list[str]:
    """The bins of `RATIO_EDGES` in words: "below 0.50x", "0.50x to 0.67x", ..., "3.00x and above"."""
    edges = [times(edge) for edge in RATIO_EDGES]
    inner = [f"{low} to {high}" for low, high in itertools.pairwise(edges)]
    return [f"below {edges[0]}", *inner, f"{edges[-1]} and above"]


def compile_chart(cost: CompileTime) -> Chart:
    """A flag's compile-time ratios tonight, model by model, as a distribution over the bins."""
    return chart(
        ratio_labels(),
        {"models": cost.bins},
        "models",
        x="compile seconds under the flag / at baseline",
        bars=True,
    )


def model_charts(labels: Sequence[str], columns: dict[str, dict[str, list[Any]]]) -> dict[str, Chart]:
    """A model's graphs and operators under every config, night by night (`data.run_columns`)."""
    return {
        "graphs": chart(labels, columns["graphs"], "graphs"),
        "ops": chart(labels, columns["ops"], "operators"),
    }
