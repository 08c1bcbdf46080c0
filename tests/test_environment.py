"""What a sweep records of where it runs (triagebot/sweep/environment.py)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.torch


def test_the_cuda_a_build_is_for_is_recorded_on_the_cpu_too(monkeypatch):
    import torch

    from triagebot.sweep.environment import detect_environment

    monkeypatch.setattr(torch.version, "cuda", "13.0")  # a CUDA wheel, on a machine without a GPU
    assert detect_environment("cpu").cuda_version == "13.0"
    monkeypatch.setattr(torch.version, "cuda", None)  # a CPU build
    assert detect_environment("cpu").cuda_version is None
