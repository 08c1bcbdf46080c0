"""Real nights: the default night on real torch and transformers releases, replayed in order.

    python bench/real_nights.py sweep  [--work DIR] [--trains whole,transformers,torch]
    python bench/real_nights.py bisect --trains NAME [--between 1 3] [-- --model M --flag F ...]
    python bench/real_nights.py replay [--work DIR] [--trains ...]
    python bench/real_nights.py check  [--work DIR]
    python bench/real_nights.py pages  [--work DIR]
    python bench/real_nights.py render

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
build and selection, keeping what it cost: wall time and disk.
`replay` publishes each train in order, as the scheduled workflow does, to a local fake
GitHub: for each build, `triagebot run --snapshot` of its night into the train's store, with
a token, so that each night is stored, diffed against the one before and published; the
fake's issues and comments after each night are kept in `trains/NAME/github.json`.
`pages` pictures each pair of nights as the dashboard's compare page shows it (headless
Chromium, `docs/real-nights/`). `render` writes `docs/real-nights.md` from the trains' stores
and what GitHub was sent.
Each step reuses what an earlier one left in `--work`; nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import json
import os
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
    its wall seconds."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(extra_env or {})}
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
    return {
        "exit": done.returncode,
        "wall_seconds": round(wall, 1),
    }


def night_folder(work: Path, build: Build, train: Train) -> Path:
    return work / "sweeps" / build.name / train.selection


def derive_sample(whole: Path, folder: Path, sample: int) -> None:
    """The night of a stratified sample, taken from the same build's whole-corpus night: the
    sample `run --sample` draws (the one function that draws it, on the whole night's specs,
    which are the corpus), with those models' runs and reproductions. The runs are the whole
    night's; what the ladder climbed was chosen among the whole corpus's pairs."""
    from triagebot.corpus.sampling import sample as draw
    from triagebot.store import read_snapshot, write_snapshot

    night = read_snapshot(whole / "snapshot.json")
    specs = [result.spec for result in night.results]
    if any(spec is None for spec in specs):
        raise SystemExit(f"real-nights: {whole} has models without their spec: cannot draw a sample from it")
    chosen, selection = draw(specs, sample, seed=SEED, corpus=night.corpus.name)
    models = {spec.model for spec in chosen}
    derived = night.model_copy(
        update={
            "corpus": selection,
            "results": [result for result in night.results if result.model in models],
            "reproductions": [repro for repro in night.reproductions if repro.model in models],
        }
    )
    folder.mkdir(parents=True, exist_ok=True)
    write_snapshot(derived, folder / "snapshot.json")
    cost = json.loads((whole / "cost.json").read_text(encoding="utf-8"))
    cost |= {"derived_from": "whole", "snapshot_bytes": (folder / "snapshot.json").stat().st_size}
    (folder / "cost.json").write_text(json.dumps(cost, indent=1) + "\n", encoding="utf-8")


def sweep(work: Path, build: Build, train: Train) -> Path:
    """`build`'s default night on `train`'s selection, swept once: its snapshot's path. A
    sample of a build whose whole-corpus night exists is taken from that night."""
    folder = night_folder(work, build, train)
    snapshot = folder / "snapshot.json"
    if snapshot.is_file() and (folder / "cost.json").is_file():
        return snapshot
    whole = work / "sweeps" / build.name / "whole"
    if train.sample is not None and (whole / "cost.json").is_file():
        say(f"{build.describe()}: {train.selection} taken from its whole-corpus night")
        derive_sample(whole, folder, train.sample)
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
    say(f"{build.describe()}: done in {cost['wall_seconds']:.0f} s")
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
        "upstream_searches_per_night = 0\n"
        + (f'\n[store]\nkey = "{train.key}"\n' if train.key != "torch" else "")
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
            if not snapshot.is_file():  # not swept (yet): the train goes on without it
                say(f"{train.name}: no night of {build.describe()} on {train.selection}: left out")
                nights.append({"build": build.name, "swept": False})
                continue
            out = folder / build.name
            out.mkdir()
            writes = len(fake.writes)
            # The bisections between an earlier build and this one, kept before its night
            found = [answers_folder(work, train, earlier, build) for earlier in train.builds]
            bisections = next((["--bisections", str(path)] for path in found if path.is_dir()), [])
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
                    *bisections,
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


# --- What the replay found: one record, from which docs/real-nights.md is rendered.

RECORD = ROOT / "bench" / "data" / "real-nights.json"
DOCUMENT = ROOT / "docs" / "real-nights.md"
TEMPLATE = "real-nights.md.j2"  # beside this file
SHOWN = 12
# The lists of a flag's diff the record keeps (results.FlagDiff)
DIFF_LISTS = (
    "newly_crashing",
    "newly_wrong",
    "fixed",
    "signature_changes",
    "graph_changes",
    "effect_changes",
    "removed",
)  # rows of a long list the document shows; the record keeps every one


def change_row(change) -> dict:
    return change.model_dump(mode="json", exclude={"stratum"})


def baseline_moves(old, new) -> dict:
    """What moved at baseline between two snapshots, model by model (those in both): builds
    gained or lost, the kinds of break that changed."""
    from triagebot.results import BASELINE

    before = {result.model: result.outcomes.get(BASELINE) for result in old.results}
    built, unbuilt, reasons, reworded = [], [], [], 0
    for result in new.results:
        was, now = before.get(result.model), result.outcomes.get(BASELINE)
        if was is None or now is None:
            continue
        if was.status != now.status and "ok" in (was.status, now.status):
            row = {
                "model": result.model,
                "old": str(was.status),
                "new": str(now.status),
                "error": now.error or was.error,
            }
            (built if now.status == "ok" else unbuilt).append(row)
        elif was.status == now.status == "ok" and set(was.break_reasons) != set(now.break_reasons):
            before_kinds, now_kinds = reason_kinds(was.break_reasons), reason_kinds(now.break_reasons)
            if before_kinds == now_kinds:
                reworded += 1
                continue
            gone, came = sorted(before_kinds - now_kinds), sorted(now_kinds - before_kinds)
            reasons.append({"model": result.model, "gone": gone, "new": came})
    return {"now_runs": built, "no_longer_runs": unbuilt, "break_reasons": reasons, "reworded": reworded}


def reason_kinds(reasons: list[str]) -> set[str]:
    """A model's break reasons by kind: the title Dynamo gives each (the words before its
    explanation), so that a reason whose details or source line moved is the same kind."""
    return {reason.split(" Explanation:", 1)[0].strip() for reason in reasons}


def published(previous: dict | None, now: dict) -> dict:
    """What one night did on GitHub: issues opened, closed and reopened, comments posted (each
    notice by its kind), from what the fake held before and after it."""
    from triagebot.report.markers import find_flag, find_notice

    before = {issue["number"]: issue for issue in (previous or {"issues": []})["issues"]}
    seen = {comment["id"] for comment in (previous or {"comments": []})["comments"]}
    issues = {"opened": [], "closed": [], "reopened": [], "edited": []}
    for issue in now["issues"]:
        was = before.get(issue["number"])
        name = find_flag(issue["body"]) or issue["title"]
        row = {"number": issue["number"], "what": name, "title": issue["title"], "labels": issue["labels"]}
        if was is None:
            issues["opened"].append(row)
            if issue["state"] == "closed":
                issues["closed"].append(row)
        elif was["state"] != issue["state"]:
            issues["closed" if issue["state"] == "closed" else "reopened"].append(row)
        elif was["body"] != issue["body"]:
            issues["edited"].append(row)
    notices = []
    for comment in now["comments"]:
        if comment["id"] in seen:
            continue
        notice = find_notice(comment["body"])
        notices.append(
            {
                "issue": comment["issue"],
                "kind": notice.kind if notice else "comment",
                "flag": notice.flag if notice else None,
                "characters": len(comment["body"]),
            }
        )
    return {**issues, "notices": notices, "writes": len(now["writes"])}


def collect(work: Path, trains: list[Train]) -> dict:
    """The record of the replay: each build and what its night cost, each train's nights with
    what changed from the night before, what was published, the checks and the bisections."""
    from triagebot.report import words
    from triagebot.results import Night
    from triagebot.store import read_snapshot

    record: dict = {"builds": {}, "trains": []}
    for train in trains:
        github = json.loads((work / "trains" / train.name / "github.json").read_text(encoding="utf-8"))
        nights, previous_state, previous_snapshot = [], None, None
        left_out = [state["build"] for state in github if state.get("swept") is False]
        github = [state for state in github if state.get("swept") is not False]
        swept = [build for build in train.builds if build.name not in left_out]
        for build, state in zip(swept, github, strict=True):
            folder = work / "trains" / train.name / build.name
            snapshot = read_snapshot(night_folder(work, build, train) / "snapshot.json")
            night = Night.model_validate_json((folder / "report" / "night.json").read_text(encoding="utf-8"))
            environment = snapshot.environment
            cost = json.loads((night_folder(work, build, train) / "cost.json").read_text(encoding="utf-8"))
            cost["models"] = len(snapshot.results)
            cost["run_seconds"] = round(sum(snapshot.model_seconds().values()))
            record["builds"].setdefault(
                build.name,
                {
                    "torch": environment.torch_version,
                    "git": environment.torch_git_version,
                    "transformers": environment.transformers_version,
                    "cuda": environment.cuda_version,
                    "device": environment.device,
                    "costs": {},
                },
            )["costs"][train.selection] = cost
            entry = {
                "build": build.name,
                "key": night.key,
                "models": len(snapshot.results),
                "previous": night.previous_key,
                "flags": {},
                "published": published(previous_state, state),
            }
            for flag, tonight in night.flags.items():
                diff = tonight.diff
                entry["flags"][flag] = {
                    "headline": words.headline(tonight.figures),
                    "verdict": words.verdict_word(tonight.verdict),
                    "groups": len(tonight.stats.crash_groups),
                    "news": None
                    if tonight.news is None
                    else {
                        "new": [change_row(c) for c in tonight.news.new],
                        "fixed": [change_row(c) for c in tonight.news.fixed],
                    },
                    "diff": None
                    if diff is None
                    else {name: [change_row(c) for c in getattr(diff, name)] for name in DIFF_LISTS},
                }
            if previous_snapshot is not None and night.diff is not None:
                entry["baseline"] = {
                    "graph_changes": [change_row(c) for c in night.diff.baseline_graph_changes],
                    "models_added": night.diff.models_added,
                    "models_removed": night.diff.models_removed,
                    **baseline_moves(previous_snapshot, snapshot),
                }
            nights.append(entry)
            previous_state, previous_snapshot = state, snapshot
        record["trains"].append(
            {
                "name": train.name,
                "selection": train.selection,
                "key": train.key,
                "nights": nights,
                "not_swept": [build.describe() for build in train.builds if build.name in left_out],
            }
        )
    for name in ("checks", "bisections"):
        kept = work / f"{name}.json"
        record[name] = json.loads(kept.read_text(encoding="utf-8")) if kept.is_file() else []
    return record


BISECT_ENVIRONMENTS = ENVIRONMENTS / "bisect"


def answers_folder(work: Path, train: Train, good: Build, bad: Build) -> Path:
    """Where a bisection between two of `train`'s builds leaves its answers (JSON, as the
    workflow's bisect job does), for the night of `bad` to keep (`run --bisections`)."""
    return work / "bisections" / train.name / f"{good.name}..{bad.name}"


