"""The `triagebot` command: wires the packages together and holds no logic of its own.

Imports of torch-using packages (corpus, sweep) stay inside the commands that need them, so
that `publish`, `diff`, `report` and `command` run on a runner without torch.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from triagebot.config import Config, load_config
from triagebot.errors import TriagebotError, UsageError

app = typer.Typer(
    name="triagebot",
    help="Flag sweeps of torch.compile over a transformers corpus, and the issues they feed.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="triagebot.toml to read (default: ./triagebot.toml if present)."),
]


def fail(message: str) -> None:
    raise UsageError(message)


def read_config(path: Path | None) -> Config:
    return load_config(path)


# --- effects, diff, report: analysis and reports of stored snapshots ---

StoreOption = Annotated[
    Path | None, typer.Option("--store", help="Snapshot folder (default: [store] path of triagebot.toml).")
]


def _snapshot_store(store_dir: Path | None, config: Path | None):
    from triagebot.store import LocalStore, open_store

    return LocalStore(store_dir) if store_dir else open_store(read_config(config).store)


def _load_snapshot(where: str, store_dir: Path | None, config: Path | None):
    """A snapshot by path to its JSON file, or by key in the store."""
    from triagebot.store import StoreError, read_snapshot

    try:
        if Path(where).is_file():
            return read_snapshot(where)
        return _snapshot_store(store_dir, config).get(where)
    except StoreError as error:
        fail(f"{where}: {error}" if str(where) not in str(error) else str(error))


@app.command()
def effects(
    snapshot: Annotated[str, typer.Argument(help="Snapshot JSON file or key in the store.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON Lines, one row per (model, flag).")] = False,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Each flag's effect on each model: one row per (model, flag)."""
    from triagebot.analysis import classify

    rows = classify(_load_snapshot(snapshot, store, config))
    if as_json:
        for row in rows:
            print(row.model_dump_json())
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("model", "stratum", "flag", "effect", "baseline graphs", "flag graphs", "signature")
    for row in rows:
        graphs = ["" if value is None else str(value) for value in (row.baseline_graphs, row.flag_graphs)]
        table.add_row(row.model, row.stratum, row.flag, row.effect.value, *graphs, row.signature or "")
    Console().print(table)


