"""Bisection end to end against a local index serving tiny stand-in wheels: a package named
`torch` whose build decides whether the reproduction raises, flipping on a known night, with
missing nights, a wheel that cannot be installed, one whose torch cannot be imported and one
whose reproduction is flaky; transformers releases from a PyPI-style JSON index; the store's
memory; the budget; the command line. Environments are made for real, by each installer in
turn (uv and pip, chosen here whatever PATH holds), in one cache per installer that the tests
share; nothing reaches the network."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import date, timedelta
from pathlib import Path

import pytest
from climain import run_main
from nightlyindex import IndexServer, build_wheel, index_server, snapshot_of

from triagebot.bisect import (
    Bisector,
    BisectRequest,
    Deadline,
    EnvironmentCache,
    Installer,
    InstallFailed,
    Pin,
    Prober,
    describe,
    request_between,
)
from triagebot.bisect.envs import READY, SECRET, fingerprint
from triagebot.errors import BisectError
from triagebot.nightlies import PackageIndex, RetryPolicy, Target, nightly_index
from triagebot.results import Environment, Reproduction, Verdict, error_signature
from triagebot.store import LocalStore, MemoryStore, find_bisection

MESSAGE = "Could not guard on data-dependent expression Eq(u3, 0)"
SIGNATURE = error_signature("RuntimeError", MESSAGE)
FIRST_BAD = date(2026, 4, 10)
# Nights with no build at all, and nights whose build is broken in its own way.
MISSING = {date(2026, 4, 5), date(2026, 4, 6)}
SPECIAL = {date(2026, 4, 7): "corrupt", date(2026, 4, 8): "unimportable", date(2026, 4, 10): "flaky"}

TORCH = """from torch import version
__version__ = version.__version__
MODE = {mode!r}
if MODE == "unimportable":
    raise ImportError("libcudart.so.12: cannot open shared object file: No such file or directory")


def compile_model():
    if MODE == "flaky":  # raises on every second run in this environment
        import os, sys
        counter = os.path.join(sys.prefix, "runs")
        runs = int(open(counter).read()) if os.path.exists(counter) else 0
        open(counter, "w").write(str(runs + 1))
        if runs % 2 == 0:
            return
    if MODE in ("bad", "flaky"):
        raise RuntimeError({message!r})
    if MODE == "other":
        raise ValueError("expected a tensor, got None")
"""
TRANSFORMERS = """import torch


def run_model():
    if {broken!r}:
        raise RuntimeError({message!r})
    torch.compile_model()
"""
REPRO = """import torch
{extra}

def main():
    {call}


if __name__ == "__main__":
    main()
