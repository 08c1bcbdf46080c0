"""What `triagebot sweep` and `triagebot merge` do; cli.py only passes its options here."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

from triagebot.config import Config
from triagebot.results import BASELINE, CorpusSelection, ModelSpec
from triagebot.sweep.engine import SweepError, SweepResult, run_sweep
from triagebot.sweep.pool import start_parent
from triagebot.sweep.progress import crash_table, make_progress, summary_table
from triagebot.sweep.stack import stack_options


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    return names or None


def select_models(corpus: str, models: list[str] | None) -> tuple[list[ModelSpec], CorpusSelection]:
    """The corpus's specs, narrowed to `models` (in the corpus's order); unknown names are errors."""
    from triagebot.corpus import UnknownCorpus, load_corpus

    try:
        specs = load_corpus(corpus)
    except UnknownCorpus as error:
        raise SweepError(str(error)) from None
    if models:
        known = {spec.model for spec in specs}
        unknown = [name for name in models if name not in known]
        if unknown:
            raise SweepError(f"corpus {corpus!r} has no model {unknown[0]!r}")
        wanted = set(models)
        specs = [spec for spec in specs if spec.model in wanted]
    return specs, CorpusSelection(name=corpus, models=[spec.model for spec in specs])


def sweep(
    settings: Config,
    *,
    corpus: str | None = None,
    models: str | None = None,
    flags: str | None = None,
    jobs: int | None = None,
    timeout: float | None = None,
    device: str | None = None,
    out: Path | None = None,
    resume: bool = False,
    shard: str | None = None,
    interactive: bool | None = None,
) -> SweepResult:
    """Run a sweep with the options of `triagebot sweep` over the defaults of `settings`."""
    start_parent()  # the warm parent imports torch while this process loads the corpus
    corpus = corpus or settings.sweep.corpus
    chosen_flags = settings.select_flags(_split(flags))
    specs, selection = select_models(corpus, _split(models))
    if out is None:
        out = Path(".triagebot") / (
            f"sweep-{corpus}" + (f"-{shard.replace('/', 'of')}" if shard else "") + ".jsonl"
        )
    progress = make_progress(interactive)
    try:
        result = run_sweep(
            specs,
            chosen_flags,
            out,
            corpus=selection,
            device=device or settings.sweep.device,
            jobs=jobs or settings.sweep.jobs,
            timeout=timeout or settings.sweep.timeout,
            memory_limit_gb=settings.sweep.memory_limit_gb,
            resume=resume,
            shard=shard,
            confirm=settings.sweep.confirm,
            progress=progress,
            **stack_options(settings.sweep, specs, settings.corpus.seed),
        )
    except KeyboardInterrupt:
        raise SweepError(f"interrupted: the finished runs are in {out}; --resume finishes it") from None
    console = Console(file=sys.stdout)
    if not console.is_terminal:
        console.width = max(console.width, 120)
    console.print(summary_table(result.records, [BASELINE, *chosen_flags]))
    crashes = crash_table(result.records)
    if crashes is not None:
        console.print(crashes)
    environment = result.header.environment
    console.print(
        f"{len(result.records)} runs of {len(specs)} models on {environment.device} "
        f"(torch {environment.torch_version}; {result.ran} run now) -> {result.path}",
        highlight=False,
        soft_wrap=True,
    )
    return result
