"""What a triager reads about each failure group beyond the crash, decided once for every surface.

- `suggested_labels(group)`: the labels of PyTorch's PT2 triage rubric, from where the group
  lives on the backend ladder (`FailureGroup.lives_in`, else its rung `backend`): every group
  fails under torch.compile, `oncall: pt2`; a failure while Dynamo traces (the counting backend)
  is `module: dynamo`, one under `aot_eager` and not the counting backend `module: pt2-dispatcher`,
  one under `inductor` and not `aot_eager` `module: inductor`; a data-dependent one (`.item()`,
  unbacked symbols, GuardOnDataDependentSymNode, PendingUnbackedSymbolNotFound) is
  `module: dynamic shapes` too; a silent wrong result is `module: correctness (silent)` and
  `high priority`, its module label saying where it is wrong rather than where it fails. Each
  label comes with its evidence. `triaged` is never suggested: it hides an issue from the PT2
  on-call.
- `search_words(group)`: what an upstream search looks for, most telling first: the error's own
  name (the exception a wrapper such as InternalTorchDynamoError names first in its message),
  the message's leading words before its first normalised value, and the compiler frame (the
  innermost torch function of the stored traceback, outside `torch/nn`, that is not plumbing).
- `pin_for(signature, stored, links, repo)`: the upstream issue a group is pinned to: a
  maintainer's `/rerun-sweep link` (kept in the store) before an entry of `tracker.upstream_links`.
- `annotate(night, ...)`: the night with each flag's `triage` filled from the above and the
  searches and bisections the store holds, and the bisections of baseline graph-count
  regressions by model. Nothing is analysed again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from triagebot.analysis.ladder import at_baseline_too, lives_in
from triagebot.results import (
    BASELINE,
    RUNGS,
    WRONG_RESULT,
    Bisection,
    FailureGroup,
    FlagStats,
    GroupTriage,
    LabelReason,
    Night,
    UpstreamPin,
    UpstreamSearch,
    group_key,
    people_only,
    signature_id,
)

DYNAMIC_SHAPES = "module: dynamic shapes"
HIGH_PRIORITY = "high priority"
CORRECTNESS = "module: correctness (silent)"
ONCALL = "oncall: pt2"

_DATA_DEPENDENT = re.compile(
    r"\.item\(\)|\bunbacked\b|\bu\*|GuardOnDataDependentSymNode|PendingUnbackedSymbolNotFound"
    r"|data-dependent|DataDependentOutputException|DynamicOutputShapeException",
    re.IGNORECASE,
)
MAX_KNOWN = 3  # upstream issues listed per group, best first

# Exception types that say nothing of the bug by themselves: wrappers and Python's own.
GENERIC_ERRORS = frozenset(
    {
        "AssertionError",
        "AttributeError",
        "BackendCompilerFailed",
        "Exception",
        "IndexError",
        "InternalTorchDynamoError",
        "KeyError",
        "NotImplementedError",
        "RuntimeError",
        "TorchDynamoException",
        "TorchRuntimeError",
        "TypeError",
        "Unsupported",
        "UserError",
        "ValueError",
    }
)
_INNER_NAME = re.compile(r"^(?P<name>[A-Z][A-Za-z0-9_]+): (?P<rest>.*)$")
_IN_FUNCTION = re.compile(r" \[in [^\]]*\]$")
_PLAIN_WORD = re.compile(r"^[A-Za-z_](?:[A-Za-z0-9_.'-]*[A-Za-z0-9_])?$")  # a word, or a name of code
_CODE_NAME = re.compile(r"[_.]|[a-z][A-Z]")  # snake_case, dotted or CamelCase: a name in the code
_MAX_PHRASE = 8
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line \d+, in (?P<function>[\w<>]+)\s*$')
# torch functions that only pass a call on: not where the compiler gives up.
_PLUMBING = frozenset(
    {
        "<lambda>",
        "<module>",
        "__call__",
        "__torch_dispatch__",
        "__torch_function__",
        "_call_impl",
        "_fn",
        "_wrapped_call_impl",
        "call",
        "call_function",
        "fn",
        "forward",
        "inner",
        "run",
        "step",
        "wrap",
        "wrapper",
    }
)


def place_of(group: FailureGroup) -> str:
    """Where `group` lives: Dynamo, AOTAutograd, Inductor, or another backend's name."""
    return group.lives_in or lives_in(group.backend)