def bisect(work: Path, train: Train, good: Build, bad: Build, arguments: list[str]) -> None:
    """A real bisection between two of `train`'s nights (`triagebot bisect GOOD BAD` with
    `arguments`: the model and flag), over torch releases or transformers releases from PyPI,
    each probe installing its release from the package index; the answers left for the bad
    night to keep in the train's store (as the workflow's publish job keeps the bisect job's),
    and in `bisections.json` with what each probe took (seconds, and each environment's disk)."""
    from triagebot.pipeline.inputs import read_input
    from triagebot.store import LocalStore

    answers = answers_folder(work, train, good, bad)
    folder = answers.parent
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "triagebot.toml").write_text(train_config(train), encoding="utf-8")
    store = LocalStore(folder / "store")  # the two ends, keyed as the train's store keys them
    ends = []
    for build in (good, bad):
        night = read_input(sweep(work, build, train), scheme=train.key)
        if night.key not in store:
            store.put(night)
        ends.append(night.key)
    shutil.rmtree(answers, ignore_errors=True)
    before = set(BISECT_ENVIRONMENTS.glob("*")) if BISECT_ENVIRONMENTS.is_dir() else set()
    # torch from the package index whichever axis moves: the swept 2.13.0+cpu is on no index here
    asked = [*ends, *arguments] if "--model" in arguments else ["--owed", ends[1], *arguments]
    say(
        f"bisecting {' '.join(arguments) or 'what the night owes'} "
        f"between {good.describe()} and {bad.describe()}"
    )
    # Run where the bad night's build is installed: a graph count's script is checked there first.
    cost = triagebot(
        environment(bad),
        [
            "bisect",
            *asked,
            "--releases",
            "--store",
            "store",
            "--cache",
            str(BISECT_ENVIRONMENTS),
            "--installer",
            "pip",
            "--out",
            str(answers),
        ],
        cwd=folder,
        log=folder / f"bisect-{good.name}..{bad.name}.log",
    )
    made = sorted(set(BISECT_ENVIRONMENTS.glob("*")) - before)
    if cost["exit"] != 0 or not list(answers.glob("*.json")):
        raise SystemExit(
            f"real-nights: the bisection failed: see {folder / f'bisect-{good.name}..{bad.name}.log'}"
        )
    record_bisections(work, train, answers, cost["wall_seconds"], made)


