"""The one door to GitHub: a PyGithub connection wrapped in retries, rate limits and a write budget.

PyGithub's own retry and request throttling are switched off (`retry=0`, no pauses between
requests) because both sleep through `time.sleep`, which a test cannot skip. Every call goes
through `GitHub.read` or `GitHub.write` instead, which:

- retry 5xx answers and dropped connections with exponential backoff;
- honour the secondary rate limit (`Retry-After`, in seconds or as an HTTP date, as HTTP allows)
  and the primary one (`X-RateLimit-Remaining: 0` until `X-RateLimit-Reset`), refusing to wait
  longer than `max_wait` seconds;
- retry a 404 for a short while when the object was created moments ago (GitHub's replicas
  catch up on their own time);
- space writes a second apart, as GitHub asks of integrations to avoid secondary limits;
- never retry a create blindly: a create whose answer was lost is retried only after its
  `find_existing` callback (look before you write) has found nothing, so no duplicate is made;
- turn every failure into a `GitHubError` (a `TrackerError`): one line naming the operation
  and the issue, then what GitHub answered, e.g. "edit body of pytorch/pytorch#123: GitHub
  answered 422: body is too long (maximum is 65536 characters)". No PyGithub or HTTP
  exception leaves this module, and no other module reads PyGithub's exceptions: callers that
  expect a refusal (a 403, a 404, a 422) read the error's `status` and `answer`.

`sleep` and `clock` are injected, so tests run every fault without waiting.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import github
import requests
from github import Auth, GithubException

from triagebot.errors import TrackerError

T = TypeVar("T")

DEFAULT_API_URL = "https://api.github.com"
ACTIONS_BOT_LOGIN = "github-actions[bot]"
"""The author of everything written with a GitHub Actions `GITHUB_TOKEN`, which cannot call /user."""

CONNECTION_ERRORS = (
    requests.exceptions.ConnectionError,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.Timeout,
)


class GitHubError(TrackerError):
    """GitHub refused or failed an operation; `status` is its HTTP answer (None: no answer) and
    `answer` GitHub's own message, for a caller that expects a refusal (a 403, a 404, a 422)."""

    def __init__(self, message: str, status: int | None = None, answer: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.answer = answer


class GitHubFault(GitHubError):
    """GitHub kept failing after every retry, could not be reached, or asked for a wait longer
    than allowed: the operations after this one would fail the same way."""


class WriteBudgetExceeded(TrackerError):
    """A run tried more writes than `max_writes`: something produced a flood, stop it."""


def _one_line(text: object, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def github_message(error: GithubException) -> str:
    """The `message` of GitHub's answer ("Resource not accessible by integration"), or ""."""
    return str(error.data.get("message") or "") if isinstance(error.data, dict) else ""


def describe(error: GithubException) -> str:
    """What GitHub answered, in one line: the messages of its `errors` list (a 422 names the
    field and the rule), else its `message`."""
    data = error.data
    message, details = "", []
    if isinstance(data, dict):
        message = str(data.get("message") or "")
        for item in data.get("errors") or []:
            if isinstance(item, dict):
                text = item.get("message") or " ".join(
                    str(item[key]) for key in ("resource", "field", "code") if item.get(key)
                )
            else:
                text = item
            details.append(_one_line(text))
    elif data:
        message = str(data)
    text = "; ".join(dict.fromkeys(d for d in details if d)) or message or "no message"
    return f"GitHub answered {error.status}: {_one_line(text)}"


_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\")]+)")


def unreachable(error: Exception) -> str:
    """Why a connection failed, in a few words (not urllib3's nested representation)."""
    found = _ERRNO.search(str(error))
    if found:
        return found.group(1).strip()
    if isinstance(error, requests.exceptions.Timeout):
        return "timed out"
    return type(error).__name__


def retry_after(value: str, now: float) -> float | None:
    """Seconds a `Retry-After` header asks to wait, from `now` (epoch seconds): it is either a
    number of seconds or an HTTP date (RFC 9110); None when it is neither."""
    text = value.strip()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # "-0000": HTTP dates are always in GMT
        when = when.replace(tzinfo=UTC)
    return when.timestamp() - now


@dataclass
class RetryPolicy:
    attempts: int = 6  # tries per call, the first included
    backoff: float = 1.0  # seconds before the first retry, doubled each time
    max_backoff: float = 60.0
    max_wait: float = 900.0  # longest rate-limit wait accepted before giving up
    secondary_default_wait: float = 60.0  # GitHub: wait a minute when no Retry-After is sent
    not_found_attempts: int = 5  # 404s tolerated on an object created moments ago
    write_interval: float = 1.0  # seconds between two writes


@dataclass
class GitHub:
    """A PyGithub client plus the policies above. Build it with `connect`."""

    client: github.Github
    login: str
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    max_writes: int | None = None
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.time
    writes: int = 0
    retries: int = 0
    slept: float = 0.0
    _last_write: float | None = None

    def repo(self, full_name: str) -> Any:
        return self.client.get_repo(full_name)  # lazy: the client is built with lazy=True

    def read_json(self, url: str, *, what: str, parameters: dict[str, Any] | None = None) -> tuple[dict, Any]:
        """GET an API address PyGithub has no object for (a search, a collaborator's
        permission): the answer's headers and JSON, read as every other read is."""
        requester = self.client.requester
        return self.read(lambda: requester.requestJsonAndCheck("GET", url, parameters=parameters), what=what)

    def read(self, call: Callable[[], T], *, what: str = "read from GitHub", fresh: bool = False) -> T:
        """Run a read (listings included: the whole listing is fetched again on a retry).
        `what` names the operation and its issue in the error, should it fail."""
        return self._run(call, what=what, fresh=fresh, lost_answer=call)

    def write(
        self,
        call: Callable[[], T],
        *,
        what: str = "write to GitHub",
        find_existing: Callable[[], T | None] | None = None,
        fresh: bool = False,
    ) -> T:
        """Run a write. Edits are idempotent and simply retried; a create passes `find_existing`,
        consulted whenever the create may have happened although its answer was lost. `fresh`:
        the target was created moments ago, so a 404 means "not replicated yet"."""
        if self.max_writes is not None and self.writes >= self.max_writes:
            raise WriteBudgetExceeded(f"{what}: over the limit of {self.max_writes} writes in one run")
        self._pace()
        self.writes += 1

        def retry_after_lost_answer() -> T:
            if find_existing is not None:
                existing = self.read(find_existing, what=f"{what} (looking whether it happened)")
                if existing is not None:
                    return existing
            return call()

        try:
            return self._run(call, what=what, fresh=fresh, lost_answer=retry_after_lost_answer)
        finally:
            self._last_write = self.clock()

    def _pace(self) -> None:
        if self._last_write is None:
            return
        wait = self.policy.write_interval - (self.clock() - self._last_write)
        if wait > 0:
            self._wait(wait)

    def _wait(self, seconds: float) -> None:
        self.slept += seconds
        self.sleep(seconds)

    def _run(self, call: Callable[[], T], *, what: str, fresh: bool, lost_answer: Callable[[], T]) -> T:
        attempt_call = call
        not_found = 0
        status: int | None = None
        for attempt in range(1, self.policy.attempts + 1):
            try:
                return attempt_call()
            except CONNECTION_ERRORS as error:
                wait, reason = self._backoff(attempt), f"cannot reach GitHub: {unreachable(error)}"
                status = None
                attempt_call = lost_answer  # the request may have been applied
            except GithubException as error:
                wait, reason = self._wait_for(error, attempt)
                status = error.status
                if wait is None and error.status == 404 and fresh:
                    not_found += 1
                    if not_found < self.policy.not_found_attempts:
                        wait, reason = self._backoff(attempt), "not found yet after create"
                if wait is None:
                    raise GitHubError(
                        f"{what}: {describe(error)}", error.status, github_message(error)
                    ) from None
                reason = reason or describe(error)
                if error.status >= 500:
                    reason = describe(error)
                    attempt_call = lost_answer  # a 502 may hide a write that happened
            except requests.exceptions.RequestException as error:
                raise GitHubError(f"{what}: request failed: {_one_line(error)}") from None
            if attempt == self.policy.attempts:
                raise GitHubFault(f"{what}: still failing after {attempt} attempts: {reason}", status)
            if wait > self.policy.max_wait:
                raise GitHubFault(
                    f"{what}: GitHub asks to wait {wait:.0f}s ({reason}), over {self.policy.max_wait:.0f}s",
                    status,
                )
            self.retries += 1
            self._wait(wait)
        raise AssertionError("unreachable")

    def _backoff(self, attempt: int) -> float:
        return min(self.policy.backoff * 2 ** (attempt - 1), self.policy.max_backoff)

    def _wait_for(self, error: GithubException, attempt: int) -> tuple[float | None, str]:
        """How long to wait before retrying `error`, or None when it must not be retried."""
        headers = {k.lower(): v for k, v in (error.headers or {}).items()}
        status = error.status
        if status >= 500:
            return self._backoff(attempt), f"HTTP {status}"
        if status not in (403, 429):
            return None, ""
        message = github_message(error)
        if "retry-after" in headers:
            wait = retry_after(headers["retry-after"], self.clock())
            if wait is None:  # unreadable: as if GitHub had sent none
                return self.policy.secondary_default_wait * 2 ** (attempt - 1), "secondary rate limit"
            return max(wait, 1.0), "secondary rate limit"
        if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
            # One second more: the reset instant is rounded down to the second.
            return max(float(headers["x-ratelimit-reset"]) - self.clock(), 0.0) + 1.0, "primary rate limit"
        if "secondary rate limit" in message.lower() or status == 429:
            return self.policy.secondary_default_wait * 2 ** (attempt - 1), "secondary rate limit"
        return None, ""


def api_url() -> str:
    return os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL


def bot_login(connection: GitHub, base_url: str) -> str:
    """The login the token writes as. An Actions `GITHUB_TOKEN` is refused on /user (403,
    "Resource not accessible by integration"): everything it writes is by github-actions[bot]."""

    try:
        return connection.read(
            lambda: connection.client.get_user().login, what=f"read the token's login from {base_url}"
        )
    except GitHubError as error:
        if error.status == 403 and "not accessible by integration" in error.answer.lower():
            return ACTIONS_BOT_LOGIN
        raise


def connect(
    token: str,
    *,
    base_url: str | None = None,
    max_writes: int | None = None,
    policy: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
    timeout: float = 30.0,
) -> GitHub:
    """Open a connection to `base_url` (default: $GITHUB_API_URL, else api.github.com) and read
    the bot's own login from the API."""
    base_url = (base_url or api_url()).rstrip("/")
    client = github.Github(
        base_url=base_url,
        auth=Auth.Token(token),
        retry=0,
        seconds_between_requests=None,
        seconds_between_writes=None,
        timeout=int(timeout),
        per_page=100,
        lazy=True,  # objects are fetched only when a field is read: fewer requests
    )
    connection = GitHub(client, login="", policy=policy or RetryPolicy(), sleep=sleep, clock=clock)
    connection.login = bot_login(connection, base_url)
    connection.max_writes = max_writes
    return connection
