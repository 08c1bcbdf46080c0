"""A local imitation of the GitHub REST API for the tracker's tests (see server.py)."""

from fakegithub.server import ACTIONS_TOKEN, FakeGitHub, Fault

__all__ = ["ACTIONS_TOKEN", "FakeGitHub", "Fault", "point_tracker_at", "serve"]


def serve(**options: object):
    """Start a fake GitHub for one test and stop it afterwards (a generator for pytest fixtures)."""
    fake = FakeGitHub(**options)  # type: ignore[arg-type]
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()


def point_tracker_at(fake: FakeGitHub, monkeypatch) -> None:
    """Make the tracker's one door to GitHub (`tracker.github.connect`, what publish and the
    commands call) reach `fake`, on its clock and without sleeping between retries."""
    import functools

    from triagebot.tracker import dispatch, github, publish_night

    monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
    fast = functools.partial(github.connect, sleep=lambda _: None, clock=lambda: fake.clock())
    # Also where it was imported by name, or those modules would keep the real one.
    for module in (github, publish_night, dispatch):
        monkeypatch.setattr(module, "connect", fast)
