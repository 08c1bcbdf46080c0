"""The store's memory of bisections, so that one (signature, range) is never bisected twice.

One `Bisection` record per (axis, signature, range asked) under `bisections/<axis>/`, named
by a hash of the three (a signature is free text, never a file name). A conclusive answer also
answers any wider range asked later for the same signature: its first bad build is still the
first bad one there.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from triagebot.results import Bisection
from triagebot.store.base import Store, key_order, read_record

FOLDER = "bisections"


def bisection_name(axis: str, signature: str, good: str, bad: str) -> str:
    return hashlib.sha256("\n".join((axis, signature, good, bad)).encode()).hexdigest()[:32]


def find_bisection(store: Store, axis: str, signature: str, good: str, bad: str) -> Bisection | None:
    """The stored bisection of `signature` over exactly good..bad, else a conclusive one of the
    same signature whose answer lies within good..bad, else None."""
    stored = store.records(f"{FOLDER}/{axis}", Bisection)
    exact = stored.get(bisection_name(axis, signature, good, bad))
    if exact is not None:
        return exact
    low, high = key_order(good), key_order(bad)
    for record in stored.values():
        if record.signature != signature or not (record.conclusive and record.last_good and record.first_bad):
            continue
        if low <= key_order(record.last_good) and key_order(record.first_bad) <= high:
            return record
    return None


def keep_bisection(store: Store, bisection: Bisection) -> None:
    """Store (or replace) `bisection` under the range it was asked for."""
    name = bisection_name(bisection.axis, bisection.signature, bisection.good, bisection.bad)
    store.put_records(f"{FOLDER}/{bisection.axis}", {name: bisection})


def bisections_by_signature(store: Store | None) -> dict[str, Bisection]:
    """signature -> the bisection an issue shows for it: the newest conclusive one, else the
    newest that has an answer in part, else the newest (torch and transformers alike)."""
    if store is None:
        return {}
    chosen: dict[str, Bisection] = {}
    for axis in ("torch", "transformers"):
        for record in store.records(f"{FOLDER}/{axis}", Bisection).values():
            earlier = chosen.get(record.signature)
            if earlier is None or _rank(record) > _rank(earlier):
                chosen[record.signature] = record
    return chosen


def _rank(bisection: Bisection) -> tuple:
    return (bisection.conclusive, bisection.first_bad is not None, bisection.created)


def keep_bisections_in(store: Store, folder: Path) -> list[Bisection]:
    """Keep every bisection (`*.json`) of `folder` in the store (none when it does not exist:
    a night that owed none); a file that is no bisection is a `StoreError` naming it."""
    if not folder.is_dir():
        return []
    found = [read_record(path, Bisection, "a bisection") for path in sorted(folder.glob("*.json"))]
    for bisection in found:
        keep_bisection(store, bisection)
    return found
