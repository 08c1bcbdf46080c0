"""What each of a sweep's workers may use: its threads, its memory and its share of the GPU.

How many workers there are is `triagebot.workers` (`jobs`, resolved once). Memory per child is
bounded by RLIMIT_AS on the CPU; on CUDA, where the address space cannot be capped (CUDA maps far
more than it uses), the pool polls each child's resident set (`resident_bytes`) and each child
may use `gpu_fraction` of the GPU.
"""

from __future__ import annotations

import os
import resource

from triagebot.workers import GPU_SHARE


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
