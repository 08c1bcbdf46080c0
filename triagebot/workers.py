"""How many workers: the one resolution of `jobs`, for every command and stage that takes it.

`jobs` (`[sweep] jobs`, `--jobs`) is a number of workers or `"auto"`: as many as this process
has cores (its CPU affinity, bounded by a cgroup v2 `cpu.max` or v1 `cpu.cfs_quota_us` quota)
and, on CUDA, no more than `GPU_SHARE` of the GPU's memory holds at `memory_limit_gb` each.
`workers` turns it into a number: the sweep's pool once it knows its device, the reproduction
scripts of a night, the processes that read the stored nightlies. Imports nothing of triagebot,
so that every package may ask it (the analysis, which may not import the sweep, included).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

GPU_SHARE = 0.95  # of the GPU's memory, split between the workers
AUTO = "auto"


def workers(
    jobs: int | str,
    device: str = "cpu",
    *,
    cpus: int | None = None,
    gpu_memory: int | None = None,
    share_gb: float | None = None,
    most: int | None = None,
) -> int:
    """`jobs` as a number of workers: a number stays itself; `"auto"` is `auto_jobs` of the
    `cpus` (default: `available_cpus()`), no more than `most` where the work caps it."""
    if jobs != AUTO:
        return max(1, int(jobs))
    count = auto_jobs(device, available_cpus() if cpus is None else cpus, gpu_memory, share_gb)
    return count if most is None else max(1, min(count, most))


def auto_jobs(device: str, cpus: int, gpu_memory: int | None = None, share_gb: float | None = None) -> int:
    """Workers for `jobs="auto"`: one per core; on CUDA, no more than `GPU_SHARE` of the GPU's
    memory (`gpu_memory` bytes) holds at `share_gb` each."""
    if device == "cuda" and gpu_memory and share_gb:
        return max(1, min(cpus, int(GPU_SHARE * gpu_memory // (share_gb * 2**30))))
    return max(1, cpus)


def cgroup_cpu_limit(
    root: str | Path = "/sys/fs/cgroup", cgroups: str | Path = "/proc/self/cgroup"
) -> float | None:
    """The CPUs this process's cgroups allow (quota / period; the tightest of the cgroup and its
    ancestors, v2 `cpu.max` or v1 `cpu.cfs_quota_us`), or None when nothing limits them."""
    try:
        lines = Path(cgroups).read_text().splitlines()
    except OSError:
        return None
    root = Path(root)
    limits = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            mounts, read = [root], _cpu_max
        elif "cpu" in controllers.split(","):
            mounts, read = [root / controllers, root / "cpu", root / "cpu,cpuacct"], _cfs_quota
        else:
            continue
        for mount in mounts:
            for folder in _ancestors(mount, path):
                limit = read(folder)
                if limit is not None:
                    limits.append(limit)
    return min(limits) if limits else None


def _ancestors(mount: Path, path: str) -> list[Path]:
    """`mount`/path and each folder above it up to `mount` (those that exist)."""
    parts = [part for part in path.split("/") if part]
    folders = [mount.joinpath(*parts[:n]) for n in range(len(parts), -1, -1)]
    return [folder for folder in folders if folder.is_dir()]


def _cpu_max(folder: Path) -> float | None:
    try:
        quota, period = (folder / "cpu.max").read_text().split()[:2]
        return int(quota) / int(period) if quota != "max" and int(period) > 0 else None
    except (OSError, ValueError):
        return None


def _cfs_quota(folder: Path) -> float | None:
    try:
        quota = int((folder / "cpu.cfs_quota_us").read_text())
        period = int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None


def available_cpus() -> int:
    """The cores this process may use: its affinity, bounded by its cgroup's CPU quota (a
    fractional quota rounds up: the last worker uses what is left)."""
    cpus = len(os.sched_getaffinity(0))
    limit = cgroup_cpu_limit()
    return max(1, min(cpus, math.ceil(limit))) if limit else cpus
