"""Names of the dashboard site's pages and anchors: the one place that makes them.

The site (`report.site`) writes its files under these names, and anything that links into it
(issue bodies, notices, rerun answers, the step summary) builds its links with the same
functions, so a link can never point at a page the site does not have. Names are stable: the
same model, flag, signature or pair of nightlies always gets the same page and anchor.

Paths are relative to the site's root, with `/` as separator:

- `flag_page(flag)`: `flags/<flag>.html`, a flag's effects, crash groups and models helped;
- `model_page(model)`: `models/<model>.html`, one model night by night;
- `crash_anchor(signature, confirmed=True)`: `crash-<12 hex>` (`results.signature_id`, the name
  `/rerun-sweep link` knows a group by), the id of a crash group on its flag's page
  (`flaky-<12 hex>` for a group of flaky crashes, which may share a confirmed group's
  signature), and `crash_group(flag, signature, confirmed=True)`: the flag page with
  that anchor;
- `compare_page(old_key, new_key)`: `compare/<old>...<new>.html`, the diff of two nightlies;
- `night_data(key)`: `data/nights/<key>.js`, one nightly's compact data for the compare view;
- `INDEX`, `MODELS`, `COMPARE`: the index, the list of models, the compare view.

`site_url(base, page)` makes an absolute address for an issue body from the configured
`tracker.dashboard_url`, and `relative(page, start)` a link from one page of the site to another.
"""

from __future__ import annotations

import hashlib
import posixpath
import re

from triagebot.analysis.compact import DATA_FOLDER
from triagebot.results import signature_id

INDEX = "index.html"
MODELS = "models.html"
COMPARE = "compare.html"
ASSETS = "assets"
READY_RULE = f"{INDEX}#ready-rule"  # the one place the site says the verdict's rule
BREAK_REASONS = f"{INDEX}#break-reasons"  # the corpus-wide graph-break reasons

# Characters kept as they are in a file name: those of model class and flag names. Anything
# else is replaced, and a short hash of the original keeps two names that differ only there
# apart. That includes the `+` of torch versions (`2.12.0.dev20260408+cu128`): some web servers
# read a `+` in a path as a space.
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,150}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def _digest(text: str, length: int = 12) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def slug(name: str) -> str:
    """A file name for `name`: the name itself when it is plain, else a cleaned name and a hash."""
    if _PLAIN.match(name) and ".." not in name:
        return name
    cleaned = _UNSAFE.sub("_", name).strip("._-")[:80] or "x"
    return f"{cleaned}-{_digest(name, 8)}"


def flag_page(flag: str) -> str:
    return f"flags/{slug(flag)}.html"


def model_page(model: str) -> str:
    return f"models/{slug(model)}.html"


def crash_anchor(signature: str, confirmed: bool = True) -> str:
    """The id of a crash group's section: a hash of its signature, so any text is a valid id;
    a group of flaky crashes has its own, since it may have a confirmed group's signature."""
    return f"{'crash' if confirmed else 'flaky'}-{signature_id(signature)}"


def crash_group(flag: str, signature: str, confirmed: bool = True) -> str:
    return f"{flag_page(flag)}#{crash_anchor(signature, confirmed)}"


def model_anchor(model: str) -> str:
    """The id of a model's row in a flag page's effects table."""
    return f"model-{slug(model)}"


def compare_page(old_key: str, new_key: str) -> str:
    return f"compare/{slug(old_key)}...{slug(new_key)}.html"


def night_data(key: str) -> str:
    return f"{DATA_FOLDER}/{slug(key)}.js"


def asset(name: str) -> str:
    return f"{ASSETS}/{name}"


def relative(page: str, start: str) -> str:
    """The link to `page` (with its #anchor, if any) from the page `start`, both site paths."""
    path, hash_mark, anchor = page.partition("#")
    folder = posixpath.dirname(start) or "."
    link = posixpath.relpath(path, folder) if path else ""
    return f"{link}{hash_mark}{anchor}"


def site_url(base: str | None, page: str = INDEX) -> str | None:
    """The absolute address of `page` on the site published at `base` (`tracker.dashboard_url`);
    None without a base. `base` names the site's root, with or without a trailing `/`;
    a base that names a file (`.../dashboard.html`) stands for the folder it is in."""
    if not base:
        return None
    if base.endswith(".html"):
        root = base.rsplit("/", 1)[0] + "/"
    else:
        root = base if base.endswith("/") else base + "/"
    return root + ("" if page == INDEX else page)
