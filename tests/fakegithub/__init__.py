"""A local imitation of the GitHub REST API for the tracker's tests (see server.py)."""

from fakegithub.server import ACTIONS_TOKEN, FakeGitHub, Fault

__all__ = ["ACTIONS_TOKEN", "FakeGitHub", "Fault", "serve"]


def serve(**options: object):
    """Start a fake GitHub for one test and stop it afterwards (a generator for pytest fixtures).
    Skips the test when the recorded exchanges its answers are built from are not there."""
    import pytest

    from fakegithub.recorded import API_FIXTURES, available

    if not available():
        pytest.skip(f"recorded GitHub exchanges not found at {API_FIXTURES}")
    fake = FakeGitHub(**options)  # type: ignore[arg-type]
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()
