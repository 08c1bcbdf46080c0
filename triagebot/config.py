"""`triagebot.toml`: what to sweep, where to store it, where and how to publish.

Read with pydantic in strict mode, and checked when it is read: every table forbids unknown keys
(a typo is an error that names the key and the nearest known one), values keep their TOML types
(`jobs = "2"` and `commands_on_edited = "yes"` are refused), the issue title's placeholders, the
cc routes' regular expressions, the cc logins and `tracker.repo` are checked, so that nothing in
the file can fail after a sweep has run.

The command line's options are applied over the file before the check (`load_config(path,
{"--jobs": 4})`), so one check covers both and an error names what the user wrote: `--repo`
when the option was wrong, `tracker.repo` when the file was. `Config.sources()` says where
each value came from, for `triagebot config`.

The names a flag's `patch` sets are checked against the installed torch's `torch._dynamo.config`
by `load_config`, so by every command: read in a child process, since this module must not
import torch, and cached per torch build (`dynamo_settings`). Where no torch can be imported
(the torch-free publish job) that check is left to the sweep, which also checks value types.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import string
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from triagebot.errors import ConfigError, UsageError, unknown
from triagebot.results import BASELINE, HEALTH_ISSUE, FlagSettings

# Both act only where Dynamo would otherwise break the graph: their runs are skipped on models
# whose baseline compiled to one graph with no break.
DEFAULT_FLAGS: dict[str, FlagSettings] = {
    "capture_scalar_outputs": FlagSettings(patch={"capture_scalar_outputs": True}, when="graph_breaks"),
    "capture_dynamic_output_shape_ops": FlagSettings(
        patch={"capture_dynamic_output_shape_ops": True}, when="graph_breaks"
    ),
}

TITLE_FIELDS = (
    "flag",
    "crashes",
    "wrong",
    "testable",
    "affectable",
    "flaky",
    "helps",
    "new",
    "headline",
    "key",
)
"""The placeholders `tracker.title` may use."""

GITHUB_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9_.-]+)?$")
"""A GitHub login, or an org/team."""

OWNER_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
"""A repository, OWNER/NAME."""

MARKER_NAME = r"[A-Za-z0-9_.+\-]+"
"""What a flag's name or a snapshot key may hold, since both go into the hidden markers of the
bot's issues (`report.markers`); `--` never, as it would end the HTML comment."""

Jobs = int | Literal["auto"]

COMMAND_LINE: dict[str, str] = {
    "--corpus": "sweep.corpus",
    "--device": "sweep.device",
    "--jobs": "sweep.jobs",
    "--timeout": "sweep.timeout",
    "--confirm": "sweep.confirm",
    "--sample": "corpus.sample",
    "--seed": "corpus.seed",
    "--only-breaking-in": "corpus.only_breaking_in",
    "--store": "store.path",  # a plain folder: it also unsets store.branch
    "--repo": "tracker.repo",
    "--max-writes": "tracker.max_writes",
}
"""The options that set a configuration value, and the key each sets."""

DEFAULT = "default"

TEST_CORPORA = ("sentinels", "smoke")
"""Corpora of test modules and a handful of models: their results are never published to a
repository unless `[tracker] publish_test_corpus` says so."""

SECTIONS = ("sweep", "corpus", "store", "tracker", "dashboard")
"""The tables of triagebot.toml besides `[flags]`, in the order `triagebot config` shows them."""


def marker_safe(value: str) -> bool:
    """Whether `value` can go into a hidden marker and parse back (see `MARKER_NAME`)."""
    return re.fullmatch(MARKER_NAME, value) is not None and "--" not in value


def flag_name_problem(name: str) -> str | None:
    """Why `name` cannot be a flag's name, or None when it can: the default config's and the
    corpus-health issue's names are taken, and the name goes into markers."""
    if name == BASELINE:
        return f"'{BASELINE}' is reserved for the default config"
    if name == HEALTH_ISSUE:
        return f"'{HEALTH_ISSUE}' is reserved for the corpus-health issue"
    if not marker_safe(name):
        return f"flag name {name!r} may hold only letters, digits, _ . + and single -"
    return None


