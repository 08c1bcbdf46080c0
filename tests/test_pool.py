"""The worker pool: `jobs = "auto"` (cores, cgroup quotas, the GPU's memory) and children forked
ahead of need."""

from __future__ import annotations

import os
import signal
import time

import pytest

from triagebot import workers as workers_module
from triagebot.config import DEFAULT_FLAGS, jobs_value, parse_config
from triagebot.corpus import load_corpus
from triagebot.errors import ConfigError
from triagebot.results import BASELINE, Status
from triagebot.sweep import SweepPlan, run_sweep
from triagebot.sweep import pool as pool_module
from triagebot.sweep.parent import parent_pid
from triagebot.sweep.pool import Pool
from triagebot.sweep.tasks import RunKey, Task, run_task
from triagebot.workers import available_cpus, cgroup_cpu_limit, workers


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_cgroup_v2_quota_is_the_tightest_of_the_cgroup_and_its_ancestors(tmp_path):
    cgroups = tmp_path / "cgroup"
    cgroups.write_text("0::/runner/job\n")
    root = tmp_path / "fs"
    _write(root / "runner" / "job" / "cpu.max", "max 100000\n")
    assert cgroup_cpu_limit(root, cgroups) is None
    _write(root / "runner" / "cpu.max", "300000 100000\n")
    assert cgroup_cpu_limit(root, cgroups) == 3.0
    _write(root / "runner" / "job" / "cpu.max", "150000 100000\n")
    assert cgroup_cpu_limit(root, cgroups) == 1.5


def test_cgroup_v1_quota_under_either_mount_name_and_no_quota(tmp_path):
    cgroups = tmp_path / "cgroup"
    cgroups.write_text("4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n")
    root = tmp_path / "fs"
    _write(root / "cpu,cpuacct" / "docker" / "abc" / "cpu.cfs_quota_us", "-1\n")
    _write(root / "cpu,cpuacct" / "docker" / "abc" / "cpu.cfs_period_us", "100000\n")
    assert cgroup_cpu_limit(root, cgroups) is None
    _write(root / "cpu" / "cpu.cfs_quota_us", "200000\n")  # a container sees its own at the mount root
    _write(root / "cpu" / "cpu.cfs_period_us", "100000\n")
    assert cgroup_cpu_limit(root, cgroups) == 2.0
    assert cgroup_cpu_limit(root, tmp_path / "missing") is None


def test_auto_jobs_is_the_cores_and_on_cuda_what_the_gpu_memory_holds(monkeypatch):
    assert workers("auto", "cpu", cpus=16) == 16
    assert workers("auto", "cuda", cpus=16, gpu_memory=80 * 2**30, share_gb=8.0) == 9  # 0.95 * 80 / 8
    assert workers("auto", "cuda", cpus=4, gpu_memory=80 * 2**30, share_gb=8.0) == 4  # the cores bound it
    assert workers("auto", "cuda", cpus=16, gpu_memory=4 * 2**30, share_gb=8.0) == 1
    assert workers("auto", "cuda", cpus=16, gpu_memory=None, share_gb=8.0) == 16
    # a number is itself, whatever the device or a cap on "auto" (reproduction scripts: 4)
    assert workers(6, "cuda", cpus=2, gpu_memory=4 * 2**30, share_gb=8.0, most=4) == 6
    assert workers("auto", cpus=16, most=4) == 4 and workers("auto", cpus=2, most=4) == 2
    monkeypatch.setattr(workers_module, "cgroup_cpu_limit", lambda: 1.2)
    assert available_cpus() == min(2, len(os.sched_getaffinity(0)))  # a fractional quota rounds up
    monkeypatch.setattr(workers_module, "cgroup_cpu_limit", lambda: None)
    assert available_cpus() == len(os.sched_getaffinity(0))
    pool = Pool(jobs="auto", memory_limit_gb=8.0)
    assert pool.jobs == available_cpus() and pool.threads == 1
    pool.use_device("cuda", gpu_memory=16 * 2**30)  # one 8 GiB share fits in 0.95 of 16 GiB
    assert pool.jobs == 1 and pool.threads == available_cpus() and pool.prestart == 1
    pool.close()


