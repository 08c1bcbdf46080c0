"""Package indexes: which torch nightlies (and transformers releases) exist, without torch.

Public API, for cli and bisect:

- `PackageIndex(url, policy=, transport=)`: a simple index (PEP 691 JSON where it is served,
  as on PyPI; PEP 503 HTML otherwise, as on PyTorch's index, which serves only static HTML).
  `files(project)`, `builds(project, target, since=, until=)` (one wheel per version that
  installs on `target`, oldest first, within two dates), `newest(project, target)`,
  `between(project, first, last, target)` (versions, both ends included and required).
- `nightly_index(variant)`: PyTorch's nightly index for cu128, cpu, ...; `PYPI_INDEX`.
- `Target(python, platforms)` / `Target.of(...)`: the interpreter and platform builds must
  install on (the host's by default).
- `RetryPolicy`: the time limit per request and the retries; every failure is one
  `PackageIndexError` line.
- `check_newest(index, target, stored, version=, force=) -> NightlyCheck`: the newest nightly
  (or the one asked for), whether the store has it, and the workflow's outputs
  (`sweep=true|false`, `version`, `date`).
- `nightly_date(version)`: the day of a nightly from its `.devYYYYMMDD`.

Wheels are `results.Wheel` records. The PyTorch index lists only the newest builds of each
project (about 60 versions), so a nightly older than that cannot be found here.
"""

from triagebot.nightlies.check import NightlyCheck, check_newest
from triagebot.nightlies.client import (
    NIGHTLY_INDEX,
    PYPI_INDEX,
    PackageIndex,
    Target,
    nightly_index,
    version_of,
)
from triagebot.nightlies.pages import nightly_date, parse_page
from triagebot.nightlies.retry import RetryPolicy

__all__ = [
    "NIGHTLY_INDEX",
    "PYPI_INDEX",
    "NightlyCheck",
    "PackageIndex",
    "RetryPolicy",
    "Target",
    "check_newest",
    "nightly_date",
    "nightly_index",
    "parse_page",
    "version_of",
]
