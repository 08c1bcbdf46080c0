"""The traceback a crashing run keeps: the exception line, the compiler's innermost frames and
Dynamo's user frames once, each bounded; and the pattern read from it, which names the torch
operation the model's code reached when Dynamo's own machinery is where the error was raised."""

from __future__ import annotations

import linecache

import pytest

from triagebot.analysis.frames import pattern_of
from triagebot.sweep import tracebacks
from triagebot.sweep.tracebacks import stored_traceback

SITE = "/venv/lib/python3.11/site-packages"
MODEL = f"{SITE}/transformers/models/qwen2_vl/modeling_qwen2_vl.py"
USER_FRAMES = f"""\
  File "{MODEL}", line 696, in torch_dynamo_resume_in_forward_at_689
    hidden_states = blk(
                    ^^^^
  File "{MODEL}", line 403, in <listcomp>
    torch.split(tensor, lengths.tolist(), dim=2) for tensor in (query_states, key_states, value_states)
                        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
"""
# Dynamo's data-dependent errors list the user frames in their message, then again after it.
MESSAGE = f"""\
Could not guard on data-dependent expression Eq(u0, 2) (unhinted: Eq(u0, 2)).  (Size-like symbols: u0)

Caused by: torch.split(...)  # modeling_qwen2_vl.py:403 in <listcomp>
For more information, run with TORCH_LOGS="dynamic"

User Stack (most recent call last):
  (snipped, see stack below for prefix)
{USER_FRAMES}
For C++ stack trace, run with TORCHDYNAMO_EXTENDED_DEBUG_CPP=1

from user code:
{USER_FRAMES}
Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace
"""


class GuardOnDataDependentSymNode(RuntimeError):
    pass


def _module(path: str, source: str, names: dict) -> dict:
    """Run `source` as if it were the file `path`, so that its frames carry that path and line."""
    linecache.cache[path] = (len(source), None, source.splitlines(keepends=True), path)
    exec(compile(source, path, "exec"), names)
    return names


def _raise_through(operation: bool):
    """A crash as Dynamo raises it: its driver's frames, the tracer stepping through the model's
    bytecode, (with `operation`) a decomposition, and symbolic shapes raising."""
    shapes = _module(
        f"{SITE}/torch/fx/experimental/symbolic_shapes.py",
        "def evaluate_expr():\n    raise GuardOnDataDependentSymNode(MESSAGE)\n",
        {"GuardOnDataDependentSymNode": GuardOnDataDependentSymNode, "MESSAGE": MESSAGE},
    )
    refs = _module(
        f"{SITE}/torch/_refs/__init__.py",
        "def split_with_sizes():\n    evaluate_expr()\n",
        {"evaluate_expr": shapes["evaluate_expr"]},
    )
    convert = _module(
        f"{SITE}/torch/_dynamo/symbolic_convert.py",
        "def step():\n    inner()\n",
        {"inner": refs["split_with_sizes"] if operation else shapes["evaluate_expr"]},
    )
    driver = _module(
        f"{SITE}/torch/_dynamo/convert_frame.py",
        "def compile_frame(depth):\n    return compile_frame(depth - 1) if depth else step()\n",
        {"step": convert["step"]},
    )
    try:
        driver["compile_frame"](30)
    except GuardOnDataDependentSymNode as error:
        return error
    raise AssertionError("nothing raised")


def test_the_exception_line_the_compiler_frames_and_the_user_frames_once_are_kept():
    stored = stored_traceback(_raise_through(operation=True))
    lines = stored.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[1] == f"  ... ({31 + 3 + 1 - tracebacks.STACK_FRAMES} outer frames left out)"
    assert f"{__name__}.GuardOnDataDependentSymNode: Could not guard on data-dependent expression" in stored
    assert f'File "{SITE}/torch/fx/experimental/symbolic_shapes.py", line 2, in evaluate_expr' in stored
    assert "    raise GuardOnDataDependentSymNode(MESSAGE)" in lines
    assert stored.count("hidden_states = blk(") == 1 and "User Stack" not in stored and "^^^" not in stored
    assert lines[-2:] == [
        f'  File "{MODEL}", line 403, in <listcomp>',
        "    " + USER_FRAMES.splitlines()[4].strip(),
    ]
    assert len(stored) < 3000


def test_the_pattern_names_the_operation_outside_dynamos_machinery_and_where_it_raised():
    pattern = pattern_of(stored_traceback(_raise_through(operation=True)))
    assert (pattern.model_frame.file, pattern.model_frame.line, pattern.model_frame.function) == (
        "transformers/models/qwen2_vl/modeling_qwen2_vl.py",
        403,
        "<listcomp>",
    )
    assert (pattern.operation_frame.file, pattern.operation_frame.function) == (
        "torch/_refs/__init__.py",
        "split_with_sizes",
    )
    assert (pattern.compiler_frame.file, pattern.compiler_frame.function) == (
        "torch/fx/experimental/symbolic_shapes.py",
        "evaluate_expr",
    )
    # Straight from the tracer into symbolic shapes: Dynamo gave up on the model's own code.
    assert pattern_of(stored_traceback(_raise_through(operation=False))).operation_frame is None


@pytest.mark.parametrize("kept", ["stack", "message", "user"])
def test_each_part_is_bounded_on_its_own(kept):
    frames = USER_FRAMES * 10
    message = "first\n" + "more\n" * 40 + "\nfrom user code:\n" + frames
    error = _raise_through(operation=True)
    error.args = (message,)
    stored = stored_traceback(error)
    if kept == "stack":
        assert stored.count(f'File "{SITE}/torch/') == tracebacks.STACK_FRAMES
    elif kept == "message":
        assert stored.count("\nmore") == tracebacks.MESSAGE_LINES - 1
        assert f"... ({40 - tracebacks.MESSAGE_LINES + 1} message lines left out)" in stored
    else:
        assert stored.count(f'File "{MODEL}"') == tracebacks.USER_FRAMES
        assert f"... ({20 - tracebacks.USER_FRAMES} outer user frames left out)" in stored


def test_an_error_without_a_message_is_its_name():
    try:
        raise KeyError
    except KeyError as error:
        assert stored_traceback(error).splitlines()[-1] == "KeyError"


def test_the_operation_is_read_from_dynamos_caused_by_line_when_the_tail_lacks_its_frame():
    """A tail stored before the compiler's frames were kept still names the guarding operation."""
    line = "current_input_ids = current_input_ids.tolist()"
    tail = f"""\
Caused by: {line}  # {MODEL}:1016 in get_rope_index (_refs/__init__.py:4264 in unbind)
For more information, run with TORCH_LOGS="dynamic"

from user code:
  File "{MODEL}", line 1016, in get_rope_index
    current_input_ids = current_input_ids.tolist()
"""
    operation = pattern_of(tail).operation_frame
    assert (operation.file, operation.line, operation.function) == ("torch/_refs/__init__.py", 4264, "unbind")
    # Dynamo's own frame on that line is its machinery: no operation.
    tracer = tail.replace("_refs/__init__.py:4264 in unbind", "_dynamo/symbolic_convert.py:962 in inner")
    assert pattern_of(tracer).operation_frame is None
