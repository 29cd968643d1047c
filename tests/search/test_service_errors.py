"""`python -m skills push` and `python -m infra.deploy` against a wrong endpoint, key or
index: one line that says what to fix, a non-zero exit, no traceback (issue 30, item 3).
The real azure-search-documents client talks to the local Search stub over HTTP."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

from skills.__main__ import main as skills_main
from skills.search.definitions import build_definitions
from skills.search.indexer import replay_setup
from skills.skill.settings import settings_from_environment
from testing.search_stub import SearchStub
from tests.paths import ROOT

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration

SEARCH_KEY = "search-admin-key"
SAMPLE = ROOT / "samples" / "concepts-network.md"


@pytest.fixture
def search() -> Iterator[SearchStub]:
    index = build_definitions(
        replay_setup("http://127.0.0.1/api/chunk", embedding_dimensions=16,
                     embedding_model="text-embedding-3-small")
    ).index.as_dict()  # fmt: skip
    with SearchStub(index, api_key=SEARCH_KEY) as server:
        yield server


@pytest.fixture
def web_page_404() -> Iterator[str]:
    """A web server that is not a search service: every path is an HTML 404 page."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            page = b"<html><body><h1>404 Not Found</h1></body></html>"
            self.send_response(404)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        do_GET = do_POST = do_PUT = _serve

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def _push(monkeypatch: pytest.MonkeyPatch, endpoint: str, key: str, index: str) -> int:
    monkeypatch.setenv("AZURE_SEARCH_ENDPOINT", endpoint)
    monkeypatch.setenv("AZURE_SEARCH_KEY", key)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "none")
    settings_from_environment.cache_clear()
    try:
        return skills_main(["push", str(SAMPLE), "--index", index])
    finally:
        settings_from_environment.cache_clear()


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("\r")]
    assert "Traceback" not in err
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(
    ("where", "key", "index", "expected"),
    [
        ("closed port", SEARCH_KEY, "chunks", "cannot reach the search service"),
        ("closed port", SEARCH_KEY, "chunks", "check AZURE_SEARCH_ENDPOINT"),
        ("stub", "wrong", "chunks", "refused the credentials (HTTP 403)"),
        ("stub", "wrong", "chunks", "set AZURE_SEARCH_KEY"),
        ("stub", SEARCH_KEY, "chunkz", "has no index 'chunkz': check --index"),
        ("web page", SEARCH_KEY, "chunks", "answered 404 with no search service's error"),
    ],
)
def test_push_says_what_to_fix_in_one_line(
    where: str,
    key: str,
    index: str,
    expected: str,
    search: SearchStub,
    web_page_404: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    endpoint = {"closed port": closed_port(), "stub": search.endpoint, "web page": web_page_404}
    code = _push(monkeypatch, endpoint[where], key, index)
    line = one_error_line(capsys)
    assert code == 2
    assert expected in line
    assert "<html>" not in line
