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


def test_the_libraries_of_the_suites_swept_are_recorded_and_no_other(monkeypatch):
    import importlib.metadata

    from triagebot.sweep.environment import detect_environment

    installed = {"transformers": "5.23.0", "diffusers": "0.42.0", "timm": "1.0.31", "torchvision": "0.28.0"}
    monkeypatch.setattr(importlib.metadata, "version", installed.__getitem__)

    swept = detect_environment("cpu", ["transformers", "timm"])
    assert (swept.transformers_version, swept.libraries) == (
        "5.23.0",
        {"timm": "1.0.31", "torchvision": "0.28.0"},
    )
    # torchvision is what timm's models ran on: recorded with timm alone
    assert "torchvision" not in detect_environment("cpu", ["transformers", "diffusers"]).libraries
    assert detect_environment("cpu").library_versions() == {"transformers": "5.23.0"}


def test_the_probe_records_the_libraries_of_the_suites_it_is_given(monkeypatch):
    import importlib.metadata

    from triagebot.sweep.validation import probe

    monkeypatch.setattr(importlib.metadata, "version", {"transformers": "5.23.0", "diffusers": "0.42.0"}.get)
    reply = probe({"device": "cpu", "flags": {}, "suites": ["transformers", "diffusers"]})
    assert reply["environment"]["libraries"] == {"diffusers": "0.42.0"}
