"""Where a sweep runs: the installed torch and transformers, the other suites' libraries it
sweeps, Python, platform, device and GPU."""

from __future__ import annotations

import importlib.metadata
import platform
from collections.abc import Collection

import torch

from triagebot.results import SUITES, Environment


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return ""


def _libraries(suites: Collection[str]) -> dict[str, str]:
    """The versions of the libraries of `suites` (corpus names) beside transformers, and of those
    their models run on (`Suite.companions`), installed."""
    swept = [suite for suite in SUITES.values() if suite.corpus in suites]
    named = [name for suite in swept for name in (suite.library, *suite.companions)]
    versions = {library: _version(library) for library in named if library and library != "transformers"}
    return {library: version for library, version in versions.items() if version}


def detect_environment(device: str, suites: Collection[str] = ()) -> Environment:
    """The environment of this process for a sweep on `device` ("cpu" or "cuda") of models of
    `suites`.

    transformers' version is read from its metadata, not by importing it; another suite's
    library's (`Suite.library`) only for the suites among `suites` (those whose library
    imported, so that their models were loaded): an installed library the night did not sweep
    is not said. `cuda_version` is the CUDA that torch was built for (None for a CPU build)
    whatever the device: a CUDA wheel also imports and compiles on the CPU, and a night swept so
    says so. On "cuda" the GPU's name is queried, which initialises CUDA in the calling process:
    the sweep calls this in a forked child (the probe), never in the warm parent it forks from.
    """
    gpu_name = torch.cuda.get_device_name(0) if device == "cuda" else None
    return Environment(
        torch_version=torch.__version__,
        torch_git_version=getattr(torch.version, "git_version", "") or "",
        transformers_version=_version("transformers"),
        libraries=_libraries(suites),
        python_version=platform.python_version(),
        platform=platform.platform(),
        device=device,
        gpu_name=gpu_name,
        cuda_version=torch.version.cuda,
    )
