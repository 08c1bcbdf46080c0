"""The torch operation a crash under Dynamo failed in, as Dynamo names it on its `Caused by:`
line: what keys one torch bug as one group (`signatures.error_signature`, `Outcome`'s stored
signature) and what a crash pattern names as its operation (`analysis.frames`)."""

from __future__ import annotations

import re

# Dynamo's machinery, which every crash under it passes through, and the plumbing between
# operators (dispatch, decorators): neither is the operation the compiler was running.
COMPILER_MACHINERY = ("torch/_dynamo/", "torch/_subclasses/", "torch/fx/", "torch/_ops.py", "torch/utils/")
COMPILER_MACHINERY += ("torch/_utils_internal.py", "torch/_compile.py", "torch/_library/")
# Dynamo's data-dependent errors end their `Caused by:` line with the torch frame that guarded:
# `Caused by: x.tolist()  # modeling.py:1016 in forward (_refs/__init__.py:4264 in unbind)`.
_CAUSED_BY = re.compile(
    r"^Caused by: .*\((?P<file>[\w/.]+\.py):(?P<line>\d+) in (?P<function>\w+)\)\s*$", re.M
)


def caused_by(text: str) -> tuple[str, int, str] | None:
    """The torch frame Dynamo names on its `Caused by:` line (file from `torch/` on, line,
    function), when it is an operation's (a decomposition, a reference, a meta function), not
    its own machinery's; None otherwise."""
    found = _CAUSED_BY.search(text)
    if not found or ("torch/" + found["file"]).startswith(COMPILER_MACHINERY):
        return None
    return "torch/" + found["file"], int(found["line"]), found["function"]


_USER_FUNCTION_SUFFIX = re.compile(r" \[in [\w<>]+\]$")


def keyed_by_operation(signature: str, text: str | None) -> str:
    """`signature` with its user-code function given way to the torch operation that guarded,
    where `text` (a message, or a stored traceback tail that holds it) names one on its `Caused
    by:` line: one torch frame is one bug, whichever model function reached it. A signature
    stored before this rule reads, through it, as one signed now."""
    operation = caused_by(text) if text else None
    if operation is None:
        return signature
    file, _, function = operation
    return signed_at(signature, qualified(file, function))


def qualified(file: str, function: str) -> str:
    """A torch frame by its dotted name (`torch._refs.unbind`): what a signature keeps of it, a
    name the signature's own rules leave as it is (they drop file paths)."""
    module = file.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return f"{module}.{function}"


def signed_at(signature: str, operation: str) -> str:
    """`signature` keyed by `operation` (`torch._refs.unbind`, `qualified`) in place of the
    user-code function it names, if any."""
    suffix = f" [at {operation}]"
    if signature.endswith(suffix):
        return signature
    return _USER_FUNCTION_SUFFIX.sub("", signature) + suffix
