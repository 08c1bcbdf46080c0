"""A season of nightlies replayed: the tracker's lifecycle measured under the sweeps' own noise.

    python bench/season.py [SNAPSHOT ...] [--nights 60] [--seed 0] [--fixed-share 0.5] [--out DIR] [--quiet]

Builds `--nights` nightlies from real snapshots (default: the committed smoke sweep and the two
stored 2.12 nightlies, a season per corpus) and publishes every one, in order, to a local fake
GitHub as the scheduled workflow does (store, the night against the stored history, publish).
The snapshots are the season's stages: the first nights are the first snapshot, the last nights
the last. Each night redraws, from a seeded generator, what the sweeps record as noise:

- a crash that did not repeat in its snapshot (flaky), and a share of the confirmed ones (the
  share of confirmation reruns that ran clean), is intermittent: it crashes on a night, and again
  on its rerun, each at the rate at which the snapshots' reruns repeated their crash;
- every flag run times out at the snapshots' share of runs that timed out or died;
- on a few nights, a share of the models' flag runs end in an engine error;
- a few models leave the corpus for some nights and return;
- one crash's message is reworded from one night on;
- half of the crashes (`--fixed-share`) are fixed for good at some night of the season's second
  half (real change, which the counts tell apart from noise).

It counts, per season: issues opened, closed and reopened; flip-flops (closed, then reopened
within seven nights), and those caused by noise (closed while a real crash was still there, or
reopened by no real crash); "new crash" and "fixed" notices a later night of the same week (the
six nightlies after it) contradicts: fixed, then the model's confirmed crash; new, then that
model said fixed; the most comments on one issue in one night; the nights a reworded crash
was said to continue its old words, or shown as a crash first seen that night; bodies
rewritten with no change a reader could see (HTML comments and whitespace aside); and how
many nightlies after its flag's last real crash each close came.
Deterministic: one seed, one season, one set of figures. Exit 0; a bad input is one line.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import io
import json
import os
import random
import re
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the project's fake GitHub

from fakegithub import FakeGitHub  # noqa: E402

from triagebot import analysis  # noqa: E402
from triagebot.analysis.effects import classify  # noqa: E402
from triagebot.config import Config, parse_config  # noqa: E402
from triagebot.errors import TriagebotError  # noqa: E402
from triagebot.pipeline.analysing import with_triage  # noqa: E402
from triagebot.pipeline.publishing import publish_stored  # noqa: E402
from triagebot.report.markers import find_flag, find_notice  # noqa: E402
from triagebot.results import BASELINE, ModelResult, Night, Outcome, Snapshot, Status  # noqa: E402
from triagebot.store import LocalStore, read_snapshot  # noqa: E402
from triagebot.tracker import github, publish_night  # noqa: E402

DATA = ROOT / "tests" / "data"
DEFAULT_SNAPSHOTS = (
    DATA / "smoke-2.13.0+cpu.json",
    DATA / "2.12.0.dev20260408+cu128.json",
    DATA / "2.12.0.dev20260409+cu128.json",
)
REPO = "pytorch/pytorch"
TOKEN = "bot-token"
WEEK = 7  # nightlies: a reopen at most this many after the close; a contradiction before the next week
ENGINE_NIGHTS = 4  # nights on which a share of the corpus ends in an engine error
ENGINE_SHARE = 0.4
LEAVERS = 2  # models that leave the corpus for a while
FIXED_SHARE = 0.5  # crashes fixed for good in the season's second half
MARKER = re.compile(r"<!--.*?-->", re.DOTALL)


class SeasonError(TriagebotError):
    """A season cannot be built from the snapshots given."""


@dataclass(frozen=True)
class Rates:
    """What the snapshots record: how often a confirmation rerun crashed again, how often a flag
    run timed out."""

    repeat: float
    timeout: float


def rates_of(snapshots: Sequence[Snapshot]) -> Rates:
    """The noise rates the snapshots' own runs show: of the confirmation reruns, those that
    crashed again; of the runs made (every config, skipped ones aside), those that timed out or
    died."""
    reruns = [
        again for s in snapshots for r in s.results for runs in r.confirmations.values() for again in runs
    ]
    runs = [
        o for s in snapshots for r in s.results for o in r.outcomes.values() if o.status != Status.skipped
    ]
    repeated = sum(again.status == Status.crash for again in reruns)
    lost = sum(outcome.status in (Status.timeout, Status.signal) for outcome in runs)
    return Rates(
        repeat=repeated / len(reruns) if reruns else 1.0,
        timeout=lost / len(runs) if runs else 0.0,
    )


@dataclass
class Crash:
    """One real crash of a (model, flag) pair: how often it shows, and the night it is fixed."""

    rate: float  # 1.0: every night
    fixed_at: int | None = None


@dataclass
class Script:
    """The season's noise, drawn once from the seed: who crashes how, what leaves and when."""

    nights: int
    rates: Rates
    crashes: dict[tuple[str, str], Crash] = field(default_factory=dict)
    engine_nights: set[int] = field(default_factory=set)
    away: dict[str, range] = field(default_factory=dict)  # model -> the nights it is gone
    reworded: tuple[str, int] | None = None  # (signature, from which night)

    def real(self, model: str, flag: str, night: int) -> bool:
        """Whether `model` really crashes under `flag` on `night` (noise aside)."""
        crash = self.crashes.get((model, flag))
        return crash is not None and (crash.fixed_at is None or night < crash.fixed_at)


