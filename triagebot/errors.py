"""Every error meant for a person: one base class, one line each, caught once by the command line.

A package raises the subclass that names its concern; `triagebot.cli.main` catches
`TriagebotError` alone, prints its message as one line on stderr and exits with status 2.
Anything else that escapes is a bug in triagebot and keeps its traceback.

This module imports only the standard library, so that every package may import it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path


class TriagebotError(Exception):
    """Something the user asked for or gave cannot be done; `str(error)` is one line saying
    what was wrong and where (the file, the key, the model, the issue)."""

    exit_code = 2


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


class RenderError(TriagebotError):
    """A report or comment that cannot be rendered whole within GitHub's limit."""


class TrackerError(TriagebotError):
    """GitHub failed or refused, or an event payload or command cannot be used; the message
    names the operation and the issue."""


class PipelineError(TriagebotError):
    """A night's run that cannot go on."""


class Interrupted(TriagebotError):
    """Ctrl-C: the message says where the finished work is and how to go on from it."""

    exit_code = 130


@contextmanager
def on_ctrl_c(stream: Path, resume: str) -> Iterator[None]:
    """Ctrl-C in a sweep writing `stream` becomes `Interrupted`, saying where the finished runs
    are and, in `resume`, how to go on from them (or that nothing finished)."""
    try:
        yield
    except KeyboardInterrupt:
        if not stream.exists():
            raise Interrupted("interrupted before the first run finished: nothing to resume") from None
        raise Interrupted(f"interrupted: the finished runs are in {stream}; {resume}") from None


def unknown(
    what: str, name: str, known: Iterable[str], *, where: str = "", prefix: str = "", listed: int = 8
) -> str:
    """ "unknown WHAT 'NAME' (did you mean 'X'?)", or the known names when none is close.

    Close means close after case is ignored, so `bertmodel` finds `BertModel`. `prefix` is shown
    before the name and every known name (`sweep.` for the keys of `[sweep]`) but not compared;
    `where` follows the name ("in corpus 'smoke'")."""
    names = sorted(set(known))
    by_folded: dict[str, str] = {}
    for known_name in names:
        by_folded.setdefault(known_name.casefold(), known_name)
    close = difflib.get_close_matches(name.casefold(), list(by_folded), n=3, cutoff=0.75)
    if close:  # only the best: "vision_other_03" suggests "vision_other-03", not "-39" too
        score = {match: difflib.SequenceMatcher(None, name.casefold(), match).ratio() for match in close}
        close = [match for match in close if score[match] >= score[close[0]] - 0.01]
    if close:
        hint = "did you mean " + " or ".join(repr(prefix + by_folded[match]) for match in close) + "?"
    elif not names:
        hint = "there are none"
    else:
        more = f", and {len(names) - listed} more" if len(names) > listed else ""
        hint = "known: " + ", ".join(prefix + known_name for known_name in names[:listed]) + more
    return f"unknown {what} {prefix + name!r}{' ' + where if where else ''} ({hint})"


class SiteError(TriagebotError):
    """The dashboard site cannot be built from the store or written where it was asked to go."""


class PackageIndexError(TriagebotError):
    """A package index (PyTorch's nightly index, PyPI) that cannot be read, or has no build that
    answers the question: the message names the page and what went wrong."""


class BisectError(TriagebotError):
    """A bisection that cannot start: ends that are not builds, a reproduction that is missing
    or unverified, no installer."""
