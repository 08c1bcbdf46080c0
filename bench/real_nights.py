"""Real nights: the default night on real torch and transformers releases, replayed in order.

    python bench/real_nights.py sweep  [--work DIR] [--trains torch,transformers,whole]
    python bench/real_nights.py replay [--work DIR] [--trains ...]
    python bench/real_nights.py render [--work DIR] [--out docs/real-nights.md]

Three trains of builds, each a release train the bot meets as a run of nightlies:

- `torch`: torch 2.13.0+cpu, 2.14.0, 2.14.1 (PyPI's CUDA 13 builds, swept on this CPU), with
  transformers pinned at 5.24.0, on a stratified quarter of the corpus;
- `transformers`: transformers 5.22.0, 5.23.0, 5.24.0 with torch pinned at 2.13.0+cpu, on the
  same quarter, in a store keyed by torch and transformers (`[store] key`);
- `whole`: torch 2.13.0+cpu, then 2.14.1, on the whole corpus.

`sweep` makes each build's environment once (a venv under `~/.cache/triagebot/real-nights`,
from the package index: torch and transformers at their pins, with the project's own
dependencies) and runs the default night in it (`triagebot run`, a dry run into a store of its
own: the sweep, its confirmations, the ladder, reproductions verified and reduced), once per
build and selection, keeping what it cost: wall time, CPU time, peak memory, disk.
`replay` publishes each train in order, as the scheduled workflow does, to a local fake
GitHub: for each build, `triagebot run --snapshot` of its night into the train's store, with
a token, so that each night is stored, diffed against the one before and published; the
fake's issues and comments after each night are kept in `trains/NAME/github.json`.
`render` writes `docs/real-nights.md` from the trains' stores and what GitHub was sent.
Each step reuses what an earlier one left in `--work`; nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ENVIRONMENTS = Path.home() / ".cache" / "triagebot" / "real-nights"
WORK = Path("/work/real-nights")
QUARTER = 254  # of the 1,014 models of transformers 5.24's corpus
SEED = 0


@dataclass(frozen=True)
class Build:
    torch: str
    transformers: str

    @property
    def name(self) -> str:
        return f"torch-{self.torch}_transformers-{self.transformers}"

    def describe(self) -> str:
        return f"torch {self.torch}, transformers {self.transformers}"


@dataclass(frozen=True)
class Train:
    name: str
    builds: tuple[Build, ...]
    sample: int | None  # None: the whole corpus
    key: str = "torch"  # the store's [store] key

    @property
    def selection(self) -> str:
        return "whole" if self.sample is None else f"sample-{self.sample}-seed-{SEED}"


TRAINS = {
    train.name: train
    for train in (
        Train(
            "torch",
            (Build("2.13.0", "5.24.0"), Build("2.14.0", "5.24.0"), Build("2.14.1", "5.24.0")),
            QUARTER,
        ),
        Train(
            "transformers",
            (Build("2.13.0", "5.22.0"), Build("2.13.0", "5.23.0"), Build("2.13.0", "5.24.0")),
            QUARTER,
            key="torch+transformers",
        ),
        Train("whole", (Build("2.13.0", "5.24.0"), Build("2.14.1", "5.24.0")), None),
    )
}


def say(message: str) -> None:
    print(f"[real-nights {time.strftime('%H:%M:%S')}] {message}", flush=True)


def folder_size(path: Path) -> int:
    """Bytes under `path`, each file once (hard links counted once), links not followed."""
    seen, total = set(), 0
    for top, _, files in os.walk(path):
        for name in files:
            stat = os.lstat(os.path.join(top, name))
            if (stat.st_dev, stat.st_ino) not in seen:
                seen.add((stat.st_dev, stat.st_ino))
                total += stat.st_blocks * 512
    return total


def project_dependencies() -> list[str]:
    """The project's own runtime dependencies (pyproject.toml), torch and transformers left out:
    the build pins those."""
    with (ROOT / "pyproject.toml").open("rb") as file:
        listed = tomllib.load(file)["project"]["dependencies"]
    return [spec for spec in listed if not spec.startswith(("torch", "transformers"))]


def environment(build: Build) -> Path:
    """The interpreter of `build`'s environment, made once: a venv with torch and transformers
    at their pins and the project's dependencies, installed by pip from the package index."""
    folder = ENVIRONMENTS / build.name
    ready = folder / ".ready.json"
    if ready.is_file():
        return folder / "bin" / "python"
    shutil.rmtree(folder, ignore_errors=True)
    say(f"{build.describe()}: making its environment in {folder}")
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    pins = [f"torch=={build.torch}", f"transformers=={build.transformers}"]
    subprocess.run(
        [
            folder / "bin" / "python",
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            *pins,
            *project_dependencies(),
        ],
        check=True,
    )
    made = {
        "pins": pins,
        "install_seconds": round(time.monotonic() - started, 1),
        "bytes": folder_size(folder),
    }
    ready.write_text(json.dumps(made, indent=1) + "\n", encoding="utf-8")
    return folder / "bin" / "python"