"""


def git_hash(version: str) -> str:
    return hashlib.sha1(version.encode()).hexdigest()


def torch_wheel(folder: Path, version: str, mode: str) -> Path:
    if mode == "corrupt":  # named like a wheel, not a zip: the installer refuses it
        path = folder / f"torch-{version}-py3-none-any.whl"
        path.write_bytes(b"<Error><Code>AccessDenied</Code></Error>")
        return path
    files = {
        "torch/__init__.py": TORCH.format(mode=mode, message=MESSAGE),
        "torch/version.py": f"__version__ = {version!r}\ngit_version = {git_hash(version)!r}\n",
    }
    return build_wheel(folder, "torch", version, files)


def nightly(day: date) -> str:
    return f"2.12.0.dev{day:%Y%m%d}+cpu"


NIGHTS = [date(2026, 4, 1) + timedelta(days) for days in range(12)]
BUILT = [day for day in NIGHTS if day not in MISSING]
NO_TORCHVISION = date(2026, 4, 3)  # a night whose torchvision build is missing from the index


def reproduction(call: str = "torch.compile_model()", extra: str = "") -> Reproduction:
    script = REPRO.format(extra=extra, call=call)
    return Reproduction(
        flag="capture_scalar_outputs", signature=SIGNATURE, model="BertModel", script=script, verified=True
    )


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """The local index: twelve nights of `torch` (two missing), and transformers releases."""
    wheels = tmp_path_factory.mktemp("wheels")
    with index_server() as server:
        nightlies = []
        for day in BUILT:
            mode = SPECIAL.get(day, "bad" if day >= FIRST_BAD else "good")
            nightlies.append(torch_wheel(wheels, nightly(day), mode))
        server.torch_style("/whl/nightly/cpu", "torch", nightlies)
        # torchvision built for each night but one (NO_TORCHVISION), each requiring its own torch
        visions = [
            build_wheel(
                wheels,
                "torchvision",
                f"0.29.0.dev{day:%Y%m%d}",
                {"torchvision/__init__.py": f"BUILT_FOR = {nightly(day)!r}\n"},
                requires=(f"torch=={nightly(day)}",),
            )
            for day in BUILT
            if day != NO_TORCHVISION
        ]
        server.torch_style("/whl/nightly/cpu", "torchvision", visions)
        releases = [
            build_wheel(
                wheels,
                "transformers",
                version,
                {"transformers/__init__.py": TRANSFORMERS.format(broken=version >= "5.24", message=MESSAGE)},
            )
            for version in ("5.22.0", "5.23.0", "5.24.0", "5.25.0")
        ]
        server.pypi_style("/simple", "transformers", releases)
        timm = build_wheel(wheels, "timm", "1.0.31", {"timm/__init__.py": "import torchvision\n"})
        server.pypi_style("/simple", "timm", [timm])
        # torch releases as PyPI lists them (no local label), the first bad in the middle
        torch_releases = [
            torch_wheel(wheels, version, mode)
            for version, mode in (("2.13.0", "good"), ("2.14.0", "bad"), ("2.14.1", "bad"))
        ]
        server.pypi_style("/simple", "torch", torch_releases)
        yield server


@pytest.fixture(scope="module", params=["uv", "pip"])
def envs(request, tmp_path_factory) -> EnvironmentCache:
    """One environment cache per installer for the module: a build installed once serves every
    test of that installer."""
    try:
        installer = Installer.find(choice=request.param)
    except BisectError as error:
        pytest.skip(str(error))
    return EnvironmentCache(tmp_path_factory.mktemp(f"envs-{request.param}"), installer=installer)


def bisector(server: IndexServer, envs: EnvironmentCache, **options) -> Bisector:
    policy = RetryPolicy(attempts=2, backoff=0.0, timeout=10.0)
    return Bisector(
        nightly_index("cpu", f"{server.url}/whl/nightly", policy=policy),
        PackageIndex(f"{server.url}/simple", policy=policy),
        envs,
        Target(),
        **{"say": lambda line: None, **options},
    )


def test_the_first_bad_nightly_is_found_past_missing_broken_and_flaky_builds(index, envs):
    store = MemoryStore()
    request = BisectRequest(reproduction(), nightly(NIGHTS[0]), nightly(NIGHTS[-1]))
    answer = bisector(index, envs).bisect(request, store)

    assert answer.conclusive and answer.stopped is None
    assert (answer.last_good, answer.first_bad) == (nightly(date(2026, 4, 9)), nightly(FIRST_BAD))
    verdicts = {probe.version: probe for probe in answer.probes}
    # The ends first, then the middle: the wheel that is no zip and the torch that cannot be
    # imported are skipped, never counted good or bad.
    assert [probe.version for probe in answer.probes[:2]] == [nightly(NIGHTS[-1]), nightly(NIGHTS[0])]
    corrupt, unimportable = verdicts[nightly(date(2026, 4, 7))], verdicts[nightly(date(2026, 4, 8))]
    # Why, in one line, in either installer's words: uv's "has an invalid package format", pip's
    # "Wheel 'torch' located at ... is invalid".
    assert corrupt.verdict == Verdict.skip and "\n" not in corrupt.reason
    assert re.fullmatch(r"cannot install torch==2\.12\.0\.dev20260407\+cpu: .*invalid.*", corrupt.reason)
    assert unimportable.verdict == Verdict.skip
    assert unimportable.reason == (
        "cannot import torch: ImportError: libcudart.so.12: cannot open shared object file: "
        "No such file or directory"
    )
    # A good verdict took three clean runs; the flaky build raised on its second run and says so.
    good = verdicts[nightly(date(2026, 4, 9))]
    assert (good.verdict, good.runs, good.raised) == (Verdict.good, 3, 0)
    flaky = verdicts[nightly(FIRST_BAD)]
    assert (
        flaky.verdict == Verdict.bad
        and flaky.flaky
        and flaky.reason == "raised it on run 2 after 1 clean: flaky"
    )
    # The commit range between the two builds' own git hashes.
    assert answer.last_good_git == git_hash(nightly(date(2026, 4, 9)))
    assert answer.compare_url == (
        f"https://github.com/pytorch/pytorch/compare/{git_hash(nightly(date(2026, 4, 9)))}"
        f"...{git_hash(nightly(FIRST_BAD))}"
    )
    assert answer.skipped == []  # the skipped builds lie below the last good one
    lines = describe(answer)
    assert lines[0] == f"first bad nightly: {nightly(FIRST_BAD)}; last good: {nightly(date(2026, 4, 9))}"
    assert (
        answer.installer == envs.installer.name and lines[-1] == f"builds installed with {answer.installer}"
    )
    assert any("flaky" in line and nightly(FIRST_BAD) in line for line in lines)
    assert find_bisection(store, "torch", SIGNATURE, nightly(NIGHTS[0]), nightly(NIGHTS[-1])) == answer


def test_a_range_is_never_bisected_twice_and_a_wider_one_is_answered_from_it(index, envs):
    store = MemoryStore()
    first = bisector(index, envs).bisect(BisectRequest(reproduction(), "2026-04-02", "2026-04-11"), store)
    assert (first.good, first.bad) == (nightly(date(2026, 4, 2)), nightly(date(2026, 4, 11)))
    assert first.first_bad == nightly(FIRST_BAD)
    seen = []
    again = bisector(index, envs, say=seen.append).bisect(
        BisectRequest(reproduction(), "2026-04-01", "2026-04-12"), store
    )
    assert again == first
    assert seen[0].startswith("bisected before")


def test_a_skipped_build_next_to_the_answer_is_named_in_it(index, envs):
    # A crash that, by this reproduction, starts on the 9th: right after the corrupt 7th and the
    # unimportable 8th, either of which may be the first bad build.
    flips_on_the_9th = (
        f"if torch.__version__ >= '2.12.0.dev20260409':\n        raise RuntimeError({MESSAGE!r})"
    )
    request = BisectRequest(
        reproduction(call=flips_on_the_9th), nightly(date(2026, 4, 4)), nightly(date(2026, 4, 9))
    )
    answer = bisector(index, envs).bisect(request)
    assert (answer.last_good, answer.first_bad) == (nightly(date(2026, 4, 4)), nightly(date(2026, 4, 9)))
    assert answer.skipped == [nightly(date(2026, 4, 7)), nightly(date(2026, 4, 8))]
    assert f"could not be tested, so any may be the first bad: {', '.join(answer.skipped)}" in describe(
        answer
    )


def test_the_budget_stops_a_bisection_and_the_next_one_goes_on_from_there(index, envs):
    store = MemoryStore()
    ticks = iter(range(0, 10_000, 10))  # each look at the clock is ten seconds later
    request = BisectRequest(reproduction(), nightly(NIGHTS[0]), nightly(NIGHTS[-1]))
    cut = bisector(index, envs, budget=150, clock=lambda: next(ticks)).bisect(request, store)
    assert not cut.conclusive and cut.stopped == "the time budget of 150 s ran out"
    assert cut.last_good and cut.first_bad and cut.untested > 0
    assert describe(cut)[0].startswith("first bad nightly between")

    resumed = bisector(index, envs).bisect(request, store)
    assert resumed.conclusive and resumed.first_bad == nightly(FIRST_BAD)
    assert resumed.probes[: len(cut.probes)] == cut.probes  # nothing probed twice
    probed = [probe.version for probe in resumed.probes]
    assert len(probed) == len(set(probed))


def test_ends_that_agree_give_no_answer_and_say_why(index, envs):
    request = BisectRequest(reproduction(), nightly(date(2026, 4, 1)), nightly(date(2026, 4, 4)))
    answer = bisector(index, envs).bisect(request)
    assert answer.last_good is None and not answer.conclusive
    assert (
        "does not fail on 2.12.0.dev20260404+cpu, the build believed bad (ran clean 3 times)"
        in answer.stopped
    )
    assert describe(answer)[0].startswith("no answer between")


# Four environments of two installs each: a second with uv, many with pip.
@pytest.mark.parametrize("envs", ["uv", pytest.param("pip", marks=pytest.mark.slow)], indirect=True)
def test_transformers_releases_are_bisected_when_torch_did_not_change(index, envs):
    good = Environment(
        torch_version=nightly(date(2026, 4, 3)), torch_git_version="a" * 40, transformers_version="5.22.0"
    )
    bad = good.model_copy(update={"transformers_version": "5.25.0"})
    repro = reproduction(call="transformers.run_model()", extra="import transformers")
    request = request_between(good, bad, repro)
    assert (request.axis, request.pinned) == ("transformers", {"torch": nightly(date(2026, 4, 3))})
    answer = bisector(index, envs).bisect(request)
    assert (answer.last_good, answer.first_bad) == ("5.23.0", "5.24.0")
    assert answer.compare_url == "https://github.com/huggingface/transformers/compare/v5.23.0...v5.24.0"
    assert describe(answer)[0] == "first bad transformers release: 5.24.0; last good: 5.23.0"


def release_bisector(server: IndexServer, envs: EnvironmentCache) -> Bisector:
    """Torch releases and transformers releases, both from the PyPI-style index."""
    policy = RetryPolicy(attempts=2, backoff=0.0, timeout=10.0)
    pypi = PackageIndex(f"{server.url}/simple", policy=policy)
    return Bisector(pypi, pypi, envs, Target(), torch_releases=True, say=lambda line: None)


def test_torch_releases_are_bisected_from_a_release_index_the_swept_variant_standing_for_its_release(
    index, envs
):
    # The nights swept 2.13.0+cpu (PyTorch's CPU index); PyPI lists that release as 2.13.0.
    request = BisectRequest(reproduction(), "2.13.0+cpu", "2.14.1", pinned={"transformers": "5.22.0"})
    answer = release_bisector(index, envs).bisect(request)
    assert (answer.good, answer.bad, answer.last_good, answer.first_bad) == (
        "2.13.0",
        "2.14.1",
        "2.13.0",
        "2.14.0",
    )
    assert answer.conclusive and answer.torch_releases
    assert answer.compare_url and git_hash("2.14.0") in answer.compare_url
    assert describe(answer)[0] == "first bad torch release: 2.14.0; last good: 2.13.0"


def test_a_transformers_bisection_holds_the_index_build_of_the_swept_torch(index, envs):
    good = Environment(torch_version="2.13.0+cpu", torch_git_version="c" * 40, transformers_version="5.22.0")
    bad = good.model_copy(update={"transformers_version": "5.25.0"})
    request = request_between(
        good, bad, reproduction(call="transformers.run_model()", extra="import transformers")
    )
    answer = release_bisector(index, envs).bisect(request)
    assert answer.pinned == {"torch": "2.13.0"}  # PyPI's build of the release swept as 2.13.0+cpu
    assert (answer.last_good, answer.first_bad) == ("5.23.0", "5.24.0")
    assert request.pinned == {"torch": "2.13.0+cpu"}  # the caller's request is left as it was


def test_requests_between_sweeps_hold_transformers_and_refuse_when_nothing_changed():
    good = Environment(
        torch_version="2.12.0.dev20260401+cpu", torch_git_version="a" * 40, transformers_version="5.23.0"
    )
    bad = Environment(
        torch_version="2.12.0.dev20260409+cpu", torch_git_version="b" * 40, transformers_version="5.24.0"
    )
    request = request_between(good, bad, reproduction())
    assert (request.axis, request.good, request.bad) == ("torch", good.torch_version, bad.torch_version)
    assert request.pinned == {"transformers": "5.23.0"}
    with pytest.raises(BisectError, match="same in both sweeps: there is nothing between them"):
        request_between(good, good, reproduction())


def test_an_unverified_reproduction_or_ends_off_the_index_are_one_line(index, tmp_path):
    envs = EnvironmentCache(tmp_path)  # nothing is installed: each is refused before any probe
    unverified = reproduction().model_copy(update={"verified": False, "observed": "no error"})
    with pytest.raises(BisectError, match=r"not verified \(no error\)"):
        bisector(index, envs).bisect(BisectRequest(unverified, "2026-04-01", "2026-04-12"))
    with pytest.raises(
        BisectError, match=r"torch 2\.11\.0\.dev20260301 \(the good end\) is not on the index"
    ):
        bisector(index, envs).bisect(BisectRequest(reproduction(), "2.11.0.dev20260301", "2026-04-12"))
    with pytest.raises(BisectError, match=r"no torch build on or after 2026-05-01 \(the bad end\)"):
        bisector(index, envs).bisect(BisectRequest(reproduction(), "2026-04-01", "2026-05-01"))
    with pytest.raises(BisectError, match="is not older than the bad end"):
        bisector(index, envs).bisect(BisectRequest(reproduction(), "2026-04-09", "2026-04-02"))


def test_the_installers_commands_keep_each_pin_to_its_index_and_wheels_only(tmp_path):
    pin = Pin("torch", "2.12.0.dev20260408+cu128", "https://download.pytorch.org/whl/nightly/cu128/")
    uv = Installer("uv", "/usr/bin/uv").install(tmp_path / "bin" / "python", pin, tmp_path / "c.txt")
    pip = Installer("pip", "/usr/bin/python3").install(tmp_path / "bin" / "python", pin, None)
    assert uv[:4] == ["/usr/bin/uv", "pip", "install", "--quiet"]
    for command in (uv, pip):
        assert command[-1] == "torch==2.12.0.dev20260408+cu128"
        assert command[command.index("--index-url") + 1] == pin.index
        assert command[command.index("--only-binary") + 1] == ":all:"
    assert "--constraint" in uv and "--constraint" not in pip
    assert "--no-config" in uv and "--isolated" in pip  # neither reads settings of its own
    assert pip[:5] == ["/usr/bin/python3", "-m", "pip", "--python", str(tmp_path / "bin" / "python")]


def test_an_installer_reads_no_configuration_of_its_own(index, envs, tmp_path, monkeypatch):
    # Settings that would refuse every pin here: only the index a pin names, and how, counts.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "uv.toml").write_text("[pip]\nrequire-hashes = true\n", encoding="utf-8")
    monkeypatch.setenv("PIP_REQUIRE_HASHES", "1")
    fresh = EnvironmentCache(tmp_path / "envs", installer=envs.installer)
    good = Pin("torch", nightly(date(2026, 4, 2)), f"{index.url}/whl/nightly/cpu/")
    python, made = fresh.python_for([good], timeout=60)
    assert made and python.exists()


@pytest.mark.parametrize(
    ("output", "why"),
    [
        (  # uv: the error, then its causes, the innermost saying why
            "error: Request failed after 3 retries in 7.8s\n"
            "  cause: Failed to fetch: http://127.0.0.1:8000/files/transformers-5.25.0-py3-none-any.whl\n"
            "  cause: HTTP status server error (501 Unsupported method ('HEAD')) for url (http://127.0.0.1:8000/x)\n",
            "Request failed after 3 retries in 7.8s: "
            "HTTP status server error (501 Unsupported method ('HEAD')) for url (http://127.0.0.1:8000/x)",
        ),
        (  # uv's resolver
            "  × No solution found when resolving dependencies:\n"
            "  ╰─▶ Because there is no version of torch==2.12.0.dev20200101+cpu, we can conclude that "
            "your requirements are unsatisfiable.\n",
            "No solution found when resolving dependencies: Because there is no version of "
            "torch==2.12.0.dev20200101+cpu, we can conclude that your requirements are unsatisfiable.",
        ),
        (  # pip: the line before its pointer to the documentation
            "ERROR: Cannot install torch==2.12.0.dev20200101+cpu because these package versions have "
            "conflicting dependencies.\nERROR: ResolutionImpossible: for help visit https://pip.pypa.io/\n",
            "Cannot install torch==2.12.0.dev20200101+cpu because these package versions have "
            "conflicting dependencies.",
        ),
        ("Traceback (most recent call last):\nOSError: [Errno 28] No space left on device\n", None),
        ("", "exit status 3, no output"),
    ],
)
def test_a_failed_install_says_why_in_one_line(tmp_path, output, why):
    installer = tmp_path / "uv"
    (tmp_path / "said.txt").write_text(output, encoding="utf-8")
    installer.write_text(f"#!/bin/sh\ncat {tmp_path / 'said.txt'} >&2\nexit 3\n", encoding="utf-8")
    installer.chmod(0o755)
    envs = EnvironmentCache(tmp_path / "envs", installer=Installer("uv", str(installer)))
    with pytest.raises(InstallFailed) as failed:
        envs.python_for([Pin("torch", "2.12.0", "http://127.0.0.1:8000/")], timeout=60)
    assert str(failed.value) == f"cannot make a venv: {why or 'OSError: [Errno 28] No space left on device'}"
    assert not (tmp_path / "envs").exists() or not any((tmp_path / "envs").iterdir())


def test_the_installer_is_chosen_in_one_place(tmp_path, monkeypatch):
    interpreter = tmp_path / "venv" / "bin" / "python"
    interpreter.parent.mkdir(parents=True)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert Installer.find(str(interpreter)) == Installer("pip", str(interpreter))
    assert Installer.find(str(interpreter), "pip") == Installer("pip", str(interpreter))
    with pytest.raises(
        BisectError, match=r"^the installer uv is not on PATH nor beside .*: install it, or choose pip$"
    ):
        Installer.find(str(interpreter), "uv")
    with pytest.raises(BisectError, match=r"^the installer 'conda' is not auto, uv, pip$"):
        Installer.find(str(interpreter), "conda")
    # A venv's own uv serves when that venv is not on PATH (as under `make test`).
    uv = interpreter.parent / "uv"
    uv.write_text("#!/bin/sh\n", encoding="utf-8")
    uv.chmod(0o755)
    assert Installer.find(str(interpreter)) == Installer("uv", str(uv))
    assert Installer.find(str(interpreter), "pip").name == "pip"
    # One found through a relative PATH entry still runs after a change of directory.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "venv/bin")
    assert Installer.find(str(interpreter), "uv") == Installer("uv", str(uv))


def test_bisect_on_the_command_line_between_two_stored_sweeps(index, envs, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    store = LocalStore(tmp_path / "store")
    good, bad = nightly(NIGHTS[0]), nightly(NIGHTS[-1])
    store.put(snapshot_of(good, git=git_hash(good)))
    store.put(snapshot_of(bad, git=git_hash(bad), reproductions=[reproduction()]))
    arguments = (
        "bisect", good, bad, "--model", "BertModel", "--store", str(store.path), "--cache", str(envs.root),
        "--index", f"{index.url}/whl/nightly", "--variant", "cpu", "--pypi", f"{index.url}/simple",
        "--installer", envs.installer.name,
    )  # fmt: skip
    ran = run_main(monkeypatch, capsys, *arguments)
    assert ran.status == 0, ran.err
    assert f"first bad nightly: {nightly(FIRST_BAD)}; last good: {nightly(date(2026, 4, 9))}" in ran.out
    assert f"builds installed with {envs.installer.name}" in ran.out
    assert "changes: https://github.com/pytorch/pytorch/compare/" in ran.out

    again = run_main(monkeypatch, capsys, *arguments, "--json")
    assert again.status == 0, again.err
    assert json.loads(again.out[again.out.index("{") :])["first_bad"] == nightly(FIRST_BAD)
    assert "bisected before" in again.out

    unknown = run_main(monkeypatch, capsys, *arguments[:-2], "--installer", "conda")
    assert unknown.status == 2 and "the installer 'conda' is not auto, uv, pip" in unknown.err

    missing = run_main(monkeypatch, capsys, *arguments[:3], "--model", "GPT2Model", *arguments[5:])
    assert missing.status == 2
    assert (
        "has no verified reproduction that matches (verified: BertModel under capture_scalar_outputs"
        in missing.err
    )


# What a workflow job holds that no child may see: the store token, git's credential helper
# reading it, and the files that set a later step's outputs and environment.
SECRETS = {
    "TRIAGEBOT_STORE_TOKEN": "store-token",
    "GITHUB_TOKEN": "issues-token",
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "credential.https://github.com.helper",
    "GIT_CONFIG_VALUE_0": "!f() { echo password=$TRIAGEBOT_STORE_TOKEN; }; f",
    "GITHUB_OUTPUT": "/tmp/outputs",
    "ACTIONS_RUNTIME_TOKEN": "runtime-token",
}
SEEN = """#!/bin/sh
env > {seen}
{rest}
"""


def test_an_environment_changed_since_it_was_made_is_made_afresh_not_run(index, tmp_path, monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    said = []
    envs = EnvironmentCache(tmp_path / "envs", say=said.append)
    pins = [Pin("torch", nightly(date(2026, 4, 2)), bisector(index, tmp_path).torch_index.url)]
    python, made = envs.python_for(pins, 60)
    assert made and envs.python_for(pins, 60) == (python, False)  # reused while it is as made

    # Another job on the runner plants an interpreter that calls every build good.
    seen = tmp_path / "seen.txt"
    python.unlink()
    planted = '{"version": "2.12.0.dev20260402+cpu", "git_version": ""}'
    python.write_text(SEEN.format(seen=seen, rest=f"echo '{planted}'"))
    python.chmod(0o755)
    again, made = envs.python_for(pins, 60)
    assert made and again == python and again.is_symlink()
    assert not seen.exists()  # the planted interpreter never ran
    assert said == [
        f"  {python.parent.parent.name}: not as it was made (its files changed since): made afresh"
    ]


def test_installers_run_without_the_jobs_tokens_or_credential_helper(tmp_path, monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the rest of the environment is kept
    seen = tmp_path / "seen.txt"
    installer = tmp_path / "installer"
    installer.write_text(SEEN.format(seen=seen, rest="exit 0"))
    installer.chmod(0o755)
    envs = EnvironmentCache(tmp_path / "envs", installer=Installer("pip", str(installer)))
    envs.python_for([Pin("torch", "2.12.0.dev20260402+cpu", "http://127.0.0.1:9/simple/")], 60)
    names = {line.split("=", 1)[0] for line in seen.read_text().splitlines() if "=" in line}
    assert "HF_HUB_OFFLINE" in names and not names & set(SECRETS)


def test_bad_days_budgets_and_timeouts_are_one_line(index, envs, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    store = LocalStore(tmp_path / "store")
    store.put(snapshot_of(nightly(NIGHTS[-1]), reproductions=[reproduction()]))
    where = (
        "--store", str(store.path), "--cache", str(envs.root), "--index", f"{index.url}/whl/nightly",
        "--variant", "cpu", "--pypi", f"{index.url}/simple", "--model", "BertModel",
    )  # fmt: skip
    for arguments, said in (
        (("2026-13-45", "2026-04-12"), "2026-13-45 (the good end) is not a day (YYYY-MM-DD)"),
        (("2026-04-01", "2026-04-12", "--budget", "0"), "--budget 0.0 is not a positive number of seconds"),
        (("2026-04-01", "2026-04-12", "--budget", "-5"), "--budget -5.0 is not a positive number of seconds"),
        (
            ("2026-04-01", "2026-04-12", "--timeout", "nan"),
            "--timeout nan is not a positive number of seconds",
        ),
        (
            ("2026-04-01", "2026-04-12", "--timeout", "inf"),
            "--timeout inf is not a positive number of seconds",
        ),
    ):
        ran = run_main(monkeypatch, capsys, "bisect", *arguments, *where)
        assert ran.status == 2 and "Traceback" not in ran.err, ran.err
        assert said in ran.err and len(ran.err.strip().splitlines()) == 1, ran.err


def test_a_probe_never_reads_bytecode_kept_in_the_cache(index, envs):
    # Python trusts a compiled file whose header matches its module's time and size: one planted
    # in an environment's __pycache__ would run unseen by its fingerprint, so none is read there.
    reads_the_cache = (
        "import sys\n"
        "    if sys.pycache_prefix is None or sys.pycache_prefix.startswith(sys.prefix):\n"
        f"        raise RuntimeError({MESSAGE!r})"
    )
    request = BisectRequest(reproduction(call=reads_the_cache), nightly(NIGHTS[0]), nightly(NIGHTS[-1]))
    checked = bisector(index, envs, budget=600)
    pins = checked.pins(request, nightly(NIGHTS[0]))
    prober = Prober(request.reproduction, checked.envs, Deadline(600), runs=1, say=lambda line: None)
    assert prober.probe(nightly(NIGHTS[0]), pins).verdict == Verdict.good


def test_a_planter_who_rewrites_the_marker_too_is_caught_where_the_job_has_the_secret(
    index, tmp_path, monkeypatch
):
    pins = [Pin("torch", nightly(date(2026, 4, 2)), bisector(index, tmp_path).torch_index.url)]

    def plant(envs: EnvironmentCache) -> Path:
        """Another job changes torch and writes the marker's hash of what it left."""
        python, _ = envs.python_for(pins, 60)
        folder = python.parent.parent
        (next(folder.glob("lib/python*/site-packages/torch")) / "__init__.py").write_text("MODE = 'good'\n")
        marker = json.loads((folder / READY).read_text())
        marker["sha256"] = fingerprint(folder)
        (folder / READY).write_text(json.dumps(marker))
        return folder

    monkeypatch.delenv(SECRET, raising=False)
    unsealed = EnvironmentCache(tmp_path / "unsealed", say=lambda line: None)
    plant(unsealed)
    assert unsealed.python_for(pins, 60)[1] is False  # without the secret, nothing tells

    monkeypatch.setenv(SECRET, "repository secret")
    sealed = EnvironmentCache(tmp_path / "sealed", say=lambda line: None)
    folder = plant(sealed)
    assert sealed.python_for(pins, 60)[1] is True  # made afresh
    torch = next(folder.glob("lib/python*/site-packages/torch")) / "__init__.py"
    assert torch.read_text() != "MODE = 'good'\n"