def record_bisections(work: Path, train: Train, answers: Path, wall: float, made: list[Path]) -> None:
    """The answers in folder `answers` added to `bisections.json`, each with its probes (their
    verdicts in its words), the bisection's wall seconds and the environments it made."""
    from triagebot.bisect import describe
    from triagebot.results import Bisection

    found = [
        Bisection.model_validate_json(path.read_text(encoding="utf-8"))
        for path in sorted(answers.glob("*.json"))
    ]
    listed = work / "bisections.json"
    record = json.loads(listed.read_text(encoding="utf-8")) if listed.is_file() else []
    for answer in found:
        record.append(
            {
                "train": train.name,
                "model": answer.model,
                "flag": answer.flag,
                "subject": answer.subject,
                "change": answer.change,
                "signature": answer.signature,
                "answer": "; ".join(describe(answer)),
                "probes": [
                    {**probe.model_dump(mode="json"), "verdict": answer.said(probe.verdict)}
                    for probe in answer.probes
                ],
                "cost": f"{wall:.0f} s in all; "
                f"{len(made)} environment(s) made: "
                + ", ".join(
                    f"{env.name.rsplit('_', 1)[0]} ({folder_size(env) / 2**30:.1f} GiB)" for env in made
                ),
            }
        )
    listed.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    say(f"bisected: {record[-1]['answer']} (kept by the bad night when the {train.name} train is replayed)")