def check_jobs(jobs: Any) -> Jobs:
    """`jobs`, when it is a number of workers (1 or more) or "auto"; else ValueError. The one
    rule of `[sweep] jobs` and `--jobs`."""
    if jobs == "auto" or (isinstance(jobs, int) and not isinstance(jobs, bool) and jobs >= 1):
        return jobs
    raise ValueError('expected a number of workers (1 or more) or "auto"')


def parse_jobs(text: str | int) -> Jobs:
    """`--jobs TEXT` as the command line gives it (digits are a number), checked by `check_jobs`."""
    value = text if isinstance(text, int) else text.strip()
    try:
        return check_jobs(int(value) if isinstance(value, str) and value.isdigit() else value)
    except ValueError as error:
        raise UsageError(f"--jobs {text!r}: {error}") from None


def _login(person: str) -> str:
    login = person.removeprefix("@")
    if not GITHUB_LOGIN.match(login):
        raise ValueError(f"{person!r} is not a GitHub login or org/team")
    return login


def flag_table(name: str, table: Any) -> Any:
    """`[flags.NAME]` as `FlagSettings` input: a table with `patch` is read as it is (`patch`,
    `when`); a table without it is all patch, the shorthand `NAME = { setting = value }`."""
    if isinstance(table, FlagSettings) or not isinstance(table, dict) or "patch" in table:
        return table
    if "when" in table:
        raise ValueError(f"flag '{name}' has `when` but no `patch` table: write patch = {{ ... }} beside it")
    return {"patch": table}


_BACKEND_NAME = re.compile(r"[A-Za-z_][\w.]*(?::[A-Za-z_]\w*)?")


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SweepSettings(Section):
    # The whole corpus: a night sweeps every model unless the file says otherwise (the test
    # corpora, `smoke` and `sentinels`, are for `make run` and for trying a fork).
    corpus: str = "transformers"
    device: Literal["auto", "cpu", "cuda"] = "auto"
    jobs: Jobs = 2  # auto: the runner's cores (on CUDA, its GPU's memory too)
    timeout: float = Field(default=300.0, gt=0)  # seconds per (model, config) run
    memory_limit_gb: float | None = Field(default=8.0, gt=0)  # per worker address space
    confirm: int = Field(default=1, ge=0)  # extra runs of each crash before it is reported
    # The backend ladder after the sweep: None climbs aot_eager and inductor on CUDA, aot_eager
    # on the CPU; [] climbs none. Names of torch._dynamo.list_backends(), or "module:function".
    backends: list[str] | None = None
    ladder_sample: int = Field(default=20, ge=0)  # models beyond those a flag changes that climb it
    # At most this many (model, config) pairs climb it, failures' representatives first: its cost
    # stays bounded however many models a flag changes (per shard).
    ladder_max_pairs: int = Field(default=60, ge=1)
    # And at most this many recorded run seconds (per shard): pairs whose estimated climb does not
    # fit are not reached, and the snapshot says so (`Snapshot.ladder_unreached`).
    ladder_seconds: float = Field(default=480.0, gt=0)
    accuracy: bool = True  # compare every compiled call's outputs with eager's
    # Where the compiled model is called again on a second input shape: on the ladder's
    # selection (a rung of its own), on every run, or nowhere.
    recompiles: Literal["selection", "all", "none"] = "selection"
    # The smallest repro (`triagebot.reduce`): seconds reducing one verified reproduction may
    # take (PyTorch's minifier included, for a failure in a backend), and all of a night's
    # together; 0 reduces none.
    reduce_group_seconds: float = Field(default=120.0, ge=0)
    reduce_night_seconds: float = Field(default=300.0, ge=0)

    @field_validator("backends")
    @classmethod
    def _backend_names(cls, names: list[str] | None) -> list[str] | None:
        for name in names or []:
            if not _BACKEND_NAME.fullmatch(name):
                raise ValueError(f"backend {name!r} is neither a backend name nor module:function")
        return names

    @field_validator("jobs", mode="before")
    @classmethod
    def _jobs(cls, jobs: Any) -> Any:
        return check_jobs(jobs)


class CorpusSettings(Section):
    sample: int | None = Field(default=None, ge=1)
    seed: int = 0
    strata: dict[str, int] = Field(default_factory=dict)  # stratum -> models, overrides proportion
    only_breaking_in: str | None = None  # snapshot key: sample only models that break there


