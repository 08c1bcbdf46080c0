"""Reading `triagebot.toml` with the command line's options over it: one line naming the key or
the option for the first problem, the Pages address default, and the patch check."""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from triagebot.config.dynamo import check_patches, dynamo_settings
from triagebot.config.settings import COMMAND_LINE, OWNER_NAME, Config
from triagebot.errors import ConfigError, unknown


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model whose fields the path `loc` (without its last part) leads into."""
    model: Any = Config
    keyed = False  # the part after a table of tables (`flags.NAME`) is a key, not a field
    for part in loc[:-1]:
        if isinstance(part, int) or keyed:
            keyed = False
            continue
        if not (isinstance(model, type) and issubclass(model, BaseModel)) or part not in model.model_fields:
            return None
        annotation = model.model_fields[part].annotation
        keyed = get_origin(annotation) is dict
        while get_origin(annotation) in (list, dict):
            annotation = get_args(annotation)[-1]
        model = annotation
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _describe(error: ValidationError, source: str, options: Mapping[str, str]) -> str:
    """One line for the first problem (an unknown key before any other), naming the option when
    the command line set the value, else the file and the key."""
    problems = error.errors()
    first = next((p for p in problems if p["type"] == "extra_forbidden"), problems[0])
    return _problem_line(first, source, options)


def _problem_line(problem: ErrorDetails, source: str, options: Mapping[str, str]) -> str:
    """`problem` as one line: the unknown key with the nearest valid name, or the key (or the
    option that set it) and what is wrong with its value."""
    loc = tuple(problem["loc"])
    where = ".".join(str(part) for part in loc)
    message = str(problem["msg"]).removeprefix("Value error, ")
    if problem["type"] == "extra_forbidden":
        model = _model_at(loc)
        parent = "".join(f"{part}." for part in loc[:-1])
        known = model.model_fields if model else ()
        return f"{source}: {unknown('key', str(loc[-1]), known, prefix=parent)}"
    if problem["type"] == "missing":
        message = "missing"
    elif problem["type"] not in ("value_error", "assertion_error"):
        message = f"{message[:1].lower()}{message[1:]}, not {problem['input']!r}"
    for key, option in options.items():
        if where == key:
            return f"{option}: {message}"
    return f"{source}: '{where}': {message}" if where else f"{source}: {message}"


PLACEHOLDER_REPO = re.compile(r"(^|/)(your-[\w.-]*|OWNER|NAME|REPO)(/|$)")
"""A repository name as examples write it (`your-org/your-fork`, `OWNER/REPO`): never a real one."""


def config_problems(path: str | Path) -> list[str]:
    """Every problem of the configuration file at `path`, one line each (`triagebot config
    --check`): an unknown key with the nearest valid name, a wrong value with its key, the
    example's placeholder repository left in; none when the file loads. A file that cannot be
    read or is not TOML is a ConfigError (one line).
    The flags' patches are not checked against torch here (the commands that sweep do)."""
    source = str(path)
    text = _read_text(Path(path))
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: not valid TOML: {error}") from None
    try:
        config = Config.model_validate(data)
    except ValidationError as error:
        return [_problem_line(problem, source, {}) for problem in error.errors()]
    repo = config.tracker.repo or ""
    if PLACEHOLDER_REPO.search(repo):
        placeholder = f"{repo!r} is the example's placeholder, not your repository's OWNER/NAME"
        return [f"{source}: 'tracker.repo': {placeholder}"]
    return []


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a text file") from None


def parse_config(
    text: str, source: str = "triagebot.toml", options: Mapping[str, Any] | None = None
) -> Config:
    """The configuration in `text` with the command line's `options` (see `COMMAND_LINE`;
    None values are options not given) applied over it, checked."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: not valid TOML: {error}") from None
    sources: dict[str, str] = {}
    for table, values in data.items():
        if table == "flags" or not isinstance(values, dict):
            sources[table] = source
        else:
            sources.update({f"{table}.{key}": source for key in values})
    given: dict[str, str] = {}
    for option, value in (options or {}).items():
        if value is None:
            continue
        if option not in COMMAND_LINE:
            raise ConfigError(unknown("option", option, COMMAND_LINE))
        key = COMMAND_LINE[option]
        table, name = key.split(".")
        section = data.setdefault(table, {})
        if not isinstance(section, dict):
            break  # the file's own error is reported below
        section[name] = str(value) if isinstance(value, Path) else value
        given[key], sources[key] = option, option
        if option == "--store":
            section.pop("branch", None)
            sources.pop("store.branch", None)
    try:
        config = Config.model_validate(data)
    except ValidationError as error:
        raise ConfigError(_describe(error, source, given)) from None
    config._sources = sources
    return config


def pages_url(repository: str) -> str:
    """The GitHub Pages address of repository OWNER/NAME: `https://owner.github.io/NAME/`, or
    `https://owner.github.io/` for the repository named `OWNER.github.io` itself."""
    owner, _, name = repository.partition("/")
    host = f"{owner.lower()}.github.io"
    return f"https://{host}/" if name.lower() == host else f"https://{host}/{name}/"


def with_site_url(config: Config, environ: Mapping[str, str] | None = None) -> Config:
    """`config` with `tracker.dashboard_url` defaulting, in GitHub Actions, to the Pages address of
    the workflow's repository ($GITHUB_REPOSITORY), where the nightly publishes the site, unless
    `[dashboard] publish = "none"`. A configured `dashboard_url` always wins."""
    environ = os.environ if environ is None else environ
    repository = environ.get("GITHUB_REPOSITORY", "")
    if (
        config.tracker.dashboard_url
        or config.dashboard.publish == "none"
        or environ.get("GITHUB_ACTIONS") != "true"
        or not OWNER_NAME.match(repository)
    ):
        return config
    tracker = config.tracker.model_copy(update={"dashboard_url": pages_url(repository)})
    return config.model_copy(update={"tracker": tracker})


def load_config(path: str | Path | None = None, options: Mapping[str, Any] | None = None) -> Config:
    """Read `path`, or `./triagebot.toml` when present, or the defaults; then apply the command
    line's `options` over it (see `parse_config`), check the flags' patches against the
    installed torch (`check_patches`), and add the Pages address (`with_site_url`)."""
    if path is None and not Path("triagebot.toml").exists():
        config = parse_config("", "defaults", options)
    else:
        path = Path(path or "triagebot.toml")
        config = parse_config(_read_text(path), str(path), options)
    check_patches(config, dynamo_settings())
    return with_site_url(config)