PAGES = ROOT / "docs" / "real-nights"  # each pair's compare page, as the dashboard shows it
PAGE_WIDTH, PAGE_HEIGHT = 1280, 2000  # the top of a long page: its tables come first


def pages(work: Path, record: dict) -> None:
    """Each pair of a train's nights as the dashboard compares them (the compare page of the
    train's last site, which holds every night of it), in headless Chromium at 1280 px wide, to
    `docs/real-nights/TRAIN-N.png`; each night of the record names its picture (`page`)."""
    sys.path.insert(0, str(ROOT / "tests"))  # the browser test's own Chromium and flags
    from playwright.sync_api import sync_playwright
    from test_site_browser import CHROMIUM, FLAGS

    from triagebot.report import links

    PAGES.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        page = browser.new_page(viewport={"width": PAGE_WIDTH, "height": 900}, device_scale_factor=1)
        for train in record["trains"]:
            site = work / "trains" / train["name"] / train["nights"][-1]["build"] / "site"
            for number, night in enumerate(train["nights"][1:], start=2):
                target = site / links.compare_page(night["previous"], night["key"])
                if not target.is_file():
                    raise SystemExit(f"real-nights: no compare page {target}: replay the train first")
                page.goto(target.as_uri())
                page.wait_for_load_state("load")
                height = min(PAGE_HEIGHT, page.evaluate("document.documentElement.scrollHeight"))
                page.set_viewport_size({"width": PAGE_WIDTH, "height": height})
                picture = PAGES / f"{train['name']}-{number}.png"
                page.screenshot(path=str(picture))
                page.set_viewport_size({"width": PAGE_WIDTH, "height": 900})
                night["page"] = picture.relative_to(DOCUMENT.parent).as_posix()
                say(f"{train['name']}: {night['previous']} → {night['key']}: {picture}")
        browser.close()


