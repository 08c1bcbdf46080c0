"""`triagebot corpus list`, `corpus check`: the model corpus (`triagebot.corpus`).

What is swept is chosen by `corpus.selection` alone. Building the models (`corpus check`) is
the sweep's work: `triagebot.sweep` and the family fixes (`corpus.shrink`) are imported inside
that command, a third of a second that `corpus list` and `triagebot --help` should not pay.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from triagebot.cli.options import (
    ConfigOption,
    CorpusOption,
    JobsOption,
    ModelsOption,
    SampleOption,
    SeedOption,
    StoreOption,
    StratumOption,
    configured,
    split_names,
)
from triagebot.config import Config
from triagebot.corpus import left_out, load_suites
from triagebot.corpus.coverage import render, summarize
from triagebot.corpus.selection import Selected, narrow, select
from triagebot.pipeline import Snapshots

app = typer.Typer(
    help="The model corpus: what is swept, and whether it builds.\n\n"
    "`list` shows what `run` and `sweep` would sweep; `check` builds and runs every model eagerly."
)

OnlyBreakingIn = Annotated[
    str | None,
    typer.Option(
        "--only-breaking-in",
        metavar="SNAPSHOT",
        help="Sample only models whose baseline graph-breaks there (file or key).",
    ),
]
Shard = Annotated[
    str | None,
    typer.Option("--shard", metavar="I/N", help="Only shard I of N, as `sweep --shard` splits it."),
]
ListJson = Annotated[bool, typer.Option("--json", help="One JSON object: the models and the selection.")]
ModelTimeout = Annotated[float, typer.Option("--timeout", min=1, metavar="SECONDS", help="Per model.")]
CheckJson = Annotated[bool, typer.Option("--json", help="One JSON object: counts and one entry per model.")]


@app.command("list")
@configured("corpus", "sample", "seed", "only_breaking_in", "store")
def list_models(
    settings: Config,
    corpus: CorpusOption = None,
    stratum: StratumOption = None,
    models: ModelsOption = None,
    sample: SampleOption = None,
    seed: SeedOption = None,
    only_breaking_in: OnlyBreakingIn = None,
    shard: Shard = None,
    as_json: ListJson = False,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """What `run` and `sweep` would sweep.

    The models of the configured selection (corpus, sample, or a shard of it) with their
    stratum and modality."""
    names = split_names(models)
    snapshots = Snapshots(settings.store, reproductions=False)
    chosen = select(settings, models=names, stratum=stratum, shard=shard, store=snapshots)
    print(selection_json(chosen) if as_json else selection_text(chosen))


def selection_rows(chosen: Selected) -> list[dict[str, str]]:
    return [
        {"model": s.model, "stratum": s.stratum, "modality": s.modality, "model_type": s.model_type}
        for s in chosen.specs
    ]


def selection_json(chosen: Selected) -> str:
    document = {
        "selection": chosen.selection.model_dump(mode="json"),
        "shard": chosen.shard,
        "costs": chosen.costs,
        "costs_from": chosen.costs_from,
        "models": selection_rows(chosen),
    }
    return json.dumps(document, indent=2)


def selection_text(chosen: Selected) -> str:
    lines = [f"{row['model']:<56} {row['stratum']:<16} {row['modality']}" for row in selection_rows(chosen)]
    whole = f" (shard {chosen.shard} of {len(chosen.selection.models)})" if chosen.shard else ""
    total = f"{len(chosen.specs)} models{whole} of corpus {chosen.selection.name!r}"
    return "\n".join([*lines, total, *chosen.selection.skipped_lines()])


@app.command("check")
@configured("corpus", "jobs")
def check(
    settings: Config,
    corpus: CorpusOption = None,
    stratum: StratumOption = None,
    models: ModelsOption = None,
    jobs: JobsOption = None,
    timeout: ModelTimeout = 120.0,
    as_json: CheckJson = False,
    config: ConfigOption = None,
) -> None:
    """Build and run every model eagerly; report coverage.

    Each model of the corpus (or --stratum, --models) is built and run in an isolated worker
    with a time limit."""
    from triagebot.corpus.shrink import stale_fixes  # start-up cost: see the module
    from triagebot.sweep import check_models

    suites, skipped = load_suites(settings.sweep.corpus)
    for suite, why in skipped.items():
        print(f"suite {suite} not checked: {why}", file=sys.stderr)
    specs = narrow(suites, settings.sweep.corpus_name, stratum, split_names(models))
    memory = settings.sweep.memory_limit_gb
    workers = settings.sweep.jobs
    records = list(check_models(specs, device="cpu", jobs=workers, timeout=timeout, memory_limit_gb=memory))
    stale = [fix.describe() for fix in stale_fixes()] if "transformers" in settings.sweep.corpus else []
    # A model name is unique within its suite, and the suites' names do not meet (timm's are
    # lower-case registry names, the others class names): one table serves them all.
    left = {
        model: why
        for suite in settings.sweep.corpus
        if suite not in skipped
        for model, why in left_out(suite).items()
    }
    summary = summarize(records, specs, stale, left)
    print(json.dumps(summary, indent=2) if as_json else render(summary))