class StoreSettings(Section):
    path: str = ".triagebot/snapshots"
    branch: str | None = None  # git data branch, e.g. "triagebot-data"; None: local folder only
    remote: str = "origin"


class CcRoute(Section):
    pattern: str  # regular expression matched against crash signatures
    people: list[str]

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as error:
            raise ValueError(f"{pattern!r} is not a regular expression: {error}") from None
        return pattern

    @field_validator("people")
    @classmethod
    def _logins(cls, people: list[str]) -> list[str]:
        return [_login(person) for person in people]


class TrackerSettings(Section):
    repo: str | None = None  # OWNER/NAME the tracking issues live in
    labels: list[str] = Field(default_factory=lambda: ["module: dynamo", "triagebot"])
    title: str = "[triagebot] torch._dynamo.config.{flag}: {headline}"
    close_after: int = Field(default=2, ge=1)
    max_writes: int = Field(default=50, ge=1)
    cc: dict[str, list[str]] = Field(default_factory=dict)  # flag -> people
    cc_routes: list[CcRoute] = Field(default_factory=list)
    commands_on_edited: bool = False
    rerun_max_models: int = Field(default=20, ge=1)  # models one /rerun-sweep may sweep
    dashboard_url: str | None = None
    health_issue: bool = False  # keep a tracking issue of the corpus's health (its own marker)
    # Publish a test corpus's results (TEST_CORPORA) to `repo`: only for a fork's own test
    # repository, never upstream, where its test modules would read as real models.
    publish_test_corpus: bool = False
    stale_after_days: int = Field(default=3, ge=0)  # days without a stored nightly the bot says so (0: never)
    # The repository whose issues are searched for each crash group, once per night ("possibly
    # known: #N"), and that groups are pinned to; None: no searches. Never written to.
    upstream: str | None = "pytorch/pytorch"
    # A group's id (12 hex digits) or text its signature contains -> the upstream issue tracking
    # it; a `/rerun-sweep link` or `unlink` of the group overrides its entry.
    upstream_links: dict[str, int] = Field(default_factory=dict)
    # Apply the labels the PT2 triage rubric suggests for the flag's groups to its issue (they
    # are always suggested in the body); `triaged` is never applied.
    triage_labels: bool = False

    @field_validator("repo", "upstream")
    @classmethod
    def _owner_name(cls, repo: str | None) -> str | None:
        if repo is not None and not OWNER_NAME.match(repo):
            raise ValueError(f"{repo!r} is not OWNER/NAME")
        return repo

    @field_validator("labels")
    @classmethod
    def _never_triaged(cls, labels: list[str]) -> list[str]:
        if "triaged" in labels:
            raise ValueError("'triaged' is set by people only: it hides an issue from the PT2 on-call")
        return labels

    @field_validator("upstream_links")
    @classmethod
    def _links(cls, links: dict[str, int]) -> dict[str, int]:
        for text, number in links.items():
            if not text.strip():
                raise ValueError("a link needs a group id or text of its signature, not an empty key")
            if number < 1:
                raise ValueError(f"{text!r}: {number} is not an issue number")
        return links

    @field_validator("title")
    @classmethod
    def _placeholders(cls, title: str) -> str:
        try:
            names = [name for _, name, _, _ in string.Formatter().parse(title) if name is not None]
        except ValueError as error:
            raise ValueError(f"{title!r}: {error} (write {{{{ and }}}} for a literal brace)") from None
        for name in names:
            if name not in TITLE_FIELDS:
                known = ", ".join("{" + field + "}" for field in TITLE_FIELDS)
                raise ValueError(f"unknown placeholder {{{name}}} (known: {known})")
        example = dict(
            flag="flag",
            crashes=1,
            wrong=0,
            testable=2,
            affectable=2,
            flaky=0,
            helps=0,
            new=1,
            headline="1 model crashes, 1 new (Error)",
            key="2.12.0",
        )
        try:
            title.format(**example)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as error:
            raise ValueError(f"{title!r} cannot be filled in: {error}") from None
        return title

    @field_validator("cc")
    @classmethod
    def _cc_logins(cls, cc: dict[str, list[str]]) -> dict[str, list[str]]:
        return {flag: [_login(person) for person in people] for flag, people in cc.items()}


