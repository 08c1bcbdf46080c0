"""The options several commands share, and `configured`: the one way a command reads its settings.

A command that reads triagebot.toml declares, in the order its help lists them, the options
that set a configuration value (`--corpus`, `--jobs`, `--store`, ... : `config.COMMAND_LINE`)
and `--config`, names the former in `@configured(...)`, and takes a `settings` parameter:

    @configured("corpus", "jobs", "store")
    def sweep(settings: Config, corpus: CorpusOption = None, ..., config: ConfigOption = None):

The decorator hands it `triagebot.toml` with those options applied over it (and `--flags`
narrowing the flags), checked once by `triagebot.config`, so that an error names the option
the user typed.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from triagebot.config import COMMAND_LINE, Config, jobs_value, load_config
from triagebot.results import corpus_choices

Command = TypeVar("Command", bound=Callable[..., Any])

SETTING_OPTIONS = {option.removeprefix("--").replace("-", "_"): option for option in COMMAND_LINE}
"""parameter name -> the option that sets a configuration value (`only_breaking_in` ->
`--only-breaking-in`)."""


def configured(*options: str) -> Callable[[Command], Command]:
    """Give the command `settings`: triagebot.toml (its `config` parameter) with the command
    line's values of `options` applied over it, and the flags narrowed to `flags` when that is
    one of them. The command is still called with every option's value."""
    unknown = set(options) - set(SETTING_OPTIONS) - {"flags"}
    if unknown:
        raise TypeError(f"not options that set a configuration value: {sorted(unknown)}")

    def decorate(command: Command) -> Command:
        signature = inspect.signature(command, eval_str=True)  # typer reads the evaluated types
        missing = {*options, "config", "settings"} - set(signature.parameters)
        if missing:
            raise TypeError(f"{command.__name__} does not declare {sorted(missing)}")

        @functools.wraps(command)
        def with_settings(**given: Any) -> Any:
            return command(settings=read_settings(given, options), **given)

        shown = [parameter for parameter in signature.parameters.values() if parameter.name != "settings"]
        with_settings.__signature__ = signature.replace(parameters=shown)  # type: ignore[attr-defined]
        return with_settings  # type: ignore[return-value]

    return decorate


def read_settings(given: dict[str, Any], options: tuple[str, ...]) -> Config:
    """triagebot.toml with the values `given` for `options` applied over it (None: not given)."""
    values = {SETTING_OPTIONS[name]: given[name] for name in options if name != "flags"}
    settings = load_config(given["config"], values)
    return settings.with_flags(split_names(given["flags"])) if "flags" in options else settings


def split_names(text: str | None) -> list[str] | None:
    """`A,B` as a list (None when not given): the one comma splitter of the command line."""
    names = [name.strip() for name in (text or "").split(",") if name.strip()]
    return names or None


def _jobs(value: str | None) -> int | str | None:
    """`--jobs N` or `--jobs auto` (the runner's cores; on CUDA, its GPU's memory too), checked
    with `[sweep] jobs` when the configuration is read (`configured`)."""
    return None if value is None else jobs_value(value)


ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        metavar="FILE",
        help="triagebot.toml to read (default: ./triagebot.toml if present).",
    ),
]
StoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store", metavar="DIR", help="A folder of snapshots instead of [store] of triagebot.toml."
    ),
]
TokenOption = Annotated[
    str | None, typer.Option("--token", metavar="TOKEN", help="GitHub token (default: $GITHUB_TOKEN).")
]
RepoOption = Annotated[
    str | None,
    typer.Option(
        "--repo", metavar="OWNER/NAME", help="Tracking issues' repository (default: [tracker] repo)."
    ),
]
CorpusOption = Annotated[
    str | None,
    typer.Option(
        "--corpus",
        metavar="NAME[,NAME]",
        help=f"{corpus_choices()}; several side by side, comma-separated (default: [sweep] corpus).",
    ),
]
ModelsOption = Annotated[
    str | None,
    typer.Option("--models", metavar="A,B", help="Only these models of the corpus (no sample is drawn)."),
]
FlagsOption = Annotated[
    str | None, typer.Option("--flags", metavar="F1,F2", help="Only these configured flags (default: all).")
]
SampleOption = Annotated[
    int | None,
    typer.Option(
        "--sample", min=1, metavar="N", help="Draw a stratified sample of N (default: [corpus] sample)."
    ),
]
SeedOption = Annotated[
    int | None, typer.Option("--seed", metavar="N", help="Seed of the sample (default: [corpus] seed).")
]
DeviceOption = Annotated[
    str | None,
    typer.Option("--device", metavar="cpu|cuda|auto", help="Where to run (default: [sweep] device)."),
]
JobsOption = Annotated[
    str | None,
    typer.Option(
        "--jobs",
        "-j",
        metavar="N|auto",
        callback=_jobs,
        help="Runs at once, or auto (default: [sweep] jobs).",
    ),
]
TimeoutOption = Annotated[
    float | None, typer.Option("--timeout", metavar="SECONDS", help="Per run (default: [sweep] timeout).")
]
StratumOption = Annotated[
    str | None,
    typer.Option(
        "--stratum",
        metavar="NAME",
        help="Only this stratum: vl_multimodal, decoder_llm, encoder_decoder, vision_other.",
    ),
]
SnapshotArgument = Annotated[
    str,
    typer.Argument(
        metavar="SNAPSHOT", help="Snapshot JSON file, a sweep's .jsonl stream, or a key in the store."
    ),
]
