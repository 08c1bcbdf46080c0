"""A client of one simple package index (PyTorch's nightly index, PyPI): which builds of a
project exist for a Python and platform, between two dates or two versions, and the newest.

Every request goes through one `RetryPolicy` (a time limit, retries, one error line); the
transport can be swapped (`httpx.MockTransport` in unit tests, a local server in the others).
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date

import httpx
from packaging.tags import Tag, compatible_tags, cpython_tags, platform_tags
from packaging.utils import parse_wheel_filename
from packaging.version import InvalidVersion, Version

from triagebot.errors import PackageIndexError
from triagebot.nightlies.pages import ACCEPT, parse_page
from triagebot.nightlies.retry import RetryPolicy
from triagebot.results import Wheel

NIGHTLY_INDEX = "https://download.pytorch.org/whl/nightly"
"""PyTorch's nightly index; a variant (cu128, cpu, rocm6.4, ...) is a folder beneath it."""
PYPI_INDEX = "https://pypi.org/simple"
_VARIANT = re.compile(r"[a-z][a-z0-9.]*")


@dataclass(frozen=True)
class Target:
    """The interpreter and platform builds must install on: a CPython version and platform
    tags, best first (the host's by default)."""

    python: str = f"{sys.version_info.major}.{sys.version_info.minor}"
    platforms: tuple[str, ...] = field(default_factory=lambda: tuple(platform_tags()))

    @classmethod
    def of(cls, python: str | None = None, platforms: Iterable[str] | None = None) -> Target:
        """A target from the command line's `--python 3.11` and `--platform A,B` (each
        defaulting to the host's); a malformed version is a one-line error."""
        if python is not None and not re.fullmatch(r"3\.\d{1,2}", python):
            raise PackageIndexError(f"--python {python!r} is not a CPython version such as 3.11")
        chosen = tuple(platforms or ())
        return cls(python or cls.python, chosen or tuple(platform_tags()))

    def tags(self) -> list[Tag]:
        """Every tag a wheel may carry to install here, best first."""
        version = tuple(int(part) for part in self.python.split("."))
        return [
            *cpython_tags(python_version=version, platforms=self.platforms),
            *compatible_tags(python_version=version, platforms=self.platforms),
        ]

    def describe(self) -> str:
        return f"Python {self.python} on {self.platforms[0] if self.platforms else 'any platform'}"


def version_of(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise PackageIndexError(f"{text!r} is not a version") from None


class PackageIndex:
    """One simple index, read through `policy`. Use as a context manager, or `close()` it."""

    def __init__(
        self,
        url: str,
        *,
        policy: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = url.rstrip("/") + "/"
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._client = httpx.Client(
            transport=transport,
            timeout=self.policy.timeout,
            follow_redirects=True,
            headers={"Accept": ACCEPT, "User-Agent": "triagebot (nightly index client)"},
        )

    def __enter__(self) -> PackageIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def files(self, project: str) -> list[Wheel]:
        """Every wheel of `project` the index lists (its page `<index>/<project>/`)."""
        page = f"{self.url}{project}/"
        response = self.policy.send(self._client, self._client.build_request("GET", page), sleep=self._sleep)
        content_type = response.headers.get("content-type", "")
        try:
            text = response.text
        except (UnicodeDecodeError, LookupError):
            raise PackageIndexError(f"{page}: the answer is not text") from None
        return parse_page(text, content_type, str(response.url), project)

    def builds(
        self,
        project: str,
        target: Target | None = None,
        *,
        since: date | None = None,
        until: date | None = None,
    ) -> list[Wheel]:
        """One wheel per version of `project` that installs on `target` (the best-tagged),
        oldest version first; with `since`/`until`, only builds dated within them (both days
        included; a build of no known date is then left out)."""
        ranked = {tag: rank for rank, tag in reversed(list(enumerate((target or Target()).tags())))}
        best: dict[Version, tuple[int, Wheel]] = {}
        for wheel in self.files(project):
            rank = min(ranked.get(tag, len(ranked)) for tag in parse_wheel_filename(wheel.filename)[3])
            if rank == len(ranked) or not _dated_within(wheel.date, since, until):
                continue
            version = Version(wheel.version)
            if version not in best or rank < best[version][0]:
                best[version] = (rank, wheel)
        return [best[version][1] for version in sorted(best)]

    def newest(self, project: str, target: Target | None = None) -> Wheel:
        """The newest build of `project` for `target`; none is a `PackageIndexError`."""
        found = self.builds(project, target)
        if not found:
            where = (target or Target()).describe()
            raise PackageIndexError(f"{self.url}{project}/ lists no wheel of {project} for {where}")
        return found[-1]

    def between(self, project: str, first: str, last: str, target: Target | None = None) -> list[Wheel]:
        """The builds from version `first` to version `last`, both included, oldest first.
        Either end missing from the index is an error naming it."""
        found = self.builds(project, target)
        low, high = version_of(first), version_of(last)
        listed = {Version(wheel.version) for wheel in found}
        for end in (low, high):
            if end not in listed:
                where = (target or Target()).describe()
                raise PackageIndexError(f"{self.url}{project}/ lists no {project} {end} for {where}")
        return [wheel for wheel in found if low <= Version(wheel.version) <= high]


def _dated_within(day: date | None, since: date | None, until: date | None) -> bool:
    if since is None and until is None:
        return True
    if day is None:
        return False
    return (since is None or since <= day) and (until is None or day <= until)


def nightly_index(variant: str, base: str = NIGHTLY_INDEX, **options) -> PackageIndex:
    """PyTorch's nightly index for `variant` (cu128, cpu, ...)."""
    if not _VARIANT.fullmatch(variant):
        raise PackageIndexError(f"nightly variant {variant!r} is not a folder name such as cu128 or cpu")
    return PackageIndex(f"{base.rstrip('/')}/{variant}/", **options)
