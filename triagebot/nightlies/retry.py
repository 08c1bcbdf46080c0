"""One retry policy for every request to a package index: a time limit per request, retries of
what may pass (a timeout, a dropped connection, 429 and 5xx answers, `Retry-After` honoured in
seconds or as a date), and one `PackageIndexError` line when it does not."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from triagebot.errors import PackageIndexError

RETRIED_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 4  # tries per request, the first included
    timeout: float = 20.0  # seconds to connect, and between two reads of the answer
    backoff: float = 1.0  # seconds before the first retry, doubled each time
    max_backoff: float = 30.0
    max_wait: float = 120.0  # the longest `Retry-After` accepted before giving up

    def backoff_for(self, attempt: int) -> float:
        """Seconds to wait after failed try number `attempt` (1-based)."""
        return min(self.backoff * 2 ** (attempt - 1), self.max_backoff)

    def wait_for(self, response: httpx.Response, attempt: int, now: datetime) -> float:
        """Seconds to wait before trying again after `response`: its `Retry-After` when it
        gives one (seconds or an HTTP date), else the backoff."""
        header = response.headers.get("retry-after", "").strip()
        if not header:
            return self.backoff_for(attempt)
        if header.isdigit():
            return float(header)
        try:
            when = parsedate_to_datetime(header)
        except (TypeError, ValueError):
            return self.backoff_for(attempt)  # unreadable: treated as absent
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return max((when - now).total_seconds(), 0.0)

    def send(
        self,
        client: httpx.Client,
        request: httpx.Request,
        *,
        sleep: Callable[[float], None] = time.sleep,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> httpx.Response:
        """`request` sent until it is answered with anything but a retried status, or the tries
        are spent; a 4xx that is not retried, or the last failure, is a `PackageIndexError`."""
        url = str(request.url)
        problem = ""
        for attempt in range(1, self.attempts + 1):
            try:
                response = client.send(request)
            except httpx.TimeoutException:
                problem, wait = f"no answer within {self.timeout:g} s", self.backoff_for(attempt)
            except httpx.TransportError as error:
                problem, wait = f"cannot connect ({_first_line(error)})", self.backoff_for(attempt)
            else:
                if response.status_code < 400:
                    return response
                problem = f"HTTP {response.status_code}"
                if response.status_code not in RETRIED_STATUSES:
                    raise PackageIndexError(f"{url}: {problem}{_meaning(response.status_code)}")
                wait = self.wait_for(response, attempt, now())
                if wait > self.max_wait:
                    raise PackageIndexError(
                        f"{url}: {problem}, and the index asks to wait {wait:.0f} s "
                        f"(more than {self.max_wait:g} s)"
                    )
            if attempt < self.attempts:
                sleep(wait)
        raise PackageIndexError(f"{url}: {problem} after {self.attempts} tries")


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _meaning(status: int) -> str:
    if status == 404:
        return " (no such page: is the project, variant or index right?)"
    if status in (401, 403):
        return " (refused)"
    return ""
