# The runner image for GPU sweeps: a CUDA base, Python 3.11, one torch nightly (and the torchvision
# built for it), transformers with its optional packages, and triagebot. Workflows use it as the job
# container with `--gpus all`. Building it runs `triagebot corpus check`, which shows what it covers.
#
#   docker build \
#     --build-arg TORCH_CHANNEL=nightly --build-arg TORCH_VARIANT=cu128 \
#     --build-arg TORCH_VERSION=2.12.0.dev20260408 \
#     --build-arg RUNNER_UID="$(id -u)" \
#     -t triagebot-runner:cu128 .
#
# The torch wheels carry their own CUDA libraries; the base only has to match the driver's
# major version, so the variant is chosen by TORCH_VARIANT rather than by the base tag. Nightly
# CUDA variants rotate (cu126, cu128, cu129, ...): see https://download.pytorch.org/whl/nightly/.
# No secret is passed in at build time; tokens reach the container at run time through env.
FROM nvidia/cuda:12.8.1-base-ubuntu22.04

# "nightly" or "test" (release candidates); a PyTorch index under download.pytorch.org/whl/.
ARG TORCH_CHANNEL=nightly
# cpu, cu126, cu128, ...: the subfolder of that index.
ARG TORCH_VARIANT=cu128
# Empty: the newest nightly on the index. A version such as 2.12.0.dev20260408 pins one night.
ARG TORCH_VERSION=
# The transformers requirements/runtime.lock pins (tests/test_lock.py keeps them equal): moving it
# is one deliberate change of both (docs/configuration.md, "Moving transformers").
ARG TRANSFORMERS_VERSION=5.24.0
# The diffusers corpus's library and the Pillow it needs, as requirements/runtime.lock pins them.
ARG DIFFUSERS_VERSION=0.42.1
# The timm corpus's library (with a torchvision built for this torch), which some transformers
# models need too, Pillow, and natten where a wheel for this torch and Python exists.
ARG TIMM_VERSION=1.0.31
ARG PILLOW_VERSION=13.0.0
ARG NATTEN_VERSION=0.21.7
# Workers of the corpus check the build runs (see the last RUN as root).
ARG CHECK_JOBS=4
# The uid of the self-hosted runner's user, so that files written into the mounted workspace
# stay removable by the runner.
ARG RUNNER_UID=1000

ENV DEBIAN_FRONTEND=noninteractive \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    HF_HUB_DISABLE_TELEMETRY=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH

# Ubuntu's own python3.11; apt versions are not pinned because the security pocket replaces
# them within weeks, which would break every rebuild. The base image is pinned by tag instead.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3.11 python3.11-venv git ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && python3.11 -m venv "$VIRTUAL_ENV"

# torch first, from the PyTorch index only, so that nothing later can swap it for a PyPI build:
# every later install is constrained to the torch it installed (/opt/keep-torch.txt).
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
RUN pip install --pre "torch${TORCH_VERSION:+==$TORCH_VERSION}" \
        --index-url "https://download.pytorch.org/whl/${TORCH_CHANNEL}/${TORCH_VARIANT}" \
    && pip freeze | grep -E '^torch==' > /opt/keep-torch.txt \
    && pip install --constraint /opt/keep-torch.txt "transformers==${TRANSFORMERS_VERSION}" "pillow==${PILLOW_VERSION}" \
        "diffusers==${DIFFUSERS_VERSION}" \
    && python -c "import torch; print('torch', torch.__version__, torch.version.git_version)"

# The torchvision nightly built for this torch (the constraint makes the resolver pick it; it has
# no version of its own to pin), then timm on top of it. A night without a matching torchvision
# build leaves both out rather than fail the image: the corpus check below then says the timm
# suite is not checked, and why (the rest of the image, and of each night, runs without it). natten only as a prebuilt wheel: none means DiNAT stays uncovered.
# hadolint ignore=DL3013
RUN if pip install --pre torchvision --constraint /opt/keep-torch.txt \
            --index-url "https://download.pytorch.org/whl/${TORCH_CHANNEL}/${TORCH_VARIANT}"; then \
        pip install --constraint /opt/keep-torch.txt "timm==${TIMM_VERSION}" \
        && python -c "import torchvision, timm; print('torchvision', torchvision.__version__, 'timm', timm.__version__)"; \
    else \
        echo "no torchvision built for this torch: timm stays out of the image"; \
    fi \
    && { pip install --constraint /opt/keep-torch.txt --only-binary=:all: "natten==${NATTEN_VERSION}" \
         || echo "natten ${NATTEN_VERSION}: no wheel for this torch and Python"; }

# triagebot last (the layer that changes most). The constraint pins the torch just installed,
# so resolving triagebot's `torch>=2.6` can never replace the nightly. Installed in place
# (editable) so that templates/ beside the package is found as in a checkout.
WORKDIR /opt/triagebot
COPY pyproject.toml README.md ./
COPY triagebot ./triagebot
COPY templates ./templates
RUN pip install --constraint /opt/keep-torch.txt --editable . \
    && triagebot --help > /dev/null

# What this image covers: every model of the corpus built and run eagerly on the CPU, each in an
# isolated worker (a few minutes). The table is in the build log and kept at /opt/triagebot/coverage.txt.
RUN triagebot corpus check --jobs "${CHECK_JOBS}" | tee /opt/triagebot/coverage.txt

RUN useradd --create-home --uid "${RUNNER_UID}" --shell /bin/bash triagebot
USER ${RUNNER_UID}
WORKDIR /home/triagebot
CMD ["triagebot", "--help"]
