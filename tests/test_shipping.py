"""What ships besides the package: the runner image's Dockerfile, and the paths the docs name."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")


def instructions(name: str) -> list[str]:
    """The arguments of every `name` instruction, continuation lines joined."""
    joined = DOCKERFILE.replace("\\\n", " ")
    return re.findall(rf"^{name}\s+(.+)$", joined, flags=re.M)


def test_image_base_is_a_pinned_cuda_tag():
    (base,) = instructions("FROM")
    image, _, tag = base.partition(":")
    assert image == "nvidia/cuda"
    assert re.fullmatch(r"\d+\.\d+\.\d+-[\w.-]+", tag.split("@")[0]), f"{base} is not pinned to a version tag"


def test_torch_comes_from_the_pytorch_index_chosen_by_build_arguments():
    arguments = {line.split("=", 1)[0] for line in instructions("ARG")}
    assert {"TORCH_CHANNEL", "TORCH_VARIANT", "TORCH_VERSION"} <= arguments
    assert "download.pytorch.org/whl/${TORCH_CHANNEL}/${TORCH_VARIANT}" in DOCKERFILE
    assert "python3.11" in DOCKERFILE


def test_triagebot_is_installed_without_touching_the_nightly():
    # The installed torch is pinned as a constraint while triagebot's dependencies resolve.
    assert "pip install --constraint /opt/keep-torch.txt --editable ." in DOCKERFILE
    assert DOCKERFILE.index("pip install --pre") < DOCKERFILE.index("--constraint /opt/keep-torch.txt")
    installs = [line for line in instructions("RUN") if "pip install" in line]
    for line in installs[1:]:  # after torch's own: every pip install keeps it
        assert line.count("pip install") == line.count("--constraint /opt/keep-torch.txt"), line


def test_the_image_has_the_optional_packages_for_this_torch_and_shows_what_it_covers():
    runs = " ".join(instructions("RUN"))
    # torchvision from the same PyTorch index, built for the installed torch; timm on top of it.
    assert re.search(r"pip install --pre torchvision --constraint /opt/keep-torch.txt\s+--index-url", runs)
    assert runs.index("torchvision --constraint") < runs.index('"timm==${TIMM_VERSION}"')
    assert '"pillow==${PILLOW_VERSION}"' in runs
    assert '--only-binary=:all: "natten==${NATTEN_VERSION}"' in runs  # never built from source
    # The build ends by checking the corpus, after triagebot is installed and before the user drops root.
    check = DOCKERFILE.index("RUN triagebot corpus check")
    assert DOCKERFILE.index("--editable .") < check < DOCKERFILE.index("USER ")


def test_image_runs_as_a_non_root_user_and_holds_no_secret():
    users = instructions("USER")
    assert users and users[-1] not in ("root", "0")
    names = re.findall(r"(\w+)=", " ".join(instructions("ENV") + instructions("ARG")))
    assert "HF_HUB_OFFLINE" in names  # the continuation lines were read
    assert not [name for name in names if re.search(r"(?i)token|secret|passw|credential", name)]


def test_build_context_is_only_what_the_image_needs():
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    rules = [line for line in ignored if line and not line.startswith("#")]
    assert rules[0] == "*"  # everything out by default, so no stray .env or token file goes in
    allowed = {rule[1:].rstrip("/") for rule in rules if rule.startswith("!")}
    copied = {part.rstrip("/") for line in instructions("COPY") for part in line.split()[:-1]}
    assert copied <= allowed, f"COPY of files the build context leaves out: {copied - allowed}"


def test_every_file_the_docs_name_exists():
    """A path in README.md or docs/ (a file or folder of this repository, or a Python file by
    its name alone) names one that exists: a module that became a package changes the text."""
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    docs.remove(ROOT / "docs" / "example-issue.md")  # a rendered issue: its paths are a traceback's
    sources = {
        path.name for folder in ("triagebot", "tests", "bench", "docs") for path in (ROOT / folder).rglob("*")
    }
    missing = []
    for doc in docs:
        for span in re.findall(r"`([^`\s]+)`", doc.read_text(encoding="utf-8")):
            if re.fullmatch(r"(triagebot|tests|bench|docs|templates|\.github)/[\w./-]*", span):
                found = (ROOT / span).exists()
            elif re.fullmatch(r"[\w-]+\.py", span):
                found = span in sources
            else:
                continue
            if not found:
                missing.append(f"{doc.relative_to(ROOT)}: {span}")
    assert missing == []
