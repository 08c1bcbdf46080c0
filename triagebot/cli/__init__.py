"""The `triagebot` command: arguments, help and exit codes; it wires the packages together and
holds no logic of its own.

- `app`: the application, its registry of commands in the order of a night, and `main` (the
  console script, `triagebot.cli:main`): one line on stderr for every error meant for a person;
- `options`: the options several commands share, and `configured`, the one way a command reads
  triagebot.toml with its options applied over it (checked once, by `triagebot.config`);
- one module per group of commands: `run` (run), `sweeping` (sweep, merge, reproduce),
  `reports` (effects, diff, report, site), `tracker` (publish, command), `corpus` (corpus list,
  corpus check), `settings` (config), `doctor` (doctor).

What is swept is chosen by `triagebot.corpus.selection` alone; a snapshot argument is read by
`pipeline.Snapshots` (a snapshot file, a sweep's stream, or a key in the store). Packages that
import torch (sweep, the corpus's builders), PyGithub or jinja2 are imported inside the
commands that need them, so that `triagebot --help` and the publish job stay quick and torch-free.
"""

from triagebot.cli.app import app, main

__all__ = ["app", "main"]
