"""One local HTTP server for every stub: 127.0.0.1, a free port, a daemon thread.

A stub subclasses `LocalHTTPStub`, says how it answers (`handler()`), and is used as a
context manager (or `start()` / `stop()`); its URL is known only while it runs.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from types import TracebackType

HOST = "127.0.0.1"
POLL_SECONDS = 0.05
"""How often the serving loop looks for `stop()`: stopping takes at most this long."""
JOIN_SECONDS = 5.0
"""How long `stop()` waits for the serving thread."""


class LocalHTTPStub:
    """A local HTTP server on a free port of 127.0.0.1, serving on a daemon thread."""

    def __init__(self) -> None:
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """The request handler class the server uses; each stub says how it answers."""
        raise NotImplementedError

    def stopping(self) -> None:
        """Called first by `stop()`: e.g. to wake answers that are still waiting."""

    def start(self) -> Self:
        """Listen on a free port (port 0: the system picks one) and serve in the background."""
        self._server = ThreadingHTTPServer((HOST, 0), self.handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the port; safe to call when not running. `port` and
        `url` still name it afterwards, for assertions on what was sent there."""
        self.stopping()
        if self._thread is None or self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(JOIN_SECONDS)
        self._thread = None

    @property
    def port(self) -> int:
        """The port it listens on (or listened on, once stopped)."""
        if self._server is None:
            raise RuntimeError("the stub is not running; use it in a with block")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`, no trailing slash."""
        return f"http://{HOST}:{self.port}"

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()
