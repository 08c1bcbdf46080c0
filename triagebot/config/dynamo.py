"""The names `torch._dynamo.config` has, read from the installed torch in a child process and
cached per build, and the check of every flag's `patch` against them."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

from triagebot.config.settings import DEFAULT, Config
from triagebot.errors import ConfigError, unknown

_DYNAMO_PROBE = "import json, torch._dynamo.config as c; print(json.dumps(sorted(c._config)))"


def _cache_folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "triagebot"


def dynamo_settings(python: str = sys.executable) -> frozenset[str] | None:
    """The setting names of the installed `torch._dynamo.config`, read by `python` in a child
    process (importing torch here would cost every command seconds, and the publish job must
    stay torch-free) and cached per build of that file; None when torch cannot be imported."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    source = Path(next(iter(spec.submodule_search_locations))) / "_dynamo" / "config.py"
    try:
        stat = source.stat()
    except OSError:
        return None
    build = hashlib.sha256(f"{source}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:20]
    cache = _cache_folder() / f"dynamo-config-{build}.json"
    try:
        return frozenset(json.loads(cache.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        pass
    try:
        probe = subprocess.run(
            [python, "-c", _DYNAMO_PROBE], capture_output=True, text=True, timeout=300, check=False
        )
        names = json.loads(probe.stdout) if probe.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        names = None
    if not isinstance(names, list) or not names:
        return None
    try:  # a cache that cannot be written only costs the next command the child again
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(names), encoding="utf-8")
    except OSError:
        pass
    return frozenset(names)


def check_patches(config: Config, names: frozenset[str] | None) -> None:
    """Refuse a flag whose `patch` sets a name that `torch._dynamo.config` lacks (`names`, from
    `dynamo_settings`; None: no torch to check against), with the nearest known name."""
    if names is None:
        return
    source = config._sources.get("flags", DEFAULT)
    for flag, settings in config.flags.items():
        for key in settings.patch:
            if key not in names:
                setting = unknown("torch._dynamo.config setting", key, names)
                raise ConfigError(f"{source}: 'flags.{flag}.patch': {setting}")
