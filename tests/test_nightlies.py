"""The nightly index client: recorded pages in both formats served from a local index, the retry
policy alone over `httpx.MockTransport`, the check the workflow asks before building, and its
command line. Nothing here reaches the network."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import httpx
import pytest
from builders import DYNAMIC, SCALAR
from climain import run_main
from nightlyindex import Fault, build_wheel, index_server, snapshot_of

from triagebot.config import Config
from triagebot.errors import PackageIndexError
from triagebot.nightlies import PackageIndex, RetryPolicy, Target, check_newest, nightly_date, nightly_index
from triagebot.results import CorpusSelection
from triagebot.store import LocalStore, mark_night

DATA = Path(__file__).parent / "data" / "nightly"
TORCH_PAGE = (DATA / "cu128-torch.html").read_text(encoding="utf-8")
PYPI_PAGE = (DATA / "pypi-transformers.json").read_text(encoding="utf-8")
X86_311 = Target("3.11", ("manylinux_2_28_x86_64",))
NO_WAIT = RetryPolicy(attempts=3, backoff=0.0, timeout=2.0)


@pytest.fixture
def server():
    with index_server() as running:
        running.serve("/whl/nightly/cu128/torch/", TORCH_PAGE, "text/html")
        running.serve("/simple/transformers/", PYPI_PAGE, "application/vnd.pypi.simple.v1+json")
        yield running


def test_the_recorded_nightly_page_lists_one_build_per_night_for_the_target(server):
    with nightly_index("cu128", f"{server.url}/whl/nightly") as index:
        builds = index.builds("torch", X86_311)
    # Twelve days, two with no nightly at all, and one whose cp311 x86_64 wheel never came.
    assert [build.date for build in builds] == [date(2026, 4, day) for day in (1, 2, 3, 4, 7, 8, 9, 10, 12)]
    first = builds[0]
    assert first.version == "2.12.0.dev20260401+cu128"
    assert first.filename == "torch-2.12.0.dev20260401+cu128-cp311-cp311-manylinux_2_28_x86_64.whl"
    # The page links by absolute path with the local label's `+` written %2B.
    assert first.url == (
        f"{server.url}/whl/nightly/cu128/torch-2.12.0.dev20260401%2Bcu128-cp311-cp311-manylinux_2_28_x86_64.whl"
    )
    # PEP 691 JSON was asked for; the static index answered HTML, and HTML was read.
    assert "application/vnd.pypi.simple.v1+json" in server.requests[0][1]


def test_the_best_tag_is_chosen_and_free_threaded_wheels_are_not_taken_for_plain_python(server):
    with nightly_index("cu128", f"{server.url}/whl/nightly") as index:
        builds = index.builds("torch", Target("3.13", ("manylinux_2_28_aarch64",)))
        none_for_mac = index.builds("torch", Target("3.13", ("macosx_11_0_arm64",)))
    assert len(builds) == 10
    assert all(build.filename.endswith("-cp313-cp313-manylinux_2_28_aarch64.whl") for build in builds)
    assert none_for_mac == []


def test_builds_between_two_days_skip_the_missing_nights_and_the_newest_is_the_last(server):
    with nightly_index("cu128", f"{server.url}/whl/nightly") as index:
        week = index.builds("torch", X86_311, since=date(2026, 4, 4), until=date(2026, 4, 8))
        newest = index.newest("torch", X86_311)
    assert [build.version for build in week] == [
        "2.12.0.dev20260404+cu128",
        "2.12.0.dev20260407+cu128",
        "2.12.0.dev20260408+cu128",
    ]
    assert newest.version == "2.12.0.dev20260412+cu128"


def test_between_needs_both_ends_on_the_index(server):
    with nightly_index("cu128", f"{server.url}/whl/nightly") as index:
        inside = index.between("torch", "2.12.0.dev20260403+cu128", "2.12.0.dev20260408+cu128", X86_311)
        with pytest.raises(
            PackageIndexError, match=r"lists no torch 2\.12\.0\.dev20260405\+cu128 for Python 3\.11"
        ):
            index.between("torch", "2.12.0.dev20260401+cu128", "2.12.0.dev20260405+cu128", X86_311)
    assert [build.date.day for build in inside] == [3, 4, 7, 8]


def test_pypi_json_lists_releases_with_upload_days_leaving_out_sdists_and_yanked_files(server):
    with PackageIndex(f"{server.url}/simple") as pypi:
        releases = pypi.builds("transformers", X86_311)
    # 5.23.1 was yanked; every release also has an sdist, which is no build to install.
    assert [(r.version, r.date) for r in releases] == [
        ("5.22.0", date(2026, 2, 12)),
        ("5.23.0", date(2026, 3, 5)),
        ("5.24.0", date(2026, 3, 26)),
    ]
    assert releases[0].requires_python == ">=3.10.0"
    assert releases[0].url.startswith("https://files.pythonhosted.org/packages/")


def test_json_and_html_of_one_project_read_alike(tmp_path):
    wheels = [
        build_wheel(tmp_path, "transformers", v, {"transformers/__init__.py": ""}) for v in ("5.0.0", "5.1.0")
    ]
    with index_server() as running:
        running.pypi_style("/simple", "transformers", wheels)
        with PackageIndex(f"{running.url}/simple") as pypi:
            as_json = pypi.files("transformers")
        html_only = httpx.get(f"{running.url}/simple/transformers/", headers={"Accept": "text/html"})
    assert html_only.headers["content-type"].startswith("application/vnd.pypi.simple.v1+html")
    from triagebot.nightlies import parse_page

    as_html = parse_page(
        html_only.text, html_only.headers["content-type"], str(html_only.url), "transformers"
    )
    assert [w.version for w in as_json] == ["5.0.0", "5.1.0"]
    assert [(w.filename, w.url) for w in as_html] == [(w.filename, w.url) for w in as_json]


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        ("application/json", "{}", r"not an index page \(Content-Type application/json\)"),
        (
            "application/vnd.pypi.simple.v1+json",
            '{"meta": {"api-version": "2.0"}}',
            r"unsupported simple API version '2\.0'",
        ),
        ("application/vnd.pypi.simple.v1+json", "{nope", r"not JSON"),
    ],
)
def test_a_page_that_is_no_index_page_is_one_line(content_type, body, expected):
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Type": content_type}, text=body)

    transport = httpx.MockTransport(answer)
    with (
        PackageIndex("https://index.test/simple", transport=transport) as index,
        pytest.raises(PackageIndexError, match=expected) as raised,
    ):
        index.files("torch")
    assert "\n" not in str(raised.value)


def test_nightly_dates_come_from_the_dev_number_only():
    assert nightly_date("2.12.0.dev20260408+cu128") == date(2026, 4, 8)
    assert nightly_date("2.12.0") is None
    assert nightly_date("2.12.0.dev0") is None


def test_a_bad_variant_or_python_is_one_line():
    with pytest.raises(PackageIndexError, match=r"variant '\.\./cu128' is not a folder name"):
        nightly_index("../cu128")
    with pytest.raises(PackageIndexError, match=r"--python '311' is not a CPython version"):
        Target.of("311")


# --- the retry policy alone, over MockTransport ---------------------------------------------------


def scripted(*answers):
    """A transport answering each request with the next of `answers` (a status, a Response or
    an exception to raise), and the list of requests it saw."""
    seen: list[httpx.Request] = []
    queue = list(answers)

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        item = queue.pop(0)
        if isinstance(item, Exception):
            raise item
        if isinstance(item, int):
            return httpx.Response(item, headers={"Content-Type": "text/html"}, text="<html></html>")
        return item

    return httpx.MockTransport(answer), seen


def send(policy: RetryPolicy, transport: httpx.MockTransport, now: datetime | None = None):
    slept: list[float] = []
    with httpx.Client(transport=transport) as client:
        request = client.build_request("GET", "https://index.test/whl/nightly/cu128/torch/")
        response = policy.send(client, request, sleep=slept.append, now=lambda: now or datetime.now(UTC))
    return response, slept


def test_5xx_and_dropped_connections_are_retried_with_a_doubling_backoff():
    policy = RetryPolicy(attempts=4, backoff=1.0)
    transport, seen = scripted(503, httpx.ConnectError("connection reset"), 502, 200)
    response, slept = send(policy, transport)
    assert response.status_code == 200
    assert len(seen) == 4
    assert slept == [1.0, 2.0, 4.0]


def test_retry_after_is_honoured_in_seconds_and_as_a_date():
    now = datetime(2026, 4, 9, 12, 0, 0, tzinfo=UTC)
    later = httpx.Response(429, headers={"Retry-After": "Thu, 09 Apr 2026 12:00:07 GMT"})
    transport, _ = scripted(httpx.Response(503, headers={"Retry-After": "3"}), later, 200)
    _, slept = send(RetryPolicy(attempts=3), transport, now)
    assert slept == [3.0, 7.0]


def test_a_wait_longer_than_the_policy_accepts_is_one_line_and_no_sleep():
    transport, seen = scripted(httpx.Response(503, headers={"Retry-After": "3600"}))
    with pytest.raises(
        PackageIndexError, match=r"HTTP 503, and the index asks to wait 3600 s \(more than 120 s\)"
    ):
        send(RetryPolicy(), transport)
    assert len(seen) == 1


def test_a_404_is_not_retried_and_says_what_may_be_wrong():
    transport, seen = scripted(404)
    with pytest.raises(PackageIndexError, match=r"torch/: HTTP 404 \(no such page: is the project, variant"):
        send(RetryPolicy(), transport)
    assert len(seen) == 1


def test_timeouts_until_the_tries_are_spent_are_one_line():
    transport, seen = scripted(*[httpx.ReadTimeout("timed out")] * 3)
    with pytest.raises(PackageIndexError) as raised:
        send(RetryPolicy(attempts=3, backoff=0.5, timeout=7.0), transport)
    assert (
        str(raised.value) == "https://index.test/whl/nightly/cu128/torch/: no answer within 7 s after 3 tries"
    )
    assert len(seen) == 3


def test_a_slow_index_times_out_and_a_later_request_is_answered(server):
    server.faults = [Fault(200, delay=1.0), Fault(200, delay=1.0)]
    slow = RetryPolicy(attempts=2, backoff=0.0, timeout=0.2)
    with (
        nightly_index("cu128", f"{server.url}/whl/nightly", policy=slow) as index,
        pytest.raises(PackageIndexError, match=r"no answer within 0\.2 s after 2 tries"),
    ):
        index.files("torch")
    server.faults = [Fault(503), Fault(502)]
    with nightly_index("cu128", f"{server.url}/whl/nightly", policy=NO_WAIT) as index:
        assert len(index.builds("torch", X86_311)) == 9


def test_an_index_that_is_down_is_one_line():
    closed = "http://127.0.0.1:9"  # the discard port: nothing listens there
    with (
        PackageIndex(closed, policy=NO_WAIT) as index,
        pytest.raises(PackageIndexError, match=r"127\.0\.0\.1:9/torch/: cannot connect .* after 3 tries"),
    ):
        index.files("torch")


# --- asking before building ------------------------------------------------------------------------


def test_check_says_sweep_when_the_newest_is_not_stored_and_not_when_it_is(server):
    stored = {"2.12.0.dev20260412+cu128": "2.12.0.dev20260412+cu128"}
    with nightly_index("cu128", f"{server.url}/whl/nightly") as index:
        fresh = check_newest(index, X86_311, lambda version: None)
        known = check_newest(index, X86_311, stored.get)
        forced = check_newest(index, X86_311, stored.get, force=True)
        pinned = check_newest(index, X86_311, stored.get, version="2.12.0.dev20260408")
        with pytest.raises(PackageIndexError, match=r"lists no torch 2\.12\.0\.dev20260405 for Python 3\.11"):
            check_newest(index, X86_311, stored.get, version="2.12.0.dev20260405")
    assert fresh.outputs() == {"sweep": "true", "version": "2.12.0.dev20260412+cu128", "date": "2026-04-12"}
    assert known.outputs()["sweep"] == "false"
    assert known.reason == (
        "torch 2.12.0.dev20260412+cu128 (2026-04-12) is stored already (snapshot 2.12.0.dev20260412+cu128): "
        "nothing to sweep"
    )
    assert forced.sweep and forced.stored_as == "2.12.0.dev20260412+cu128"
    assert pinned.build.version == "2.12.0.dev20260408+cu128" and pinned.sweep


def test_nightly_check_on_the_command_line_writes_the_workflow_outputs(server, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    store, output = tmp_path / "store", tmp_path / "outputs"
    arguments = (
        "nightly", "--check", "--index", f"{server.url}/whl/nightly", "--variant", "cu128",
        "--python", "3.11", "--platform", "manylinux_2_28_x86_64",
        "--store", str(store), "--output", str(output),
    )  # fmt: skip
    first = run_main(monkeypatch, capsys, *arguments)
    assert first.status == 0, first.err
    assert output.read_text() == "sweep=true\nversion=2.12.0.dev20260412+cu128\ndate=2026-04-12\n"
    assert "is not in the store: it needs a sweep" in first.out

    # A trial of the build (the sentinels, not the configured corpus) is not its night.
    trial = snapshot_of("2.12.0.dev20260412+cu128")
    LocalStore(store).put(
        trial.model_copy(update={"flags": {flag: {flag: True} for flag in (SCALAR, DYNAMIC)}})
    )
    output.unlink()
    after_trial = run_main(monkeypatch, capsys, *arguments)
    assert after_trial.status == 0, after_trial.err
    assert output.read_text().startswith("sweep=true\n")

    # The configured night, stored without a configured flag: that flag is swept on it, so the
    # image is built.
    stored = trial.model_copy(update={"corpus": CorpusSelection(name=Config().sweep.corpus_name)})
    LocalStore(store).put(stored.model_copy(update={"flags": {SCALAR: {SCALAR: True}}}), Config())
    output.unlink()
    lacking = run_main(monkeypatch, capsys, *arguments)
    assert lacking.status == 0, lacking.err
    assert output.read_text().startswith("sweep=true\n")

    LocalStore(store).put(
        stored.model_copy(update={"flags": {flag: {flag: True} for flag in (SCALAR, DYNAMIC)}})
    )
    output.unlink()
    second = run_main(monkeypatch, capsys, *arguments)
    assert second.status == 0, second.err
    assert output.read_text().startswith("sweep=false\n")

    # Stored, and still owed to the tracker (its publishing failed): the workflow publishes it.
    Path("triagebot.toml").write_text('[tracker]\nrepo = "owner/tracker"\n')
    mark_night(LocalStore(store), "owner/tracker", stored.key, "pending")
    output.unlink()
    owing = run_main(monkeypatch, capsys, *arguments)
    assert owing.status == 0, owing.err
    written = dict(line.split("=", 1) for line in output.read_text().splitlines())
    assert (written["sweep"], written["publish"], written["owed"]) == ("false", "true", stored.key)
    assert f"stored but not published yet: {stored.key}" in owing.out

    # TRIAGEBOT_REPO names another tracker (the ask job hands it as --repo): owed to that one,
    # where it was published, not to the toml's.
    mark_night(LocalStore(store), "owner/elsewhere", stored.key, "published")
    output.unlink()
    elsewhere = run_main(monkeypatch, capsys, *arguments, "--repo", "owner/elsewhere")
    assert elsewhere.status == 0, elsewhere.err
    assert "publish=true" not in output.read_text() and "not published yet" not in elsewhere.out


def test_nightly_lists_the_builds_between_two_days(server, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ran = run_main(
        monkeypatch, capsys, "nightly", "--index", f"{server.url}/whl/nightly", "--python", "3.11",
        "--platform", "manylinux_2_28_x86_64", "--since", "2026-04-09", "--until", "2026-04-11",
    )  # fmt: skip
    assert ran.status == 0, ran.err
    assert [line.split()[0] for line in ran.out.splitlines()] == [
        "2.12.0.dev20260409+cu128",
        "2.12.0.dev20260410+cu128",
    ]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (("--index", "http://127.0.0.1:9/whl/nightly", "--check"), "cannot connect"),
        (("--since", "yesterday"), "--since 'yesterday' is not a day (YYYY-MM-DD)"),
        (("--variant", "cu 128"), "variant 'cu 128' is not a folder name"),
    ],
)
def test_nightly_mistakes_and_an_index_down_are_one_line(tmp_path, monkeypatch, capsys, arguments, expected):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("triagebot.nightlies.client.RetryPolicy", lambda: NO_WAIT)
    ran = run_main(monkeypatch, capsys, "nightly", *arguments)
    assert ran.status == 2
    assert expected in ran.err and len(ran.err.strip().splitlines()) == 1
