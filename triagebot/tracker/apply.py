"""Applying a plan: every write tried in order, each failure contained to what it touches.

- A change GitHub *refuses for good* (403 on labels, which an account without triage rights
  may not set; 403 on a comment to an issue that is locked) skips that change alone; it is
  named, and the issue's other changes (body, notices, close) still happen. Labels refused
  once are not offered again in the same run (`refused_labels`), and the caller remembers
  them so that later nights do not ask again.
- A change that *fails* otherwise (a 422, a 404, a 403 on an edit: the token may not write
  issues at all, which a person must fix) is named too and skips that change alone, except a
  failed create: the issue's other changes need its number.
- When GitHub itself is failing (retries exhausted, a rate-limit wait too long) or the write
  cap is reached, the remaining writes are not tried.
- An issue is opened only after a last look for one carrying its marker (another publisher may
  have opened it since GitHub was read), so that two runs never open the same issue twice.

The caller learns what was applied, what was refused and what failed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from triagebot.errors import TrackerError
from triagebot.tracker.github import GitHub, GitHubError, GitHubFault, WriteBudgetExceeded
from triagebot.tracker.plan import Action, Plan, Verb
from triagebot.tracker.remote import (
    create_issue,
    create_label,
    find_by_marker,
    issue_locked,
    list_bot_issues,
    operation,
    update_issue,
)

LABEL_VERBS = frozenset({Verb.create_label, Verb.add_labels})


@dataclass
class Applied:
    action: Action
    number: int | None


@dataclass
class NotApplied:
    action: Action
    number: int | None
    reason: str  # one line: the operation, the issue, and why
    refused: bool = False  # GitHub refused it for good: trying again would be refused again
    status: int | None = None  # GitHub's answer, when it gave one

    @property
    def refused_labels(self) -> list[str]:
        """The labels GitHub refused to create or set, if this is such a refusal."""
        return list(self.action.labels) if self.refused and self.action.verb in LABEL_VERBS else []


def forbidden(error: GitHubError) -> bool:
    """Whether GitHub refused the change itself (rate limits are 403s too, but are waited out
    and end as a `GitHubFault`)."""
    return error.status == 403 and not isinstance(error, GitHubFault)


@dataclass
class Applying:
    """One plan being applied: what was created, refused and failed so far."""

    gh: GitHub
    repo: str
    created: dict[str, int]
    done: list[Applied]
    not_done: list[NotApplied]
    failed_creates: set[str]
    refused_labels: set[str]
    stop: str | None = None

    def apply(self, action: Action) -> None:
        number = action.number or self.created.get(action.marker)
        action = self._without_refused_labels(action)
        if action is None:
            return  # every label it would set was refused earlier in this run, and said so
        what = operation(action, self.repo, number)
        if self.stop is not None:
            self.not_done.append(NotApplied(action, number, f"{what}: not tried: {self.stop}"))
            return
        if action.marker and action.marker in self.failed_creates:
            reason = f"{what}: not tried: the issue could not be opened"
            self.not_done.append(NotApplied(action, number, reason))
            return
        try:
            number = self._write(action, number, what)
        except (GitHubFault, WriteBudgetExceeded) as error:
            self.not_done.append(NotApplied(action, number, str(error)))
            failing = isinstance(error, GitHubFault)
            self.stop = "GitHub was failing" if failing else "the write cap was reached"
            return
        except GitHubError as error:
            self._contain(
                NotApplied(action, number, str(error), self._for_good(action, number, error), error.status)
            )
            return
        except TrackerError as error:
            self._contain(NotApplied(action, number, str(error)))
            return
        self.done.append(Applied(action, number))

    def _write(self, action: Action, number: int | None, what: str) -> int | None:
        if action.verb == Verb.create_label:
            create_label(self.gh, self.repo, action.labels[0], what)
        elif action.verb == Verb.create:
            number = self._open(action, what)
        elif number is None:
            raise TrackerError(f"{what}: the issue was never opened")
        else:
            update_issue(self.gh, self.repo, number, action, fresh=action.marker in self.created, what=what)
        return number

    def _open(self, action: Action, what: str) -> int:
        """Open the issue of `action`, unless one carrying its marker appeared since GitHub was
        read (another publisher): then that one is the issue."""
        listed = list_bot_issues(self.gh, self.repo)
        found = find_by_marker(listed, action.marker)
        if found is not None:
            number = found.number
        else:
            title, body = action.title or "", action.body or ""
            number = create_issue(self.gh, self.repo, action.marker, title, body, action.labels, what=what)
        self.created[action.marker] = number
        return number

    def _for_good(self, action: Action, number: int | None, error: GitHubError) -> bool:
        """Whether GitHub refused `action` for a reason no run of the bot can change: labels
        its account may not set, a comment on a locked conversation."""
        if not forbidden(error):
            return False
        if action.verb in LABEL_VERBS:
            return True
        return action.verb == Verb.comment and number is not None and self._locked(number)

    def _locked(self, number: int) -> bool:
        try:
            return issue_locked(self.gh, self.repo, number)
        except TrackerError:
            return False  # unknown: the refusal is then a failure, said as GitHub gave it

    def _contain(self, missing: NotApplied) -> None:
        self.not_done.append(missing)
        self.refused_labels.update(missing.refused_labels)
        if missing.action.verb == Verb.create and missing.action.marker:
            self.failed_creates.add(missing.action.marker)

    def _without_refused_labels(self, action: Action) -> Action | None:
        if action.verb not in (Verb.add_labels, Verb.create) or not self.refused_labels:
            return action
        labels = [label for label in action.labels if label not in self.refused_labels]
        if action.verb == Verb.add_labels and not labels:
            return None
        return replace(action, labels=labels)


def apply_plan(gh: GitHub, repo_name: str, plan: Plan) -> tuple[list[Applied], list[NotApplied]]:
    """Carry out the writes of `plan` in order, contained as the module docstring says; returns
    what was done (issue numbers filled in) and what was not, with why."""
    applying = Applying(gh, repo_name, {}, [], [], set(), set())
    for action in plan.writes:
        applying.apply(action)
    return applying.done, applying.not_done
