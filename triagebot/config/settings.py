"""The configuration's tables as pydantic models, checked when read: `Config` and its sections,
the defaults, and the rules every command shares for a flag's name, a login and `jobs`."""

from __future__ import annotations

import re
import string
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)

from triagebot.errors import ConfigError, unknown
from triagebot.results import (
    BASELINE,
    COMPILER_WRONG_ISSUE,
    HEALTH_ISSUE,
    LADDER_WINDOW,
    TEST_CORPORA,
    FlagSettings,
    IssueTitle,
    KeyScheme,
    corpora,
    default_suites,
    named_suites,
    people_only,
    suites_name,
)

# Both act only where Dynamo would otherwise break the graph, and its reason for such a break
# names them: their runs are skipped on models none of whose baseline breaks names them.
DEFAULT_FLAGS: dict[str, FlagSettings] = {
    "capture_scalar_outputs": FlagSettings(patch={"capture_scalar_outputs": True}, when="named_in_breaks"),
    "capture_dynamic_output_shape_ops": FlagSettings(
        patch={"capture_dynamic_output_shape_ops": True}, when="named_in_breaks"
    ),
}

TITLE_FIELDS = tuple(IssueTitle.model_fields)
"""The placeholders `tracker.title` may use."""

TITLE_TRIAL = IssueTitle(
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
"""What a title is filled in with when the config is read, so that a title that cannot be
filled in fails then, not at publish time after the night's sweep."""

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
    if name == COMPILER_WRONG_ISSUE:
        return f"'{COMPILER_WRONG_ISSUE}' is reserved for the issue of wrong results at the default config"
    if not marker_safe(name):
        return f"flag name {name!r} may hold only letters, digits, _ . + and single -"
    return None


def check_jobs(jobs: Any) -> Jobs:
    """`jobs`, when it is a number of workers (1 or more) or "auto"; else ValueError. The one
    rule of `[sweep] jobs` and `--jobs`."""
    if jobs == "auto" or (isinstance(jobs, int) and not isinstance(jobs, bool) and jobs >= 1):
        return jobs
    raise ValueError('expected a number of workers (1 or more) or "auto"')


def jobs_value(text: str) -> int | str:
    """`--jobs TEXT` as triagebot.toml would hold it (digits are a number, anything else stays
    text), for `[sweep] jobs`'s one check (`check_jobs`) to accept or refuse, naming `--jobs`."""
    value = text.strip()
    return int(value) if value.isdigit() else value


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


_BACKEND_NAME = re.compile(r"[A-Za-z_][\w.]*(?::[A-Za-z_]\w*)?(?:\+backward)?")


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SweepSettings(Section):
    # The corpora, side by side in one night: every model of each unless the file says otherwise
    # (the test corpora, `smoke` and `sentinels`, are for `make run` and for trying a fork). One
    # name, or a list (in TOML or, comma-separated, `--corpus`). A suite whose library is not
    # installed for a build is said, recorded as skipped, and the rest of the night runs.
    corpus: list[str] = Field(default_factory=default_suites)
    device: Literal["auto", "cpu", "cuda"] = "auto"
    jobs: Jobs = 2  # auto: the runner's cores (on CUDA, its GPU's memory too)
    timeout: float = Field(default=300.0, gt=0)  # seconds per (model, config) run
    memory_limit_gb: float | None = Field(default=8.0, gt=0)  # per worker address space
    confirm: int = Field(default=1, ge=0)  # extra runs of each crash before it is reported
    # The backend ladder after the sweep: None climbs aot_eager and inductor on CUDA, aot_eager
    # on the CPU, then the backward rung; [] climbs none. Names of torch._dynamo.list_backends(),
    # or "module:function"; either with "+backward" runs forward and backward (train mode).
    backends: list[str] | None = None
    ladder_sample: int = Field(default=20, ge=0)  # models beyond those a flag changes that climb it
    # At most this many (model, config) pairs climb it per worker, failures' representatives
    # first: its cost stays bounded however many models a flag changes (per shard).
    ladder_max_pairs: int = Field(default=60, ge=1)
    # And at most this many recorded run seconds per worker (per shard), spent whole: a runner
    # with W workers climbs W times as much in the same wall. What the cautious estimates keep
    # out is planned again against the seconds really spent; what never fits is not reached,
    # and the snapshot says so (`Snapshot.ladder_unreached`). The models a flag changes climb
    # every rung, Inductor included, in rotation, oldest evidence first: 900 per worker is a
    # quarter of an hour of wall, about 20 changed pairs a night on 2 CPU workers, so that the
    # whole default night stays under an hour (docs/performance.md: what a pair costs, measured).
    ladder_seconds: float = Field(default=900.0, gt=0)
    # The nightlies within which every changed pair's evidence counts as current: a flag's
    # coverage and its readiness read the ladder's evidence of the last this many nightlies. 28:
    # what the rotation needs at the default budget on 2 CPU workers to climb the ~544 changed
    # pairs of the default corpus, about 21 a night (docs/performance.md: an estimate from
    # measured rungs); 16 workers climb 8 times as many.
    ladder_window: int = Field(default=LADDER_WINDOW, ge=1)
    accuracy: bool = True  # compare every compiled call's outputs with eager's
    # The night's noise floor of compile times: the baselines of this many models (a fixed
    # sample of the whole selection, those of a short run only) run a second time; 0: none.
    noise_sample: int = Field(default=5, ge=0)
    # Where the compiled model is called again on a second input shape: on the ladder's
    # selection (a rung of its own), on every run, or nowhere.
    recompiles: Literal["selection", "all", "none"] = "selection"
    # The smallest repro (`triagebot.reduce`): seconds reducing one verified reproduction may
    # take (PyTorch's minifier included, for a failure in a backend), and the wall seconds of
    # all of a night's together, as many at once as the sweep has workers (the groups it does not
    # reach come first the next night, the reduced ones kept after one run each); 0: none.
    reduce_group_seconds: float = Field(default=120.0, ge=0)
    reduce_night_seconds: float = Field(default=90.0, ge=0)

    @field_validator("backends")
    @classmethod
    def _backend_names(cls, names: list[str] | None) -> list[str] | None:
        for name in names or []:
            if not _BACKEND_NAME.fullmatch(name):
                raise ValueError(f"backend {name!r} is neither a backend name nor module:function")
        return names

    @field_validator("corpus", mode="before")
    @classmethod
    def _corpus_list(cls, value: Any) -> Any:
        """A string is one name, or several split at commas, each of which may be a stored
        night's own name (`named_suites`: `/rerun-sweep` hands it to the GPU job) to sweep again."""
        if not isinstance(value, str):
            return value
        return [suite.strip() for name in value.split(",") for suite in named_suites(name)]

    @field_validator("corpus")
    @classmethod
    def _corpus_names(cls, names: list[str]) -> list[str]:
        if not names or not all(names):
            raise ValueError('name at least one corpus, e.g. corpus = ["transformers"]')
        if len(set(names)) != len(names):
            raise ValueError(f"a corpus named twice in {names}")
        for name in names:  # checked here only, before anything is loaded or swept
            if name not in corpora():
                raise ValueError(unknown("corpus", name, sorted(corpora())))
        return names

    @property
    def corpus_name(self) -> str:
        """The night's `CorpusSelection.name`: the one corpus, or the suites joined."""
        return suites_name(self.corpus)

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
    # What names a night: "torch" (the nightly stream), or "torch+transformers" for nights of one
    # torch under several transformers releases (`results.snapshot_key`).
    key: KeyScheme = "torch"


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
    # The median ratio of a flag's compile seconds to its baseline's past which (and past the
    # night's noise floor) the flag is not ready; None: compile time stands beside the verdict.
    compile_time_blocks: float | None = Field(default=None, gt=1)
    max_writes: int = Field(default=50, ge=1)
    cc: dict[str, list[str]] = Field(default_factory=dict)  # flag -> people
    cc_routes: list[CcRoute] = Field(default_factory=list)
    commands_on_edited: bool = False
    rerun_max_models: int = Field(default=20, ge=1)  # models one /rerun-sweep may sweep
    # Where the bot cannot read permissions and author_association stands in: commands that take
    # GPU time (reruns, bisections) one person, and everyone together, may start in a day.
    gpu_commands_per_person: int = Field(default=2, ge=0)
    gpu_commands_per_day: int = Field(default=6, ge=0)
    dashboard_url: str | None = None
    health_issue: bool = False  # keep a tracking issue of the corpus's health (its own marker)
    # Keep a tracking issue of torch.compile's wrong results at the default config (its own
    # marker; its cc list is `[tracker.cc]`'s COMPILER_WRONG_ISSUE entry and the routes).
    wrong_results_issue: bool = True
    # Publish a test corpus's results (TEST_CORPORA) to `repo`: only for a fork's own test
    # repository, never upstream, where its test modules would read as real models.
    publish_test_corpus: bool = False
    stale_after_days: int = Field(default=3, ge=0)  # days without a stored nightly the bot says so (0: never)
    # The repository whose issues are searched for each crash group, once per night ("possibly
    # known: #N"), and that groups are pinned to; None: no searches. Never written to.
    upstream: str | None = "pytorch/pytorch"
    # Searches of `upstream` one night makes at most (inside the publish lease); the rest wait.
    upstream_searches_per_night: int = Field(default=60, ge=0)
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
        refused = [label for label in labels if people_only(label)]
        if refused:
            raise ValueError(f"{refused[0]!r} is set by people only: it hides an issue from the PT2 on-call")
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
        try:
            title.format(**TITLE_TRIAL.model_dump())
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
            if flag not in self.flags and flag != COMPILER_WRONG_ISSUE:
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

    def check_publishable(self, suites: list[str], repo: str | None = None) -> None:
        """Refuse to publish results of a night of `suites` (a night's corpora) with a test
        corpus among them to a repository (default `tracker.repo`) unless
        `[tracker] publish_test_corpus` opts in."""
        test = [name for name in suites if name in TEST_CORPORA]
        if not test or self.tracker.publish_test_corpus:
            return
        target = repo or self.tracker.repo or "a repository"
        raise ConfigError(
            f"corpus {test[0]!r} is a test corpus: its results are not published to {target} "
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
