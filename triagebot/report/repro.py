"""The text of a self-contained reproduction script for one crash (rendering only; never runs it).

`repro_script(snapshot, flag, model)` builds a script from the snapshot alone: the model's
`ModelSpec` (transformers class path and tiny config, or the inlined source of a sentinel), its
inputs rebuilt from their `InputSpec`s and seed (only the kinds it has), the flag's config
patch, the counting backend and `fullgraph=False`. It needs torch (and transformers for
transformers models) but no hub and no triagebot, and imports nothing it does not use. With
`backend` (a failure met only on the backend ladder) it compiles with that backend instead; with
`wrong` (a wrong result) it compiles with `backend="eager"` (Dynamo's graphs run as captured, as
the counting backend runs them), compares the output the sweep found different with eager's at
the benchmark harness's tolerance for its dtype, and raises `WrongResult` naming it: a few lines
beyond the model's build, not the sweep's whole comparison. Running and verifying scripts is
`triagebot.reproduce`'s (a stage beside the sweep: it runs torch).
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from triagebot.analysis.library import finding_of
from triagebot.errors import ReproError
from triagebot.report.render import render
from triagebot.results import (
    BASELINE,
    EAGER_INCONSISTENT,
    OTHER_ATTENTION,
    SUITES,
    WRONG_RESULT,
    InputSpec,
    Outcome,
    Snapshot,
    rung_backend,
)

# The tags of a recorded config (`corpus.encoding`) that the script's copy of `decode` reads.
TAGS = frozenset({"$tuple", "$float", "$dict"})


def _parsed(code: str) -> ast.Module:
    try:
        return ast.parse(code)
    except SyntaxError as error:
        raise ReproError(f"the inlined source does not parse: {error.msg} (line {error.lineno})") from None


def _names_bound(node: ast.stmt) -> set[str]:
    """Names a top-level statement binds by importing (`import torch.nn` binds torch); none for
    any other statement."""
    if isinstance(node, ast.Import):
        return {(alias.asname or alias.name).partition(".")[0] for alias in node.names}
    if isinstance(node, ast.ImportFrom):
        return {alias.asname or alias.name for alias in node.names}
    return set()


def _bound_imports(code: str) -> set[str]:
    """Names the top-level imports of `code` bind (`import torch` binds torch)."""
    return {name for node in _parsed(code).body for name in _names_bound(node)}


def _unused_stdlib_import(node: ast.stmt, used: set[str]) -> bool:
    """Whether `node` imports from the standard library only names nothing uses. Only the
    standard library's: another package's import may be made for what importing it does."""
    modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
    if isinstance(node, ast.ImportFrom):
        modules = [node.module or ""] if node.level == 0 else [""]
    bound = _names_bound(node)
    standard = all(module.partition(".")[0] in sys.stdlib_module_names for module in modules)
    return bool(bound) and standard and not bound & used


def _used_imports_only(code: str) -> str:
    """`code` without the standard library's top-level imports it never uses: a sentinel's
    module is inlined with the header its whole file shares (`os`, `signal`, `time` for the
    sentinels that hang or die), which a reader of one sentinel's script should not wonder about."""
    tree = _parsed(code)
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    unused = {
        number
        for node in tree.body
        if _unused_stdlib_import(node, used)
        for number in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }
    kept = [line for number, line in enumerate(code.splitlines(), start=1) if number not in unused]
    return "\n".join(kept).lstrip("\n")


def _imports(code: str | None, path: bool, instances: bool = False) -> list[str]:
    """What the script imports beside an inlined module's own imports (`code`): importlib for a
    library's class (the model's, or an `instance` input's), torch, and re for a wrong result's
    output `path` (one not the output)."""
    bound = _bound_imports(code) if code else set()
    wanted = [("re", path), ("importlib", not code or instances), ("torch", True)]
    return [f"import {name}" for name, needed in wanted if needed and name not in bound]


