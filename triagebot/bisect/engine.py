"""A bisection from request to stored answer: the builds between the two ends read from the
index, each probed in its cached environment, the search narrowed within the time budget, and
the answer (first bad, last good, their commit range) kept in the store."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date

from packaging.version import Version

from triagebot.analysis import compare_url
from triagebot.analysis.diff import transformers_compare_url
from triagebot.bisect.envs import EnvironmentCache, Pin
from triagebot.bisect.probe import Deadline, Prober
from triagebot.bisect.search import Search, run_search
from triagebot.bisect.suites import suite_pins
from triagebot.errors import BisectError
from triagebot.nightlies import PackageIndex, Target, version_of
from triagebot.results import Axis, Bisection, Change, Environment, Reproduction, Verdict, Wheel
from triagebot.store import Store, find_bisection, keep_bisection

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass
class BisectRequest:
    """What to bisect: a verified reproduction between a build believed good and one believed
    bad (versions, or days `YYYY-MM-DD` for nightlies), along `axis`, the rest held at `pinned`;
    `change`: whether raising it is a regression or an improvement (the words of the answer)."""

    reproduction: Reproduction
    good: str
    bad: str
    axis: Axis = "torch"
    pinned: dict[str, str] = field(default_factory=dict)
    again: bool = False  # bisect even when the store has an answer for this range
    change: Change = "regression"


def request_between(good: Environment, bad: Environment, reproduction: Reproduction) -> BisectRequest:
    """The request for a crash seen first in a sweep of `bad` and not in one of `good`. Across
    two torch builds, torch nightlies are bisected with transformers held at the good sweep's
    version; when the torch build did not change but transformers did, transformers releases
    are bisected under the bad sweep's torch."""
    if good.same_torch(bad):
        if not good.transformers_version or good.transformers_version == bad.transformers_version:
            raise BisectError(
                f"torch {bad.torch_version} and transformers {bad.transformers_version or '?'} are the "
                "same in both sweeps: there is nothing between them to bisect"
            )
        return BisectRequest(
            reproduction,
            good.transformers_version,
            bad.transformers_version,
            axis="transformers",
            pinned={"torch": bad.torch_version},
        )
    pinned = {"transformers": good.transformers_version} if good.transformers_version else {}
    return BisectRequest(reproduction, good.torch_version, bad.torch_version, pinned=pinned)


@dataclass
class Bisector:
    """The machinery one bisection needs: the two indexes, the environment cache, the target
    interpreter and platform, runs per good verdict, a time limit per run and the budget."""

    torch_index: PackageIndex  # torch builds (the nightly index of one variant, or releases)
    releases: PackageIndex  # transformers releases (PyPI)
    envs: EnvironmentCache
    target: Target = field(default_factory=Target)
    runs: int = 3
    timeout: float = 600.0
    budget: float = 3600.0
    torch_releases: bool = False  # `torch_index` lists releases, not nightlies
    clock: Callable[[], float] = time.monotonic
    say: Callable[[str], None] = print

    def bisect(self, request: BisectRequest, store: Store | None = None, *, keep: bool = True) -> Bisection:
        """The answer for `request`: the store's when it has one, else a new bisection, stored
        unless `keep` is false (a job that may only read the store hands it on instead)."""
        if not request.reproduction.verified:
            raise BisectError(
                f"the reproduction of {request.reproduction.model} is not verified "
                f"({request.reproduction.observed or 'never run'}): bisecting it would find nothing"
            )
        if request.axis == "transformers" and "torch" not in request.pinned:
            raise BisectError("a transformers bisection needs the torch build to hold (pinned torch)")
        index = self.torch_index if request.axis == "torch" else self.releases
        builds = index.builds(request.axis, self.target)
        if request.axis == "transformers":  # the torch held is the index's build of that version
            held = resolve_end(self.torch_index.builds("torch", self.target), request.pinned["torch"], "held")
            request = replace(request, pinned={**request.pinned, "torch": held.version})
        good, bad = resolve_end(builds, request.good, "good"), resolve_end(builds, request.bad, "bad")
        if Version(good.version) >= Version(bad.version):
            raise BisectError(f"the good end {good.version} is not older than the bad end {bad.version}")
        signature = request.reproduction.signature
        earlier = None
        if store is not None and not request.again:
            earlier = find_bisection(store, request.axis, signature, good.version, bad.version)
        if earlier is not None and not resumable(earlier):
            self.say(f"bisected before ({earlier.created:%Y-%m-%d}): {describe(earlier)[0]}")
            return earlier
        versions = [
            wheel.version
            for wheel in builds
            if Version(good.version) <= Version(wheel.version) <= Version(bad.version)
        ]
        record = self._run(request, versions, good.version, bad.version, earlier)
        if store is not None and keep:
            keep_bisection(store, record)
        return record

    def _run(
        self, request: BisectRequest, versions: list[str], good: str, bad: str, earlier: Bisection | None
    ) -> Bisection:
        search = Search(versions)
        if earlier is not None and not {earlier.last_good, earlier.first_bad} <= set(versions):
            earlier = None  # its builds left the index: start afresh
        if earlier is not None:  # an unfinished bisection goes on where it stopped
            search.low, search.high = versions.index(earlier.last_good), versions.index(earlier.first_bad)
            search.probes = list(earlier.probes)
            search.skipped = {versions.index(v) for v in earlier.skipped if v in versions}
            search.confirmed = True
        self.say(
            f"bisecting {request.reproduction.signature[:80]!r} over {len(versions)} {request.axis} builds "
            f"from {good} to {bad} (budget {self.budget:.0f} s, installing with {self.envs.installer.name})"
        )
        started = self.clock()
        prober = Prober(
            request.reproduction,
            self.envs,
            Deadline(self.budget, self.clock),
            self.runs,
            self.timeout,
            self.say,
            change=request.change,
        )
        run_search(search, lambda version: prober.probe(version, self.pins(request, version)))
        spent = self.clock() - started + (earlier.seconds if earlier is not None else 0.0)
        return self._record(request, search, good, bad, spent)

    def pins(self, request: BisectRequest, version: str) -> Sequence[Pin]:
        """What a probe of `version` installs, in order: torch first, then transformers, then the
        library of the model's suite where the script imports one (`suites`)."""
        if request.axis == "transformers":
            return [
                Pin("torch", request.pinned["torch"], self.torch_index.url),
                Pin("transformers", version, self.releases.url),
                *self._suite_pins(request),
            ]
        pins = [Pin("torch", version, self.torch_index.url)]
        if request.pinned.get("transformers"):
            pins.append(Pin("transformers", request.pinned["transformers"], self.releases.url))
        return pins + self._suite_pins(request)

    def _suite_pins(self, request: BisectRequest) -> list[Pin]:
        return suite_pins(request.reproduction.script, self.torch_index.url, self.releases.url)

    def _record(
        self, request: BisectRequest, search: Search, good: str, bad: str, seconds: float
    ) -> Bisection:
        repro = request.reproduction
        record = Bisection(
            axis=request.axis,
            signature=repro.signature,
            change=request.change,
            model=repro.model,
            flag=repro.flag,
            good=good,
            bad=bad,
            pinned=dict(request.pinned),
            index=(self.torch_index if request.axis == "torch" else self.releases).url,
            installer=self.envs.installer.name,
            torch_releases=self.torch_releases,
            conclusive=search.conclusive,
            stopped=search.stopped,
            runs=self.runs,
            probes=search.probes,
            seconds=round(seconds, 3),
        )
        if not search.confirmed:
            return record
        last_good, first_bad = search.builds[search.low], search.builds[search.high]
        git = {probe.version: probe.git_version for probe in search.probes if probe.git_version}
        record.last_good, record.first_bad = last_good, first_bad
        record.skipped, record.untested = search.skipped_between(), len(search.left())
        if request.axis == "torch":
            record.last_good_git, record.first_bad_git = git.get(last_good, ""), git.get(first_bad, "")
            record.compare_url = compare_url(record.last_good_git, record.first_bad_git)
        else:
            record.compare_url = transformers_compare_url(last_good, first_bad)
        return record


