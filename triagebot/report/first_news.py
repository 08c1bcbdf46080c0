"""The words for the night's first news: wrong results of `torch.compile` at the default config
(`Night.compiler_wrong`, computed once by `analysis.compiler_wrong`). The summary's first lines,
the step summary, the site's index and their tracking issue all say them in these words.

Everything returned is plain text: the caller escapes it for Markdown or HTML.
"""

from __future__ import annotations

from triagebot.analysis.figures import plural
from triagebot.results import CompilerWrong, CompilerWrongNight, WrongLocus


def headline(wrong: CompilerWrongNight) -> str:
    """ "1 wrong result of torch.compile at the default config" (plural past one)."""
    return f"{plural(len(wrong.findings), 'wrong result')} of torch.compile at the default config"


def figures(item: CompilerWrong) -> str:
    """How wrong: the compiled output's RMSE to the float64 run beside eager's own, else the
    accuracy check's words."""
    if item.compiled_rmse is not None and item.eager_rmse is not None:
        return (
            f"{item.where}: compiled {item.compiled_rmse:.3g} RMSE from the float64 run, "
            f"eager {item.eager_rmse:.3g}; confirmed on a second run"
        )
    return f"{item.where}: {item.detail or 'beyond tolerance'}; confirmed on a second run"


def place(locus: WrongLocus | None) -> str:
    """Where it happens, as far as it was reduced."""
    if locus is None:
        return "not reduced below the whole model"
    module = f"submodule {locus.module} ({locus.module_class})" if locus.module else "the whole model"
    if locus.op or locus.line:
        generated = (
            f"; the graph is right, the code FX generated for it is not: {locus.generated}"
            if locus.generated
            else ""
        )
        return f"reduced to {locus.where}, in {module}{generated}"
    return f"reduced to {module}" + (f" ({locus.notes[-1]})" if locus.notes else "")


def repro_state(item: CompilerWrong) -> str:
    """Whether its standalone repro (the model-level one, and the smallest) still differs."""
    repro = item.repro
    if repro is None:
        return "no repro made"
    said = "repro verified" if repro.verified else f"repro not verified ({repro.observed or 'not run'})"
    locus = repro.locus
    if locus is not None and locus.module_script:
        smallest = "verified" if locus.module_verified else "not verified"
        said += f"; the submodule's own repro {smallest}"
    return said


def group_count(wrong: CompilerWrongNight) -> str:
    """ "1 place" or "2 places": the groups by op and code line."""
    return plural(len(wrong.groups), "place")