def test_jobs_is_a_number_of_workers_or_auto():
    assert jobs_value("auto") == "auto" and jobs_value(" 3 ") == 3
    assert parse_config("", options={"--jobs": jobs_value("3")}).sweep.jobs == 3
    for bad in ("0", "-1", "many", ""):  # checked once, by `[sweep] jobs`'s rule, naming the option
        with pytest.raises(
            ConfigError, match=r'^--jobs: expected a number of workers \(1 or more\) or "auto"$'
        ):
            parse_config("", options={"--jobs": jobs_value(bad)})
    assert parse_config('[sweep]\njobs = "auto"\n').sweep.jobs == "auto"
    with pytest.raises(ConfigError, match=r"'sweep\.jobs'.*auto"):
        parse_config('[sweep]\njobs = "all"\n')


@pytest.mark.torch
def test_a_sweep_with_auto_jobs_uses_the_cores_it_has(tmp_path):
    result = run_sweep(
        SweepPlan(
            [s for s in load_corpus("sentinels") if s.model == "Plain"],
            DEFAULT_FLAGS,
            tmp_path / "auto.jsonl",
            device="cpu",
            jobs="auto",
            timeout=60,
        )
    )
    assert result.jobs == available_cpus()
    assert [r.outcome.status for r in result.records] == [Status.ok, Status.skipped, Status.skipped]


# --- children forked ahead of need ---------------------------------------------------------


def _tasks(model: str, count: int) -> list[Task]:
    spec = next(s for s in load_corpus("sentinels") if s.model == model)
    return [run_task(RunKey(spec.model, BASELINE), spec, {}) for _ in range(count)]


def _children_of(parent: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == parent:
                        found.add(int(entry))
            except OSError:
                continue
    return found


@pytest.mark.torch
def test_children_forked_ahead_each_run_one_task_and_none_is_left_behind(monkeypatch):
    handed = []
    hand_over = Pool._hand_over

    def spy(pool, task):
        job = hand_over(pool, task)
        if job is not None:
            handed.append(job.process.pid)
        return job

    monkeypatch.setattr(Pool, "_hand_over", spy)
    with Pool(device="cpu", jobs=1, timeout=60, prestart=1) as pool:
        results = list(pool.run(_tasks("ItemBreak", 6)))
        parent = parent_pid()
        assert _children_of(parent) == set()  # the child forked for no task was ended
    assert [r.outcome.graphs for r in results] == [2] * 6
    # one worker: every task but the first goes to a child forked while the one before ran
    assert len(handed) == 5 and len(set(handed)) == len(handed)  # one task per child
    starts = [r.message["start"] for r in results]
    assert sum(s["ahead"] for s in starts) == len(handed)
    forks = [{k: v for k, v in r.message["fork"].items() if k != "warm_compiled"} for r in results]
    assert forks == [{"parent_threads": 1, "cuda_initialized": False}] * 6  # the parent as it forked


@pytest.mark.torch
def test_a_child_forked_ahead_that_died_is_replaced(monkeypatch):
    with Pool(device="cpu", jobs=1, timeout=60, prestart=1) as pool:
        pool._fill_standby()
        victim = pool._standby[0].process.pid
        os.kill(victim, signal.SIGKILL)
        time.sleep(0.2)
        results = list(pool.run(_tasks("Plain", 2)))
    assert [r.outcome.status for r in results] == [Status.ok, Status.ok]


@pytest.mark.torch
def test_forking_ahead_gives_the_records_of_forking_on_demand(tmp_path, monkeypatch):
    specs = [s for s in load_corpus("sentinels") if s.model in ("ItemBreak", "NonzeroGuardCrash", "Segfault")]

    def essences(records):
        return sorted(
            (r.model, r.config, r.attempt, r.outcome.status.value, r.outcome.graphs, r.outcome.signature)
            for r in records
        )

    runs = {}
    for prestart in (0, 1):
        monkeypatch.setattr(pool_module, "PRESTART", {"cpu": prestart, "cuda": 1})
        runs[prestart] = run_sweep(
            SweepPlan(
                specs,
                DEFAULT_FLAGS,
                tmp_path / f"{prestart}.jsonl",
                device="cpu",
                jobs=2,
                timeout=60,
                confirm=1,
            )
        ).records
    assert essences(runs[0]) == essences(runs[1])
    statuses = {r.outcome.status for r in runs[1]}
    assert {Status.ok, Status.crash, Status.signal} <= statuses
    assert any(r.config == BASELINE and r.outcome.graphs == 2 for r in runs[1])
