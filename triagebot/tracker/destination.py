"""GitHub as one publication reads it, and where its plan goes: one path for every run.

Publishing always reads GitHub through a `GitHubView` and hands its plan to a `PlanWriter`;
which ones is decided once (`destination`), from whether there is a connection and whether the
run is dry:

- `GitHubView` itself is the null GitHub of a run without a token or a repository: nothing is
  read, so GitHub's state is unknown (the plan is made against an empty repository whose labels
  are unknown) and nothing is searched. `ConnectedView` reads the bot's issues, their comments
  and the repository's labels, and searches the upstream repository.
- `FolderWriter` (a dry run, or no token) writes the plan and every body it would write into a
  folder for review; `GitHubWriter` applies it (`apply`) and keeps the store's memory of what it
  wrote.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from triagebot.analysis.triage import with_searches
from triagebot.config import TrackerSettings
from triagebot.errors import TrackerError
from triagebot.report import issue_file, write_files
from triagebot.results import Night, TrackedIssue
from triagebot.tracker.apply import Applied, NotApplied, apply_plan
from triagebot.tracker.github import GitHub
from triagebot.tracker.memory import IssueMemory
from triagebot.tracker.plan import Action, Plan, RemoteState, Verb
from triagebot.tracker.remote import operation, read_state, tracked_issue_numbers, update_issue
from triagebot.tracker.upstream import search_night
from triagebot.tracker.upstream_memory import keep_searches, stored_searches

Say = Callable[[str], None]


class GitHubView:
    """The null GitHub: nothing read, nothing known (see the module docstring)."""

    login: str | None = None  # the bot's account; None when GitHub is not read
    read = False

    def numbers(self, repo: str, flags: Iterable[str], known: Mapping[str, int]) -> dict[str, int]:
        """flag -> the number of its tracking issue, for those found (`known`: the store's)."""
        return {}

    def state(
        self, repo: str, desired: list[TrackedIssue], known: Mapping[str, int] | None = None
    ) -> RemoteState:
        """GitHub's side of `desired` (`known`: marker -> the number the store remembers)."""
        return RemoteState(issues={}, labels=None)

    def searched(
        self, night: Night, settings: TrackerSettings, numbers: dict[str, int], store, *, keep: bool, say: Say
    ) -> Night:
        """`night` with tonight's searches of the upstream repository's issues."""
        return night


class ConnectedView(GitHubView):
    """GitHub read through a connection."""

    read = True

    def __init__(self, gh: GitHub) -> None:
        self.gh = gh
        self.login = gh.login

    def numbers(self, repo: str, flags: Iterable[str], known: Mapping[str, int]) -> dict[str, int]:
        return tracked_issue_numbers(self.gh, repo, flags, known)

    def state(
        self, repo: str, desired: list[TrackedIssue], known: Mapping[str, int] | None = None
    ) -> RemoteState:
        return read_state(self.gh, repo, desired, known)

    def searched(
        self, night: Night, settings: TrackerSettings, numbers: dict[str, int], store, *, keep: bool, say: Say
    ) -> Night:
        """Made once per night and signature, kept in `store` when `keep` (not in a dry run)."""
        upstream = settings.upstream
        if not upstream:
            return night
        own = list(numbers.values()) if upstream == settings.repo else []
        stored = stored_searches(store, upstream)
        made, pace = search_night(
            self.gh,
            upstream,
            night,
            stored,
            own=own,
            cap=settings.upstream_searches_per_night,
            keep=(lambda search: keep_searches(store, [search])) if keep else (lambda search: None),
            say=say,
        )
        if made:
            say(f"searched the issues of {upstream} for {len(made)} signature(s): {pace.requests} request(s)")
        return with_searches(night, {**stored, **{search.signature: search for search in made}})


class PlanWriter(ABC):
    """Where a publication's plan goes."""

    writes_github: bool

    @abstractmethod
    def write(
        self, repo: str, plan: Plan, desired: list[TrackedIssue], max_writes: int
    ) -> tuple[list[Applied], list[NotApplied], list[Path]]:
        """Carry out `plan` (of `desired`): what was applied, what was not (with why), the files
        written."""

    @abstractmethod
    def edit_bodies(
        self, repo: str, written: list[TrackedIssue], relinked: list[TrackedIssue], numbers: dict[str, int]
    ) -> tuple[int, list[str]]:
        """Edit, by number, each body that changed between `written` and `relinked`; how many
        were edited and the one-line reason of each edit that failed."""

    @abstractmethod
    def keep(self, memory: IssueMemory, store) -> None:
        """Save the store's memory of the issues, where GitHub was written."""


class FolderWriter(PlanWriter):
    """The plan and every body it would write, as files in `out` for review."""

    writes_github = False

    def __init__(self, out: Path) -> None:
        self.out = out

    def write(
        self, repo: str, plan: Plan, desired: list[TrackedIssue], max_writes: int
    ) -> tuple[list[Applied], list[NotApplied], list[Path]]:
        # Each body as it would be published (`report.issue_file`); the titles with the plan.
        titles = [f"title of {issue.flag or 'the alert'}: {issue.title}" for issue in desired]
        files = {"plan.txt": "\n".join([*plan.describe(), *titles]) + "\n"}
        files.update({issue_file(issue.flag or "alert"): issue.body for issue in desired})
        for action in plan.actions:
            if action.verb == Verb.comment and action.notice is not None:
                files[f"comment-{action.flag or 'alert'}-{action.notice.kind}.md"] = action.notice.body
        return [], [], write_files(self.out, files)

    def edit_bodies(
        self, repo: str, written: list[TrackedIssue], relinked: list[TrackedIssue], numbers: dict[str, int]
    ) -> tuple[int, list[str]]:
        return 0, []  # nothing was opened, so nothing links to an issue opened now

    def keep(self, memory: IssueMemory, store) -> None:
        return None  # GitHub was not written: the memory stays as it was


class GitHubWriter(PlanWriter):
    """The plan applied on GitHub, within the write cap."""

    writes_github = True

    def __init__(self, gh: GitHub) -> None:
        self.gh = gh

    def write(
        self, repo: str, plan: Plan, desired: list[TrackedIssue], max_writes: int
    ) -> tuple[list[Applied], list[NotApplied], list[Path]]:
        # A backstop should applying ever outgrow the plan; the alert itself is always let through.
        self.gh.max_writes = self.gh.writes + max(max_writes, len(plan.writes))
        applied, not_applied = apply_plan(self.gh, repo, plan)
        return applied, not_applied, []

    def edit_bodies(
        self, repo: str, written: list[TrackedIssue], relinked: list[TrackedIssue], numbers: dict[str, int]
    ) -> tuple[int, list[str]]:
        bodies = {issue.flag: issue.body for issue in written}
        edits, failures = 0, []
        for issue in relinked:
            number = numbers.get(issue.flag)
            if number is None or bodies.get(issue.flag) == issue.body:
                continue
            action = Action(Verb.edit, marker=issue.marker, flag=issue.flag, number=number, body=issue.body)
            try:
                update_issue(self.gh, repo, number, action, fresh=True, what=operation(action, repo, number))
            except TrackerError as error:
                failures.append(str(error))
                continue
            edits += 1
        return edits, failures

    def keep(self, memory: IssueMemory, store) -> None:
        memory.save(store)


def destination(gh: GitHub | None, *, dry_run: bool, out: Path) -> tuple[GitHubView, PlanWriter]:
    """How a publication reads GitHub and where its plan goes: through `gh` when there is one
    (read only in a dry run: the plan and bodies go to `out`), else neither."""
    view = ConnectedView(gh) if gh is not None else GitHubView()
    writer = GitHubWriter(gh) if gh is not None and not dry_run else FolderWriter(out)
    return view, writer