CHECKED_PER_PAIR = 16  # claims rerun per pair of nights, beyond the notices' (all rerun)


def claims(record: dict) -> list[dict]:
    """What each pair of nights claimed changed: every model a notice named, and every model
    the diff listed as newly crashing, newly wrong or fixed (the issue shows them), per flag."""
    found = []
    for train in record["trains"]:
        for previous, night in zip(train["nights"], train["nights"][1:], strict=False):
            pair = []
            for flag, state in night["flags"].items():
                said = {}
                for kind, rows in (
                    ("new crash", (state["news"] or {}).get("new", [])),
                    ("fixed", (state["news"] or {}).get("fixed", [])),
                ):
                    for row in rows:
                        said[row["model"]] = f"{kind} notice"
                for kind, name in (
                    ("new crash", "newly_crashing"),
                    ("wrong result", "newly_wrong"),
                    ("fixed", "fixed"),
                ):
                    for row in (state["diff"] or {}).get(name, []):
                        said.setdefault(row["model"], kind)
                pair += [
                    {
                        "train": train["name"],
                        "before_build": previous["build"],
                        "now_build": night["build"],
                        "selection": train["selection"],
                        "flag": flag,
                        "model": model,
                        "kind": kind,
                    }
                    for model, kind in sorted(said.items())
                ]
            # the notices' claims first: every one of them is checked
            pair.sort(key=lambda claim: not claim["kind"].endswith("notice"))
            found += pair[: max(CHECKED_PER_PAIR, sum(claim["kind"].endswith("notice") for claim in pair))]
    return found


def outcome_of(snapshot, model: str, flag: str) -> str:
    """A model's run under a flag, in a few words: `crash: Signature...`, `ok`, `skipped`, ..."""
    for result in snapshot.results:
        if result.model == model:
            outcome = result.outcomes.get(flag)
            if outcome is None:
                return "not run"
            if outcome.status == "crash":
                return f"crash: {(outcome.signature or outcome.error or '')[:100]}"
            wrong = outcome.accuracy is not None and outcome.accuracy.matches is False
            return f"{outcome.status}{', wrong result' if wrong else ''}"
    return "not in the corpus"


def held(kind: str, before: str, now: str) -> bool:
    """Whether a claim of `kind` (new crash, fixed, wrong result; or the notice of one) is what
    the reruns saw: `before` and `now` are `outcome_of` the model on the two builds."""
    crashed, crashes = before.startswith("crash"), now.startswith("crash")
    claim = kind.removesuffix(" notice")
    if claim == "fixed":
        return crashed and not crashes
    if claim == "wrong result":
        return "wrong result" in now and "wrong result" not in before
    return crashes and not crashed


def check(work: Path) -> None:
    """Every claim of the replay rerun: each model swept again alone under its flag on both
    builds (one sweep per build and flag), and whether what the night said held."""
    from triagebot.pipeline.inputs import read_input

    record = json.loads(RECORD.read_text(encoding="utf-8"))
    found = claims(record)
    by_build: dict[tuple[str, str], set[str]] = {}
    for claim in found:
        for side in ("before_build", "now_build"):
            by_build.setdefault((claim[side], claim["flag"]), set()).add(claim["model"])
    reruns = {}
    for (name, flag), models in sorted(by_build.items()):
        build = next(b for train in TRAINS.values() for b in train.builds if b.name == name)
        folder = work / "checks" / name / flag
        stream = folder / "sweep.jsonl"
        if not stream.is_file():
            folder.mkdir(parents=True, exist_ok=True)
            say(f"rerunning {len(models)} model(s) under {flag} on {build.describe()}")
            triagebot(
                environment(build),
                [
                    "sweep",
                    "--corpus",
                    "transformers",
                    "--models",
                    ",".join(sorted(models)),
                    "--flags",
                    flag,
                    "--out",
                    str(stream),
                    "--force",
                ],
                cwd=folder,
                log=folder / "log.txt",
            )
        reruns[(name, flag)] = read_input(stream)
    checked = []
    for claim in found:
        before = outcome_of(reruns[(claim["before_build"], claim["flag"])], claim["model"], claim["flag"])
        now = outcome_of(reruns[(claim["now_build"], claim["flag"])], claim["model"], claim["flag"])
        checked.append({**claim, "before": before, "now": now, "real": held(claim["kind"], before, now)})
    (work / "checks.json").write_text(json.dumps(checked, indent=1) + "\n", encoding="utf-8")
    say(f"{len(checked)} claim(s) rerun: {sum(not c['real'] for c in checked)} did not hold")


