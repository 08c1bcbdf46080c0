"""Cached environments, one per set of pinned builds: a venv made once, installed once and
reused by every later probe of the same builds, by the installer `Installer.find` chooses (uv or
pip; by default uv where one is found, pip otherwise).

Each pin is installed from its own index, in order, constrained to the pins before it, so that
a transformers install can never replace the torch nightly under test. Only wheels are
installed (`--only-binary :all:`): a probe never compiles a package. Neither installer reads
its own configuration (`uv --no-config`, `pip --isolated`), so that only the index a pin names
is asked, as the command line asks it. An environment is ready
once its marker file is written, with a hash of everything in it (`fingerprint`); it is reused
only while that hash still holds, so that an interpreter or a package changed or planted after
it was made (on a runner whose cache other jobs can write) never runs a probe: such an
environment is made afresh. Where the job has `$TRIAGEBOT_ENV_SECRET` (a repository secret,
handed in a file: `HANDED_IN_FILES`),
the hash is kept sealed with it (HMAC), so that whoever can write the cache but lacks the
secret cannot write a marker this check accepts either; without it, a planter who rewrites the
marker too goes unseen. One whose install failed is removed, so that a later try starts
afresh. Installers run with `reproduce.scrubbed_environment()`: no token, no git credential.
The cache is kept within a budget (`budget_gib`), the least recently used environments pruned
first and never one in use (`pruning`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from triagebot.bisect.pruning import DEFAULT_CACHE_GIB, GIB, InUse, prune
from triagebot.errors import BisectError
from triagebot.reproduce import adopt_secret_files, scrubbed_environment

INSTALLERS = ("auto", "uv", "pip")
READY = ".triagebot-env.json"
SECRET = "TRIAGEBOT_ENV_SECRET"  # the key of the sealed hash (never seen by a child: scrubbed)
# What a bisection's job hands it in files (`reproduce.adopt_secret_files`), never in the job's
# environment, where a probe could read it from an ancestor's /proc/<pid>/environ: the seal's
# key, and the token git reads the data branch with (its credential helper reads the variable).
HANDED_IN_FILES = (SECRET, "TRIAGEBOT_STORE_TOKEN")


def take_secrets() -> None:
    """Take the secrets of `HANDED_IN_FILES` from their files, before anything else runs."""
    adopt_secret_files(HANDED_IN_FILES)


# Written by Python as it imports: not part of what was installed.
_BYTECODE = "__pycache__"
DEFAULT_CACHE = Path(".triagebot") / "envs"


@dataclass(frozen=True)
class Pin:
    """One package at one version, installed from the simple index at `index`; no version (""):
    the one the pins before it allow (torchvision, whose build follows the torch installed)."""

    project: str
    version: str
    index: str

    def requirement(self) -> str:
        return f"{self.project}=={self.version}" if self.version else self.project


class InstallFailed(Exception):
    """A pinned build that could not be installed; the message is one line saying why."""


@dataclass(frozen=True)
class Installer:
    """The commands that make a venv and install into it: `uv` or `pip`."""

    name: str  # "uv" or "pip"
    program: str  # the uv executable, or the Python whose pip installs (`pip --python`)

    @classmethod
    def find(cls, python: str = sys.executable, choice: str = "auto") -> Installer:
        """The installer `choice` names: `uv`, `pip`, or `auto` (uv where one is found, pip
        otherwise). uv is looked for on PATH, then beside `python` (a venv's own uv, as the dev
        environment has, when that venv is not on PATH), and kept as an absolute path: a PATH
        entry such as `.venv/bin` would name another file after a change of directory.
        `BisectError` when `choice` is no installer, or names uv and none is found."""
        if choice not in INSTALLERS:
            raise BisectError(f"the installer {choice!r} is not {', '.join(INSTALLERS)}")
        uv = (
            None
            if choice == "pip"
            else shutil.which("uv") or shutil.which("uv", path=str(Path(python).parent))
        )
        if choice == "uv" and uv is None:
            raise BisectError(
                f"the installer uv is not on PATH nor beside {python}: install it, or choose pip"
            )
        return cls("uv", str(Path(uv).absolute())) if uv else cls("pip", python)

    def create(self, folder: Path, python: str) -> list[str]:
        if self.name == "uv":
            return [self.program, "venv", "--quiet", "--no-config", "--python", python, str(folder)]
        return [python, "-m", "venv", "--without-pip", str(folder)]

    def install(self, env_python: Path, pin: Pin, constraints: Path | None) -> list[str]:
        constrained = ["--constraint", str(constraints)] if constraints else []
        # A pin without a version takes the build its constraints allow, which on a nightly
        # index is a pre-release (torchvision 0.29.0.dev20260408 for that night's torch).
        if not pin.version:
            constrained += ["--prerelease", "allow"] if self.name == "uv" else ["--pre"]
        common = ["--index-url", pin.index, "--only-binary", ":all:", *constrained, pin.requirement()]
        if self.name == "uv":
            return [
                self.program,
                "pip",
                "install",
                "--quiet",
                "--no-config",
                # Copies, not links into uv's cache: a file changed in one environment must not
                # change the cache, nor every environment made from it later.
                "--link-mode",
                "copy",
                "--python",
                str(env_python),
                *common,
            ]
        return [
            self.program,
            "-m",
            "pip",
            "--python",
            str(env_python),
            "install",
            "--quiet",
            "--isolated",
            "--disable-pip-version-check",
            "--no-input",
            *common,
        ]


def folder_name(pins: Sequence[Pin], python: str) -> str:
    """`torch-2.12.0.dev20260408+cu128_transformers-5.23.0_<hash>`: readable, and distinct for
    every set of pins, indexes and interpreter."""
    readable = "_".join(f"{pin.project}-{pin.version}" for pin in pins)
    readable = re.sub(r"[^A-Za-z0-9._+-]", "-", readable)[:150]
    identity = json.dumps([[asdict(pin) for pin in pins], python])
    return f"{readable}_{hashlib.sha256(identity.encode()).hexdigest()[:10]}"


class EnvironmentCache:
    """Environments under `root`, one per set of pins; `python_for(pins)` makes or reuses one."""

    def __init__(
        self,
        root: Path = DEFAULT_CACHE,
        *,
        python: str = sys.executable,
        installer: Installer | None = None,
        budget_gib: float = DEFAULT_CACHE_GIB,
        say: Callable[[str], None] = print,
    ) -> None:
        self.root = Path(root)
        self.budget_gib = budget_gib  # what the cache may hold; see `pruning`
        self.in_use = InUse()  # the environments this cache handed out: never pruned
        self.say = say
        # Bytecode of the environments' modules is read and written only here, a folder of this
        # process's own: a compiled file planted beside a module in the cache is never run (the
        # fingerprint leaves the environments' own bytecode caches out).
        # Removed when the cache is (or at exit).
        self._bytecode = tempfile.TemporaryDirectory(prefix="triagebot-bytecode-")
        self.bytecode = Path(self._bytecode.name)
        self.python = python
        self.installer = installer or Installer.find(python)

    def python_for(self, pins: Sequence[Pin], timeout: float) -> tuple[Path, bool]:
        """The interpreter of the environment holding `pins`, and whether it was made just now.
        Raises `InstallFailed` (the folder removed) or `subprocess.TimeoutExpired`."""
        folder = self.root / folder_name(pins, self.python)
        python = folder / "bin" / "python"
        if (folder / READY).is_file() and python.exists():
            self.in_use.hold(folder)  # before it is checked: from now on, never pruned
            if made_here(folder):
                return python, False
            self.say(f"  {folder.name}: not as it was made (its files changed since): made afresh")
            self.in_use.release(folder)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        self.in_use.hold(folder)
        try:
            self._run(self.installer.create(folder, self.python), "cannot make a venv", timeout)
            constraints = None
            for pin in pins:
                self._run(
                    self.installer.install(python, pin, constraints),
                    f"cannot install {pin.requirement()}",
                    timeout,
                )
                constraints = folder / "constraints.txt"
                done = pins[: pins.index(pin) + 1]
                constraints.write_text("".join(f"{p.requirement()}\n" for p in done), encoding="utf-8")
        except BaseException:
            self.in_use.release(folder, forget=True)
            shutil.rmtree(folder, ignore_errors=True)
            raise
        made = {"pins": [asdict(pin) for pin in pins], "sha256": sealed(fingerprint(folder))}
        (folder / READY).write_text(json.dumps(made, indent=1) + "\n", encoding="utf-8")
        prune(self.root, int(self.budget_gib * GIB), self.say)
        return python, True

    def done_with(self, pins: Sequence[Pin]) -> None:
        """The probe in the environment of `pins` is over: it may be pruned (least recently used
        first) when a later one is made, so that one process probing many builds, for one
        bisection or several, keeps the cache within its budget."""
        self.in_use.release(self.root / folder_name(pins, self.python))

    def child_environment(self) -> dict[str, str]:
        """What a Python of these environments runs with, besides `scrubbed_environment()`."""
        return {"PYTHONPYCACHEPREFIX": str(self.bytecode)}

    def _run(self, command: list[str], what: str, timeout: float) -> None:
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=timeout,
                env=scrubbed_environment(),
                check=False,
            )
        except OSError as error:
            raise InstallFailed(f"{what}: {error.strerror or error}") from None
        if done.returncode != 0:
            said = _last_error(done.stderr or done.stdout) or f"exit status {done.returncode}, no output"
            raise InstallFailed(f"{what}: {said}")


_ERROR = re.compile(r"(?:error:|×)\s*", re.IGNORECASE)
_HELP = "ResolutionImpossible: for help visit"  # pip's pointer after the line that says why
_CAUSE = re.compile(r"(?:cause:|caused by:|╰─▶)\s*", re.IGNORECASE)


def fingerprint(folder: Path) -> str:
    """A hash of what `folder` runs: every file's path, content and executable bit, every
    link's target (the interpreter is one), the marker and bytecode caches left out."""
    digest = hashlib.sha256()
    for top, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if name != _BYTECODE)
        for name in sorted(files + [name for name in folders if (Path(top) / name).is_symlink()]):
            path = Path(top) / name
            relative = path.relative_to(folder).as_posix()
            if relative == READY:
                continue
            digest.update(relative.encode() + b"\0")
            if path.is_symlink():
                digest.update(b"link:" + os.readlink(path).encode() + b"\0")
                continue
            digest.update(b"x" if os.access(path, os.X_OK) else b"-")
            with path.open("rb") as opened:
                digest.update(hashlib.file_digest(opened, "sha256").digest())
    return digest.hexdigest()


