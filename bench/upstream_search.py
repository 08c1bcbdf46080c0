"""What searching the upstream repository's issues costs a night: requests and seconds.

For each `--groups` count, a night with that many crash groups (distinct signatures shaped like
PT2's errors: the error's name, its leading words, a compiler frame in the traceback) is
searched against the fake GitHub of the tests (tests/fakegithub), which holds `--issues`
upstream issues of which a share mention some of the groups' errors, and enforces GitHub's
search limit (30 requests a minute) on a clock that the bot's waits move. It prints, per
count: the signatures searched, the search requests (a signature takes one to three, one per
query of its ladder until one finds an issue), the seconds the search limit made the night
wait (on that clock: what a real night waits), the wall seconds against the fake on this
machine (the bot's own work and a local round trip per request), and the requests the same
night makes when it is published again (the store's searches answer: none).

    python bench/upstream_search.py [--groups 6,30,120] [--issues 3000] [--known 0.5]

On GitHub each request also costs its round trip (typically 0.3 to 1 s): a night's search time
is about the wait plus requests times that.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from builders import DYNAMIC, SCALAR, crash, nightly  # noqa: E402
from fakegithub import FakeGitHub  # noqa: E402

from triagebot.config import Config  # noqa: E402
from triagebot.pipeline import night_of  # noqa: E402
from triagebot.store import MemoryStore  # noqa: E402
from triagebot.tracker import github  # noqa: E402
from triagebot.tracker.upstream import search_night, wanted  # noqa: E402

REPO = "pytorch/pytorch"
NAMES = [
    ("GuardOnDataDependentSymNode", "Could not guard on data-dependent expression", "_evaluate_expr"),
    ("PendingUnbackedSymbolNotFound", "Pending unbacked symbols", "compute_unbacked_bindings"),
    ("DataDependentOutputException", "aten.nonzero.default", "nonzero"),
    ("Unsupported", "call_method UserDefinedObjectVariable", "call_method"),
    ("LoweringException", "AssertionError: no lowering for", "call_function"),
    ("BackendCompilerFailed", "backend='inductor' raised", "compile_fx"),
]
TRACEBACK = 'File "/x/site-packages/torch/_dynamo/symbolic_convert.py", line 1, in {frame}\n    raise\n'


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0
        self.waited = 0.0

    def sleep(self, seconds: float) -> None:
        self.waited += seconds
        self.now += seconds


def letters(index: int) -> str:
    """`index` in letters (a, b, ..., ba, ...): signatures drop digits, so variants are words."""
    word = ""
    while True:
        word = "abcdefghijklmnopqrstuvwxyz"[index % 26] + word
        index //= 26
        if not index:
            return word


def night(groups: int):
    """A night of `groups` crash groups, one model each, split between the two default flags."""
    models = [f"Model{index}" for index in range(groups)]
    crashes: dict[str, dict] = {SCALAR: {}, DYNAMIC: {}}
    for index, model in enumerate(models):
        name, words, frame = NAMES[index % len(NAMES)]
        message = f"{name}: {words} variant {letters(index)} (u{index})"
        outcome = crash("InternalTorchDynamoError", message, traceback=TRACEBACK.format(frame=frame))
        crashes[SCALAR if index % 2 else DYNAMIC][model] = outcome
    snapshot = nightly("2.12.0.dev20260401", crashes, models, git="g")
    return night_of(snapshot, MemoryStore(), Config())


def fake_with_issues(issues: int, known: float, groups: int, clock: Clock, rng: random.Random) -> FakeGitHub:
    fake = FakeGitHub(repo=REPO)
    fake.clock = lambda: clock.now
    fake.start()
    for number in range(issues):
        if number < int(groups * known):  # an issue that mentions a group's error and frame
            name, words, frame = NAMES[number % len(NAMES)]
            variant = letters(number)
            title, body = f"{name} with variant {variant}", f"{words} variant {variant}, raised in {frame}"
        else:
            title = f"Some other problem {rng.randrange(10**6)}"
            body = " ".join(
                rng.choice(["tensor", "cuda", "graph", "compile", "shape", "dtype"]) for _ in range(40)
            )
        fake.add_issue(REPO, title, body, "someone", state=rng.choice(["open", "closed"]))
    return fake


def measure(groups: int, issues: int, known: float) -> dict[str, float]:
    clock, rng = Clock(), random.Random(groups)
    fake = fake_with_issues(issues, known, groups, clock, rng)
    try:
        gh = github.connect("bot-token", base_url=fake.base_url, sleep=clock.sleep, clock=lambda: clock.now)
        tonight = night(groups)
        started = time.perf_counter()
        made, pace = search_night(gh, REPO, tonight, {}, say=lambda line: None)
        wall = time.perf_counter() - started
        before = len(fake.searches)
        again, _ = search_night(gh, REPO, tonight, {search.signature: search for search in made})
        return {
            "signatures": len(wanted(tonight)),
            "searched": len(made),
            "requests": pace.requests,
            "found": sum(1 for search in made if search.matches),
            "waited": pace.waited,
            "wall": wall,
            "again": len(fake.searches) - before + len(again),
        }
    finally:
        fake.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", default="6,30,120", help="crash group counts, comma separated")
    parser.add_argument("--issues", type=int, default=3000, help="upstream issues in the fake")
    parser.add_argument("--known", type=float, default=0.5, help="share of groups an upstream issue mentions")
    options = parser.parse_args()
    print(
        "| crash groups | signatures searched | with an issue found | search requests | per signature |"
        " waited for the limit (s) | wall against the fake (s) | requests when published again |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for groups in (int(text) for text in options.groups.split(",")):
        found = measure(groups, options.issues, options.known)
        print(
            f"| {groups} | {found['searched']} | {found['found']} | {found['requests']} |"
            f" {found['requests'] / max(found['searched'], 1):.2f} | {found['waited']:.0f} |"
            f" {found['wall']:.2f} | {found['again']} |"
        )


if __name__ == "__main__":
    main()
