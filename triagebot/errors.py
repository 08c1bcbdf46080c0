"""Every error meant for a person: one base class, one line each, caught once by the command line.

A package raises the subclass that names its concern; `triagebot.cli.main` catches
`TriagebotError` alone, prints its message as one line on stderr and exits with status 2.
Anything else that escapes is a bug in triagebot and keeps its traceback.

This module imports only the standard library, so that every package may import it.
"""

from __future__ import annotations


class TriagebotError(Exception):
    """Something the user asked for or gave cannot be done; `str(error)` is one line saying
    what was wrong and where (the file, the key, the model, the issue)."""


class UsageError(TriagebotError):
    """Command-line options that cannot go together or name nothing."""


class ConfigError(TriagebotError):
    """A bad `triagebot.toml`: the message names the key."""


class SelectionError(TriagebotError):
    """What to sweep cannot be chosen: an unknown corpus, model, stratum or sample."""


class SweepError(TriagebotError):
    """A sweep that cannot start or go on (no worker, an unknown Dynamo setting, ...)."""


class StreamError(TriagebotError):
    """A sweep stream that cannot be read, resumed or merged."""


class StoreError(TriagebotError):
    """A snapshot that cannot be read, written or found."""


class ReproError(TriagebotError):
    """A reproduction script that cannot be written."""


class TrackerError(TriagebotError):
    """GitHub failed or refused, or an event payload or command cannot be used; the message
    names the operation and the issue."""


class PipelineError(TriagebotError):
    """A night's run that cannot go on."""


class SiteError(TriagebotError):
    """The dashboard site cannot be built from the store or written where it was asked to go."""
