"""Renderings of one night (imports results, analysis and jinja2; never torch).

Everything here reads a `results.Night` (built once by `analysis.night`) and renders templates/;
nothing analyses again, so the report folder, the published bodies, the step summary and the
dashboard site (`report.site`) say the same thing. With `night.dashboard_url`, every model a
body, notice or summary names links to its page on the site, every crash group to its section
of the flag's page, and the two nightlies of a diff to their comparison (`report.links`).
Public API, for the tracker, the pipeline and the command line:

- `issue_body(night, flag) -> str`: the tracking-issue body of `flag`, first line
  `markers.flag_marker(flag)`, at most `GITHUB_LIMIT` characters with its Markdown whole
  (`fit.ISSUE_LADDER` sheds detail until it fits; see `fit`). `issue_rendering` also returns
  the `Detail` it shows.
- `fixed_notice(night, flag)` / `regression_notice(night, flag) -> str | None`: the comments for
  models that stopped / started crashing (or giving wrong results) since `night.previous_key`,
  first line `markers.notice_marker(...)`; None when there are none or the two nightlies are
  one build.
- `nightly_summary(night) -> str`: the summary of every flag and what changed (summary.md),
  the corpus's health last.
- `health_body(night) -> str` and `baseline_regression_notice(night) -> str | None`: the
  corpus-health issue and the notice of models whose baseline graph count rose (`health`).
- `run_summary(build, night, ...) -> str`: the step summary of `triagebot run`.
- `write_report(night, out_dir) -> list[Path]`: all of them into a folder, with the complete
  body of every flag whose published body had to be shortened (`issue-FLAG.full.md`).
- `write_files(out_dir, files)`: texts into a folder as they are, the one writer of issue bodies
  to a folder (`issue_file(flag)`: the report folder's and a dry run's, each the body as published).
- `bounded(template, **context)`: any comment template rendered within GitHub's limit (`fit`).
- `repro.repro_script`: the text of a reproduction script; `markers`; `safety` (the one escaper);
  `words`: the words every surface says a night's numbers in (a share beside its denominator,
  the verdict's sentence and rule, where a crash lives, the issue title's headline).

The renderings of a night live in `bodies`, the health's in `health`; the dashboard site in
`site/` (`site.write_site`).
"""

from triagebot.report import markers, safety, words
from triagebot.report.bodies import (
    fixed_notice,
    full_name,
    issue_body,
    issue_file,
    issue_rendering,
    nightly_summary,
    regression_notice,
    run_summary,
    write_files,
    write_report,
)
from triagebot.report.fit import GITHUB_LIMIT, bounded
from triagebot.report.health import baseline_regression_notice, health_body

__all__ = [
    "GITHUB_LIMIT",
    "baseline_regression_notice",
    "bounded",
    "fixed_notice",
    "full_name",
    "health_body",
    "issue_body",
    "issue_file",
    "issue_rendering",
    "markers",
    "nightly_summary",
    "regression_notice",
    "run_summary",
    "safety",
    "words",
    "write_files",
    "write_report",
]