def resumable(bisection: Bisection) -> bool:
    """A bisection the budget stopped after both ends were confirmed: it can go on."""
    return not bisection.conclusive and bool(bisection.last_good and bisection.first_bad)


def resolve_end(builds: Sequence[Wheel], text: str, which: str) -> Wheel:
    """The build an end names: a version (`2.12.0.dev20260408` finds its `+cu128` build), or a
    day, which for the good end is the newest build on or before it and for the bad end the
    oldest on or after it."""
    project = builds[0].project if builds else "builds"
    if _DAY.fullmatch(text):
        try:
            day = date.fromisoformat(text)
        except ValueError:
            raise BisectError(f"{text} (the {which} end) is not a day (YYYY-MM-DD)") from None
        dated = [
            b for b in builds if b.date is not None and (b.date <= day if which == "good" else b.date >= day)
        ]
        if not dated:
            side = "on or before" if which == "good" else "on or after"
            raise BisectError(f"the index lists no {project} build {side} {text} (the {which} end)")
        return dated[-1] if which == "good" else dated[0]
    wanted = version_of(text)
    for build in builds:
        found = Version(build.version)
        if found == wanted or (not wanted.local and found.public == wanted.public):
            return build
    # A build of another variant than the one swept (2.13.0+cpu swept, PyPI's 2.13.0 on the
    # index): the same release, so the same commit, stands for it.
    public = [build for build in builds if Version(build.version).public == wanted.public]
    if public:
        return public[0]
    raise BisectError(
        f"{project} {text} (the {which} end) is not on the index for this platform; the nightly index "
        "keeps only its newest builds"
    )


def describe(bisection: Bisection) -> list[str]:
    """The answer in a few lines: what is first bad (or first improved), the commit range, and
    what to doubt."""
    b = bisection
    installed = [f"builds installed with {b.installer}"] if b.installer else []
    if b.last_good is None or b.first_bad is None:
        return [f"no answer between {b.good} and {b.bad}: {b.stopped}", *installed]
    first, good, bad = b.first_label, b.said(Verdict.good), b.said(Verdict.bad)
    if b.conclusive:
        lines = [f"{first} {b.subject}: {b.first_bad}; {b.last_label}: {b.last_good}"]
    else:
        lines = [
            f"{first} {b.subject} between {b.last_good} ({good}) and {b.first_bad} ({bad}), "
            f"{b.untested} untested: {b.stopped}"
        ]
    if b.compare_url:
        lines.append(f"changes: {b.compare_url}")
    if b.skipped:
        lines.append(f"could not be tested, so any may be the {first}: {', '.join(b.skipped)}")
    if b.flaky:
        flaky = ", ".join(probe.version for probe in b.flaky)
        lines.append(
            f"the reproduction is flaky (raised only on a rerun on {flaky}): "
            f"each {good} verdict took {b.runs} clean runs"
        )
    if b.pinned:
        lines.append("held fixed: " + ", ".join(f"{name} {version}" for name, version in b.pinned.items()))
    return [*lines, *installed]
