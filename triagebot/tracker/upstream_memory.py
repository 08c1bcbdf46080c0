"""What the tracker remembers in the store of the upstream repository: each signature's newest
search of its issues (so that a signature is searched once per night) and the pins maintainers
set with `/rerun-sweep link`.

Under `upstream/OWNER/NAME/`, one record per signature, named by its id (a signature is free
text, never a file name): `searches/<id>` an `UpstreamSearch`, `pins/<id>` an `UpstreamPin`.
Without a store (a dry run from a file) nothing is remembered.
"""

from __future__ import annotations

from triagebot.results import UpstreamPin, UpstreamSearch, signature_id

FOLDER = "upstream"


def _folder(repo: str, kind: str) -> str:
    return f"{FOLDER}/{repo}/{kind}"


def stored_searches(store, repo: str | None) -> dict[str, UpstreamSearch]:
    """signature -> its newest search of `repo`'s issues (none without a store or a repository)."""
    if store is None or not repo:
        return {}
    records = store.records(_folder(repo, "searches"), UpstreamSearch)
    return {record.signature: record for record in records.values()}


def keep_searches(store, searches: list[UpstreamSearch]) -> None:
    """Store `searches`, each replacing the earlier search of its signature, in one write."""
    if store is None or not searches:
        return
    by_repo: dict[str, dict] = {}
    for search in searches:
        by_repo.setdefault(search.repo, {})[signature_id(search.signature)] = search
    for repo, records in by_repo.items():
        store.put_records(_folder(repo, "searches"), records)


def stored_pins(store, repo: str | None) -> dict[str, UpstreamPin]:
    """signature -> the newest `/rerun-sweep link` or `unlink` of it for `repo`."""
    if store is None or not repo:
        return {}
    records = store.records(_folder(repo, "pins"), UpstreamPin)
    return {record.signature: record for record in records.values()}


def keep_pin(store, pin: UpstreamPin) -> None:
    """Store `pin`, replacing the signature's earlier one."""
    store.put_records(_folder(pin.repo, "pins"), {signature_id(pin.signature): pin})
