"""Publishing a snapshot: desired state, GitHub's state, the plan, then only the difference.

`--dry-run`, and any run without a token, prints the plan and writes the bodies to a folder
instead of calling GitHub (without a token GitHub's state is unknown, so the plan is made
against an empty repository). A plan with more writes than `max_writes` is not applied: one
alert issue, found again by its marker, says why, so a broken nightly is one alert, not a flood.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from triagebot.report.markers import alert_marker
from triagebot.results import TrackedIssue
from triagebot.tracker.github import GitHub
from triagebot.tracker.plan import Action, Plan, RemoteState, Verb, make_plan
from triagebot.tracker.remote import Applied, apply_plan, read_state, update_issue
from triagebot.tracker.render import render


@dataclass
class Publication:
    plan: Plan
    applied: list[Applied] = field(default_factory=list)
    held: bool = False  # over the write cap: the alert plan replaced the real one
    held_writes: int = 0
    github_read: bool = False
    files: list[Path] = field(default_factory=list)


def alert_issue(key: str, planned: list[str], max_writes: int, labels: list[str]) -> TrackedIssue:
    marker = alert_marker(key)
    return TrackedIssue(
        flag="",
        marker=marker,
        title=f"[triagebot] publishing {key} held: {len(planned)} changes over the limit of {max_writes}",
        body=render(
            "tracker-alert.md.j2",
            marker=marker,
            key=key,
            writes=len(planned),
            max_writes=max_writes,
            planned=planned,
        ),
        labels=labels,
        open=True,
    )


def write_bodies(desired: list[TrackedIssue], plan: Plan, folder: Path) -> list[Path]:
    """The plan and every body it would write, as files for review."""
    folder.mkdir(parents=True, exist_ok=True)
    files = [folder / "plan.txt"]
    files[0].write_text("\n".join(plan.describe()) + "\n", encoding="utf-8")
    for issue in desired:
        name = issue.flag or "alert"
        path = folder / f"issue-{name}.md"
        path.write_text(f"# {issue.title}\n\n{issue.body}", encoding="utf-8")
        files.append(path)
    for action in plan.actions:
        if action.verb == Verb.comment and action.notice is not None:
            path = folder / f"comment-{action.flag or 'alert'}-{action.notice.kind}.md"
            path.write_text(action.notice.body, encoding="utf-8")
            files.append(path)
    return files


def publish(
    desired: list[TrackedIssue],
    *,
    key: str,
    repo: str,
    gh: GitHub | None,
    max_writes: int,
    dry_run: bool = False,
    out_dir: Path | None = None,
) -> Publication:
    """Plan `desired` against `repo` and, unless dry (or without `gh`), apply the plan."""
    remote = read_state(gh, repo, desired) if gh is not None else RemoteState(issues={}, labels=None)
    plan = make_plan(desired, remote)
    held = False
    held_writes = 0
    if len(plan.writes) > max_writes:
        held, held_writes = True, len(plan.writes)
        # No labels on the alert: creating them would shrink the next run's plan under the cap.
        alert = alert_issue(key, [action.describe() for action in plan.writes], max_writes, [])
        alert_remote = (
            read_state(gh, repo, [alert]) if gh is not None else RemoteState(issues={}, labels=None)
        )
        desired, plan = [alert], make_plan([alert], alert_remote)
    publication = Publication(plan, held=held, held_writes=held_writes, github_read=gh is not None)
    if out_dir is not None and (dry_run or gh is None):
        publication.files = write_bodies(desired, plan, out_dir)
    if gh is not None and not dry_run:
        # A backstop should applying ever outgrow the plan; the alert itself is always let through.
        gh.max_writes = gh.writes + max(max_writes, len(plan.writes))
        publication.applied = apply_plan(gh, repo, plan)
    return publication


def relink_bodies(
    gh: GitHub, repo: str, written: list[TrackedIssue], relinked: list[TrackedIssue], numbers: dict[str, int]
) -> int:
    """Edit, by number, each body that changed between `written` and `relinked`; returns the count."""
    bodies = {issue.flag: issue.body for issue in written}
    edits = 0
    for issue in relinked:
        number = numbers.get(issue.flag)
        if number is None or bodies.get(issue.flag) == issue.body:
            continue
        action = Action(Verb.edit, marker=issue.marker, flag=issue.flag, number=number, body=issue.body)
        update_issue(gh, repo, number, action, fresh=True)
        edits += 1
    return edits
