"""What a sweep may use: how many workers, and each worker's threads, memory and share of the GPU.

`jobs="auto"` is as many workers as this process has cores (its CPU affinity, bounded by a
cgroup v2 `cpu.max` or v1 `cpu.cfs_quota_us` quota) and, on CUDA, no more than the GPU's memory
holds at `memory_limit_gb` each. Memory per child is bounded by RLIMIT_AS on the CPU; on CUDA,
where the address space cannot be capped (CUDA maps far more than it uses), the pool polls each
child's resident set (`resident_bytes`) and each child may use `gpu_fraction` of the GPU.
"""

from __future__ import annotations

import math
import os
import resource
from pathlib import Path

GPU_SHARE = 0.95  # of the GPU's memory, split between the workers


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


def auto_jobs(device: str, cpus: int, gpu_memory: int | None = None, share_gb: float | None = None) -> int:
    """Workers for `jobs="auto"`: one per core; on CUDA, no more than `GPU_SHARE` of the GPU's
    memory (`gpu_memory` bytes) holds at `share_gb` each."""
    if device == "cuda" and gpu_memory and share_gb:
        return max(1, min(cpus, int(GPU_SHARE * gpu_memory // (share_gb * 2**30))))
    return max(1, cpus)


def threads_per_worker(cpus: int, jobs: int) -> int:
    """Intra-op threads for each of `jobs` workers: the cores shared out, at least one."""
    return max(1, cpus // max(1, jobs))


def gpu_fraction(jobs: int) -> float:
    """The share of the GPU's memory one of `jobs` workers may use."""
    return min(1.0, GPU_SHARE / max(1, jobs))


def limit_address_space(limit: int) -> None:
    """Cap this process's address space at `limit` bytes (a child on the CPU: a model that
    allocates beyond it fails with an error in its own run rather than bring the machine down)."""
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def resident_bytes(pid: int) -> int:
    """A process's resident set, in bytes (0 when it cannot be read)."""
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0
