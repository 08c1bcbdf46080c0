"""A local imitation of the GitHub REST API for the tracker's tests (see server.py)."""

from fakegithub.server import ACTIONS_TOKEN, FakeGitHub, Fault

__all__ = ["ACTIONS_TOKEN", "FakeGitHub", "Fault", "serve"]


def serve(**options: object):
    """Start a fake GitHub for one test and stop it afterwards (a generator for pytest fixtures)."""
    fake = FakeGitHub(**options)  # type: ignore[arg-type]
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()
