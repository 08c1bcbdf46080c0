"""`triagebot publish`, `command`: the GitHub side (`triagebot.tracker`).

The tracker's modules that talk to GitHub are imported inside the commands: PyGithub alone
takes more than half a second to import, which `triagebot --help` and the commands that never
reach GitHub should not pay.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from triagebot.cli.options import (
    ConfigOption,
    RepoOption,
    SnapshotArgument,
    StoreOption,
    TokenOption,
    configured,
)
from triagebot.config import Config
from triagebot.pipeline import Snapshots
from triagebot.results import Bisection
from triagebot.store import keep_bisection
from triagebot.store.base import read_record
from triagebot.tracker.actions import github_token

Previous = Annotated[
    str | None,
    typer.Option(
        "--previous", metavar="SNAPSHOT", help="Snapshot to diff against (default: the previous build)."
    ),
]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Plan and bodies only; no write.")]
PlanOut = Annotated[
    Path, typer.Option("--out", metavar="DIR", help="Folder for the plan and bodies of a dry run.")
]
MaxWrites = Annotated[
    int | None,
    typer.Option("--max-writes", metavar="N", help="Write cap (default: [tracker] max_writes)."),
]
Event = Annotated[
    Path | None, typer.Option("--event", metavar="FILE", help="Workflow event payload ($GITHUB_EVENT_PATH).")
]
Poll = Annotated[bool, typer.Option("--poll", help="Poll the tracking issues of --repo.")]
Answer = Annotated[
    str | None,
    typer.Option("--answer", metavar="SNAPSHOT", help="Rerun snapshot (file, stream or key) to answer with."),
]
Failed = Annotated[
    str | None,
    typer.Option("--failed", metavar="RESULT", help="The sweep gave no result: its job's result, or why."),
]
Issue = Annotated[int | None, typer.Option("--issue", metavar="N", help="Issue of the command.")]
CommentId = Annotated[
    int | None,
    typer.Option("--comment-id", metavar="ID", help="The command's comment (default: last accepted)."),
]
Link = Annotated[
    str | None,
    typer.Option("--link", metavar="GROUP", help="Pin this crash group (its id) to upstream issue --number."),
]
Number = Annotated[
    int | None,
    typer.Option("--number", min=0, metavar="N", help="The upstream issue of --link (0: unpin the group)."),
]
BisectionFile = Annotated[
    Path | None,
    typer.Option("--bisection", metavar="FILE", help="A bisection (JSON) to keep and answer with."),
]
Outputs = Annotated[
    Path | None,
    typer.Option("--output", metavar="FILE", help="key=value outputs file (default: $GITHUB_OUTPUT)."),
]


@configured("repo", "max_writes", "store")
def publish(
    settings: Config,
    snapshot: SnapshotArgument,
    repo: RepoOption = None,
    previous: Previous = None,
    dry_run: DryRun = False,
    out: PlanOut = Path(".triagebot/issues"),
    max_writes: MaxWrites = None,
    token: TokenOption = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Keep the tracking issues on GitHub true to a snapshot.

    Plans the tracking issues of SNAPSHOT against GitHub, prints the plan and applies only the
    difference (a dry run without a token)."""
    from triagebot.pipeline.publishing import publish_stored  # start-up cost: see the module

    snapshots = Snapshots(settings.store)
    night = snapshots.night(snapshot, settings, previous)
    if github_token(token) and settings.tracker.repo and not dry_run:
        settings.check_publishable(night.snapshot.corpus.suites())
    # Under the store's lock on the repository; recorded as published once every write is done.
    print(publish_stored(night, settings, github_token(token), dry_run, out, store=snapshots.store))


@configured("repo", "store")
def command(
    settings: Config,
    event: Event = None,
    poll: Poll = False,
    answer: Answer = None,
    failed: Failed = None,
    repo: RepoOption = None,
    issue: Issue = None,
    comment_id: CommentId = None,
    link: Link = None,
    number: Number = None,
    bisection: BisectionFile = None,
    output: Outputs = None,
    token: TokenOption = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """/rerun-sweep: read a command, or answer it.

    Reads a command (--event, --poll) and writes the plan of the jobs that carry it out as
    key=value outputs, or answers one on the issue: with the rerun's results (--answer), why
    there are none (--failed), a crash group's pin (--link), or a bisection (--bisection), the
    last two kept in the store."""
    from triagebot.tracker.dispatch import CommandOptions  # start-up cost: see the module
    from triagebot.tracker.dispatch import command as run_command

    snapshots = Snapshots(settings.store, reproductions=False)  # an answer renders none
    kept = None
    if bisection is not None:  # kept first: whatever becomes of the answer, it is never bisected again
        kept = read_record(bisection, Bisection, "bisection")
        keep_bisection(snapshots.store, kept)
    given = CommandOptions(
        event, poll, answer, failed, repo, issue, comment_id, output, github_token(token), link, number, kept
    )  # in the order of its fields
    run_command(given, settings, snapshots.store, snapshots.get)