def is_wrong_result(group: FailureGroup) -> bool:
    return group.error_type == WRONG_RESULT or group.signature.startswith(f"{WRONG_RESULT}:")


def suggested_labels(group: FailureGroup) -> list[LabelReason]:
    """The labels a PT2 triager would set on `group`, each with why (see the module docstring)."""
    labels = [LabelReason(label=ONCALL, reason="fails under torch.compile, which the PT2 on-call triages")]
    # The rung a failure lives on gives its module label and why, in the rubric's words; for a
    # wrong result nothing failed: the outputs differ from the rung named on.
    place = place_of(group)
    rung = next((rung for rung in RUNGS.values() if rung.lives_in == place and rung.label), None)
    if is_wrong_result(group):
        labels.append(LabelReason(label=CORRECTNESS, reason="outputs differ from eager's and nothing raised"))
        if rung is not None:
            labels.append(LabelReason(label=rung.label, reason=rung.wrong_why))
    elif rung is not None:
        labels.append(LabelReason(label=rung.label, reason=rung.fails_why))
    found = _DATA_DEPENDENT.search(f"{group.signature}\n{group.error or ''}")
    if found:
        labels.append(LabelReason(label=DYNAMIC_SHAPES, reason=f"data-dependent: {found.group()}"))
    if is_wrong_result(group):
        labels.append(
            LabelReason(
                label=HIGH_PRIORITY, reason="a silent wrong result is high priority in the PT2 rubric"
            )
        )
    return [reason for reason in labels if not people_only(reason.label)]


def error_name(signature: str) -> tuple[str, str]:
    """(the error's own name, the rest of its message) of a signature `Type: message [in fn]`."""
    error_type, _, message = _IN_FUNCTION.sub("", signature).partition(": ")
    inner = _INNER_NAME.match(message)
    if inner and error_type in GENERIC_ERRORS:
        return inner["name"], inner["rest"]
    return error_type, message


def leading_phrase(message: str) -> str | None:
    """The message's words before its first normalised value or punctuation (`Pending unbacked
    symbols` of `Pending unbacked symbols {u*} not in ...`): two words at least, or one name of
    code (`call_method`, `aten.nonzero.default`, `UserDefinedObjectVariable`)."""
    words = []
    for word in message.split():
        if not _PLAIN_WORD.match(word) or word == "N" or len(words) == _MAX_PHRASE:
            break
        words.append(word)
    if len(words) == 1 and not _CODE_NAME.search(words[0]):
        return None
    return " ".join(words) or None


def compiler_frame(traceback: str | None) -> str | None:
    """The innermost torch function of a stored traceback that is neither module code
    (`torch/nn`) nor plumbing: where the compiler gave up. None when the tail shows none."""
    own = (traceback or "").partition("from user code:")[0]
    for line in reversed(own.splitlines()):
        found = _FRAME.match(line)
        if not found:
            continue
        path = found["file"].replace("\\", "/")
        if "/torch/" in path and "/torch/nn/" not in path and found["function"] not in _PLUMBING:
            return found["function"]
    return None


def search_words(group: FailureGroup) -> list[str]:
    """What an upstream search looks for, most telling first; empty when nothing is telling
    enough (a wrong result, whose name is triagebot's own; a bare RuntimeError)."""
    if is_wrong_result(group):
        return []
    name, message = error_name(group.signature)
    words = [] if name in GENERIC_ERRORS else [name]
    phrase = leading_phrase(message)
    if phrase:
        words.append(phrase)
    frame = compiler_frame(group.traceback)
    if frame and words:
        words.append(frame)
    return words