def triagebot(
    python: Path, arguments: list[str], *, cwd: Path, log: Path, extra_env: dict[str, str] | None = None
) -> dict:
    """Run `python -m triagebot ARGUMENTS` (this checkout's triagebot) with its output in `log`;
    what it cost: wall and CPU seconds, the largest child's peak memory."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(extra_env or {})}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as output:
        done = subprocess.run(
            [str(python), "-m", "triagebot", *arguments],
            cwd=cwd,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            check=False,
        )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "exit": done.returncode,
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(cpu, 1),
        "peak_rss_mib": round(after.ru_maxrss / 1024),
    }


def night_folder(work: Path, build: Build, train: Train) -> Path:
    return work / "sweeps" / build.name / train.selection


def sweep(work: Path, build: Build, train: Train) -> Path:
    """`build`'s default night on `train`'s selection, swept once: its snapshot's path."""
    folder = night_folder(work, build, train)
    snapshot = folder / "snapshot.json"
    if snapshot.is_file() and (folder / "cost.json").is_file():
        return snapshot
    python = environment(build)
    folder.mkdir(parents=True, exist_ok=True)
    drawn = [] if train.sample is None else ["--sample", str(train.sample), "--seed", str(SEED)]
    say(f"{build.describe()}: the default night on {train.selection} (log: {folder / 'log.txt'})")
    cost = triagebot(
        python,
        ["run", "--corpus", "transformers", *drawn, "--store", "store", "--out", ".", "--dry-run"],
        cwd=folder,
        log=folder / "log.txt",
    )
    if cost["exit"] != 0 or not snapshot.is_file():
        raise SystemExit(f"real-nights: the night of {build.describe()} failed: see {folder / 'log.txt'}")
    made = json.loads((ENVIRONMENTS / build.name / ".ready.json").read_text(encoding="utf-8"))
    cost |= {
        "environment_bytes": made["bytes"],
        "install_seconds": made["install_seconds"],
        "snapshot_bytes": snapshot.stat().st_size,
        "night_bytes": folder_size(folder),
    }
    (folder / "cost.json").write_text(json.dumps(cost, indent=1) + "\n", encoding="utf-8")
    say(f"{build.describe()}: done in {cost['wall_seconds']:.0f} s ({cost['cpu_seconds']:.0f} CPU s)")
    return snapshot


TOKEN = "bot-token"  # the fake GitHub's bot
REPO = "pytorch/pytorch"


def train_config(train: Train) -> str:
    """The train's triagebot.toml: the defaults (the flags and sweep its nights ran with), the
    tracker on the fake's repository with the health issue and the rubric's labels, the store
    keyed as the train needs; no search of the upstream repository (the fake has none of its
    issues)."""
    return (
        f'[tracker]\nrepo = "{REPO}"\nmax_writes = 500\nhealth_issue = true\ntriage_labels = true\n'
        "upstream_searches_per_night = 0\n\n"
        f'[store]\nkey = "{train.key}"\n'
    )


def github_state(fake) -> dict:
    """What the fake GitHub holds: every issue (state, title, labels, body) and comment."""
    repo = fake.repos[REPO]
    issues = [
        {
            "number": number,
            "title": issue["title"],
            "state": issue["state"],
            "labels": sorted(label["name"] for label in issue.get("labels", [])),
            "body": issue.get("body") or "",
        }
        for number, issue in sorted(repo.issues.items())
    ]
    comments = [
        {"id": comment_id, "issue": comment["_issue"], "body": comment.get("body") or ""}
        for comment_id, comment in sorted(repo.comments.items())
    ]
    return {"issues": issues, "comments": comments}


def replay(work: Path, train: Train) -> None:
    """`train`'s nights published in order to a fresh store and a fresh fake GitHub, as the
    scheduled workflow publishes them; what GitHub held after each night in `github.json`."""
    sys.path.insert(0, str(ROOT / "tests"))  # the project's fake GitHub
    from fakegithub import FakeGitHub

    folder = work / "trains" / train.name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "triagebot.toml").write_text(train_config(train), encoding="utf-8")
    fake = FakeGitHub(repo=REPO)
    fake.start()
    nights = []
    try:
        for build in train.builds:
            snapshot = night_folder(work, build, train) / "snapshot.json"
            if not snapshot.is_file():
                raise SystemExit(
                    f"real-nights: no night of {build.describe()} on {train.selection}: run `sweep` first"
                )
            out = folder / build.name
            out.mkdir()
            writes = len(fake.writes)
            cost = triagebot(
                environment(build),
                [
                    "run",
                    "--snapshot",
                    str(snapshot),
                    "--store",
                    "store",
                    "--out",
                    str(out),
                    "--token",
                    TOKEN,
                    "--repo",
                    REPO,
                ],
                cwd=folder,
                log=out / "log.txt",
                extra_env={"GITHUB_API_URL": fake.base_url},
            )
            state = github_state(fake)
            nights.append(
                {
                    "build": build.name,
                    "exit": cost["exit"],
                    "wall_seconds": cost["wall_seconds"],
                    "writes": [list(write) for write in fake.writes[writes:]],
                    **state,
                }
            )
            say(
                f"{train.name}: {build.describe()} published (exit {cost['exit']}, "
                f"{len(fake.writes) - writes} writes)"
            )
            if cost["exit"] != 0:
                raise SystemExit(f"real-nights: publishing {build.describe()} failed: see {out / 'log.txt'}")
    finally:
        fake.stop()
        (folder / "github.json").write_text(json.dumps(nights, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("step", choices=["sweep", "replay", "render"])
    parser.add_argument("--work", type=Path, default=WORK, help="where nights, trains and stores are kept")
    parser.add_argument(
        "--trains", default=",".join(TRAINS), help=f"which trains, in order (of {', '.join(TRAINS)})"
    )
    options = parser.parse_args(argv)
    names = [name for name in options.trains.split(",") if name]
    unknown = [name for name in names if name not in TRAINS]
    if unknown:
        parser.error(f"no train {unknown[0]!r}: the trains are {', '.join(TRAINS)}")
    trains = [TRAINS[name] for name in names]
    if options.step == "sweep":
        for train in trains:
            for build in train.builds:
                sweep(options.work, build, train)
    elif options.step == "replay":
        for train in trains:
            replay(options.work, train)
    return 0


if __name__ == "__main__":
    sys.exit(main())
