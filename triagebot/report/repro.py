"""Self-contained reproduction scripts per crash signature, and their verification.

`repro_script(snapshot, flag, model)` builds a script from the snapshot alone: the model's
`ModelSpec` (transformers class path and tiny config, or the inlined source of a sentinel),
its inputs rebuilt from their `InputSpec`s and seed, the flag's config patch, the counting
backend and `fullgraph=False`. It needs torch (and transformers for transformers models) but
no hub and no triagebot.

`verify(script, signature)` runs a script in a subprocess with a Python that has torch (this
package never imports torch) and checks that it raises an error whose signature, computed by
`results.error_signature` as the sweep computes it, is the expected one.

`reproduce(snapshot, python)` does both for the first model of every confirmed crash group (and
of every wrong-result group, whose script raises `WrongResult` naming the output that differs,
and of every failure met only on the backend ladder, whose script compiles with that backend)
and returns `results.Reproduction` records; store them in `Snapshot.reproductions`. Only
verified ones are shown in issues.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from triagebot.analysis import flag_stats
from triagebot.errors import ReproError
from triagebot.report.render import render
from triagebot.results import BASELINE, WRONG_RESULT, Reproduction, Snapshot, error_signature

DEFAULT_TIMEOUT = 300.0

# Runs a script under test without its `__main__` block and reports the exception as type and
# message in one JSON line on stderr, so that the signature is computed as the sweep computes it.
_HARNESS = """
import json, runpy, sys
namespace = runpy.run_path(sys.argv[1], run_name="triagebot_repro")
try:
    namespace["main"]()
except BaseException as error:
    report = {"type": type(error).__name__, "message": str(error)}
    sys.stderr.write("\\nTRIAGEBOT-ERROR " + json.dumps(report) + "\\n")
    sys.exit(1)
"""
_ERROR_PREFIX = "TRIAGEBOT-ERROR "




# The sweep's output comparison, inlined into wrong-result scripts as source text (report/ never
# imports torch): read from beside this package, its `from __future__` line dropped.
ACCURACY_SOURCE = Path(__file__).resolve().parents[1] / "sweep" / "accuracy.py"


def _accuracy_code() -> str:
    """The module's code without its docstring (the rules are the sweep's README's) and without
    `from __future__`, which only the first line of a file may hold."""
    source = ACCURACY_SOURCE.read_text(encoding="utf-8")
    body = ast.parse(source).body
    start = body[0].end_lineno if body and isinstance(body[0], ast.Expr) else 0
    lines = source.splitlines()[start:]
    return "\n".join(line for line in lines if not line.startswith("from __future__")).strip()


def repro_script(
    snapshot: Snapshot,
    flag: str,
    model: str,
    signature: str | None = None,
    *,
    backend: str | None = None,
    wrong: bool = False,
) -> str:
    """The reproduction script for `model` crashing under `flag` in `snapshot`. `backend`: the
    ladder backend it fails under (None: the counting backend). `wrong`: it gives a wrong result
    rather than crashing; the script raises `WrongResult` when the outputs differ."""
    result = snapshot.result(model)
    if result is None:
        raise ReproError(f"snapshot {snapshot.key} has no model {model!r}")
    if result.spec is None:
        raise ReproError(f"model {model!r} in snapshot {snapshot.key} carries no spec to rebuild it from")
    if flag not in snapshot.flags and flag != BASELINE:
        raise ReproError(f"snapshot {snapshot.key} has no flag {flag!r}")
    spec = result.spec
    outcome = result.ladder.get(flag, {}).get(backend) if backend else result.outcomes.get(flag)
    if spec.source == "sentinel" and not spec.code:
        raise ReproError(f"sentinel {model!r} carries no source code to inline")
    return render(
        "repro.py.j2",
        signature=signature or (outcome.signature if outcome else "") or "",
        error_type=WRONG_RESULT if wrong else (outcome.error_type if outcome else None) or "an error",
        model=model,
        key=snapshot.key,
        torch_version=snapshot.environment.torch_version,
        code=spec.code.rstrip() if spec.code else None,
        class_name=spec.class_path.rpartition(":")[2] or spec.model,
        class_path=spec.class_path,
        config=spec.config or {},
        seed=spec.seed,
        device=snapshot.environment.device,
        patch=snapshot.flags[flag] if flag != BASELINE else {},
        inputs=[item.model_dump() for item in spec.inputs],
        backend=backend,
        wrong=wrong,
        accuracy_code=_accuracy_code() if wrong else "",
    )


def run_script(script: str, python: str = sys.executable, timeout: float = DEFAULT_TIMEOUT) -> str | None:
    """Run `script` and return the signature of the error it raised, or None when it raised none.

    Raises `subprocess.TimeoutExpired` when it outlives `timeout`.
    """
    with tempfile.TemporaryDirectory(prefix="triagebot-repro-") as folder:
        path = Path(folder) / "repro.py"
        path.write_text(script, encoding="utf-8")
        completed = subprocess.run(
            [python, "-c", _HARNESS, str(path)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=folder,
            check=False,
        )
    for line in reversed(completed.stderr.splitlines()):
        if line.startswith(_ERROR_PREFIX):
            error = json.loads(line[len(_ERROR_PREFIX) :])
            return error_signature(error["type"], error["message"])
    if completed.returncode != 0:
        tail = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        return f"exit status {completed.returncode}: {tail}"
    return None


def verify(
    script: str,
    *,
    flag: str,
    model: str,
    signature: str,
    python: str = sys.executable,
    timeout: float = DEFAULT_TIMEOUT,
    backend: str | None = None,
) -> Reproduction:
    """Run `script` and record whether it raised `signature`."""
    try:
        observed = run_script(script, python, timeout)
    except subprocess.TimeoutExpired:
        observed = f"timed out after {timeout:.0f} s"
    except OSError as error:
        observed = f"could not run {python}: {error.strerror}"
    return Reproduction(
        flag=flag,
        signature=signature,
        model=model,
        script=script,
        verified=observed == signature,
        observed=observed or "no error",
        backend=backend,
    )


def reproduce(
    snapshot: Snapshot, python: str = sys.executable, timeout: float = DEFAULT_TIMEOUT
) -> list[Reproduction]:
    """A verified-or-not reproduction for every confirmed crash group of every flag.

    Each group is tried with its models in order until one model's script reproduces it; a
    group none of whose models has a spec is skipped.
    """
    found = []
    for flag in snapshot.flags:
        stats = flag_stats(snapshot, flag)
        groups = [(group, None, False) for group in stats.crash_groups]
        groups += [(group, None, True) for group in stats.wrong_result_groups]
        groups += [(group, group.backend, group.error_type == WRONG_RESULT) for group in stats.stack_groups]
        for group, backend, wrong in groups:
            attempt = None
            for model in group.models:
                try:
                    script = repro_script(
                        snapshot, flag, model, group.signature, backend=backend, wrong=wrong
                    )
                except ReproError:
                    continue
                attempt = verify(
                    script,
                    flag=flag,
                    model=model,
                    signature=group.signature,
                    python=python,
                    timeout=timeout,
                    backend=backend,
                )
                if attempt.verified:
                    break
            if attempt is not None:
                found.append(attempt)
    return found