COST_PAGE = ROOT / "docs" / "real-builds.md"  # the page that states what the real nights cost
COST_MARKERS = (
    "<!-- real-nights cost: rendered by bench/real_nights.py render -->",
    "<!-- end of real-nights cost -->",
)


def render(record: dict, template: str = TEMPLATE) -> str:
    import jinja2

    from triagebot.report.render import effect

    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    # A table cell of untrusted text (an error message): one line, its pipes escaped.
    environment.filters["cell"] = lambda text: " ".join(str(text or "").split()).replace("|", "\\|")
    environment.filters["effect"] = effect  # an effect in the words the issues use
    environment.filters["blank"] = lambda value: "" if value is None else value
    environment.filters["mib"] = lambda size: f"{size / 2**20:,.0f} MiB"
    environment.filters["gib"] = lambda size: f"{size / 2**30:.1f} GiB"
    environment.filters["minutes"] = lambda seconds: f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return environment.get_template(template).render(record=record, shown=SHOWN, trains=TRAINS)


def with_cost(page: str, record: dict) -> str:
    """The page (`COST_PAGE`) with its table of what the real nights cost rendered again between its
    markers (the document's own table: one writer of those figures)."""
    start, end = COST_MARKERS
    if start not in page or end not in page:
        raise SystemExit(f"real-nights: {COST_PAGE.name} has no {start} ... {end} to render the cost into")
    before, rest = page.split(start, 1)
    after = rest.split(end, 1)[1]
    return f"{before}{start}\n{render(record, 'real-nights-cost.md.j2')}{end}{after}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("step", choices=["sweep", "replay", "check", "bisect", "pages", "render"])
    parser.add_argument(
        "--between",
        nargs=2,
        metavar=("GOOD", "BAD"),
        type=int,
        default=(1, 3),
        help="bisect: the train's nights (1-based) whose builds are the ends (default: 1 3)",
    )
    parser.add_argument("--work", type=Path, default=WORK, help="where nights, trains and stores are kept")
    parser.add_argument(
        "--trains", default=",".join(TRAINS), help=f"which trains, in order (of {', '.join(TRAINS)})"
    )
    options, rest = parser.parse_known_args(argv)
    # bisect: what `triagebot bisect` is given besides the ends (--model M --flag F ...), after --
    options.bisect_arguments = rest[1:] if rest[:1] == ["--"] else rest
    if rest and options.step != "bisect":
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
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
        RECORD.parent.mkdir(parents=True, exist_ok=True)
        RECORD.write_text(json.dumps(collect(options.work, trains), indent=1) + "\n", encoding="utf-8")
        say(f"the replay's record: {RECORD}")
    elif options.step == "bisect":
        if len(trains) != 1:
            parser.error("bisect: name one train with --trains")
        train = trains[0]
        first, last = (train.builds[number - 1] for number in options.between)
        bisect(options.work, train, first, last, options.bisect_arguments)
    elif options.step == "check":
        check(options.work)
        record = json.loads(RECORD.read_text(encoding="utf-8"))
        record["checks"] = json.loads((options.work / "checks.json").read_text(encoding="utf-8"))
        RECORD.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    elif options.step == "pages":
        record = json.loads(RECORD.read_text(encoding="utf-8"))
        pages(options.work, record)
        RECORD.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    elif options.step == "render":
        record = json.loads(RECORD.read_text(encoding="utf-8"))
        for name in ("checks", "bisections"):  # what those steps found since the replay
            kept = options.work / f"{name}.json"
            if kept.is_file():
                record[name] = json.loads(kept.read_text(encoding="utf-8"))
        RECORD.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        DOCUMENT.write_text(render(record), encoding="utf-8")
        COST_PAGE.write_text(with_cost(COST_PAGE.read_text(encoding="utf-8"), record), encoding="utf-8")
        say(f"rendered {DOCUMENT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