@app.command("diff")
def diff_command(
    old: Annotated[str, typer.Argument(help="Older snapshot: JSON file or key.")],
    new: Annotated[str, typer.Argument(help="Newer snapshot: JSON file or key.")],
    as_json: Annotated[bool, typer.Option("--json", help="The diff record as JSON.")] = False,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """What changed between two snapshots, per flag, with the commit range."""
    from triagebot.analysis import diff
    from triagebot.report import nightly_summary

    before, after = _load_snapshot(old, store, config), _load_snapshot(new, store, config)
    change = diff(before, after)
    print(change.model_dump_json(indent=1) if as_json else nightly_summary(after, change), end="\n")


@app.command()
def report(
    snapshot: Annotated[str, typer.Argument(help="Snapshot JSON file or key in the store.")],
    out: Annotated[Path, typer.Option("--out", help="Folder to write the reports into.")],
    previous: Annotated[
        str | None,
        typer.Option("--previous", help="Snapshot to diff against (default: the store's previous build)."),
    ] = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Write issue bodies per flag, fixed/regression notices, summary.md and dashboard.html."""
    from triagebot.report import write_report
    from triagebot.store import StoreError

    settings = read_config(config)
    current = _load_snapshot(snapshot, store, config)
    history = []
    try:
        snapshots = _snapshot_store(store, config)
        history = [s for s in snapshots.history(until=current.key) if s.key != current.key]
        before = _load_snapshot(previous, store, config) if previous else snapshots.latest_before(current.key)
    except StoreError as error:
        fail(str(error))
    written = write_report(
        current,
        out,
        previous=before,
        history=history,
        cc=settings.tracker.cc,
        dashboard_url=settings.tracker.dashboard_url,
    )
    for path in written:
        print(path)


# --- publish, command: the GitHub side (triagebot.tracker) ---

TokenOption = Annotated[
    str | None, typer.Option("--token", help="GitHub token (default: $GITHUB_TOKEN).", show_default=False)
]


def _token(token: str | None) -> str | None:
    import os

    return token or os.environ.get("GITHUB_TOKEN") or None


def _history(current, store: Path | None, config: Path | None):
    from triagebot.store import StoreError

    try:
        snapshots = _snapshot_store(store, config)
        return [s for s in snapshots.history(until=current.key) if s.key != current.key], snapshots
    except StoreError as error:
        fail(str(error))


@app.command()
def publish(
    snapshot: Annotated[str, typer.Argument(help="Snapshot JSON file or key in the store.")],
    repo: Annotated[str | None, typer.Option("--repo", help="OWNER/NAME (default: [tracker] repo).")] = None,
    previous: Annotated[
        str | None, typer.Option("--previous", help="Snapshot to diff against (default: the previous build).")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Plan and bodies only; no write.")] = False,
    out: Annotated[Path, typer.Option("--out", help="Folder for the plan and bodies of a dry run.")] = Path(
        ".triagebot/issues"
    ),
    max_writes: Annotated[
        int | None, typer.Option("--max-writes", min=1, help="Write cap (default: [tracker] max_writes).")
    ] = None,
    token: TokenOption = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Plan the tracking issues of SNAPSHOT against GitHub, print the plan, apply the difference."""
    import re

    from triagebot.tracker import publish_snapshot
    from triagebot.tracker.github import GitHubFault

    settings = read_config(config)
    target = repo or settings.tracker.repo
    if target and not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", target):
        fail(f"--repo {target!r} is not OWNER/NAME")
    current = _load_snapshot(snapshot, store, config)
    history, snapshots = _history(current, store, config)
    before = _load_snapshot(previous, store, config) if previous else snapshots.latest_before(current.key)
    try:
        line = publish_snapshot(
            current,
            history,
            before,
            settings,
            _token(token),
            dry_run,
            out,
            repo=target,
            max_writes=max_writes,
        )
    except (GitHubFault, ValueError) as error:
        fail(str(error))
    print(line)


@app.command()
def command(
    event: Annotated[
        Path | None, typer.Option("--event", help="Workflow event payload ($GITHUB_EVENT_PATH).")
    ] = None,
    poll: Annotated[bool, typer.Option("--poll", help="Poll the tracking issues of --repo.")] = False,
    answer: Annotated[
        str | None, typer.Option("--answer", help="Rerun snapshot (file or key) to answer a command with.")
    ] = None,
    repo: Annotated[str | None, typer.Option("--repo", help="OWNER/NAME (default: [tracker] repo).")] = None,
    issue: Annotated[int | None, typer.Option("--issue", help="Issue of the command.")] = None,
    comment_id: Annotated[
        int | None, typer.Option("--comment-id", help="The command's comment (default: last accepted).")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", help="key=value outputs file (default: $GITHUB_OUTPUT).")
    ] = None,
    token: TokenOption = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """`/rerun-sweep`: read a command (--event or --poll) and write the sweep job's plan as
    key=value outputs, or post the rerun's answer on the issue (--answer)."""
    import json
    import os

    from triagebot.report.markers import find_flag
    from triagebot.store import StoreError
    from triagebot.tracker import rerun
    from triagebot.tracker.github import GitHubFault, connect

    if sum((event is not None, poll, answer is not None)) != 1:
        fail("give exactly one of --event FILE, --poll or --answer SNAPSHOT")
    settings = read_config(config)
    target = repo or settings.tracker.repo
    secret = _token(token)
    known_flags = list(settings.flags)
    try:
        latest = _snapshot_store(store, config).latest()
    except StoreError as error:
        fail(str(error))
    # Models the catalog knows: those of the newest stored sweep (the tracker cannot import corpus).
    known_models = [result.model for result in latest.results] if latest else []

    def emit(decision) -> None:
        values = rerun.outputs(decision)
        lines = [f"{key}={value}" for key, value in values.items()]
        print("\n".join(lines))
        path = output or (Path(os.environ["GITHUB_OUTPUT"]) if os.environ.get("GITHUB_OUTPUT") else None)
        if path is not None:
            with path.open("a", encoding="utf-8") as handle:
                handle.write("\n".join(lines) + "\n")

    try:
        if answer is not None:
            if not (target and issue and secret):
                fail("--answer needs --repo (or [tracker] repo), --issue and a token")
            gh = connect(secret)
            which = comment_id or rerun.pending_command(gh, target, issue)
            if which is None:
                fail(f"#{issue}: no accepted /rerun-sweep comment waits for an answer")
            rerun.post_answer(gh, target, issue, which, _load_snapshot(answer, store, config))
            print(f"answered comment {which} on {target}#{issue}")
            return
        if poll:
            if not (target and secret):
                fail("--poll needs --repo (or [tracker] repo) and a token")
            gh = connect(secret)
            decision = rerun.poll(
                gh,
                target,
                issue_flag=find_flag,
                known_models=known_models,
                known_flags=known_flags,
                default_confirm=settings.sweep.confirm,
                on_edited=settings.tracker.commands_on_edited,
            )
            emit(decision)
            return
        assert event is not None
        try:
            payload = json.loads(event.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            fail(f"{event}: cannot read the event payload: {error}")
        try:
            comment = rerun.read_event(payload)
        except rerun.EventError as error:
            fail(f"{event}: {error}")
        if comment is None:
            print(f"{event}: not an issue comment; nothing to run", file=sys.stderr)
            emit(rerun.Decision(rerun.Kind.none))
            return
        gh = connect(secret) if secret else None
        decision = rerun.decide(
            comment,
            bot_login=gh.login if gh else "github-actions[bot]",
            issue_flag=find_flag,
            permission=(
                (lambda login: rerun.collaborator_permission(gh, comment.repo, login))
                if gh
                else (lambda _: "unknown")
            ),
            known_models=known_models,
            known_flags=known_flags,
            default_confirm=settings.sweep.confirm,
            on_edited=settings.tracker.commands_on_edited,
        )
        if gh is not None:
            rerun.respond(gh, comment, decision, known_flags)
        elif decision.kind != rerun.Kind.none:
            print("no token: the command was neither checked nor answered on GitHub", file=sys.stderr)
        if decision.kind == rerun.Kind.refuse:
            print(f"refused: {decision.reason}", file=sys.stderr)
        emit(decision)
    except GitHubFault as error:
        fail(str(error))


# --- run: the nightly job end to end (triagebot.pipeline) ---


def _names(text: str | None) -> list[str] | None:
    return [name.strip() for name in text.split(",") if name.strip()] if text else None


@app.command()
def run(
    corpus: Annotated[str | None, typer.Option("--corpus", help="Corpus (default: sweep.corpus).")] = None,
    models: Annotated[str | None, typer.Option("--models", help="Comma-separated corpus models.")] = None,
    flags: Annotated[str | None, typer.Option("--flags", help="Comma-separated configured flags.")] = None,
    sample: Annotated[
        int | None, typer.Option("--sample", min=1, help="Models to draw (default: corpus.sample).")
    ] = None,
    device: Annotated[
        str | None, typer.Option("--device", help="cpu, cuda or auto (default: sweep.device).")
    ] = None,
    jobs: Annotated[int | None, typer.Option("--jobs", min=1, help="Concurrent runs.")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", min=1, help="Seconds per run.")] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder for this run's files (default: .triagebot/runs/KEY).")
    ] = None,
    repo: Annotated[str | None, typer.Option("--repo", help="OWNER/NAME (default: tracker.repo).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Plan issue changes; no write.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Sweep even when this build is stored.")] = False,
    snapshot: Annotated[
        Path | None,
        typer.Option("--snapshot", help="A merged snapshot to store and publish instead of sweeping."),
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Only say if the installed build needs a sweep: sweep=true|false.")
    ] = False,
    token: TokenOption = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """The night's work: detect the installed torch, skip it if stored, sweep, store, diff, render,
    publish (a dry run without a token), and print where everything went."""
    import re

    from triagebot import pipeline
    from triagebot.store import LocalStore, StoreError, open_store
    from triagebot.sweep import StreamError, SweepError

    if device not in (None, "auto", "cpu", "cuda"):
        fail(f"--device {device!r}: expected cpu, cuda or auto")
    selection = pipeline.Selection(
        corpus=corpus, flags=_names(flags), sample=sample, device=device, jobs=jobs, timeout=timeout
    )
    if repo and not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo):
        fail(f"--repo {repo!r} is not OWNER/NAME")
    settings = pipeline.configured(read_config(config), selection)
    if repo:
        settings.tracker.repo = repo
    options = pipeline.RunOptions(
        out=out, token=_token(token), dry_run=dry_run, force=force, snapshot=snapshot, check_only=check
    )
    try:
        snapshots = LocalStore(store) if store else open_store(settings.store)
        stages = pipeline.default_stages(settings, snapshots, _names(models))
        pipeline.run(settings, options, store=snapshots, **stages)
    except (pipeline.PipelineError, StoreError, SweepError, StreamError) as error:
        fail(str(error))


# --- sweep, merge: the flag sweep (triagebot.sweep) ---


@app.command()
def sweep(
    corpus: Annotated[
        str | None,
        typer.Option("--corpus", help="Corpus to sweep: sentinels, smoke, ... (default: [sweep] corpus)."),
    ] = None,
    models: Annotated[str | None, typer.Option("--models", help="Only these models: A,B,...")] = None,
    flags: Annotated[
        str | None, typer.Option("--flags", help="Only these configured flags: f1,f2 (default: all).")
    ] = None,
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", min=1, help="Workers (default: [sweep] jobs).")
    ] = None,
    timeout: Annotated[
        float | None, typer.Option("--timeout", min=0.1, help="Seconds per run (default: [sweep] timeout).")
    ] = None,
    device: Annotated[
        str | None,
        typer.Option("--device", help="cpu, cuda or auto (default: [sweep] device; auto: cuda if any)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="JSON Lines stream (default: .triagebot/sweep-CORPUS.jsonl)."),
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Finish the stream in --out; redo nothing recorded.")
    ] = False,
    shard: Annotated[
        str | None, typer.Option("--shard", help="Sweep slice i of n (i/n, 1-based), by model.")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Compile every model under the baseline and each flag, one isolated worker per run."""
    from triagebot.sweep import StreamError, SweepError
    from triagebot.sweep.command import sweep as run

    if device not in (None, "cpu", "cuda", "auto"):
        fail(f"--device {device!r}: expected cpu, cuda or auto")
    try:
        run(
            read_config(config),
            corpus=corpus,
            models=models,
            flags=flags,
            jobs=jobs,
            timeout=timeout,
            device=device,
            out=out,
            resume=resume,
            shard=shard,
        )
    except (SweepError, StreamError) as error:
        fail(str(error))


@app.command("merge")
def merge_command(
    shards: Annotated[list[Path], typer.Argument(help="Sweep streams (JSON Lines) to join.")],
    out: Annotated[Path, typer.Option("--out", help="Snapshot JSON file to write.")],
) -> None:
    """Join shard streams of one sweep into one snapshot; refuses streams of different sweeps."""
    from triagebot.store import write_snapshot
    from triagebot.sweep import StreamError, merge

    try:
        snapshot = merge(shards)
    except StreamError as error:
        fail(str(error))
    write_snapshot(snapshot, out)
    print(f"snapshot {snapshot.key}: {len(snapshot.results)} models from {len(shards)} streams -> {out}")


@app.command()
def reproduce(
    snapshot: Annotated[Path, typer.Argument(help="Snapshot JSON file, e.g. from `triagebot merge`.")],
    out: Annotated[Path | None, typer.Option("--out", help="Where to write it (default: in place).")] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds per reproduction script.")] = 300.0,
) -> None:
    """Write a reproduction script per confirmed crash group and run it to verify it (needs torch)."""
    from triagebot.pipeline import with_reproductions
    from triagebot.store import StoreError, read_snapshot, write_snapshot

    try:
        current = with_reproductions(read_snapshot(snapshot), timeout=timeout)
    except StoreError as error:
        fail(str(error))
    path = write_snapshot(current, out or snapshot)
    verified = sum(repro.verified for repro in current.reproductions)
    print(f"{verified} of {len(current.reproductions)} reproductions verified: {path}")


# --- corpus list, corpus check: the model corpus (triagebot.corpus) ---

corpus_app = typer.Typer(help="The model corpus: list it, check that every model builds and runs.")
app.add_typer(corpus_app, name="corpus")

CorpusNameOption = Annotated[
    str, typer.Option("--corpus", help="Corpus: transformers (every model class), smoke, sentinels.")
]
StratumOption = Annotated[
    str | None,
    typer.Option(
        "--stratum", help="Only this stratum: vl_multimodal, decoder_llm, encoder_decoder, vision_other."
    ),
]


def _corpus_specs(name: str, stratum: str | None, models: str = ""):
    from triagebot.corpus import UnknownCorpus, load_corpus
    from triagebot.corpus.coverage import SelectionError, select

    try:
        return select(load_corpus(name), stratum, [m.strip() for m in models.split(",") if m.strip()] or None)
    except (UnknownCorpus, SelectionError) as error:
        fail(str(error))


@corpus_app.command("list")
def corpus_list(
    corpus: CorpusNameOption = "transformers",
    stratum: StratumOption = None,
    sample: Annotated[
        int | None, typer.Option("--sample", min=1, help="Draw a stratified sample of N.")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Sample seed (default: corpus.seed).")] = None,
    only_breaking_in: Annotated[
        Path | None,
        typer.Option("--only-breaking-in", help="Snapshot JSON: sample only models that graph-break there."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object: the models and the selection.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """The corpus's models with stratum and modality; optionally a stratified random sample."""
    import json

    from triagebot.corpus.sampling import SamplingError, sample
    from triagebot.results import CorpusSelection, Snapshot

    settings = read_config(config).corpus
    specs = _corpus_specs(corpus, stratum)
    selection = CorpusSelection(name=corpus, models=[spec.model for spec in specs])
    breaking_path = only_breaking_in
    if sample or settings.sample or breaking_path or settings.only_breaking_in:
        snapshot = None
        if breaking_path:
            try:
                snapshot = Snapshot.model_validate_json(breaking_path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                fail(f"{breaking_path}: not a readable snapshot: {str(error).splitlines()[0]}")
        try:
            specs, selection = sample(
                specs,
                n=sample or settings.sample or len(specs),
                seed=settings.seed if seed is None else seed,
                strata=settings.strata or None,
                only_breaking_in=snapshot,
                corpus=corpus,
            )
        except SamplingError as error:
            fail(str(error))
    rows = [
        {"model": s.model, "stratum": s.stratum, "modality": s.modality, "model_type": s.model_type}
        for s in specs
    ]
    if as_json:
        print(json.dumps({"selection": selection.model_dump(mode="json"), "models": rows}, indent=2))
        return
    for row in rows:
        print(f"{row['model']:<56} {row['stratum']:<16} {row['modality']}")
    print(f"{len(rows)} models")


@corpus_app.command("check")
def corpus_check(
    corpus: CorpusNameOption = "transformers",
    stratum: StratumOption = None,
    models: Annotated[str | None, typer.Option("--models", help="Only these models: A,B,...")] = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Concurrent workers.")] = 2,
    timeout: Annotated[float, typer.Option("--timeout", min=1, help="Seconds per model.")] = 120.0,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object: counts and one entry per model.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Build and eager-run every model, each in an isolated worker with a time limit; report coverage."""
    import json

    from triagebot.corpus.coverage import render, summarize
    from triagebot.sweep import SweepError, check_models

    settings = read_config(config).sweep
    specs = _corpus_specs(corpus, stratum, models or "")
    try:
        records = list(
            check_models(
                specs, device="cpu", jobs=jobs, timeout=timeout, memory_limit_gb=settings.memory_limit_gb
            )
        )
    except SweepError as error:
        fail(str(error))
    from triagebot.corpus.shrink import stale_fixes

    stale = [fix.describe() for fix in stale_fixes()] if corpus == "transformers" else []
    summary = summarize(records, specs, stale)
    print(json.dumps(summary, indent=2) if as_json else render(summary))


def main() -> None:
    try:
        app()
    except TriagebotError as error:
        print(f"triagebot: error: {error}", file=sys.stderr)
        sys.exit(2)
