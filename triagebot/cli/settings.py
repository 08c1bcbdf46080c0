"""`triagebot config`: what triagebot.toml and the command line resolve to, and from where."""

from __future__ import annotations

import json
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
    configured,
)
from triagebot.config import Config, render_config

SourcesJson = Annotated[bool, typer.Option("--json", help="A JSON object: key -> value and source.")]


@configured("corpus", "sample", "seed", "device", "jobs", "timeout", "repo", "store")
def show_config(
    settings: Config,
    corpus: CorpusOption = None,
    sample: SampleOption = None,
    seed: SeedOption = None,
    device: DeviceOption = None,
    jobs: JobsOption = None,
    timeout: TimeoutOption = None,
    repo: RepoOption = None,
    store: StoreOption = None,
    as_json: SourcesJson = False,
    config: ConfigOption = None,
) -> None:
    """The resolved configuration, and where each value came from.

    Each value comes from the defaults, the toml file, or a command-line option given here
    (the same options as `run`)."""
    if as_json:
        rows = {key: {"value": value, "source": source} for key, value, source in settings.sources()}
        print(json.dumps(rows, indent=2))
        return
    print(render_config(settings))
