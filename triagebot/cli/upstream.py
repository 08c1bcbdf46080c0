"""`triagebot nightly`, `bisect`: the nightly index, and the first bad build of a crash.

`triagebot.nightlies` reads the package indexes (httpx) and `triagebot.bisect` installs builds
into cached environments; both are imported inside the commands that use them (start-up cost).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, cast

import typer

from triagebot.cli.options import ConfigOption, RepoOption, StoreOption, configured, split_names
from triagebot.config import Config
from triagebot.errors import UsageError
from triagebot.pipeline import Snapshots, already_swept, owed, owed_outputs
from triagebot.results import Bisection, Environment, signature_id
from triagebot.store import keep_bisection
from triagebot.store.base import write_text
from triagebot.tracker.actions import write_outputs

if TYPE_CHECKING:
    from triagebot.bisect import BisectOptions

VariantOption = Annotated[
    str,
    typer.Option(
        "--variant", envvar="TRIAGEBOT_VARIANT", metavar="NAME", help="Nightly variant: cu128, cpu, ..."
    ),
]
IndexOption = Annotated[
    str | None,
    typer.Option("--index", envvar="TRIAGEBOT_NIGHTLY_INDEX", metavar="URL", help="PyTorch's nightly index."),
]
PythonOption = Annotated[
    str | None,
    typer.Option("--python", metavar="3.X", help="Python the builds must install on (default: this one)."),
]
PlatformOption = Annotated[
    str | None,
    typer.Option(
        "--platform", metavar="TAG,TAG", help="Platform tags, best first (default: this machine's)."
    ),
]
Check = Annotated[
    bool, typer.Option("--check", help="Only say if the newest nightly needs a sweep: sweep=true|false.")
]
Since = Annotated[
    str | None, typer.Option("--since", metavar="YYYY-MM-DD", help="List builds from this day.")
]
Until = Annotated[
    str | None, typer.Option("--until", metavar="YYYY-MM-DD", help="List builds up to this day.")
]
Version = Annotated[
    str | None, typer.Option("--nightly", metavar="VERSION", help="Check this nightly instead of the newest.")
]
Force = Annotated[bool, typer.Option("--force", help="Answer sweep=true even when it is stored.")]
Outputs = Annotated[
    Path | None,
    typer.Option("--output", metavar="FILE", help="key=value outputs file (default: $GITHUB_OUTPUT)."),
]
Good = Annotated[
    str | None, typer.Argument(metavar="GOOD", help="Last good: a stored snapshot, a version or a day.")
]
Bad = Annotated[
    str | None, typer.Argument(metavar="BAD", help="First bad: a stored snapshot, a version or a day.")
]
Owed = Annotated[
    str | None,
    typer.Option(
        "--owed",
        metavar="SNAPSHOT",
        help="Instead of GOOD BAD: what this night owes (crashes new since a stored night days before).",
    ),
]
Crash = Annotated[
    str | None,
    typer.Option(
        "--crash",
        metavar="MODEL",
        help="Instead of GOOD BAD: MODEL's crash under --flag in the newest night.",
    ),
]
OutFolder = Annotated[
    Path | None,
    typer.Option(
        "--out",
        metavar="DIR",
        help="Write each bisection there as JSON as it is found, instead of storing it: the job that "
        "may write the store keeps them (run --bisections, command --bisection).",
    ),
]
Model = Annotated[
    str | None, typer.Option("--model", metavar="MODEL", help="The model whose reproduction runs.")
]
Flag = Annotated[str | None, typer.Option("--flag", metavar="FLAG", help="Its flag.")]
Signature = Annotated[
    str | None, typer.Option("--signature", metavar="TEXT", help="Part of its crash signature.")
]
Where = Annotated[
    str | None,
    typer.Option(
        "--snapshot", metavar="SNAPSHOT", help="Where the reproduction is (default: BAD's, or the newest)."
    ),
]
Axis = Annotated[str, typer.Option("--axis", metavar="auto|torch|transformers", help="What to bisect over.")]
HeldTorch = Annotated[
    str | None, typer.Option("--torch", metavar="VERSION", help="torch to hold while transformers moves.")
]
HeldTransformers = Annotated[
    str | None,
    typer.Option("--transformers", metavar="VERSION", help="transformers to hold while torch moves."),
]
Runs = Annotated[int, typer.Option("--runs", min=1, metavar="N", help="Clean runs for a good build.")]
Timeout = Annotated[float, typer.Option("--timeout", metavar="SECONDS", help="Per run and per install.")]
Budget = Annotated[float, typer.Option("--budget", metavar="SECONDS", help="For the whole bisection.")]
Cache = Annotated[Path, typer.Option("--cache", metavar="DIR", help="Cached environments, one per build.")]
CacheGib = Annotated[
    float,
    typer.Option(
        "--cache-gib",
        metavar="GIB",
        help="What the cached environments may hold on disk; the least recently used are removed first.",
    ),
]
Again = Annotated[bool, typer.Option("--again", help="Bisect even if the store has an answer.")]
Graphs = Annotated[
    bool,
    typer.Option(
        "--graphs",
        help="Bisect --model's baseline graph count between GOOD and BAD (stored snapshots), not a "
        "crash: more graphs as a regression, fewer as an improvement. The script that counts them "
        "is checked first with the torch installed here, so run it where BAD's build is.",
    ),
]
InstallerOption = Annotated[
    str,
    typer.Option(
        "--installer",
        metavar="auto|uv|pip",
        help="What installs the builds (default auto: uv where one is found, pip otherwise).",
    ),
]
Releases = Annotated[
    bool,
    typer.Option(
        "--releases",
        help="Bisect torch releases on the --pypi index (2.13.0, 2.14.0, ...) instead of nightlies.",
    ),
]
Pypi = Annotated[
    str | None, typer.Option("--pypi", metavar="URL", help="transformers' index (default: PyPI).")
]
AsJson = Annotated[bool, typer.Option("--json", help="The bisection record as JSON.")]
AXES = ("auto", "torch", "transformers")


@configured("repo", "store")
def nightly(
    settings: Config,
    check: Check = False,
    since: Since = None,
    until: Until = None,
    version: Version = None,
    force: Force = False,
    variant: VariantOption = "cu128",
    index: IndexOption = None,
    python: PythonOption = None,
    platform: PlatformOption = None,
    output: Outputs = None,
    repo: RepoOption = None,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """The torch nightlies on the index, and whether the newest is stored.

    Lists the builds for this Python and platform between two days; with --check, asks whether
    the newest (or --nightly) is in the store and writes sweep=true|false, version and date for
    the workflow, before any image is built, and publish=true with the newest night stored but
    not published yet (owed) to the tracker repository (--repo, else [tracker] repo) when there
    is one."""
    from triagebot.nightlies import NIGHTLY_INDEX, Target, check_newest, nightly_index  # start-up cost

    target = Target.of(python, split_names(platform))
    with nightly_index(variant, index or NIGHTLY_INDEX) as builds:
        if not check:
            first, last = _day(since, "--since"), _day(until, "--until")
            for wheel in builds.builds("torch", target, since=first, until=last):
                print(f"{wheel.version:<34} {wheel.date or '':<10}  {wheel.url}")
            return
        stored = Snapshots(settings.store).store
        answer = check_newest(
            builds,
            target,
            # Stored, and with every configured flag: a flag added since is swept on it.
            # The index says no transformers: under "torch+transformers", a night of any is stored.
            # A trial night (another corpus or sample) is not the configured night: swept again.
            lambda found: already_swept(stored, Environment(torch_version=found), settings, settings.flags),
            version=version,
            force=force,
        )
    # A night stored but not published yet is published by the workflow even when there is
    # nothing new to sweep: the newest of them (`owed`).
    unpublished = owed(stored, settings)
    outputs = answer.outputs() | owed_outputs(unpublished)
    write_outputs(outputs, output)
    print(answer.reason)
    if unpublished:
        print(f"stored but not published yet: {', '.join(unpublished)}")
    print(" ".join(f"{name}={value}" for name, value in outputs.items()))


def _day(value: str | None, option: str) -> date | None:
    try:
        return None if value is None else date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{option} {value!r} is not a day (YYYY-MM-DD)") from None


@configured("store")
def bisect(
    settings: Config,
    good: Good = None,
    bad: Bad = None,
    owed: Owed = None,
    crash: Crash = None,
    model: Model = None,
    flag: Flag = None,
    signature: Signature = None,
    snapshot: Where = None,
    axis: Axis = "auto",
    torch_version: HeldTorch = None,
    transformers_version: HeldTransformers = None,
    runs: Runs = 3,
    timeout: Timeout = 600.0,
    budget: Budget = 3600.0,
    cache: Cache = Path(".triagebot/envs"),
    cache_gib: CacheGib = 40.0,
    installer: InstallerOption = "auto",
    again: Again = False,
    graphs: Graphs = False,
    variant: VariantOption = "cu128",
    index: IndexOption = None,
    releases: Releases = False,
    pypi: Pypi = None,
    python: PythonOption = None,
    platform: PlatformOption = None,
    out: OutFolder = None,
    as_json: AsJson = False,
    store: StoreOption = None,
    config: ConfigOption = None,
) -> None:
    """Find the first bad nightly of a crash, and its commit range.

    Installs the builds between GOOD and BAD into cached environments and runs a verified
    reproduction in each (builds that cannot be installed or imported are skipped); when both
    ends are stored snapshots of one torch build, bisects transformers releases instead. The
    answer is kept in the store, so a range is never bisected twice. With --owed, every crash
    of a night new since a stored night more than a day before it; with --crash, one model's
    crash in the newest stored night, since the last stored night it ran in."""
    from triagebot.bisect import BisectOptions, describe  # start-up cost
    from triagebot.bisect.envs import take_secrets
    from triagebot.nightlies import NIGHTLY_INDEX, PYPI_INDEX

    take_secrets()  # first: the files are gone before any probe runs
    if axis not in AXES:
        raise UsageError(f"--axis {axis!r} is not auto, torch or transformers")
    for option, seconds in (("--timeout", timeout), ("--budget", budget)):
        if not math.isfinite(seconds) or seconds <= 0:
            raise UsageError(f"{option} {seconds} is not a positive number of seconds")
    if not math.isfinite(cache_gib) or cache_gib <= 0:
        raise UsageError(f"--cache-gib {cache_gib} is not a positive number of GiB")
    asked = [name for name, given in (("GOOD BAD", good), ("--owed", owed), ("--crash", crash)) if given]
    if len(asked) != 1 or (good is None) != (bad is None):
        raise UsageError("give GOOD and BAD, or --owed SNAPSHOT, or --crash MODEL with --flag")
    if graphs and (good is None or model is None):
        raise UsageError("--graphs needs GOOD and BAD (stored snapshots) and --model")
    options = BisectOptions(
        good=good or "",
        bad=bad or "",
        model=model,
        flag=flag,
        signature=signature,
        snapshot=snapshot,
        axis=cast(Literal["auto", "torch", "transformers"], axis),
        torch=torch_version,
        transformers=transformers_version,
        variant=variant,
        index=index or NIGHTLY_INDEX,
        releases=releases,
        pypi=pypi or PYPI_INDEX,
        python=python,
        platforms=split_names(platform),
        runs=runs,
        timeout=timeout,
        budget=budget,
        cache=cache,
        cache_gib=cache_gib,
        installer=installer,
        again=again,
        graphs=graphs,
    )
    snapshots = Snapshots(settings.store)

    def keep(answer: Bisection) -> None:
        # Written out before anything else, so that no failure later can lose it; a job that
        # may only read the store (--out) never writes it.
        if out is not None:
            write_bisection(answer, out, single=crash is not None)
        else:
            keep_bisection(snapshots.store, answer)
        print(answer.model_dump_json(indent=1) if as_json else "\n".join(describe(answer)))

    _bisections(options, snapshots, keep, owed=owed, crash=crash)


def _bisections(
    options: BisectOptions,
    snapshots: Snapshots,
    keep: Callable[[Bisection], None],
    *,
    owed: str | None,
    crash: str | None,
) -> list[Bisection]:
    """What `bisect` was asked for: a night's owed bisections (`owed`), one model's crash
    (`crash`), or the range GOOD..BAD of `options`; each answer handed to `keep` as it comes."""
    from triagebot.bisect import (  # start-up cost
        Deadline,
        bisect_all,
        bisect_command,
        crash_request,
        owed_bisections,
        verify_requests,
    )

    if owed is not None:
        night = snapshots.get(owed)
        requests = owed_bisections(night, snapshots.store.previous_of(night), snapshots.store)
        print(f"{len(requests)} bisection(s) owed by {night.key}")
        # The graph counts are verified with this torch, within the same budget as the bisections.
        deadline = Deadline(options.budget)
        requests = verify_requests(requests, timeout=options.timeout, deadline=deadline)
        within = replace(options, budget=max(deadline.left(), 0.0))
        return bisect_all(within, requests, snapshots.store, each_alone=True, keep=keep)
    if crash is not None:
        if not options.flag:
            raise UsageError("--crash needs --flag")
        request = crash_request(snapshots.store, crash, options.flag)
        return bisect_all(options, [request], snapshots.store, keep=keep)
    return [bisect_command(options, snapshots.store, snapshots.get, keep=keep)]


def write_bisection(answer: Bisection, out: Path, *, single: bool) -> None:
    """A bisection as JSON in folder `out`: `bisection.json` for the one of --crash, else named
    by its signature's id and axis."""
    out.mkdir(parents=True, exist_ok=True)
    name = "bisection" if single else f"{signature_id(answer.signature)}-{answer.axis}"
    write_text(out / f"{name}.json", answer.model_dump_json(indent=1) + "\n")