def repro_script(
    snapshot: Snapshot,
    flag: str,
    model: str,
    signature: str | None = None,
    *,
    backend: str | None = None,
    wrong: bool = False,
    other_attention: str | None = None,
) -> str:
    """The reproduction script for `model` failing under `flag` (or `baseline`) in `snapshot`.
    `backend`: the ladder rung it fails on (None: the counting backend); on a backward rung
    (`rung_backend`) the script trains: forward and backward, gradients compared. `wrong`: it gives
    a wrong result rather than crashing; the script raises `WrongResult` when outputs differ.
    `other_attention`: eager disagrees with itself (a library finding): the script compiles
    nothing, runs eager as built and under this attention implementation, and raises
    `EagerInconsistent` when they differ."""
    other_attention = other_attention or _other_attention(snapshot, flag, model, signature)
    wrong = wrong or other_attention is not None
    result = snapshot.result(model)
    if result is None:
        raise ReproError(f"snapshot {snapshot.key} has no model {model!r}")
    if result.spec is None:
        raise ReproError(f"model {model!r} in snapshot {snapshot.key} carries no spec to rebuild it from")
    if flag not in snapshot.flags and flag != BASELINE:
        raise ReproError(f"snapshot {snapshot.key} has no flag {flag!r}")
    spec = result.spec
    outcome = result.ladder.get(flag, {}).get(backend) if backend else result.outcomes.get(flag)
    compiler, backward = rung_backend(backend) if backend else (None, False)
    if spec.sentinel and not spec.code:
        raise ReproError(f"sentinel {model!r} carries no source code to inline")
    code = _used_imports_only(spec.code.rstrip()) if spec.code else None
    return render(
        "repro.py.j2",
        signature=signature or (outcome.signature if outcome else "") or "",
        error_type=_error_type(outcome, wrong, other_attention),
        model=model,
        key=snapshot.key,
        torch_version=snapshot.environment.torch_version,
        libraries=_libraries(snapshot, spec.source),
        code=code,
        class_name=spec.class_path.rpartition(":")[2] or spec.model,
        class_path=spec.class_path,
        config=spec.config or {},
        seed=spec.seed,
        device=snapshot.environment.device,
        patch=snapshot.flags.get(flag, {}),
        inputs=[_input_dict(item) for item in spec.inputs],
        kinds=list(dict.fromkeys(item.kind for item in spec.inputs)),
        element_kinds=list(dict.fromkeys(each.kind for item in spec.inputs for each in _nested(item))),
        tagged=_tagged(spec.config or {}),
        keyword_config=SUITES[spec.source].keyword_config,
        after_init=spec.after_init,
        imports=_imports(
            code,
            wrong and not backward and _where(outcome) != "output",
            any(item.kind == "instance" for item in spec.inputs),
        ),
        backend=compiler,
        backward=backward,
        dropout=backward and _may_drop(code, spec.config or {}),
        wrong=wrong,
        where=_where(outcome) if wrong else "",
        other_attention=other_attention,
        attention=OTHER_ATTENTION.get(other_attention or "", ""),
        title=_title(snapshot, model) if other_attention else None,
    )


def _may_drop(code: str | None, config: dict[str, Any]) -> bool:
    """Whether a model may hold a dropout for the backward rung's script to zero: any library
    model may; a module inlined from its code only when that code or its config names one."""
    if code is None:
        return True
    said = f"{code} {config}".lower()
    return "dropout" in said or "layerdrop" in said


def _libraries(snapshot: Snapshot, suite: str) -> str:
    """The version of the library the script builds its model with, as the snapshot recorded it,
    with those its models run on (`Suite.companions`: "timm 1.0.31 with torchvision 0.28.0"):
    the lines a traceback names are that release's. Empty for a sentinel, and where the snapshot
    did not record it."""
    versions = snapshot.environment.library_versions()
    version = versions.get(suite, "")
    if not version:
        return ""
    known = SUITES.get(suite)
    companions = [
        f"{name} {versions[name]}" for name in (known.companions if known else ()) if versions.get(name)
    ]
    return f"{suite} {version}" + (f" with {', '.join(companions)}" if companions else "")


def _input_dict(item: InputSpec) -> dict[str, Any]:
    """An input as the script's INPUTS holds it: `items` only where it is a list's or dict's."""
    made = item.model_dump(exclude={"items"})
    if item.items is not None:
        made["items"] = [_input_dict(each) for each in item.items]
    return made


def _nested(item: InputSpec) -> list[InputSpec]:
    """Every item a list or dict input holds, at any depth."""
    return [inner for each in item.items or [] for inner in [each, *_nested(each)]]


def _title(snapshot: Snapshot, model: str) -> str | None:
    """A library finding's title (`analysis.library.finding_title`), what its script is about."""
    finding = finding_of(snapshot, model)
    return finding.title if finding is not None else None


def _other_attention(snapshot: Snapshot, flag: str, model: str, signature: str | None) -> str | None:
    """The attention implementation a library finding's script compares with, read from its
    run's cross-checks when `signature` is one (`EagerInconsistent: ...`); None for any other."""
    result = snapshot.result(model)
    outcome = result.outcomes.get(flag) if result is not None else None
    if not (signature or "").startswith(f"{EAGER_INCONSISTENT}:") or outcome is None:
        return None
    checks = outcome.accuracy.cross_checks if outcome.accuracy is not None else []
    return checks[0].implementation if checks else None


def _error_type(outcome: Outcome | None, wrong: bool, other_attention: str | None) -> str:
    """What the script is expected to raise."""
    if other_attention:
        return EAGER_INCONSISTENT
    if wrong:
        return WRONG_RESULT
    return (outcome.error_type if outcome else None) or "an error"


def _tagged(value: Any) -> bool:
    """Whether a recorded config holds a tagged value (`corpus.encoding`: a tuple, inf or nan, a
    dict with keys that are not strings), which the script must decode."""
    if isinstance(value, list):
        return any(_tagged(item) for item in value)
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)) in TAGS:
            return True
        return any(_tagged(item) for item in value.values())
    return False


def _where(outcome: Outcome | None) -> str:
    """The output a wrong result differs in, as the sweep named it (the signature normalises it:
    `layers[0]` reads `layers[N]` there). An output that differs only on the second shape's call
    is named without that prefix: the script makes the first call alone."""
    where = outcome.accuracy.where if outcome is not None and outcome.accuracy is not None else None
    return (where or "output").removeprefix("second call: ")
