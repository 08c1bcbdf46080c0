"""What `triagebot sweep` does; cli.py only passes its options here. `run` sweeps through
`run_selected` too, so that both sweep what `triagebot.corpus.selection` chooses."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from triagebot.analysis.rotation import Evidences
from triagebot.config import Config
from triagebot.corpus.selection import Selected, SnapshotSource, select
from triagebot.errors import on_ctrl_c
from triagebot.results import BASELINE
from triagebot.sweep.engine import SweepResult, run_sweep
from triagebot.sweep.parent import start_parent
from triagebot.sweep.plan import plan_for
from triagebot.sweep.progress import make_progress
from triagebot.sweep.summary import crash_table, engine_error_table, summary_table, sweep_figures


def default_stream(corpus: str, shard: str | None) -> Path:
    """`.triagebot/sweep-CORPUS.jsonl`, or `sweep-CORPUS-IofN.jsonl` for a shard."""
    return Path(".triagebot") / (
        f"sweep-{corpus}" + (f"-{shard.replace('/', 'of')}" if shard else "") + ".jsonl"
    )


def choose(
    settings: Config,
    *,
    models: Sequence[str] | None = None,
    shard: str | None = None,
    store: SnapshotSource | None = None,
) -> Selected:
    """Start the warm parent, then `select` (see `triagebot.corpus.selection`): torch is
    imported there while this process loads the corpus. A configured suite that cannot be swept
    here is said in one line, and the rest is swept."""
    start_parent()
    selected = select(settings, models=models, shard=shard, store=store)
    for line in selected.selection.skipped_lines():
        print(line)
    return selected


def run_selected(
    settings: Config,
    selected: Selected,
    out: Path,
    *,
    resume: bool = False,
    interactive: bool | None = None,
    evidence: Evidences | None = None,
) -> SweepResult:
    """Sweep `selected` under the baseline and `settings.flags`, streaming to `out`; `evidence`:
    the stored nights' ladder evidence, which orders the ladder's rotation."""
    plan = plan_for(settings, selected, out, resume=resume, evidence=evidence)
    return run_sweep(plan, make_progress(interactive))


def sweep(
    settings: Config,
    *,
    models: Sequence[str] | None = None,
    shard: str | None = None,
    store: SnapshotSource | None = None,
    out: Path | None = None,
    resume: bool = False,
    interactive: bool | None = None,
) -> SweepResult:
    """`triagebot sweep`: sweep the selection, then print the summary and the crashes."""
    selected = choose(settings, models=models, shard=shard, store=store)
    out = out or default_stream(settings.sweep.corpus_name, shard)
    with on_ctrl_c(out, resume="--resume finishes it"):
        result = run_selected(settings, selected, out, resume=resume, interactive=interactive)
    console = Console(file=sys.stdout)
    if not console.is_terminal:
        console.width = max(console.width, 200)  # a CI log keeps whole names and errors
    console.print(summary_table(result.records, [BASELINE, *settings.flags]))
    crashes = crash_table(result.records)
    if crashes is not None:
        console.print(crashes)
    engine_errors = engine_error_table(result.records)
    if engine_errors is not None:
        console.print(engine_errors)
    for line in sweep_figures(result.new_records, result.jobs, result.seconds).lines():
        console.print(line, highlight=False, soft_wrap=True)
    environment = result.header.environment
    part = f" (shard {shard} of {len(selected.selection.models)})" if shard else ""
    console.print(
        f"{len(result.records)} runs of {len(selected.specs)} models{part} on {environment.device} "
        f"(torch {environment.torch_version}; {result.ran} run now) -> {result.path}",
        highlight=False,
        soft_wrap=True,
    )
    return result
