"""Tests never reach the network: no HuggingFace hub, no GitHub."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.pop("GITHUB_TOKEN", None)


def pytest_addoption(parser):
    parser.addoption(
        "--screenshots",
        metavar="DIR",
        default=None,
        help="Folder for the screenshots the dashboard site's browser test takes (default: pytest's tmp).",
    )


def pytest_terminal_summary(terminalreporter, config):
    folder = getattr(config, "triagebot_screenshots", None)
    if folder is not None and any(folder.glob("*.png")):
        terminalreporter.write_line(f"dashboard screenshots: {folder}")
