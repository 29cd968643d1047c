"""A small HTTP proxy in front of Azurite that injects storage faults for the cache's tests.

    with StorageFaults(azurite.endpoint_root) as proxy:
        proxy.fail(503)                 # every request answered 503 (Server Busy)
        proxy.fail(429, method="PUT")   # only writes throttled
        proxy.stall(5.0)                # every request waits 5 s before it is forwarded
        proxy.stall(60.0, method="PUT") # only writes wait
        proxy.passing()                 # forward everything again
        proxy.requests                  # (method, path) of every request, in arrival order

It forwards to the upstream's host and port as it is, so a connection string with the
proxy's blob endpoint reaches Azurite's account through it. Standard library only.
"""

from __future__ import annotations

import http.client
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from testing.http_stub import LocalHTTPStub

if TYPE_CHECKING:
    from collections.abc import Callable

STORAGE_ERRORS = {
    503: ("ServerBusy", "The server is currently unable to receive requests. Please retry."),
    429: ("ServerBusy", "Egress is over the account limit."),
    500: ("InternalError", "The server encountered an internal error. Please retry."),
    409: ("OperationNotAllowedInCurrentState", "The account is full."),
}
HOP_HEADERS = frozenset({"transfer-encoding", "content-length", "connection"})
"""Headers the proxy sets itself (the body is read whole and resent with its length)."""


class StorageFaults(LocalHTTPStub):
    """Forwards to `upstream` (http://host:port), or fails or stalls as told."""

    def __init__(self, upstream: str) -> None:
        super().__init__()
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.requests: list[tuple[str, str]] = []
        self._status: int | None = None
        self._method: str | None = None
        self._stall = 0.0
        self._lock = threading.Lock()
        self._path = ""
        self._wake = threading.Event()
        """Set to end every stall at once (passing(), stop())."""

    def fail(self, status: int, method: str | None = None) -> None:
        with self._lock:
            self._status, self._method, self._stall = status, method, 0.0

    def stall(self, seconds: float, method: str | None = None, path: str = "") -> None:
        """Hold matching requests `seconds` (or until `passing()`): those of `method`
        (any when None) whose path holds `path`."""
        with self._lock:
            self._wake.clear()
            self._status, self._method, self._stall = None, method, seconds
            self._path = path

    def passing(self) -> None:
        with self._lock:
            self._status, self._method, self._stall, self._path = None, None, 0.0, ""
            self._wake.set()

    def stopping(self) -> None:
        self._wake.set()

    def blob_url(self, account: str) -> str:
        return f"{self.url}/{account}"

    def handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with proxy._lock:
                    proxy.requests.append((self.command, self.path))
                    status, method, stall = proxy._status, proxy._method, proxy._stall
                    path = proxy._path
                if stall and method in (None, self.command) and path in self.path:
                    proxy._wake.wait(stall)
                if status is not None and method in (None, self.command):
                    self._fail(status)
                    return
                self._forward(body)

            def _fail(self, status: int) -> None:
                code, message = STORAGE_ERRORS.get(status, ("Failed", "Injected failure."))
                body = (
                    '<?xml version="1.0" encoding="utf-8"?><Error><Code>'
                    f"{code}</Code><Message>{message}</Message></Error>"
                ).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("x-ms-error-code", code)
                if status in (429, 503):
                    self.send_header("Retry-After", "1")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _forward(self, body: bytes) -> None:
                connection = http.client.HTTPConnection(*proxy.upstream, timeout=30)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                    headers["Host"] = f"{proxy.upstream[0]}:{proxy.upstream[1]}"
                    connection.request(self.command, self.path, body=body, headers=headers)
                    answer = connection.getresponse()
                    data = answer.read()
                    self.send_response(answer.status, answer.reason)
                    for name, value in answer.getheaders():
                        if name.lower() not in HOP_HEADERS:
                            self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(data)
                finally:
                    connection.close()

            do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = _any

        return Handler


def wait_until(condition: Callable[[], bool], seconds: float = 10.0) -> bool:
    """Poll `condition` until it holds or `seconds` pass; whether it held."""
    give_up = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > give_up:
            return False
        time.sleep(0.02)
    return True
