"""The cache of bisection environments kept within its budget: least recently used first, each
removal said, never one in use (by this cache or by another process)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from triagebot.bisect.envs import READY, EnvironmentCache, Installer, Pin
from triagebot.bisect.pruning import GIB, lock_of, prune

INDEX = "http://127.0.0.1:9/simple/"


def environment(root: Path, name: str, size: int, used: float | None) -> Path:
    """A made environment of `size` bytes, last used at `used` (None: never, cut short)."""
    folder = root / name
    (folder / "lib").mkdir(parents=True)
    (folder / "lib" / "torch.so").write_bytes(b"\0" * size)
    if used is not None:
        (folder / READY).write_text("{}")
        lock_of(folder).touch()
        os.utime(lock_of(folder), (used, used))
    return folder


def test_the_least_recently_used_go_first_until_the_cache_fits_each_said(tmp_path):
    root = tmp_path / "envs"
    oldest = environment(root, "torch-0401", 4000, used=1_000)
    cut_short = environment(root, "torch-0402", 1000, used=None)
    newest = environment(root, "torch-0403", 4000, used=3_000)
    middle = environment(root, "torch-0404", 4000, used=2_000)
    said: list[str] = []
    assert prune(root, 9000, said.append) == [cut_short, oldest]
    assert newest.is_dir() and middle.is_dir() and not oldest.exists() and not cut_short.exists()
    assert len(said) == 2 and said[1].startswith("  torch-0401: removed from the environment cache")
    assert prune(root, 9000, said.append) == [] and len(said) == 2  # it fits now: nothing said


def test_an_environment_locked_by_another_process_is_never_pruned(tmp_path):
    root = tmp_path / "envs"
    busy = environment(root, "torch-0401", 4000, used=1_000)
    idle = environment(root, "torch-0402", 4000, used=2_000)
    with lock_of(busy).open("ab") as held:
        fcntl.flock(held, fcntl.LOCK_SH)  # as another job's cache holds what it probes with
        assert prune(root, 0, lambda line: None) == [idle]
    assert busy.is_dir() and not idle.exists()


def test_making_an_environment_prunes_the_others_but_never_those_this_cache_uses(tmp_path):
    installer = tmp_path / "installer"
    installer.write_text("#!/bin/sh\nexit 0\n")
    installer.chmod(0o755)
    said: list[str] = []
    envs = EnvironmentCache(
        tmp_path / "envs", installer=Installer("pip", str(installer)), budget_gib=1 / GIB, say=said.append
    )
    first, made = envs.python_for([Pin("torch", "2.12.0.dev20260401+cpu", INDEX)], 60)
    second, made_too = envs.python_for([Pin("torch", "2.12.0.dev20260402+cpu", INDEX)], 60)
    assert made and made_too and first.parent.is_dir() and second.parent.is_dir()  # both in use
    assert not any("removed from the environment cache" in line for line in said)

    envs.in_use.release_all()  # that run is over
    left = environment(envs.root, "torch-stale", 10, used=1.0)
    third, _ = envs.python_for([Pin("torch", "2.12.0.dev20260403+cpu", INDEX)], 60)
    assert third.parent.parent.is_dir() and not left.exists()
    assert not first.parent.parent.exists() and not second.parent.parent.exists()
    assert sum("removed from the environment cache" in line for line in said) == 3
    assert envs.python_for([Pin("torch", "2.12.0.dev20260403+cpu", INDEX)], 60) == (third, False)


def test_the_command_lines_default_budget_is_the_caches(monkeypatch, capsys):
    import inspect

    from climain import run_main

    from triagebot.bisect.pruning import DEFAULT_CACHE_GIB
    from triagebot.cli.upstream import bisect

    assert inspect.signature(bisect).parameters["cache_gib"].default == DEFAULT_CACHE_GIB
    ran = run_main(monkeypatch, capsys, "bisect", "2026-04-01", "2026-04-12", "--cache-gib", "0")
    assert ran.status == 2 and "--cache-gib 0.0 is not a positive number of GiB" in ran.err


def test_one_process_probing_many_builds_keeps_the_cache_within_its_budget(tmp_path):
    from triagebot.bisect.probe import Deadline, Prober
    from triagebot.results import Reproduction

    installer = tmp_path / "installer"
    installer.write_text("#!/bin/sh\nexit 0\n")  # makes an environment torch cannot be read from
    installer.chmod(0o755)
    said: list[str] = []
    envs = EnvironmentCache(
        tmp_path / "envs", installer=Installer("pip", str(installer)), budget_gib=1 / GIB, say=said.append
    )
    reproduction = Reproduction(flag="f", signature="E: x", model="M", script="pass", verified=True)
    prober = Prober(reproduction, envs, Deadline(600), runs=1, say=said.append)
    for day in ("01", "02", "03", "04"):  # one process, several bisections' probes one after another
        prober.probe(f"2.12.0.dev202604{day}", [Pin("torch", f"2.12.0.dev202604{day}+cpu", INDEX)])
    # Each probe's environment is free once the probe is over: the next one made prunes it.
    left = [folder.name for folder in envs.root.iterdir() if folder.is_dir()]
    assert len(left) == 1 and "20260404" in left[0], left
    assert sum("removed from the environment cache" in line for line in said) == 3
