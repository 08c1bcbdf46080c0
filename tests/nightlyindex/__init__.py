"""A package index on 127.0.0.1 for tests, and tiny wheels to serve from it.

`IndexServer` serves pages and files by path: PyTorch-style projects (static PEP 503 HTML in
the format pytorch/test-infra's `manage.py` writes, whatever the client asks for) and
PyPI-style ones (PEP 691 JSON when asked for, HTML otherwise), recorded pages as they are, and
faults to inject (answers of a given status, answers held back past a client's timeout).
`build_wheel` writes a real installable wheel from a few files.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import threading
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from triagebot.results import CorpusSelection, Environment, Snapshot

JSON_TYPE = "application/vnd.pypi.simple.v1+json"


@dataclass
class Page:
    body: bytes
    content_type: str
    json_body: bytes | None = None  # served instead when the client accepts PEP 691 JSON


@dataclass
class Fault:
    status: int = 503
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to hold the answer back


class IndexServer:
    """Pages and files by path; `faults` are used up one per request, first come first."""

    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.faults: list[Fault] = []
        self.requests: list[tuple[str, str]] = []  # (path, Accept)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def serve(self, path: str, body: bytes | str, content_type: str = "text/html") -> None:
        data = body.encode() if isinstance(body, str) else body
        self.pages[unquote(path)] = Page(data, content_type)

    def torch_style(self, prefix: str, project: str, wheels: list[Path]) -> None:
        """A PyTorch-index project: the wheels under `prefix`, each wheel's METADATA beside it
        (PEP 658) when it has one, and a static HTML page listing them."""
        metadata = {}
        for wheel in wheels:
            self.serve(f"{prefix}/{wheel.name}", wheel.read_bytes(), "binary/octet-stream")
            found = wheel_metadata(wheel)
            if found is not None:
                self.serve(f"{prefix}/{wheel.name}.metadata", found, "binary/octet-stream")
                metadata[wheel.name] = hashlib.sha256(found).hexdigest()
        self.serve(f"{prefix}/{project}/", torch_page(prefix, project, metadata, [w.name for w in wheels]))

    def pypi_style(self, prefix: str, project: str, wheels: list[Path]) -> None:
        """A PyPI project: the same listing as PEP 691 JSON (when asked for) or PEP 503 HTML."""
        for wheel in wheels:
            self.serve(f"/files/{wheel.name}", wheel.read_bytes(), "binary/octet-stream")
        links = "".join(f'<a href="/files/{quote(w.name)}">{w.name}</a><br/>\n' for w in wheels)
        files = [{"filename": w.name, "url": f"/files/{quote(w.name)}", "hashes": {}} for w in wheels]
        document = {"meta": {"api-version": "1.1"}, "name": project, "files": files}
        self.pages[f"{prefix}/{project}/"] = Page(
            f"<!DOCTYPE html><html><body>\n{links}</body></html>".encode(),
            "application/vnd.pypi.simple.v1+html",
            json.dumps(document).encode(),
        )

    def start(self) -> IndexServer:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, path: str, accept: str) -> tuple[int, dict[str, str], bytes, float]:
        with self._lock:
            self.requests.append((path, accept))
            fault = self.faults.pop(0) if self.faults else None
        if fault is not None:
            return fault.status, fault.headers, b"fault", fault.delay
        page = self.pages.get(unquote(path))
        if page is None:
            return 404, {}, b"<Error><Code>NoSuchKey</Code></Error>", 0.0
        if page.json_body is not None and JSON_TYPE in accept:
            return 200, {"Content-Type": JSON_TYPE}, page.json_body, 0.0
        return 200, {"Content-Type": page.content_type}, page.body, 0.0

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._reply(with_body=True)

            def do_HEAD(self) -> None:
                # As every real index answers it: uv asks for a wheel's headers first when the
                # index serves no separate METADATA file (PyPI-style projects here).
                self._reply(with_body=False)

            def _reply(self, *, with_body: bool) -> None:
                path = urlsplit(self.path).path
                status, headers, body, delay = server._answer(path, self.headers.get("Accept", ""))
                time.sleep(delay)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if with_body:
                    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                        self.wfile.write(body)  # a client that gave up waiting is gone

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


@contextmanager
def index_server() -> Iterator[IndexServer]:
    server = IndexServer().start()
    try:
        yield server
    finally:
        server.stop()


def torch_page(prefix: str, project: str, metadata: dict[str, str], names: list[str]) -> str:
    """A project page as download.pytorch.org serves it (pytorch/test-infra's manage.py):
    absolute links with `+` written `%2B`, the METADATA file's hash where there is one, no
    hash of the file itself (none on nightly files)."""
    lines = ["<!DOCTYPE html>", "<html>", "  <body>", f"    <h1>Links for {project}</h1>"]
    for name in sorted(names):
        key = f"{prefix.strip('/')}/{name.replace('+', '%2B')}"
        digest = metadata.get(name)
        attributes = (
            f' data-dist-info-metadata="sha256={digest}" data-core-metadata="sha256={digest}"'
            if digest
            else ""
        )
        lines.append(f'    <a href="/{key}"{attributes}>{name}</a><br/>')
    return "\n".join([*lines, "  </body>", "</html>", "<!--TIMESTAMP 1775998800-->"])


def wheel_metadata(wheel: Path) -> bytes | None:
    """The METADATA file of a wheel, or None for a file that is no wheel."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            return archive.read(name)
    except (zipfile.BadZipFile, StopIteration):
        return None


def build_wheel(
    folder: Path,
    name: str,
    version: str,
    files: dict[str, str],
    tag: str = "py3-none-any",
    requires: tuple[str, ...] = (),
) -> Path:
    """An installable wheel of `files` (path in the wheel -> text), with its metadata (and the
    requirements `requires`) and RECORD."""
    dist_info = f"{name}-{version}.dist-info"
    contents = dict(files)
    required = "".join(f"Requires-Dist: {requirement}\n" for requirement in requires)
    contents[f"{dist_info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{required}"
    contents[f"{dist_info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: {tag}\n"
    )
    record = []
    for path, text in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    contents[f"{dist_info}/RECORD"] = "\n".join([*record, f"{dist_info}/RECORD,,"]) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in contents.items():
            archive.writestr(path, text)
    return wheel


def snapshot_of(key: str, *, git: str = "", transformers: str = "", reproductions=()) -> Snapshot:
    """A snapshot with no results: a stored build, as far as asking and bisecting care."""
    environment = Environment(torch_version=key, torch_git_version=git, transformers_version=transformers)
    return Snapshot(
        key=key,
        environment=environment,
        flags={},
        corpus=CorpusSelection(name="sentinels"),
        results=[],
        reproductions=list(reproductions),
    )