# A timm model's reproduction: its class path names timm, and torchvision must be torch's own.
TIMM_CALL = (
    "import timm, torchvision\n"
    "    from torch import version\n"
    "    CLASS_PATH = 'timm.models.resnet:resnet10t'\n"
    "    if torchvision.BUILT_FOR != version.__version__:\n"
    "        raise ImportError('operator torchvision::nms does not exist')\n"
    "    torch.compile_model()"
)


def test_a_timm_probe_installs_the_torchvision_of_its_torch_and_one_without_it_is_skipped_saying_so(
    index, envs
):
    request = BisectRequest(reproduction(call=TIMM_CALL), nightly(NIGHTS[0]), nightly(NIGHTS[-1]))
    checked = bisector(index, envs, budget=600)
    pins = checked.pins(request, nightly(NIGHTS[0]))
    added = [(pin.project, pin.version) for pin in pins][1:]
    assert added == [("torchvision", ""), ("timm", pins[2].version)]
    assert pins[1].index == checked.torch_index.url and pins[2].index == checked.releases.url
    prober = Prober(request.reproduction, checked.envs, Deadline(600), runs=1, say=lambda line: None)
    assert prober.probe(nightly(NIGHTS[0]), pins).verdict == Verdict.good
    later = nightly(FIRST_BAD + timedelta(1))
    bad = prober.probe(later, checked.pins(request, later))
    assert bad.verdict == Verdict.bad
    skipped = prober.probe(nightly(NO_TORCHVISION), checked.pins(request, nightly(NO_TORCHVISION)))
    assert skipped.verdict == Verdict.skip and "cannot install torchvision" in skipped.reason
    assert "\n" not in skipped.reason


def test_a_reproduction_that_imports_no_suite_library_installs_none():
    from triagebot.bisect.suites import imported_suites

    assert imported_suites(REPRO.format(extra="", call="torch.compile_model()")) == []
    assert imported_suites("from diffusers.models import UNet2DModel\n") == ["diffusers"]
    assert imported_suites("CLASS_PATH = 'timm.models.vit:test_vit'\n") == ["timm"]
    assert imported_suites("x = 'not a path: timm'\nimport timmy\n") == []
    assert imported_suites("def broken(:\n") == []