class DashboardSettings(Section):
    # Where the nightly workflow publishes the dashboard site (`triagebot site`): "pages" deploys
    # it with the official GitHub Pages actions (Settings > Pages > Source: GitHub Actions),
    # "branch" pushes it to `branch` (Source: that branch), "none" keeps it a workflow artifact.
    publish: Literal["pages", "branch", "none"] = "pages"
    branch: str = Field(default="gh-pages", pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")


class Config(Section):
    flags: dict[str, FlagSettings] = Field(default_factory=lambda: dict(DEFAULT_FLAGS))
    sweep: SweepSettings = Field(default_factory=SweepSettings)
    corpus: CorpusSettings = Field(default_factory=CorpusSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    tracker: TrackerSettings = Field(default_factory=TrackerSettings)
    dashboard: DashboardSettings = Field(default_factory=DashboardSettings)

    _sources: dict[str, str] = PrivateAttr(default_factory=dict)

    @field_validator("flags", mode="before")
    @classmethod
    def _flag_tables(cls, flags: Any) -> Any:
        if not isinstance(flags, dict):
            return flags
        return {name: flag_table(name, table) for name, table in flags.items()}

    @field_validator("flags")
    @classmethod
    def _flags_are_patches(cls, flags: dict[str, FlagSettings]) -> dict[str, FlagSettings]:
        for name, settings in flags.items():
            problem = flag_name_problem(name)
            if problem is not None:
                raise ValueError(problem)
            if not settings.patch:
                raise ValueError(f"flag '{name}' patches nothing")
        return flags

    @model_validator(mode="after")
    def _cc_names_flags(self) -> Config:
        for flag in self.tracker.cc:
            if flag not in self.flags:
                raise ValueError(f"tracker.cc: {unknown('flag', flag, self.flags)}")
        return self

    def select_flags(self, names: list[str] | None) -> dict[str, FlagSettings]:
        """The configured flags named in `names` (all when None); unknown names are errors."""
        if not names:
            return dict(self.flags)
        for name in names:
            if name not in self.flags:
                raise ConfigError(unknown("flag", name, self.flags))
        return {n: self.flags[n] for n in names}

    def with_flags(self, names: list[str] | None) -> Config:
        """This configuration sweeping only the flags named (all when None)."""
        return self.model_copy(update={"flags": self.select_flags(names)})

    def check_publishable(self, corpus: str, repo: str | None = None) -> None:
        """Refuse to publish results of the test corpus `corpus` to a repository (default
        `tracker.repo`) unless `[tracker] publish_test_corpus` opts in."""
        if corpus not in TEST_CORPORA or self.tracker.publish_test_corpus:
            return
        target = repo or self.tracker.repo or "a repository"
        raise ConfigError(
            f"corpus {corpus!r} is a test corpus: its results are not published to {target} "
            "unless [tracker] publish_test_corpus = true (a fork's own test repository); "
            "sweep corpus 'transformers', or publish with --dry-run"
        )

    def where(self, key: str) -> str:
        """How to name the setting `key` in a message: the option that set it, else the key."""
        source = self._sources.get(key, DEFAULT)
        return source if source.startswith("--") else key

    def sources(self) -> list[tuple[str, Any, str]]:
        """(key, value, where it came from) for every setting: "default", the file, or the
        command-line option."""
        flags = {name: settings.model_dump() for name, settings in self.flags.items()}
        rows: list[tuple[str, Any, str]] = [("flags", flags, self._sources.get("flags", DEFAULT))]
        for section in SECTIONS:
            settings = getattr(self, section)
            for name in type(settings).model_fields:
                value = getattr(settings, name)
                if isinstance(value, list) and value and isinstance(value[0], BaseModel):
                    value = [item.model_dump() for item in value]
                key = f"{section}.{name}"
                rows.append((key, value, self._sources.get(key, DEFAULT)))
        return rows


def _toml_value(value: Any) -> str:
    """A value as TOML writes it inline (the subset the configuration uses)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def render_config(config: Config) -> str:
    """The resolved configuration as TOML, each value followed by where it came from; unset
    values are comments."""
    lines: list[str] = ["[flags]"]
    flags_source = config._sources.get("flags", DEFAULT)
    rows = [
        (f"{_toml_key(name)} = {_toml_value(settings.model_dump())}", flags_source)
        for name, settings in config.flags.items()
    ]
    section = "flags"
    for key, value, source in config.sources()[1:]:
        table, name = key.split(".", 1)
        if table != section:
            lines += [*_aligned(rows), "", f"[{table}]"]
            rows, section = [], table
        text = f"# {name} = (unset)" if value is None else f"{name} = {_toml_value(value)}"
        rows.append((text, source))
    return "\n".join(lines + _aligned(rows))


def _aligned(rows: list[tuple[str, str]]) -> list[str]:
    width = min(max((len(text) for text, _ in rows), default=0), 72)
    return [f"{text:<{width}}  # {source}" for text, source in rows]


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
    """One line for the first problem, naming the option when the command line set the value,
    else the file and the key."""
    problems = error.errors()
    first = next((p for p in problems if p["type"] == "extra_forbidden"), problems[0])
    loc = tuple(first["loc"])
    where = ".".join(str(part) for part in loc)
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        model = _model_at(loc)
        parent = "".join(f"{part}." for part in loc[:-1])
        known = model.model_fields if model else ()
        return f"{source}: {unknown('key', str(loc[-1]), known, prefix=parent)}"
    if first["type"] == "missing":
        message = "missing"
    elif first["type"] not in ("value_error", "assertion_error"):
        message = f"{message[:1].lower()}{message[1:]}, not {first['input']!r}"
    for key, option in options.items():
        if where == key:
            return f"{option}: {message}"
    return f"{source}: '{where}': {message}" if where else f"{source}: {message}"


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


_DYNAMO_PROBE = "import json, torch._dynamo.config as c; print(json.dumps(sorted(c._config)))"


def _cache_folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "triagebot"


def dynamo_settings(python: str = sys.executable) -> frozenset[str] | None:
    """The setting names of the installed `torch._dynamo.config`, read by `python` in a child
    process (importing torch here would cost every command seconds, and the publish job must
    stay torch-free) and cached per build of that file; None when torch cannot be imported."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    source = Path(next(iter(spec.submodule_search_locations))) / "_dynamo" / "config.py"
    try:
        stat = source.stat()
    except OSError:
        return None
    build = hashlib.sha256(f"{source}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:20]
    cache = _cache_folder() / f"dynamo-config-{build}.json"
    try:
        return frozenset(json.loads(cache.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        pass
    try:
        probe = subprocess.run(
            [python, "-c", _DYNAMO_PROBE], capture_output=True, text=True, timeout=300, check=False
        )
        names = json.loads(probe.stdout) if probe.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        names = None
    if not isinstance(names, list) or not names:
        return None
    try:  # a cache that cannot be written only costs the next command the child again
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(names), encoding="utf-8")
    except OSError:
        pass
    return frozenset(names)


def check_patches(config: Config, names: frozenset[str] | None) -> None:
    """Refuse a flag whose `patch` sets a name that `torch._dynamo.config` lacks (`names`, from
    `dynamo_settings`; None: no torch to check against), with the nearest known name."""
    if names is None:
        return
    source = config._sources.get("flags", DEFAULT)
    for flag, settings in config.flags.items():
        for key in settings.patch:
            if key not in names:
                setting = unknown("torch._dynamo.config setting", key, names)
                raise ConfigError(f"{source}: 'flags.{flag}.patch': {setting}")


def load_config(path: str | Path | None = None, options: Mapping[str, Any] | None = None) -> Config:
    """Read `path`, or `./triagebot.toml` when present, or the defaults; then apply the command
    line's `options` over it (see `parse_config`), check the flags' patches against the
    installed torch (`check_patches`), and add the Pages address (`with_site_url`)."""
    if path is None and not Path("triagebot.toml").exists():
        config = parse_config("", "defaults", options)
    else:
        path = Path(path or "triagebot.toml")
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{path}: not a text file") from None
        config = parse_config(text, str(path), options)
    check_patches(config, dynamo_settings())
    return with_site_url(config)
