"""The locks (requirements/*.lock): every dependency of pyproject.toml but torch, pinned with
hashes, and what `make`, CI and the action's jobs install. A lock that no longer matches
pyproject.toml (a dependency added, removed, or with a bound its pin no longer meets) fails
here: `make lock` writes it again."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "requirements" / "runtime.lock"
DEV = ROOT / "requirements" / "dev.lock"
# installed on their own: the release here, the nightly on a runner, each with its own torchvision
EXCLUDED = {"torch", "torchvision"}
# Where the locks are used: a runner's Python (3.11) on Linux.
RUNNER = {"python_version": "3.11", "python_full_version": "3.11.9", "sys_platform": "linux"}

_PIN = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;\\]+)\s*(?:;\s*(?P<marker>[^\\]+?))?\s*\\?$"
)


def pins(lock: Path) -> list[dict]:
    """Each pinned entry of `lock`: name, version, marker, its hashes and what it is there for."""
    entries: list[dict] = []
    for line in lock.read_text(encoding="utf-8").splitlines():
        pinned = _PIN.match(line)
        if pinned:
            marker = pinned["marker"]
            entries.append(
                {
                    "name": canonicalize_name(pinned["name"]),
                    "version": Version(pinned["version"]),
                    "marker": Marker(marker) if marker else None,
                    "hashes": [],
                    "via": [],
                }
            )
        elif entries and line.strip().startswith("--hash=sha256:"):
            entries[-1]["hashes"].append(line.strip())
        elif entries and line.strip().startswith("#"):
            entries[-1]["via"].append(line.strip("# ").removeprefix("via ").strip())
    return entries


def declared(*extras: str) -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    texts = list(project["dependencies"])
    for extra in extras:
        texts += project["optional-dependencies"][extra]
    return [Requirement(text) for text in texts if canonicalize_name(Requirement(text).name) not in EXCLUDED]


@pytest.mark.parametrize(("lock", "extras"), [(RUNTIME, ()), (DEV, ("dev",))], ids=["runtime", "dev"])
def test_the_lock_pins_exactly_what_pyproject_declares(lock: Path, extras: tuple[str, ...]):
    entries = pins(lock)
    assert entries, f"{lock} pins nothing"
    wanted = declared(*extras)
    for requirement in wanted:
        name = canonicalize_name(requirement.name)
        found = [entry for entry in entries if entry["name"] == name]
        assert found, f"{lock.name} lacks {requirement} (stale: run `make lock`)"
        for entry in found:
            assert requirement.specifier.contains(entry["version"], prereleases=True), (
                f"{lock.name} pins {name}=={entry['version']}, which {requirement} no longer allows "
                "(stale: run `make lock`)"
            )
    # Nothing is there for pyproject.toml that pyproject.toml no longer asks for.
    names = {canonicalize_name(requirement.name) for requirement in wanted}
    for entry in entries:
        if "triagebot (pyproject.toml)" in entry["via"]:
            assert entry["name"] in names, f"{lock.name} still pins {entry['name']} for pyproject.toml"
        assert entry["hashes"], f"{lock.name}: {entry['name']} has no hash"
        assert entry["name"] not in EXCLUDED, f"{lock.name} pins {entry['name']}"
    on_runner = [
        entry["name"] for entry in entries if entry["marker"] is None or entry["marker"].evaluate(RUNNER)
    ]
    assert len(on_runner) == len(set(on_runner)), "two pins of one package apply on a runner"


def test_the_dev_lock_pins_the_runtime_as_the_runtime_lock_does():
    runtime = {(entry["name"], str(entry["marker"])): entry["version"] for entry in pins(RUNTIME)}
    for entry in pins(DEV):
        key = (entry["name"], str(entry["marker"]))
        if key in runtime:
            assert entry["version"] == runtime[key], f"{entry['name']}: {entry['version']} != {runtime[key]}"


def test_transformers_is_pinned_where_a_fresh_machine_installs_it():
    for lock in (RUNTIME, DEV):
        versions = {entry["version"] for entry in pins(lock) if entry["name"] == "transformers"}
        assert len(versions) == 1, f"{lock.name}: transformers {versions}"
    # The runner image, where the GPU nights sweep, installs the same one, and the same library
    # of each other suite the lock pins (diffusers and the Pillow it brings, timm).
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    for name in ("transformers", "diffusers", "pillow", "timm"):
        (locked,) = {entry["version"] for entry in pins(RUNTIME) if entry["name"] == name}
        (image,) = re.findall(rf"^ARG {name.upper()}_VERSION=(\S+)$", dockerfile, flags=re.M)
        assert Version(image) == locked, f"the image installs {name} {image}, the lock pins {locked}"
        assert f'"{name}==${{{name.upper()}_VERSION}}"' in dockerfile, f"the image does not install {name}"


def test_make_and_the_token_holding_jobs_install_from_the_locks_with_hashes():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"pip install .*--require-hashes .*-r \$\(DEV_LOCK\)", makefile)
    assert "DEV_LOCK := requirements/dev.lock" in makefile
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    install = action["runs"]["steps"][0]["run"]
    assert "--require-hashes" in install and '--requirement "$source/requirements/runtime.lock"' in install
    # The only other install is torch, which the locks leave out on purpose.
    for line in install.splitlines():
        if "pip install" in line:
            assert "--require-hashes" in line or "$TRIAGEBOT_TORCH" in line, line
    # The jobs that hold a token run the action, so they install through it.
    for workflow, jobs in (("nightly.yml", ["publish"]), ("rerun-sweep.yml", ["parse", "answer"])):
        steps = yaml.safe_load((ROOT / ".github" / "workflows" / workflow).read_text())["jobs"]
        for job in jobs:
            runs = [step.get("run", "") for step in steps[job]["steps"]]
            assert not any("pip install" in run for run in runs), f"{workflow} {job} installs on its own"
            assert any(step.get("uses") == "./" for step in steps[job]["steps"]), f"{workflow} {job}"


def test_make_installs_torch_with_the_torchvision_built_for_it_never_a_local_cpu_wheel():
    """The locks leave both out: the Makefile installs them as one pair (timm needs torchvision),
    unless the venv already has a pair that imports together. A local CPU wheel of the release
    (`+cpu`, which sorts higher) would take torch's place and leave PyPI's torchvision unable to
    import beside it, so the spec excludes it."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    specs = dict(re.findall(r"^(TORCH_SPEC|TORCHVISION_SPEC) \?= (\S+)$", makefile, flags=re.M))
    torch, torchvision = Requirement(specs["TORCH_SPEC"]), Requirement(specs["TORCHVISION_SPEC"])
    (release,) = [Version(spec.version) for spec in torch.specifier if spec.operator == "=="]
    (vision,) = [Version(spec.version) for spec in torchvision.specifier if spec.operator == "=="]
    assert torch.specifier.contains(str(release)) and not torch.specifier.contains(f"{release}+cpu")
    # torchvision 0.N is built for torch 2.(N - 15): 0.28 for 2.13, 0.29 for 2.14.
    assert (vision.major, vision.minor) == (0, release.minor + 15), (
        f"torchvision {vision} for torch {release}"
    )
    assert '-c "import torch, torchvision" 2>/dev/null ||' in makefile
    assert '"$(TORCH_SPEC)" "$(TORCHVISION_SPEC)"' in makefile