def pin_for(
    signature: str, stored: Mapping[str, UpstreamPin], links: Mapping[str, int], repo: str | None
) -> UpstreamPin | None:
    """The pin of `signature`: the store's (a `/rerun-sweep link` or `unlink`, the newest word),
    else the first entry of `links` (`tracker.upstream_links`: a group's id, or text its
    signature contains -> issue number) that names it; None when neither does."""
    if signature in stored:
        return stored[signature]
    ident = signature_id(signature)
    for text, number in links.items():
        if text == ident or text in signature:
            return UpstreamPin(repo=repo or "", signature=signature, number=number, by="config")
    return None


def failure_groups(stats: FlagStats) -> list[FailureGroup]:
    """A flag's groups an issue tracks and a triager labels: wrong results, crashes, then the
    failures met only on the ladder, less those its members meet at baseline too."""
    ladder = [group for group in stats.ladder_groups if not at_baseline_too(group)]
    return [*stats.wrong_result_groups, *stats.crash_groups, *ladder]


def group_triage(
    group: FailureGroup,
    pin: UpstreamPin | None,
    search: UpstreamSearch | None,
    bisection: Bisection | None,
    *,
    repo: str | None,
    local: bool,
    sentinels: frozenset[str] = frozenset(),
) -> GroupTriage:
    """What `group`'s entry says beyond the crash (a pinned group lists no possible matches); a
    group of `sentinels` alone (test models built to fail) is never labelled."""
    tracked = pin.number if pin is not None else None
    return GroupTriage(
        signature=group.signature,
        group_id=signature_id(group.signature),
        labels=[] if set(group.models) <= sentinels else suggested_labels(group),
        repo=repo,
        local=local,
        tracked_in=tracked,
        pinned_by=pin.by if pin is not None and tracked is not None else "",
        known=[] if tracked is not None or search is None else search.matches[:MAX_KNOWN],
        searched=search.key if search is not None else None,
        search_error=search.error if search is not None else "",
        bisection=bisection,
    )


def annotate(
    night: Night,
    *,
    pins: Mapping[str, UpstreamPin],
    links: Mapping[str, int],
    searches: Mapping[str, UpstreamSearch],
    bisections: Mapping[str, Bisection],
    repo: str | None,
    local: bool,
) -> Night:
    """`night` with every flag's `triage` filled: labels, pins (`pins` from the store, `links`
    from the configuration), the newest search and bisection of each signature. `repo`: the
    upstream repository (None: no searches); `local`: it holds the tracking issues too."""
    flags = {}
    for name, flag in night.flags.items():
        triage = {
            group_key(group): group_triage(
                group,
                pin_for(group.signature, pins, links, repo),
                searches.get(group.signature),
                bisections.get(group.signature),
                repo=repo,
                local=local,
                sentinels=night.sentinels,
            )
            for group in failure_groups(flag.stats)
        }
        flags[name] = flag.model_copy(update={"triage": triage})
    baseline = {b.model: b for b in bisections.values() if b.flag == BASELINE}
    return night.model_copy(update={"flags": flags, "baseline_bisections": baseline})


def with_searches(night: Night, searches: Mapping[str, UpstreamSearch]) -> Night:
    """`night` with the newest of `searches` (signature -> search) in its groups' triage: what
    the publisher found tonight, over what the store held (a pinned group lists none)."""
    flags = {}
    for name, flag in night.flags.items():
        triage = {}
        for key, found in flag.triage.items():
            search = searches.get(found.signature)
            if search is not None:
                found = found.model_copy(
                    update={
                        "known": [] if found.tracked_in is not None else search.matches[:MAX_KNOWN],
                        "searched": search.key,
                        "search_error": search.error,
                    }
                )
            triage[key] = found
        flags[name] = flag.model_copy(update={"triage": triage})
    return night.model_copy(update={"flags": flags})
