"""The `/rerun-sweep` grammar: finding a command in a comment and checking what it asks for.

    /rerun-sweep [models=A,B] [flags=f1,f2] [confirm=N]
    /rerun-sweep bisect MODEL
    /rerun-sweep link GROUP #N
    /rerun-sweep unlink GROUP
    /rerun-sweep help

The command counts only alone on the first line of the comment's own text. What GitHub does
not render as the author's own plain text is dropped first: quotes (`>` lines and the lines
that lazily continue them), fenced code blocks, indented code blocks (four spaces or a tab)
and HTML comments; so quoting, documenting or hiding a command never runs it.
Every value must be known (models to the catalog, flags to the config, crash groups to the
stored snapshot): the request that comes out holds only names from those lists, never text from
the comment, so nothing a commenter types can reach a shell or the sweep job's outputs.
`models=` names at most `tracker.rerun_max_models` models. `bisect` asks for the first bad
nightly of a model's crash; `link` pins a crash group to the upstream issue that tracks it
(`unlink` takes the pin away). A GROUP is its id (the 12 hex digits `/rerun-sweep link` shows
beside it, or the first 6 or more of them) or text its signature alone contains.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from triagebot.config import marker_safe
from triagebot.tracker.render import code_span

COMMAND = "/rerun-sweep"
MAX_LINE = 1000  # longer first lines are refused before any parsing
MAX_MODELS = 20  # the default of `tracker.rerun_max_models`
MAX_CONFIRM = 5
KEYS = ("models", "flags", "confirm")
# A model's key (`results.model_key`): its name, after its suite's for a suite but transformers.
_MODEL_NAME = re.compile(r"(?:[a-z]+/)?[A-Za-z0-9_.\-]{1,100}")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_QUOTE = re.compile(r"^ {0,3}>")
_GROUP_ID = re.compile(r"[0-9a-f]{6,12}")
_ISSUE = re.compile(r"#[0-9]{1,9}")

GRAMMAR = f"""{COMMAND} [models=A,B] [flags=f1,f2] [confirm=N]
{COMMAND} bisect MODEL
{COMMAND} link GROUP #N
{COMMAND} unlink GROUP
{COMMAND} help"""


class Kind(StrEnum):
    none = "none"  # no command in the comment
    help = "help"
    refuse = "refuse"
    run = "run"  # a sweep
    bisect = "bisect"  # the first bad nightly of a model's crash
    link = "link"  # a crash group pinned to an upstream issue (or unpinned: number None)


STARTED = frozenset({Kind.run, Kind.bisect, Kind.link})
"""Kinds a job downstream carries out and answers: accepted (👀) when decided."""

VERBS = {"help": Kind.help, "link": Kind.link, "unlink": Kind.link, "bisect": Kind.bisect}
"""The first words that name a command's kind; a command without one asks for a run."""


@dataclass
class Command:
    """What a comment asks for, checked. `reason` says in one line why a command is refused."""

    kind: Kind
    reason: str = ""
    models: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    confirm: int | None = None
    signature: str | None = None  # link, unlink: the crash group's signature (from the known ones)
    number: int | None = None  # link: the upstream issue; unlink: None


def _indent(line: str) -> int:
    """Columns of leading white space, a tab reaching the next multiple of four (CommonMark)."""
    columns = 0
    for char in line:
        if char == " ":
            columns += 1
        elif char == "\t":
            columns += 4 - columns % 4
        else:
            break
    return columns


def own_text_lines(body: str) -> list[str]:
    """The comment's lines that its author wrote as plain text: no quotes (nor the lines that
    continue a quote's paragraph), no fenced or indented code, nothing inside an HTML comment."""
    lines = []
    fence: str | None = None
    in_comment = False
    in_quote = False
    for line in body.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if in_comment:
            in_comment = "-->" not in line
            continue
        opening = _FENCE.match(line)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            continue
        if not line.strip():
            in_quote = False
            lines.append(line)
            continue
        if _QUOTE.match(line) or in_quote:
            in_quote = True  # a quote goes on to the next blank line (lazy continuation)
            continue
        if opening:
            fence = opening.group(1)
            continue
        if _indent(line) >= 4:
            continue  # indented code (or a paragraph's continuation): never a line of its own
        if line.lstrip().startswith("<!--"):
            in_comment = "-->" not in line
            continue
        lines.append(line)
    return lines


def command_line(body: str) -> str | None:
    """The first line of the comment's own text when it is a `/rerun-sweep` line, else None."""
    for line in own_text_lines(body):
        if not line.strip():
            continue
        stripped = line.strip()
        if stripped == COMMAND or stripped.startswith(COMMAND + " ") or stripped.startswith(COMMAND + "\t"):
            return stripped
        return None
    return None


def _shown(value: str) -> str:
    """A value quoted back in a refusal, as a short code span, where `@x` and `#1` stay inert."""
    return code_span(value, limit=40) or "(empty)"


def _is_model_name(name: str) -> bool:
    return _MODEL_NAME.fullmatch(name) is not None


