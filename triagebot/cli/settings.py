"""`triagebot config`: what triagebot.toml and the command line resolve to, and from where;
`--check`: every problem of a configuration file, one line each."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from triagebot.cli.options import (
    ConfigOption,
    CorpusOption,
    DeviceOption,
    JobsOption,
    RepoOption,
    SampleOption,
    SeedOption,
    StoreOption,
    TimeoutOption,
    read_settings,
)
from triagebot.config import config_problems, render_config
from triagebot.errors import ConfigError

SourcesJson = Annotated[bool, typer.Option("--json", help="A JSON object: key -> value and source.")]
_SHOWN = ("corpus", "sample", "seed", "device", "jobs", "timeout", "repo", "store")
"""The options `config` applies over the file, as `run` does (`--check` reads the file alone)."""
CheckOption = Annotated[
    bool,
    typer.Option(
        "--check",
        help="Check the file (-c FILE, default ./triagebot.toml): 'FILE: ok', or one line per "
        "wrong key or value on stderr and exit 2.",
    ),
]


def show_config(
    corpus: CorpusOption = None,
    sample: SampleOption = None,
    seed: SeedOption = None,
    device: DeviceOption = None,
    jobs: JobsOption = None,
    timeout: TimeoutOption = None,
    repo: RepoOption = None,
    store: StoreOption = None,
    as_json: SourcesJson = False,
    check: CheckOption = False,
    config: ConfigOption = None,
) -> None:
    """The resolved configuration, and where each value came from; with --check, whether a
    configuration file is right.

    Each value comes from the defaults, the toml file, or a command-line option given here
    (the same options as `run`). --check reads the file alone (no options over it): every
    unknown key (with the nearest valid name) and every wrong value, one line each."""
    if check:
        check_config_file(config or Path("triagebot.toml"))
        return
    given = dict(corpus=corpus, sample=sample, seed=seed, device=device, jobs=jobs, timeout=timeout)
    settings = read_settings(given | dict(repo=repo, store=store, config=config), _SHOWN)
    if as_json:
        rows = {key: {"value": value, "source": source} for key, value, source in settings.sources()}
        print(json.dumps(rows, indent=2))
        return
    print(render_config(settings))


def check_config_file(path: Path) -> None:
    """`config --check`: `FILE: ok` on stdout, or each problem on a line of stderr and exit 2
    (a file that cannot be read or parsed: one line)."""
    try:
        problems = config_problems(path)
    except ConfigError as error:
        problems = [str(error)]
    if not problems:
        print(f"{path}: ok")
        return
    for line in problems:
        print(line, file=sys.stderr)
    raise typer.Exit(2)
