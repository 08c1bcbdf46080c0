"""The graph-level reproduction of a failure in a backend, as PyTorch's own minifier writes it.

`graph_repro(script, backend, signature)` runs the (reduced) model-level script once with
`TORCHDYNAMO_REPRO_AFTER` set: `dynamo` for `aot_eager` (the minifier cuts the FX graph Dynamo
hands the backend), `aot` for `inductor` (the graph AOTAutograd hands Inductor), then `dynamo`
where that wrote nothing. On the failure PyTorch writes `minifier_launcher.py`; running it
shrinks the graph while the backend still fails and writes `repro.py`. That file is then run
alone in an empty folder, as a person would run it from the issue (its saved inputs absent:
PyTorch draws random ones), and it is verified when it raises the group's error. A graph has
no user code, so the function a signature names (`[in forward]`) is left out of the comparison.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from triagebot.reproduce import scrubbed_environment, timed_run
from triagebot.results import RUNGS, GraphRepro

_USER_FUNCTION = re.compile(r" \[in [\w<>]+\]$")


def minifier_stages(backend: str | None) -> tuple[str, ...]:
    """Where the minifier cuts for a failure under `backend`, in the order to try: after
    AOTAutograd only reaches what fails inside Inductor's compile of a graph, so for Inductor
    Dynamo's graph is tried next (a failure in AOTAutograd's own passes). None for the counting
    backend (a failure of Dynamo itself) and for backends named by import path."""
    rung = RUNGS.get(backend or "")
    return rung.minifier if rung is not None else ()


def same_error(observed: str | None, signature: str) -> bool:
    """`observed` is `signature`'s error, whatever user-code function either names."""
    return observed is not None and _USER_FUNCTION.sub("", observed) == _USER_FUNCTION.sub("", signature)


def graph_repro(
    script: str, backend: str, signature: str, *, python: str = sys.executable, deadline: float
) -> GraphRepro | None:
    """The minifier's verified-or-not graph repro of `script`'s failure under `backend`, within
    `deadline` (time.monotonic()); None when no minifier serves `backend`."""
    start = time.monotonic()
    attempt = None
    for after in minifier_stages(backend):
        with tempfile.TemporaryDirectory(prefix="triagebot-minify-") as temporary:
            text, problem = _minified(script, after, python, Path(temporary), deadline)
        attempt = GraphRepro(after=after, observed=problem)
        if text is not None:
            run = timed_run(text, python, max(1.0, deadline - time.monotonic()), standalone=True)
            verified = same_error(run.observed, signature)
            attempt = GraphRepro(
                after=after,
                script=text,
                lines=len(text.splitlines()),
                verified=verified,
                observed=run.observed or "no error",
            )
            break
    return attempt.model_copy(update={"seconds": round(time.monotonic() - start, 2)}) if attempt else None


def _minified(script: str, after: str, python: str, folder: Path, deadline: float) -> tuple[str | None, str]:
    """The text of the minifier's `repro.py`, or None and why there is none."""
    debug = {"TORCH_COMPILE_DEBUG_DIR": str(folder)}
    run = timed_run(
        script,
        python,
        max(1.0, deadline - time.monotonic()),
        env={**debug, "TORCHDYNAMO_REPRO_AFTER": after, "TORCHDYNAMO_REPRO_LEVEL": "2"},
        folder=folder,
    )
    launchers = sorted(folder.glob("torch_compile_debug/*/minifier/minifier_launcher.py"))
    if not launchers:
        return None, f"PyTorch wrote no minifier launcher; the script raised {run.observed or 'no error'}"
    try:
        done = subprocess.run(
            [python, str(launchers[-1])],
            capture_output=True,
            text=True,
            timeout=max(1.0, deadline - time.monotonic()),
            cwd=folder,
            env=scrubbed_environment(debug),
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, "the minifier ran out of time"
    repro = folder / "repro.py"
    if not repro.is_file():
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"the minifier wrote no repro.py: {tail}"
    return repro.read_text(encoding="utf-8"), ""
