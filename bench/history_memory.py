"""What reading the stored history costs `report`, `publish` and the replay of owed nights:
peak memory (tracemalloc) and seconds, for a store of whole-corpus nightlies.

    python bench/history_memory.py [--nights 40] [--models 1014] [--store DIR] [--whole]

Builds `--nights` nightlies of `--models` models under the baseline and two flags (the tests'
builders; a share of the models crash, a different share each night) into a local store (kept
in `--store` to measure again without building), then reads the history of the newest night as
the night does (`analysis.history.earlier`: the compact data of each nightly, one snapshot at a
time), or with `--whole` as it was read before (every stored snapshot whole, `Store.history`).
One line per figure; exit 0, a bad input is one line and exit 2.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the tests' builders

from builders import DYNAMIC, SCALAR, crash, nightly  # noqa: E402

from triagebot.analysis.history import earlier  # noqa: E402
from triagebot.analysis.night_analysis import choose_history  # noqa: E402
from triagebot.store import LocalStore  # noqa: E402

FIRST = datetime(2025, 4, 1, tzinfo=UTC)


def build(store: LocalStore, nights: int, models: int) -> None:
    """`nights` nightlies of `models` models, those the store lacks."""
    names = [f"Model{index:04d}" for index in range(models)]
    have = set(store.keys())
    for night in range(nights):
        day = FIRST + timedelta(days=night)
        key = f"2.12.0.dev{day:%Y%m%d}"
        if key in have:
            continue
        crashing = names[night % 50 : night % 50 + models // 20]
        crashes = {SCALAR: dict.fromkeys(crashing, crash()), DYNAMIC: dict.fromkeys(crashing[::3], crash())}
        store.put(nightly(key, crashes, names, git=f"{night + 1:040x}", created=day))


def measure(store: LocalStore, whole: bool) -> tuple[float, float, float]:
    """Peak MB, seconds and CPU seconds of reading the newest nightly's history (under
    tracemalloc, which slows it)."""
    newest = store.get(store.keys()[-1])
    tracemalloc.start()
    started, cpu = time.perf_counter(), time.process_time()
    if whole:
        history, _ = choose_history(newest, store.history(until=newest.key))
    else:
        history = earlier(newest, store).history
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    assert len(history) == len(store.keys()) - 1
    return peak, seconds, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nights", type=int, default=40)
    parser.add_argument("--models", type=int, default=1014)
    parser.add_argument("--store", type=Path, default=None)
    parser.add_argument("--whole", action="store_true", help="read every snapshot whole, as before")
    args = parser.parse_args(argv)
    if args.nights < 2 or args.models < 20:
        print("history_memory: --nights must be 2 or more and --models 20 or more", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="triagebot-history-") as temporary:
        store = LocalStore(args.store or Path(temporary))
        if len(store.keys()) != args.nights:
            build(store, args.nights, args.models)
        peak, seconds, cpu = measure(store, args.whole)
    how = "whole snapshots" if args.whole else "compact data"
    print(f"{args.nights} nightlies of {args.models} models x 3 configs, {how}:")
    print(f"  peak memory {peak:.0f} MB (tracemalloc), {seconds:.1f} s ({cpu:.1f} s of CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
