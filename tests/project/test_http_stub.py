"""testing.http_stub: the one local HTTP server every stub runs on."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler

import httpx
import pytest

from testing.http_stub import HOST, LocalHTTPStub


class Hello(LocalHTTPStub):
    def handler(self) -> type[BaseHTTPRequestHandler]:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = b"hello"
                self.send_response(200)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


@pytest.mark.integration
def test_serves_on_a_free_local_port_while_in_the_with_block() -> None:
    with Hello() as stub:
        assert stub.url == f"http://{HOST}:{stub.port}"
        assert stub.port != 0
        assert httpx.get(stub.url, timeout=5).text == "hello"
        url = stub.url
    assert stub.url == url  # still named after the block, for assertions
    with pytest.raises(httpx.TransportError):
        httpx.get(url, timeout=1)


@pytest.mark.integration
def test_start_and_stop_without_a_with_block_and_stop_twice() -> None:
    stub = Hello().start()
    try:
        assert httpx.get(stub.url, timeout=5).status_code == 200
    finally:
        stub.stop()
    stub.stop()


def test_a_stub_must_say_how_it_answers() -> None:
    with pytest.raises(NotImplementedError):
        LocalHTTPStub().start()


def test_no_port_before_it_starts() -> None:
    with pytest.raises(RuntimeError, match="not running"):
        _ = Hello().port
