"""Error signatures: the normalised text that groups one bug across models and nightlies."""

from __future__ import annotations

import hashlib
import re

from triagebot.results.operations import keyed_by_operation
from triagebot.results.runs import WRONG_RESULT

# Order matters: reprs before their contents, symbols before bare numbers, paths before lines.
_SIGNATURE_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    # A FakeTensor repr carries sizes and strides of one model's tensor, not of the bug.
    (re.compile(r"FakeTensor\((?:[^()]|\([^()]*\))*\)"), "FakeTensor(...)"),
    # So do the (stride, storage offset) printed after it, symbolic ones too: ((Max(1, s35 + u0), 1), 0).
    (re.compile(r"(FakeTensor\(\.\.\.\)) \((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"), r"\1 (...)"),
    (re.compile(r"(?:[A-Za-z]:)?(?:[\\/][\w.\-<>]+)+\.py"), "<file>"),
    (re.compile(r"\bline \d+"), "line ?"),
    (re.compile(r"\bu\d+\b"), "u*"),  # unbacked symbols: u0, u12
    (re.compile(r"\bs\d+\b"), "s*"),  # backed symbols: s35
    (re.compile(r"(?:torch\.)?Size\(\[[^\]]*\]\)"), "Size([...])"),
    (re.compile(r"\b\d+(?:\.\d+)?\b"), "N"),
    (re.compile(r"([us]\*|N)(?:, \1)+"), r"\1"),  # {u1, u0} and {u6} are one bug
    (re.compile(r"\((?:N,? ?)+\)"), "(...)"),  # tensor sizes
    (re.compile(r"\(\((?:\.\.\.)\), N\)"), "(...)"),  # (stride, storage offset)
    (re.compile(r"\s+"), " "),
]

# A wrapper line such as "backend='eager' raised:" says where, not what: the wrapped
# exception's "Type: message" on the next line is the bug.
_WRAPPER_LINE = re.compile(r"raised:?\s*$|^(?:The above exception|During handling)")
_WRAPPED_ERROR = re.compile(r"^(?:[a-z_][\w]*\.)*(?P<type>[A-Z]\w*): (?P<rest>.*)$")
# Dynamo ends its messages with the user frame that raised: `File "...", line N, in forward`.
_USER_FRAME = re.compile(r'File "[^"]*", line \d+, in (?P<function>[\w<>]+)')
# A resumed frame is named after the function it resumes: torch_dynamo_resume_in_forward_at_42.
_RESUME_FUNCTION = re.compile(r"^torch_dynamo_resume_in_(?P<function>\w+?)_at_\d+$")


def _user_function(message: str) -> str | None:
    """The innermost user-code function named after Dynamo's `from user code:` line, if any."""
    _, marker, tail = message.partition("from user code:")
    if not marker:
        return None
    frames = _USER_FRAME.findall(tail)
    if not frames:
        return None
    function = frames[-1]
    resumed = _RESUME_FUNCTION.match(function)
    return resumed.group("function") if resumed else function


def normalised(text: str) -> str:
    """`text` with what differs between models and runs of one bug dropped (the rules above); a
    signature normalised again is the same signature."""
    for pattern, replacement in _SIGNATURE_RULES:
        text = pattern.sub(replacement, text)
    return text.strip()


def error_signature(error_type: str, message: str) -> str:
    """A normalised `Type: first line [in function]` that groups one bug across models and nightlies.

    Unbacked (`u6`) and backed (`s35`) symbols, addresses, file paths, line numbers, tensor
    sizes and fake-tensor reprs are dropped, so `Eq(u0, 0)` and `Eq(u8, 0)` are one bug, and so
    are `{u6}` and `{u1, u0}`. A wrapper line (`backend='x' raised:`) gives way to the exception
    it wraps. Where Dynamo names the torch operation that guarded (`Caused by: ...
    (_refs/__init__.py:4264 in unbind)`), that frame is kept, by file and function, so that one
    torch bug reached from different model functions (`Tensor.tolist()` on a data-dependent
    length, from a list comprehension in one family and `get_rope_index` in another) is one
    group; the model-code patterns are listed inside it (`analysis.frames`). Otherwise the
    user-code function Dynamo names (`from user code: ... in get_rope_index`) is kept, by name
    only, so that one bug hit from one place in the model code groups across models and across
    a repro script whose file differs from the sweep's.
    """
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    first_line = lines[0] if lines else ""
    for index, line in enumerate(lines[:-1]):
        if _WRAPPER_LINE.search(line):
            wrapped = _WRAPPED_ERROR.match(lines[index + 1])
            if wrapped:
                error_type, first_line = wrapped.group("type"), wrapped.group("rest")
            else:
                first_line = lines[index + 1]
            break
    signature = f"{error_type}: {normalised(first_line)}"[:300]
    function = _user_function(message)
    return keyed_by_operation(f"{signature} [in {function}]" if function else signature, message)


def wrong_result_signature(where: str | None) -> str:
    """The signature of a wrong result: the output that differs, normalised like an error, so that
    one output of one family groups across models and a repro raising `WrongResult(where)` matches."""
    return error_signature(WRONG_RESULT, where or "output")


def signature_id(signature: str) -> str:
    """A short, stable id of a signature (12 hex digits of its SHA-256): the anchor of its crash
    group on the dashboard and the name `/rerun-sweep link` knows it by."""
    return hashlib.sha256(signature.encode("utf-8")).hexdigest()[:12]
