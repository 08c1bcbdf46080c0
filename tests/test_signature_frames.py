"""One torch bug, one group: a signature keeps the torch frame Dynamo names on its `Caused by:`
line, so that one failing frame reached from different model functions signs alike."""

from __future__ import annotations

from triagebot.results import error_signature
from triagebot.results.signatures import normalised

GUARD = "GuardOnDataDependentSymNode"


def _message(source: str, model_function: str, torch_frame: str) -> str:
    return f"""\
Could not guard on data-dependent expression Eq(u0, 0) (unhinted: Eq(u0, 0)).  (Size-like symbols: u0)

Caused by: {source}  # transformers/models/x/modeling_x.py:403 in {model_function} ({torch_frame})
For more information, run with TORCH_LOGS="dynamic"

from user code:
  File "/site-packages/transformers/models/x/modeling_x.py", line 403, in {model_function}
    {source}
"""


def test_one_torch_frame_reached_from_two_model_functions_is_one_signature() -> None:
    unbind = "_refs/__init__.py:4264 in unbind"
    split = _message("torch.split(t, lengths.tolist(), dim=2)", "<listcomp>", unbind)
    rope = _message("current_input_ids = current_input_ids.tolist()", "get_rope_index", unbind)
    signature = error_signature(GUARD, split)
    assert signature == error_signature(GUARD, rope)
    assert signature.endswith("[at torch._refs.unbind]")
    assert normalised(signature) == signature  # a signature normalised again is the same signature


def test_a_frame_of_dynamos_machinery_keeps_the_model_function() -> None:
    tracer = "_dynamo/symbolic_convert.py:962 in inner"
    one = error_signature(GUARD, _message("if idx.numel():", "forward", tracer))
    other = error_signature(GUARD, _message("if idx.numel():", "get_rope_index", tracer))
    assert one.endswith("[in forward]") and other.endswith("[in get_rope_index]")


def test_two_torch_frames_are_two_signatures() -> None:
    source = "x.tolist()"
    unbind = error_signature(GUARD, _message(source, "forward", "_refs/__init__.py:4264 in unbind"))
    split = error_signature(GUARD, _message(source, "forward", "_refs/__init__.py:3990 in split"))
    assert unbind != split


def test_a_signature_stored_before_the_rule_reads_as_signed_now() -> None:
    from triagebot.results import Outcome, Status

    message = _message("x.tolist()", "get_rope_index", "_refs/__init__.py:4264 in unbind")
    old = f"{GUARD}: Could not guard on data-dependent expression Eq(u*, N) [in get_rope_index]"
    stored = Outcome.model_validate(
        {"status": "crash", "error_type": GUARD, "signature": old, "traceback": message}
    )
    assert stored.status == Status.crash
    assert stored.signature == old.replace("[in get_rope_index]", "[at torch._refs.unbind]")
    assert Outcome.model_validate(stored.model_dump()).signature == stored.signature
