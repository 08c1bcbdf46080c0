"""The traceback a crashing run keeps: bounded, and with what a compiler developer reads first.

Python's own rendering of a Dynamo error is over a hundred lines: the driver's frames
(`convert_frame`, `symbolic_convert`), the compiler's frames where it gave up, the exception
line, a message that lists the user frames (`User Stack (most recent call last):`) and ends by
listing them again (`from user code:`). A plain tail of it kept the user frames twice and lost
the exception line and every torch frame. What is kept instead, each part bounded on its own:

- the innermost `STACK_FRAMES` frames of the Python stack (the compiler's, where it gave up),
  each with its source line, and a line saying how many outer frames were left out;
- the exception line and the message's first `MESSAGE_LINES` lines, without its user stack;
- Dynamo's `from user code:` section once, its innermost `USER_FRAMES` frames.

The frames are written as Python writes them (`File "...", line N, in f` and the source line),
so `analysis.frames` reads this and an older plain tail alike. No torch here: it formats any
exception, and a test gives it one.
"""

from __future__ import annotations

import traceback

from triagebot.analysis.frames import USER_CODE, USER_STACK

STACK_FRAMES = 12
USER_FRAMES = 8
MESSAGE_LINES = 12
LINE_CHARS = 300  # a source or message line longer than this is cut
_FRAME_START = 'File "'


def _cut(line: str) -> str:
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 3] + "..."


def _frame_lines(frame: traceback.FrameSummary, indent: str) -> list[str]:
    lines = [f'{indent}File "{frame.filename}", line {frame.lineno}, in {frame.name}']
    if frame.line:
        lines.append(f"{indent}  {_cut(frame.line.strip())}")
    return lines


def _exception_name(error: BaseException) -> str:
    kind = type(error)
    module = kind.__module__
    return kind.__qualname__ if module in ("builtins", "__main__") else f"{module}.{kind.__qualname__}"


def _user_frames(section: str) -> list[list[str]]:
    """The frames of Dynamo's `from user code:` section, each its `File` line and source line."""
    frames: list[list[str]] = []
    for line in section.splitlines():
        stripped = line.strip()
        if stripped.startswith(_FRAME_START):
            frames.append([f"  {_cut(stripped)}"])
        elif frames and len(frames[-1]) == 1 and stripped and set(stripped) - set("^~ "):
            frames[-1].append(f"    {_cut(stripped)}")
        elif frames and not stripped:
            break  # the hints after the last frame (`Set TORCHDYNAMO_VERBOSE=1 ...`)
    return frames


def stored_traceback(error: BaseException) -> str:
    """What a run keeps of `error`'s traceback (see the module docstring)."""
    stack = traceback.extract_tb(error.__traceback__)
    lines = ["Traceback (most recent call last):"]
    if len(stack) > STACK_FRAMES:
        lines.append(f"  ... ({len(stack) - STACK_FRAMES} outer frames left out)")
    for frame in stack[-STACK_FRAMES:]:
        lines.extend(_frame_lines(frame, "  "))
    message, marker, user_section = str(error).partition(USER_CODE)
    message = message.partition(USER_STACK)[0].strip()
    message_lines = [_cut(line) for line in message.splitlines()]
    head = message_lines[0] if message_lines else ""
    lines.append(f"{_exception_name(error)}: {head}" if head else _exception_name(error))
    rest = message_lines[1:]
    lines.extend(rest[: MESSAGE_LINES - 1])
    if len(rest) > MESSAGE_LINES - 1:
        lines.append(f"... ({len(rest) - MESSAGE_LINES + 1} message lines left out)")
    if marker:
        frames = _user_frames(user_section)
        lines.extend(["", USER_CODE])
        if len(frames) > USER_FRAMES:
            lines.append(f"  ... ({len(frames) - USER_FRAMES} outer user frames left out)")
        for frame in frames[-USER_FRAMES:]:
            lines.extend(frame)
    return "\n".join(lines)
