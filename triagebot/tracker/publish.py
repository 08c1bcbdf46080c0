"""Publishing a snapshot: desired state, GitHub's state, the plan, then only the difference.

GitHub is read through a view and the plan goes to a writer (`destination`), whatever the run:
`--dry-run`, and any run without a token, writes the plan and the bodies to a folder instead of
calling GitHub (without a token GitHub's state is unknown, so the plan is made against an empty
repository). A plan with more writes than `max_writes` is not applied: one
alert issue, found again by its marker, says why, so a broken nightly is one alert, not a flood.

Between reading GitHub and planning, the people's rules apply (`people`: an issue a person
closed stays closed; `cc`: people a body edit adds are mentioned in a comment), and after
applying, the store's memory of each issue (`memory`) is brought up to date with what was
really written. A write GitHub refuses does not stop the others (`apply`): the publication
lists what was applied, what GitHub refused and what failed, and running again finishes the
job without duplicates. Labels GitHub refused are remembered and not asked for again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from triagebot.report.markers import alert_marker
from triagebot.results import TrackedIssue
from triagebot.tracker import cc as cc_routing
from triagebot.tracker.apply import Applied, NotApplied
from triagebot.tracker.destination import GitHubView, PlanWriter
from triagebot.tracker.memory import FlagFacts, IssueMemory
from triagebot.tracker.people import respect_closer
from triagebot.tracker.plan import Plan, RemoteState, Verb, make_plan
from triagebot.tracker.render import render


@dataclass
class Publication:
    plan: Plan
    applied: list[Applied] = field(default_factory=list)
    not_applied: list[NotApplied] = field(default_factory=list)
    held: bool = False  # over the write cap: the alert plan replaced the real one
    held_writes: int = 0
    github_read: bool = False
    files: list[Path] = field(default_factory=list)
    numbers: dict[str, int] = field(default_factory=dict)  # flag -> its issue, where one exists

    @property
    def refused(self) -> list[NotApplied]:
        """Changes GitHub refused (403): said once, never a failure of the night."""
        return [missing for missing in self.not_applied if missing.refused]

    @property
    def failed(self) -> list[NotApplied]:
        """Changes that failed: a run again applies them."""
        return [missing for missing in self.not_applied if not missing.refused]


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


def with_people(
    desired: list[TrackedIssue],
    remote: RemoteState,
    memory: IssueMemory,
    facts: dict[str, FlagFacts],
    *,
    bot: str,
    key: str,
) -> tuple[list[TrackedIssue], dict[str, dict[str, object]]]:
    """`desired` with the people's rules applied; flag -> what to remember of who closed it."""
    adjusted, remember = [], {}
    for issue in desired:
        found, record, fact = remote.issues.get(issue.marker), memory.get(issue.flag), facts.get(issue.flag)
        verdict = respect_closer(issue, found, record, fact, bot=bot, key=key)
        issue, remember[issue.flag] = verdict.desired, verdict.remember
        if found is not None and fact is not None and (issue.open or found.open):  # none on a closed issue
            notice = cc_routing.cc_notice(issue.flag, key, fact.cc, fact.routes, record, fact.previous_cc)
            if notice is not None:
                issue = issue.model_copy(update={"notices": [*issue.notices, notice]})
        adjusted.append(issue)
    return adjusted, remember


def remember_issues(
    memory: IssueMemory,
    desired: list[TrackedIssue],
    remote: RemoteState,
    publication: Publication,
    facts: dict[str, FlagFacts],
    remember: dict[str, dict[str, object]],
) -> None:
    """Bring the memory up to what GitHub now shows: the number of every flag's issue, and the
    signatures and people of its body where every write to it went through."""
    created = {a.action.marker: a.number for a in publication.applied if a.action.verb == Verb.create}
    failed = {n.action.marker for n in publication.not_applied if not n.refused_labels}
    for issue in desired:
        found = remote.issues.get(issue.marker)
        number = found.number if found is not None else created.get(issue.marker)
        if not issue.flag or number is None:
            continue
        publication.numbers[issue.flag] = number
        fields = dict(remember.get(issue.flag, {}))
        fact = facts.get(issue.flag)
        if fact is not None and issue.marker not in failed:
            record = memory.get(issue.flag)
            reached = list(record.cc) if record is not None and record.number == number else []
            fields.update(
                signatures=list(fact.signatures),
                cc=reached + [p for p in fact.cc if p.lower() not in {r.lower() for r in reached}],
            )
        memory.remember(issue.flag, number, **fields)


def without_labels(desired: list[TrackedIssue], refused: set[str]) -> list[TrackedIssue]:
    """`desired` without the labels GitHub refused to set before: asking again would only be
    refused again, every night."""
    if not refused:
        return desired
    return [
        issue.model_copy(update={"labels": [label for label in issue.labels if label not in refused]})
        for issue in desired
    ]


def plan_and_apply(
    desired: list[TrackedIssue],
    *,
    key: str,
    repo: str,
    github: GitHubView,
    writer: PlanWriter,
    max_writes: int,
    memory: IssueMemory | None = None,
    facts: dict[str, FlagFacts] | None = None,
) -> Publication:
    """Plan `desired` against `repo` as `github` shows it and hand the plan to `writer` (see
    `destination`: a dry run's folder, or GitHub). `memory`: the store's records of the issues
    (updated in place; the writer keeps them); `facts`: each flag's signatures and cc tonight,
    for the people's rules."""
    memory = memory if memory is not None else IssueMemory(repo)
    facts = facts or {}
    desired = without_labels(desired, memory.refused_labels)
    numbers = memory.numbers([issue.flag for issue in desired])
    known = {issue.marker: numbers[issue.flag] for issue in desired if issue.flag in numbers}
    remote = github.state(repo, desired, known)
    # Against an unread GitHub (no issue found) the people's rules change nothing.
    desired, remember = with_people(desired, remote, memory, facts, bot=github.login or "", key=key)
    plan = make_plan(desired, remote)
    held = False
    held_writes = 0
    tracked = desired
    if len(plan.writes) > max_writes:
        held, held_writes = True, len(plan.writes)
        # No labels on the alert: creating them would shrink the next run's plan under the cap.
        alert = alert_issue(key, [action.describe() for action in plan.writes], max_writes, [])
        desired, plan = [alert], make_plan([alert], github.state(repo, [alert]))
    publication = Publication(plan, held=held, held_writes=held_writes, github_read=github.read)
    publication.applied, publication.not_applied, publication.files = writer.write(
        repo, plan, desired, max_writes
    )
    # A token refused more than labels (no write access at all) is a person's to fix:
    # its labels are not set aside as refused for good.
    if not any(missing.status == 403 for missing in publication.failed):
        for missing in publication.refused:
            memory.refuse_labels(missing.refused_labels, missing.reason, key)
    if not held:  # kept by the writer where GitHub was written
        remember_issues(memory, tracked, remote, publication, facts, remember)
    return publication