def made_here(folder: Path) -> bool:
    """Whether the environment in `folder` is still the one its marker describes."""
    try:
        made = json.loads((folder / READY).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    kept = made.get("sha256") if isinstance(made, dict) else None
    return isinstance(kept, str) and hmac.compare_digest(kept, sealed(fingerprint(folder)))


def sealed(digest: str) -> str:
    """`digest` as the marker keeps it: keyed with `$TRIAGEBOT_ENV_SECRET` when the job has it."""
    secret = os.environ.get(SECRET, "")
    return hmac.new(secret.encode(), digest.encode(), "sha256").hexdigest() if secret else digest


def _last_error(output: str) -> str:
    """Why an installer failed, in one bounded line: its last error line (pip's `ERROR:`, uv's
    `error:` or `×`) and, for uv, the innermost cause it lists beneath it (the error alone can
    be as vague as "Request failed after 3 retries"); else its last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    starts = [number for number, line in enumerate(lines) if _ERROR.match(line) and _HELP not in line]
    if not starts:
        return lines[-1][:300] if lines else ""
    error = _ERROR.sub("", lines[starts[-1]], count=1).rstrip(":")
    causes = [_CAUSE.sub("", line, count=1) for line in lines[starts[-1] + 1 :] if _CAUSE.match(line)]
    return ": ".join([error, *causes[-1:]])[:300]
