"""Shards from runners of one pool merge; shards from different builds or devices do not."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import SCALAR, flag_patches, record

from triagebot.results import (
    BASELINE,
    CorpusSelection,
    Environment,
    SweepHeader,
)
from triagebot.sweep.stream import StreamError, merge

FLAGS = flag_patches(SCALAR)


def shard(path: Path, index: int, model: str, **environment) -> Path:
    env = Environment(torch_version="2.12.0.dev20260408+cu128", torch_git_version="abc", device="cuda")
    header = SweepHeader(
        environment=Environment.model_validate({**env.model_dump(), **environment}),
        flags=FLAGS,
        corpus=CorpusSelection(name="smoke", models=["A", "B"]),
        shard=f"{index}/2",
    )
    lines = [header.model_dump_json()]
    for config in (BASELINE, *FLAGS):
        lines.append(record(model, config).model_dump_json())
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_shards_from_hosts_with_other_kernels_merge(tmp_path: Path):
    first = shard(tmp_path / "1.jsonl", 1, "A", platform="Linux-6.8.0-1015-aws-x86_64")
    second = shard(tmp_path / "2.jsonl", 2, "B", platform="Linux-6.8.0-1021-aws-x86_64")
    snapshot = merge([first, second])
    assert [r.model for r in snapshot.results] == ["A", "B"]


@pytest.mark.parametrize(
    "difference",
    [
        {"torch_git_version": "def"},
        {"device": "cpu"},
        {"gpu_name": "NVIDIA A10G"},
        {"cuda_version": "12.6"},
        {"timm_version": "1.0.31"},  # the first records timm 1.0.30: the models differ
        {"transformers_version": "5.23.0"},  # the first records no transformers: as before
    ],
)
def test_shards_from_other_builds_or_devices_are_refused(tmp_path: Path, difference):
    first = shard(tmp_path / "1.jsonl", 1, "A", timm_version="1.0.30")
    if "timm_version" not in difference:
        difference = {**difference, "timm_version": "1.0.30"}
    second = shard(tmp_path / "2.jsonl", 2, "B", **difference)
    with pytest.raises(StreamError, match="another environment"):
        merge([first, second])


def test_a_stream_written_before_the_suites_libraries_were_recorded_matches_one_that_records_them(
    tmp_path: Path,
):
    """A stored night's flags added later: its stream is seeded with the stored environment,
    which may predate `diffusers_version`, and resumed by a sweep that records it."""
    first = shard(tmp_path / "1.jsonl", 1, "A", transformers_version="5.23.0")
    second = shard(tmp_path / "2.jsonl", 2, "B", transformers_version="5.23.0", diffusers_version="0.42.0")
    snapshot = merge([first, second])
    assert [r.model for r in snapshot.results] == ["A", "B"]
