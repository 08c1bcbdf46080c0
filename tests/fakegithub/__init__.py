"""A local imitation of the GitHub REST API for the tracker's tests (see server.py)."""

from fakegithub.server import ACTIONS_TOKEN, FakeGitHub, Fault

__all__ = ["ACTIONS_TOKEN", "FakeGitHub", "Fault"]
