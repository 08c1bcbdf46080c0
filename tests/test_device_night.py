"""The device night's script (bench/device_night.py): the figures it reads from a sweep's own
closing line and from the GPU memory poll, so that what it records is what the engine said."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from triagebot.sweep.summary import SweepFigures

_SPEC = importlib.util.spec_from_file_location(
    "device_night", Path(__file__).resolve().parent.parent / "bench" / "device_night.py"
)
device_night = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(device_night)


def test_the_workers_and_wall_are_read_from_the_line_a_sweep_closes_with():
    figures = SweepFigures(wall=93.4, jobs=16, runs=40, run_seconds=1200.0)
    log = "progress...\n" + "\n".join(figures.lines()) + "\n40 runs of 12 models on cuda\n"
    assert device_night.engine_figures(log) == (16, 93.4)


def test_a_sweep_stopped_before_its_closing_line_has_no_figures():
    assert device_night.engine_figures("progress 3/40\nKilled\n") == (None, None)


def test_the_peak_gpu_memory_is_each_workers_largest_sample(tmp_path):
    poll = tmp_path / "gpu-memory.csv"
    poll.write_text("101, 900\n102, 4000\n101, 1200\n[Not Found], [N/A]\n102, 3900\n")
    assert device_night.peak_gpu_memory(poll) == {"workers_seen": 2, "peak_per_worker_mib": 4000}
    assert device_night.peak_gpu_memory(tmp_path / "absent.csv") is None