def draw_script(
    stages: Sequence[Snapshot], nights: int, seed: int, rates: Rates, fixed_share: float = FIXED_SHARE
) -> Script:
    """The season's noise from `seed`: every crash of the stages, intermittent or steady, and
    when each is fixed; the engine-error nights, the leavers, the reworded crash."""
    rng = random.Random(seed)
    script = Script(nights=nights, rates=rates)
    for stage in stages:
        for row in classify(stage):
            pair = (row.model, row.flag)
            if row.effect.value not in ("crashes", "flaky") or pair in script.crashes:
                continue
            intermittent = row.effect.value == "flaky" or rng.random() > rates.repeat
            fixed = rng.random() < fixed_share
            script.crashes[pair] = Crash(
                rate=rates.repeat if intermittent else 1.0,
                fixed_at=rng.randrange(nights // 2, nights) if fixed else None,
            )
    script.engine_nights = set(rng.sample(range(1, nights), min(ENGINE_NIGHTS, nights - 1)))
    models = sorted({model for model, _ in script.crashes})
    for model in rng.sample(models, min(LEAVERS, len(models))):
        start = rng.randrange(1, max(2, nights - 3))
        script.away[model] = range(start, start + rng.randrange(2, 6))
    signatures = sorted(
        {
            o.signature
            for s in stages
            for r in s.results
            for c, o in r.outcomes.items()
            if c != BASELINE and o.signature
        }
    )
    if signatures:
        script.reworded = (rng.choice(signatures), rng.randrange(1, nights))
    return script


def reword(signature: str | None) -> str | None:
    """The same error in a nightly's new words."""
    return None if signature is None else signature.replace(":", ": error:", 1)


def ran_clean(baseline: Outcome) -> Outcome:
    """A flag run that compiled as its baseline did."""
    return Outcome(status=Status.ok, graphs=baseline.graphs, ops=baseline.ops, seconds=baseline.seconds)


def noisy_result(
    result: ModelResult, flags: Sequence[str], night: int, script: Script, rng: random.Random
) -> ModelResult:
    """`result` as night `night` records it, with its noise drawn from `rng`."""
    outcomes = dict(result.outcomes)
    confirmations = {}
    baseline = outcomes.get(BASELINE)
    engine = night in script.engine_nights and rng.random() < ENGINE_SHARE
    for flag in flags:
        outcome = outcomes.get(flag)
        if baseline is None or outcome is None or outcome.status == Status.skipped or not baseline.ran:
            continue
        crash = script.crashes.get((result.model, flag))
        if crash is not None:
            crashed = script.real(result.model, flag, night) and rng.random() < crash.rate
            template = outcome if outcome.status == Status.crash else None
            if crashed and template is not None:
                again = Status.crash if rng.random() < crash.rate else Status.ok
                outcome = template
                confirmations[flag] = [template.model_copy(update={"status": again})]
            else:
                outcome = ran_clean(baseline)
        if (
            script.reworded is not None
            and night >= script.reworded[1]
            and outcome.signature == script.reworded[0]
        ):
            outcome = outcome.model_copy(update={"signature": reword(outcome.signature)})
            confirmations = {
                c: [o.model_copy(update={"signature": reword(o.signature)}) for o in runs]
                for c, runs in confirmations.items()
            }
        if engine:
            outcome = Outcome(
                status=Status.engine_error, error_type="EngineError", error="the spec did not rebuild"
            )
            confirmations.pop(flag, None)
        elif rng.random() < script.rates.timeout:
            outcome = Outcome(status=Status.timeout, error_type="Timeout", stage="compile")
            confirmations.pop(flag, None)
        outcomes[flag] = outcome
    return result.model_copy(update={"outcomes": outcomes, "confirmations": confirmations})


def night_snapshot(stages: Sequence[Snapshot], night: int, script: Script, seed: int) -> Snapshot:
    """Night `night` of the season: its stage's results with the night's noise, as a build of its own."""
    stage = stages[night * len(stages) // script.nights]
    rng = random.Random(f"{seed}:{night}")
    results = [
        noisy_result(result, stage.flags, night, script, rng)
        for result in stage.results
        if night not in script.away.get(result.model, range(0))
    ]
    day = datetime(2026, 6, 1, 3, tzinfo=UTC) + timedelta(days=night)
    git = hashlib.sha1(f"{seed}:{night}".encode()).hexdigest()
    version = f"2.13.0.dev{day:%Y%m%d}+{stage.environment.device}"
    environment = stages[0].environment.model_copy(
        update={"torch_version": version, "torch_git_version": git}
    )
    return stages[0].model_copy(
        update={
            "key": version,
            "created": day,
            "environment": environment,
            "results": results,
            "reproductions": [],
        }
    )


@dataclass
class Counts:
    """What the season did to GitHub, and how much of it noise caused."""

    nights: int = 0
    opened: int = 0
    closed: int = 0
    reopened: int = 0
    flip_flops: int = 0
    noise_flip_flops: int = 0
    new_notices: int = 0
    fixed_notices: int = 0
    contradicted: int = 0
    most_comments: int = 0  # on one issue in one night
    nights_over_one_comment: int = 0  # (issue, night) pairs with more than one comment
    invisible_edits: int = 0
    reworded_continued: int = 0  # group-nights a reworded crash was said to continue its old words
    reworded_as_new: int = 0  # group-nights it was shown as a crash first seen that night
    close_delays: list[int] = field(default_factory=list)  # per close: nightlies since the last real crash

    def line(self) -> str:
        return (
            f"{self.nights} nights: opened {self.opened}, closed {self.closed}, reopened {self.reopened}; "
            f"flip-flops {self.flip_flops} ({self.noise_flip_flops} caused by noise); "
            f"notices: {self.new_notices} new crash, {self.fixed_notices} fixed, "
            f"{self.contradicted} contradicted within a week; "
            f"most comments on an issue in a night {self.most_comments} "
            f"({self.nights_over_one_comment} issue-nights over one); "
            f"bodies rewritten with no visible change {self.invisible_edits}; "
            f"reworded crash said to continue {self.reworded_continued}, "
            f"shown as new {self.reworded_as_new}; "
            f"nightlies from the last real crash to each close: {sorted(self.close_delays) or 'no close'}"
        )


def visible(body: str) -> str:
    """What a reader sees of a body: no HTML comments, whitespace folded."""
    return " ".join(MARKER.sub("", body).split())


def sections(body: str) -> list[str]:
    """A comment cut at each marker line: one section per notice folded into it."""
    parts: list[list[str]] = []
    for line in body.splitlines():
        if find_notice(line) is not None or not parts:
            parts.append([])
        parts[-1].append(line)
    return ["\n".join(part) for part in parts]


def named(body: str, models: Sequence[str]) -> set[str]:
    """The models a notice names."""
    return {model for model in models if re.search(rf"(?<![\w.]){re.escape(model)}(?![\w])", body)}


@dataclass
class Watch:
    """What the season saw of GitHub after each night."""

    models: list[str]
    states: dict[int, str] = field(default_factory=dict)
    bodies: dict[int, str] = field(default_factory=dict)
    seen_comments: set[int] = field(default_factory=set)
    closed_at: dict[int, int] = field(default_factory=dict)
    notices: list[tuple[int, str, str, str]] = field(default_factory=list)  # night, kind, flag, model
    crashes: dict[tuple[str, str], set[int]] = field(default_factory=lambda: defaultdict(set))


def observe(
    fake: FakeGitHub, night: int, watch: Watch, counts: Counts, script: Script, flags: dict[int, str]
) -> None:
    """Count what night `night` changed on GitHub."""
    for issue in fake.issues(REPO):
        number, state, body = issue["number"], issue["state"], issue["body"] or ""
        flag = flags.get(number, "")
        before = watch.states.get(number)
        if before is None:
            counts.opened += 1
        elif before == "open" and state == "closed":
            counts.closed += 1
            watch.closed_at[number] = night
            real = [
                n
                for n in range(night + 1)
                for model, f in script.crashes
                if f == flag and script.real(model, flag, n)
            ]
            counts.close_delays.append(night - max(real) if real else night)
        elif before == "closed" and state == "open":
            counts.reopened += 1
            closed = watch.closed_at.get(number)
            if closed is not None and night - closed <= WEEK:
                counts.flip_flops += 1
                really = [model for model, f in script.crashes if f == flag]
                wrong_close = any(script.real(model, flag, closed) for model in really)
                no_crash = not any(script.real(model, flag, night) for model in really)
                counts.noise_flip_flops += wrong_close or no_crash
        old = watch.bodies.get(number)
        if old is not None and old != body and visible(old) == visible(body):
            counts.invisible_edits += 1
        watch.states[number], watch.bodies[number] = state, body
        fresh = [c for c in fake.comments(REPO, number) if c["id"] not in watch.seen_comments]
        watch.seen_comments.update(c["id"] for c in fresh)
        counts.most_comments = max(counts.most_comments, len(fresh))
        counts.nights_over_one_comment += len(fresh) > 1
        for comment in fresh:
            for section in sections(comment["body"]):
                notice = find_notice(section)
                if notice is not None and notice.kind in ("fixed", "regression"):
                    for model in named(section, watch.models):
                        watch.notices.append((night, notice.kind, notice.flag, model))


def contradictions(watch: Watch) -> int:
    """Notices a later night contradicted within a week: a model said fixed that crashed again
    (confirmed), a model said newly crashing that was then said fixed."""
    count = 0
    for night, kind, flag, model in watch.notices:
        later = range(night + 1, night + WEEK)
        if kind == "fixed":
            count += any(n in watch.crashes[(model, flag)] for n in later)
        else:
            count += any(
                n in later and k == "fixed" and (f, m) == (flag, model) for n, k, f, m in watch.notices
            )
    return count


@contextlib.contextmanager
def connected_to(fake: FakeGitHub) -> Iterator[None]:
    """The tracker's one door to GitHub pointed at `fake`, never sleeping between retries; as
    it was afterwards."""
    saved = os.environ.get("GITHUB_API_URL"), publish_night.connect
    os.environ["GITHUB_API_URL"] = fake.base_url
    publish_night.connect = functools.partial(  # type: ignore[assignment]
        github.connect, sleep=lambda _: None, clock=lambda: fake.clock()
    )
    try:
        yield
    finally:
        if saved[0] is None:
            os.environ.pop("GITHUB_API_URL", None)
        else:
            os.environ["GITHUB_API_URL"] = saved[0]
        publish_night.connect = saved[1]  # type: ignore[assignment]


def season_config() -> Config:
    """The tracker's defaults on the fake's repository; no search of the upstream repository's
    issues (the fake's search limit would only slow the season down)."""
    config = parse_config(f'[tracker]\nrepo = "{REPO}"\nmax_writes = 500\n', "season")
    return config.model_copy(update={"tracker": config.tracker.model_copy(update={"upstream": None})})


def publish(snapshot, rows, history, previous, store, config: Config, folder: Path, say) -> tuple[str, Night]:
    """Night `snapshot` (its `rows` classified) against `history` (the summaries of the nights
    before it) and `previous` (the night before, with its rows), published as the nightly
    workflow publishes a stored night; its one line, and the night."""
    tonight = analysis.night(
        snapshot,
        history,
        previous[0] if previous else None,
        previous_rows=previous[1] if previous else None,
        close_after=config.tracker.close_after,
    )
    tonight = with_triage(tonight, store, config)
    with contextlib.redirect_stdout(io.StringIO()) as plan:
        line = publish_stored(tonight, config, TOKEN, False, folder / "out" / snapshot.key, store=store)
    say(plan.getvalue().rstrip())
    return line, tonight


def count_rewording(night: Night, script: Script, counts: Counts) -> None:
    """The crash groups of the reworded signature tonight: said to continue the old one, or
    shown as a crash first seen tonight."""
    if script.reworded is None:
        return
    new_words = reword(script.reworded[0])
    for state in night.flags.values():
        for group in state.stats.crash_groups:
            if getattr(group, "continues", None):
                counts.reworded_continued += 1
            elif group.signature == new_words and group.first_seen == night.key and night.history:
                counts.reworded_as_new += 1


def replay(
    stages: Sequence[Snapshot],
    nights: int,
    seed: int,
    folder: Path,
    say=print,
    fixed_share: float = FIXED_SHARE,
) -> Counts:
    """Build and publish the season; its counts."""
    rates = rates_of(stages)
    script = draw_script(stages, nights, seed, rates, fixed_share)
    config = season_config()
    store = LocalStore(folder / "store")
    counts = Counts(nights=nights)
    models = sorted({r.model for s in stages for r in s.results})
    watch = Watch(models=models)
    fake = FakeGitHub()
    fake.start()
    history: list = []
    previous: tuple[Snapshot, list] | None = None
    try:
        with connected_to(fake):
            for night in range(nights):
                snapshot = night_snapshot(stages, night, script, seed)
                rows = classify(snapshot)
                for row in rows:
                    if row.effect.value == "crashes":
                        watch.crashes[(row.model, row.flag)].add(night)
                store.put(snapshot)
                line, tonight = publish(snapshot, rows, history, previous, store, config, folder, say)
                observe(fake, night, watch, counts, script, _flags_by_marker(fake))
                count_rewording(tonight, script, counts)
                say(f"night {night} {snapshot.key}: {line}")
                history.append(analysis.summarise(snapshot, rows))
                previous = (snapshot, rows)
    finally:
        fake.stop()
    counts.new_notices = sum(kind == "regression" for _, kind, _, _ in watch.notices)
    counts.fixed_notices = sum(kind == "fixed" for _, kind, _, _ in watch.notices)
    counts.contradicted = contradictions(watch)
    return counts


def _flags_by_marker(fake: FakeGitHub) -> dict[int, str]:
    """Each issue's number -> the flag its body's marker names."""
    return {issue["number"]: find_flag(issue["body"]) or "" for issue in fake.issues(REPO)}


def seasons(paths: Sequence[Path]) -> list[list[Snapshot]]:
    """The snapshots read and cut into one season per corpus, each in the order given."""
    by_corpus: dict[str, list[Snapshot]] = {}
    for path in paths:
        try:
            snapshot = read_snapshot(path)
        except TriagebotError as error:
            raise SeasonError(f"{path}: not a snapshot: {error}") from None
        by_corpus.setdefault(snapshot.corpus.name, []).append(snapshot)
    return list(by_corpus.values())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "snapshots",
        nargs="*",
        type=Path,
        default=list(DEFAULT_SNAPSHOTS),
        help="swept snapshots to replay, one season per corpus (default: the committed smoke night "
        "and the two 2.12 nightlies of tests/data)",
    )
    parser.add_argument("--nights", type=int, default=60, help="nightlies in a season (default: 60)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the season's noise (default: 0)")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for the store and the bodies (default: a temporary one)",
    )
    parser.add_argument(
        "--fixed-share", type=float, default=FIXED_SHARE, help="crashes fixed for good in the second half"
    )
    parser.add_argument("--quiet", action="store_true", help="only the figures, not a line per night")
    args = parser.parse_args(argv)
    try:
        if args.nights < 2:
            raise SeasonError(f"--nights must be at least 2, not {args.nights}")
        if not 0 <= args.fixed_share <= 1:
            raise SeasonError(f"--fixed-share must be between 0 and 1, not {args.fixed_share}")
        figures = {}
        for stages in seasons(args.snapshots):
            name = stages[0].corpus.name
            with tempfile.TemporaryDirectory() as scratch:
                folder = (args.out / name) if args.out else Path(scratch)
                say = (lambda _: None) if args.quiet else print
                counts = replay(stages, args.nights, args.seed, folder, say, args.fixed_share)
            print(f"{name} ({len(stages)} snapshot(s), seed {args.seed}): {counts.line()}")
            figures[name] = counts.__dict__
        print(json.dumps(figures, sort_keys=True))
    except TriagebotError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
