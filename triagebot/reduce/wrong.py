"""A wrong result at the default config reduced to where it happens: the smallest submodule whose
compiled output differs from eager's on the inputs it received in one eager run (captured with
forward hooks), then the first node of the graph Dynamo hands the backend for it whose value
differs from eager's at the same line of model code: the op and the line.

Both run in one child Python beside the verified model-level repro (`templates/locate-wrong.py.j2`),
bounded in seconds as the crash reductions are (`Bounds.group_seconds` each, `night_seconds`
all together: its script's reduction after it gets what locating left of both), and only for
wrong results at baseline. The submodule's own standalone repro
(`templates/repro-submodule.py.j2`: the model-level script with a `main` that compiles only
that submodule) is then run and kept verified or not: the issue shows it beside the model's.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from triagebot.reduce.reductions import MIN_SECONDS, Bounds
from triagebot.report.render import render
from triagebot.reproduce import timed_run
from triagebot.reproduce.verify import REPRO_FILE
from triagebot.results import BASELINE, WRONG_RESULT, Reproduction, WrongLocus, wrong_result_signature

_LOCATE = "triagebot_locate.py"
_FOUND = "locus.json"


def is_wrong_at_baseline(reproduction: Reproduction) -> bool:
    """A verified model-level repro of a wrong result at the default config."""
    at_baseline = reproduction.flag == BASELINE and reproduction.backend is None
    return at_baseline and reproduction.verified and reproduction.signature.startswith(f"{WRONG_RESULT}:")


def submodule_script(reproduction: Reproduction, module: str, module_class: str) -> str:
    """The standalone repro of `module` alone: the model-level script, its `__main__` block cut."""
    base = reproduction.script.rsplit('\nif __name__ == "__main__":', 1)[0].rstrip()
    return render("repro-submodule.py.j2", base=base, module=module, module_class=module_class)


def _child(reproduction: Reproduction, python: str, seconds: float) -> dict:
    """What the child found (see the module), or no module with a note saying why nothing."""
    with tempfile.TemporaryDirectory(prefix="triagebot-locus-") as temporary:
        folder = Path(temporary)
        (folder / REPRO_FILE).write_text(reproduction.script, encoding="utf-8")
        script = render("locate-wrong.py.j2", repro=REPRO_FILE, seconds=seconds, found=_FOUND)
        # The search keeps to `seconds` itself; the margin is for its Python to start and stop.
        run = timed_run(script, python, seconds + MIN_SECONDS, folder=folder, standalone=True, name=_LOCATE)
        if (folder / _FOUND).is_file():
            return json.loads((folder / _FOUND).read_text(encoding="utf-8"))
    why = f"the search failed: {run.observed or 'it wrote nothing'}"
    return {"module": "", "notes": [why], "complete": False}


def locate(reproduction: Reproduction, seconds: float, python: str = sys.executable) -> WrongLocus:
    """Where `reproduction`'s wrong result happens, within `seconds` (the submodule's repro's run
    included)."""
    start = time.monotonic()
    found = _child(reproduction, python, max(seconds - (reproduction.seconds or 0.0), MIN_SECONDS))
    locus = WrongLocus.model_validate({key: value for key, value in found.items() if value is not None})
    if locus.module:
        script = submodule_script(reproduction, locus.module, locus.module_class)
        left = seconds - (time.monotonic() - start)  # what the search left of the bound
        run = timed_run(script, python, max(left, MIN_SECONDS))
        verified = run.observed == wrong_result_signature(locus.module)
        locus = locus.model_copy(update={"module_script": script, "module_verified": verified})
    return locus.model_copy(update={"seconds": round(time.monotonic() - start, 2)})


def locate_wrong_results(
    reproductions: list[Reproduction], bounds: Bounds, python: str = sys.executable
) -> list[Reproduction]:
    """Every verified repro of a wrong result at baseline with its `locus`, each within
    `bounds.group_seconds` and all within `bounds.night_seconds`; the rest as they were."""
    end = time.monotonic() + bounds.night_seconds
    located = []
    for reproduction in reproductions:
        left = min(bounds.group_seconds, end - time.monotonic())
        if is_wrong_at_baseline(reproduction) and left >= MIN_SECONDS:
            reproduction = reproduction.model_copy(update={"locus": locate(reproduction, left, python)})
        located.append(reproduction)
    return located
