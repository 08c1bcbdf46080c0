"""GitHub: tracking issues kept true from the store, and `/rerun-sweep` commands.

One small module per behaviour, as rust-lang/triagebot's handlers, each configured by
`[tracker]` in triagebot.toml:

- `publish_night`: publishing one night, the entry point of `publish` and of the nightly pipeline
  (`publish_tracking_issues`)
- `desired`: the desired state of each flag's issue (title, body, labels, open), and
  `notices`: the comments each owes (fixed, regression, close, reopen)
- `closing`: open/closed from the confirmed-crash history (`close_after`)
- `cc`: cc lists per flag plus routing rules on crash signatures (`cc`, `cc_routes`), and the
  comment that reaches people a body edit added
- `plan` / `remote` / `apply` / `publish` (`plan_and_apply`): read GitHub, plan, apply only
  the difference, the write cap (`max_writes`) that turns a flood into one alert; a change
  GitHub refuses (403) skips that change alone and is said once, a failed write does not stop
  the others; `destination`: GitHub read or not (the null GitHub) and the plan applied or, in
  a dry run, written to a folder, on one path
- `memory`: what the store remembers of each flag's issue (its number first, then its marker),
  and the labels GitHub refused to set
- `watchdog`: no nightly stored for `stale_after_days` days is said, once on an issue
- `people`: an issue a person closed stays closed until a new crash signature appears
- `/rerun-sweep`: `commands` (the grammar: a pure parse of a comment), `rerun` (the comment
  event and the decision: help, refusal or a request, one handler per kind of command, in one
  table), `permissions` (who may run a command: the collaborator permission, else
  `author_association`), `gpu_caps` (where `author_association` decides for want of
  permissions, how many commands that take GPU time may start), `answer` (the bot's answers:
  `respond`, one handler per kind of decision in one table, the answer once the job is done,
  and the reactions 👀 🚀 😕 and what they say), `ledger` and `polling` (commands read by polling,
  `commands_on_edited`), `dispatch` (the `command` subcommand: one step per option, in one
  table)
- `github`: the PyGithub connection with retries, rate limits and injectable sleep, the one
  module that reads PyGithub's exceptions (each becomes a `GitHubError`);
  `actions`: what GitHub Actions hands a step (token, outputs file, server and run addresses)
- `render`: the bot's own comments, through the report package's escaper and size bound
- markers of every kind live in `report.markers`

This file holds no code: importing one module (`cc` for the night's cc lists, `actions` for
the token) does not import PyGithub.
"""
