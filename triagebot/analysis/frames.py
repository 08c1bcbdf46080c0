"""Where a crash starts in the code, read from the traceback tail a run stores: the innermost
frame in model code (the line that triggers it) and the innermost frame of the compiler (where
torch gives up), as the hand-written reports named them ("an `.item()` in a loss").

Dynamo ends its messages with the user frames it was tracing (`from user code:`), innermost
last; those are the model's frames when the tail holds them. Otherwise the innermost frame that
is neither torch, the standard library nor triagebot's own sweep is. The compiler's frame is the
innermost frame of torch outside `torch/nn/` (modules are the model's code running, not the
compiler) before that section.

Most crashes under Dynamo raise from the same few frames of its own machinery (`torch/_dynamo`,
fake tensors in `torch/_subclasses`, symbolic shapes in `torch/fx`), whatever the bug; grouping
by those alone merges distinct bugs, as OSS-Fuzz found when the top frames of its crashes were
framework code. So a pattern also names the operation's frame: from the innermost outwards, the
first frame outside that machinery (a decomposition, a meta function, a lowering), looked for
only below the frame where Dynamo steps through the model's bytecode. None there means Dynamo
gave up on the model's own code: the model frame is the place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from triagebot.results import CrashPattern, Frame, ModelResult
from triagebot.results.operations import COMPILER_MACHINERY, caused_by

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)\s*$')
_MARKS = re.compile(r"^[\s^~]*$")  # the carets under a source line
USER_CODE = "from user code:"
# A resumed frame is named after the function it resumes: torch_dynamo_resume_in_forward_at_42.
_RESUMED = re.compile(r"^torch_dynamo_resume_in_(?P<function>\w+?)_at_\d+$")
# Where a path is cut so that it reads the same on every machine: from the package on.
_ROOTS = ("site-packages/", "dist-packages/")
_OWN_PACKAGES = ("torch/", "triagebot/", "typing_extensions", "pydantic/", "_pytest/", "pluggy/")
_MODEL_PACKAGES = ("triagebot/corpus/sentinels",)  # triagebot's own model code: the sentinels
_NOT_COMPILER = ("torch/nn/", "torch/utils/_contextlib", "torch/utils/_python_dispatch")

# Where Dynamo steps through the model's bytecode: frames further out are its driver.
_TRACER = "torch/_dynamo/symbolic_convert.py"
# A message's own list of the user frames (Dynamo's data-dependent errors), before it repeats
# them after `from user code:`.
USER_STACK = "User Stack (most recent call last):"


def short_path(path: str) -> str:
    """`path` from its package on (`transformers/models/...`), or its last two parts."""
    path = path.replace("\\", "/")
    for root in _ROOTS:
        if root in path:
            return path.rpartition(root)[2]
    for package in ("/torch/", "/triagebot/", "/transformers/"):
        if package in path:
            return package[1:] + path.rpartition(package)[2]
    return "/".join(path.split("/")[-2:])


def _function(name: str) -> str:
    resumed = _RESUMED.match(name)
    return resumed.group("function") if resumed else name


def parse_frames(text: str) -> tuple[list[Frame], list[Frame]]:
    """The frames of a traceback tail, outermost first: those of the Python stack, and those
    Dynamo names after `from user code:`."""
    stack: list[Frame] = []
    user: list[Frame] = []
    current = stack
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.strip() == USER_CODE:
            user.clear()  # the message's own list, if any, is the same frames again
            current = user
            continue
        if line.strip() == USER_STACK:
            current = user
            continue
        found = _FRAME.match(line)
        if not found:
            continue
        following = lines[index + 1] if index + 1 < len(lines) else ""
        source = following.strip() if following.strip() and not _FRAME.match(following) else None
        if source is not None and _MARKS.match(following):
            source = None
        frame = Frame(
            file=short_path(found["file"]),
            line=int(found["line"]),
            function=_function(found["function"]),
            source=source[:300] if source else None,
        )
        current.append(frame)
    return stack, user


def _is_model_code(frame: Frame) -> bool:
    if frame.file.startswith(_MODEL_PACKAGES):
        return True
    if frame.file.startswith(_OWN_PACKAGES) or frame.file.startswith("<"):
        return False
    return "python3" not in frame.file and not frame.file.startswith(("lib/", "python"))


def _is_compiler(frame: Frame) -> bool:
    return frame.file.startswith("torch/") and not frame.file.startswith(_NOT_COMPILER)


def _operation(stack: Sequence[Frame]) -> Frame | None:
    """The innermost torch frame outside Dynamo's machinery, below the frame where Dynamo steps
    through the model's code; None when there is none (Dynamo gave up on the model's code)."""
    for frame in reversed(stack):
        if frame.file.startswith(_TRACER) or not frame.file.startswith("torch/"):
            return None
        if not frame.file.startswith(COMPILER_MACHINERY) and _is_compiler(frame):
            return frame
    return None


def pattern_of(traceback: str | None) -> CrashPattern:
    """The model frame, the operation's frame and the compiler's frame of one traceback tail
    (`models` left empty)."""
    if not traceback:
        return CrashPattern()
    stack, user = parse_frames(traceback)
    model = next((frame for frame in reversed(user) if _is_model_code(frame)), None)
    if model is None:
        model = next((frame for frame in reversed(stack) if _is_model_code(frame)), None)
    compiler = next((frame for frame in reversed(stack) if _is_compiler(frame)), None)
    guarded = caused_by(traceback)
    operation = _operation(stack) or (
        Frame(file=guarded[0], line=guarded[1], function=guarded[2]) if guarded else None
    )
    return CrashPattern(model_frame=model, operation_frame=operation, compiler_frame=compiler)


def _place(frame: Frame | None, by_source: bool) -> str | None:
    if frame is None:
        return None
    return frame.source if by_source and frame.source else f"{frame.file} in {frame.function}"


def pattern_key(pattern: CrashPattern) -> tuple[str | None, str | None]:
    """What makes two crashes one pattern: the same model code (its source line, so that code
    copied into two families is one pattern; without source, the same function of the same file)
    reaching the same operation of torch (its function)."""
    return _place(pattern.model_frame, True), _place(pattern.operation_frame, False)


def crash_patterns(
    results: Mapping[str, ModelResult], models: Sequence[str], config: str
) -> list[CrashPattern]:
    """The patterns of a group's members under `config` (`results`: model -> its result), the
    first member's first; members whose stored traceback shows no frame are left out."""
    patterns: list[CrashPattern] = []
    for model in models:
        result = results.get(model)
        outcome = result.outcomes.get(config) if result is not None else None
        if outcome is None or not outcome.traceback:
            continue
        found = pattern_of(outcome.traceback)
        if found.model_frame is None and found.compiler_frame is None:
            continue  # a tail too short to show either: it says nothing about the pattern
        for pattern in patterns:
            if pattern_key(pattern) == pattern_key(found):
                pattern.models.append(model)
                break
        else:
            found.models.append(model)
            patterns.append(found)
    return patterns