def _is_flag_name(name: str) -> bool:
    return len(name) <= 100 and marker_safe(name)  # the characters config allows in a flag's name


def _names(
    key: str, value: str, known: Collection[str], what: str, valid: Callable[[str], bool]
) -> tuple[list[str], str]:
    names = [name for name in value.split(",") if name]
    if not names:
        return [], f"{key}= names nothing"
    for name in names:
        if not valid(name):
            return [], f"{key}= holds {_shown(name)}, which is not a {what} name"
        if name not in known:
            return [], f"unknown {what} {_shown(name)}"
    return list(dict.fromkeys(names)), ""


def known_group(text: str, known_groups: Mapping[str, str]) -> tuple[str | None, str]:
    """The signature `text` names among `known_groups` (id -> signature): an id or its first 6 or
    more hex digits, else text that exactly one signature contains; or why none."""
    if not text:
        return None, "name the crash group: its id (shown beside it in the issue) or words of its signature"
    if _GROUP_ID.fullmatch(text):
        found = {ident for ident in known_groups if ident.startswith(text.lower())}
    else:
        found = {ident for ident, signature in known_groups.items() if text in signature}
    if len(found) == 1:
        return known_groups[found.pop()], ""
    if not found:
        return None, f"no crash group of the newest stored nightly is {_shown(text)}"
    return None, f"{_shown(text)} names {len(found)} crash groups: give its id"


def parse_link(words: list[str], known_groups: Mapping[str, str]) -> Command:
    """`link GROUP #N` or `unlink GROUP` (the words after the command)."""
    verb, rest = words[0], words[1:]
    number = None
    if verb == "link":
        if not rest or not _ISSUE.fullmatch(rest[-1]):
            return Command(Kind.refuse, "link takes a crash group and an issue: link GROUP #N")
        number = int(rest.pop().lstrip("#"))
        if number < 1:  # 0 would reach the keep job as an unlink
            return Command(Kind.refuse, f"#{number} is no issue: link GROUP #N takes an issue from #1 on")
    signature, reason = known_group(" ".join(rest), known_groups)
    if signature is None:
        return Command(Kind.refuse, reason)
    return Command(Kind.link, signature=signature, number=number)


def parse_bisect(words: list[str], known_models: Collection[str]) -> Command:
    """`bisect MODEL` (the words after the command)."""
    if len(words) != 2:
        return Command(Kind.refuse, "bisect takes one model: bisect MODEL")
    models, reason = _names("bisect", words[1], known_models, "model", _is_model_name)
    if reason:
        return Command(Kind.refuse, reason.replace("bisect=", "bisect"))
    return Command(Kind.bisect, models=models)


def asked_kind(words: list[str]) -> Kind:
    """The kind of command the words after `/rerun-sweep` ask for, by their verb (`VERBS`)."""
    return VERBS.get(words[0], Kind.run) if words else Kind.run


def parse_command(
    body: str,
    known_models: Collection[str],
    known_flags: Collection[str],
    max_models: int = MAX_MODELS,
    known_groups: Mapping[str, str] | None = None,
) -> Command:
    """Read `body` as a comment; `known_models`/`known_flags`/`known_groups` (crash group id ->
    signature) are the only names accepted; `max_models` (`tracker.rerun_max_models`) caps
    `models=`."""
    line = command_line(body)
    if line is None:
        return Command(Kind.none)
    if len(line) > MAX_LINE:
        return Command(Kind.refuse, f"the command line is longer than {MAX_LINE} characters")
    words = line.split()[1:]
    asked = asked_kind(words)
    if asked == Kind.help and words == ["help"]:  # `help` with more words is read as a run's keys
        return Command(Kind.help)
    if asked == Kind.link:
        return parse_link(words, known_groups or {})
    if asked == Kind.bisect:
        return parse_bisect(words, known_models)
    command = Command(Kind.run)
    seen: set[str] = set()
    for word in words:
        key, equals, value = word.partition("=")
        if not equals:
            return Command(Kind.refuse, f"{_shown(word)} is not key=value (keys: {', '.join(KEYS)})")
        if key not in KEYS:
            return Command(Kind.refuse, f"unknown key {_shown(key)} (keys: {', '.join(KEYS)})")
        if key in seen:
            return Command(Kind.refuse, f"{key}= given twice")
        seen.add(key)
        if key == "models":
            command.models, reason = _names(key, value, known_models, "model", _is_model_name)
            if not reason and len(command.models) > max_models:
                reason = (
                    f"it names {len(command.models)} models, and a rerun takes at most {max_models}"
                    " (`tracker.rerun_max_models`)"
                )
        elif key == "flags":
            command.flags, reason = _names(key, value, known_flags, "flag", _is_flag_name)
        else:
            reason = ""
            if not re.fullmatch(r"[0-9]{1,2}", value) or int(value) > MAX_CONFIRM:
                reason = f"confirm= takes a whole number from 0 to {MAX_CONFIRM}, not {_shown(value)}"
            else:
                command.confirm = int(value)
        if reason:
            return Command(Kind.refuse, reason)
    return command
