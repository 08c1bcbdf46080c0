"""Tests never reach the network: no HuggingFace hub, no GitHub."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.pop("GITHUB_TOKEN", None)
