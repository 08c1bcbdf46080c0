# The runner image for GPU sweeps: a CUDA base, Python 3.11, one torch nightly, transformers and
# triagebot. Workflows use it as the job container with `--gpus all`.
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
ARG TRANSFORMERS_VERSION=5.23.0
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

# torch first, from the PyTorch index only, so that nothing later can swap it for a PyPI build.
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
RUN pip install --pre "torch${TORCH_VERSION:+==$TORCH_VERSION}" \
        --index-url "https://download.pytorch.org/whl/${TORCH_CHANNEL}/${TORCH_VARIANT}" \
    && pip install "transformers==${TRANSFORMERS_VERSION}" \
    && python -c "import torch; print('torch', torch.__version__, torch.version.git_version)"

# triagebot last (the layer that changes most). The constraint pins the torch just installed,
# so resolving triagebot's `torch>=2.6` can never replace the nightly. Installed in place
# (editable) so that templates/ beside the package is found as in a checkout.
WORKDIR /opt/triagebot
COPY pyproject.toml README.md ./
COPY triagebot ./triagebot
COPY templates ./templates
RUN pip freeze | grep -E '^torch==' > /tmp/keep-torch.txt \
    && pip install --constraint /tmp/keep-torch.txt --editable . \
    && rm /tmp/keep-torch.txt \
    && triagebot --help > /dev/null

RUN useradd --create-home --uid "${RUNNER_UID}" --shell /bin/bash triagebot
USER ${RUNNER_UID}
WORKDIR /home/triagebot
CMD ["triagebot", "--help"]
