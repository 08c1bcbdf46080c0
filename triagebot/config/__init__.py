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

By subject: `settings` (the tables and the shared rules), `reading` (`parse_config`,
`load_config`, `config_problems`), `rendering` (`render_config`), `dynamo` (the patch check); every name is
importable from here.
"""

from triagebot.config.dynamo import (
    check_patches,
    dynamo_settings,
)
from triagebot.config.reading import (
    config_problems,
    load_config,
    pages_url,
    parse_config,
    with_site_url,
)
from triagebot.config.rendering import (
    render_config,
)
from triagebot.config.settings import (
    COMMAND_LINE,
    DEFAULT,
    DEFAULT_FLAGS,
    GITHUB_LOGIN,
    MARKER_NAME,
    OWNER_NAME,
    SECTIONS,
    TEST_CORPORA,
    TITLE_FIELDS,
    CcRoute,
    Config,
    CorpusSettings,
    DashboardSettings,
    Jobs,
    Section,
    StoreSettings,
    SweepSettings,
    TrackerSettings,
    check_jobs,
    flag_name_problem,
    flag_table,
    jobs_value,
    marker_safe,
)

__all__ = [
    "COMMAND_LINE",
    "DEFAULT",
    "DEFAULT_FLAGS",
    "GITHUB_LOGIN",
    "MARKER_NAME",
    "OWNER_NAME",
    "SECTIONS",
    "TEST_CORPORA",
    "TITLE_FIELDS",
    "CcRoute",
    "Config",
    "CorpusSettings",
    "DashboardSettings",
    "Jobs",
    "Section",
    "StoreSettings",
    "SweepSettings",
    "TrackerSettings",
    "check_jobs",
    "check_patches",
    "config_problems",
    "dynamo_settings",
    "flag_name_problem",
    "flag_table",
    "jobs_value",
    "load_config",
    "marker_safe",
    "pages_url",
    "parse_config",
    "render_config",
    "with_site_url",
]
