"""An OpenAI-compatible embeddings server on 127.0.0.1 for tests and benchmarks.

    with OpenAIStub(dimensions=1536) as stub:
        client = OpenAI(base_url=stub.base_url, api_key="k")          # POST /v1/embeddings
        azure = AzureOpenAI(azure_endpoint=stub.azure_endpoint, ...)  # /openai/deployments/...
        stub.script(Reply(status=429, retry_after_ms=5), Reply(status=500))
        ...
        stub.requests  # every request body received, in arrival order

A real HTTP server (http.server, one thread per connection) in a background thread; it
stops when the `with` block ends (and, being a daemon, at interpreter exit at the latest).
Vectors are derived from each input's text (`vector_for`), so a test can tell which
vector belongs to which input. Needs nothing but the standard library and, for the
tokens-per-minute quota, the project's own tiktoken encoding.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import parse_qs, urlsplit

from chunking.measure.encodings import load_encoding
from testing.http_stub import LocalHTTPStub

if TYPE_CHECKING:
    from collections.abc import Callable

MANTISSA_SCALE = float(1 << 23)
"""Vector elements are k / 2**23 - 1: exact in float32, so base64 and floats agree."""
QUOTA_WINDOW_SECONDS = 60.0
"""Azure meters tokens and requests per minute."""


def vector_for(text: str, dimensions: int) -> list[float]:
    """The stub's deterministic vector for `text`: float32-exact values in [-1, 1)."""
    raw = hashlib.shake_256(text.encode("utf-8", "surrogatepass")).digest(4 * dimensions)
    return [(word >> 8) / MANTISSA_SCALE * 2.0 - 1.0 for (word,) in struct.iter_unpack("<I", raw)]


def approximate_tokens(text: str) -> int:
    """cl100k_base tokens of `text` (the project's offline encoding)."""

    return len(load_encoding("cl100k_base").encode_ordinary(text))


@dataclass(frozen=True, slots=True)
class Reply:
    """How the stub answers one request; the defaults answer it correctly."""

    status: int = 200
    """Non-200 answers carry an OpenAI-style error body."""
    retry_after_ms: int | None = None
    """Header `retry-after-ms`."""
    retry_after: str | None = None
    """Header `retry-after` (seconds or an HTTP date)."""
    delay: float = 0.0
    """Seconds to wait before answering (slow service, timeouts)."""
    drop: int = 0
    """Answer with this many vectors fewer than inputs (a wrong count)."""
    dimensions: int | None = None
    """Answer with vectors of this size whatever was asked (wrong dimensions)."""
    message: str | None = None
    """The error message for non-200 answers."""
    body: bytes | None = None
    """Send these bytes as the body, with `status`, instead of a real answer (malformed
    JSON, a truncated answer, a gateway's HTML error page)."""
    content_type: str = "application/json"
    """The answer's content type (with `body`)."""
    disconnect: bool = False
    """Reset the connection (TCP RST) instead of answering."""
    mangle: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None
    """Rewrite the `data` items of a 200 answer (reorder them, repeat an index, ...)."""


HEALTHY = Reply()
"""The reply that answers correctly."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What the stub sends back for one request."""

    status: int
    headers: dict[str, str]
    body: bytes
    content_type: str = "application/json"
    disconnect: bool = False
    """Reset the connection instead of sending anything."""


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request as the stub saw it, and the status it answered."""

    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: dict[str, Any]
    status: int
    at: float = field(default_factory=time.monotonic)


class OpenAIStub(LocalHTTPStub):
    """The server. Configure it, then use it as a context manager."""

    def __init__(
        self,
        dimensions: int = 1536,
        *,
        api_key: str | None = None,
        latency: float = 0.0,
        tokens_per_minute: int | None = None,
        requests_per_minute: int | None = None,
        window_seconds: float = QUOTA_WINDOW_SECONDS,
        count_tokens: Callable[[str], int] = approximate_tokens,
    ) -> None:
        """
        dimensions: vector size when a request does not ask for `dimensions`.
        api_key: when set, requests must carry it (`api-key` or `Authorization: Bearer`),
            else they get 401.
        latency: seconds added to every answer.
        tokens_per_minute / requests_per_minute: a quota like an Azure deployment's; a
            request that would pass it gets 429 with `retry-after` and `retry-after-ms`
            saying when enough of the window has passed.
        window_seconds: the quota window (60 s like Azure; shorter for quick tests).
        count_tokens: how the quota counts an input's tokens.
        """
        self.dimensions = dimensions
        self.api_key = api_key
        self.latency = latency
        self.tokens_per_minute = tokens_per_minute
        self.requests_per_minute = requests_per_minute
        self.window_seconds = window_seconds
        super().__init__()
        self.count_tokens = count_tokens
        self.default = Reply()
        """The reply when the script is empty; set it for a fault on every request."""
        self.faults = 0
        """Requests answered with a fault (any reply but a healthy one), since the last reset."""
        self._script: deque[Reply] = deque()
        self._log: list[Exchange] = []
        self._usage: deque[tuple[float, int]] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()

    # -- control -----------------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next requests, one each, in arrival order."""
        with self._lock:
            self._script.extend(replies)

    @property
    def exchanges(self) -> list[Exchange]:
        """Every request so far with its answer status (a copy)."""
        with self._lock:
            return list(self._log)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request body so far, in arrival order (a copy)."""
        with self._lock:
            return [exchange.body for exchange in self._log]

    @property
    def statuses(self) -> list[int]:
        """The status of each answer, parallel to `requests`."""
        with self._lock:
            return [exchange.status for exchange in self._log]

    def reset(self) -> None:
        """Forget the log, the script and the quota usage."""
        with self._lock:
            self._log.clear()
            self._script.clear()
            self._usage.clear()
            self.default = Reply()
            self.faults = 0

    @property
    def base_url(self) -> str:
        """For OpenAI(base_url=...)."""
        return f"{self.url}/v1"

    @property
    def azure_endpoint(self) -> str:
        """For AzureOpenAI(azure_endpoint=...)."""
        return self.url

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler_for(self)

    def start(self) -> Self:
        self._closing.clear()
        return super().start()

    def stopping(self) -> None:
        self._closing.set()  # wakes slow answers

    # -- answering ---------------------------------------------------------------------

    def _next_reply(self) -> Reply:
        with self._lock:
            return self._script.popleft() if self._script else self.default

    def _quota_wait(self, tokens: int) -> float | None:
        """Seconds until the quota admits this request, or None (admitted and counted)."""
        if self.tokens_per_minute is None and self.requests_per_minute is None:
            return None
        now = time.monotonic()
        with self._lock:
            while self._usage and self._usage[0][0] <= now - self.window_seconds:
                self._usage.popleft()
            used_tokens = sum(count for _, count in self._usage)
            waits: list[float] = []
            if self.tokens_per_minute is not None and used_tokens + tokens > self.tokens_per_minute:
                freed = used_tokens + tokens - self.tokens_per_minute
                total = 0
                for at, count in self._usage:
                    total += count
                    if total >= freed:
                        waits.append(at + self.window_seconds - now)
                        break
                else:
                    waits.append(self.window_seconds)  # too big for the quota at all
            if (
                self.requests_per_minute is not None
                and len(self._usage) + 1 > self.requests_per_minute
            ):
                waits.append(self._usage[0][0] + self.window_seconds - now)
            if waits:
                return max(*waits, 0.001)
            self._usage.append((now, tokens))
            return None

    def answer(self, path: str, headers: dict[str, str], raw: bytes) -> Answer:
        """The answer to one POST; also records the exchange."""
        url = urlsplit(path)
        query = parse_qs(url.query)
        try:
            body: dict[str, Any] = json.loads(raw or b"{}")
        except ValueError:
            body = {"unreadable": raw[:200].decode("utf-8", "replace")}
        status, extra, payload = self._decide(url.path, query, headers, body)
        with self._lock:
            self._log.append(Exchange(url.path, query, headers, body, status))
        if isinstance(payload, Reply):  # a fault scripted below the HTTP level
            return Answer(
                status,
                extra,
                payload.body or b"",
                content_type=payload.content_type,
                disconnect=payload.disconnect,
            )
        return Answer(status, extra, json.dumps(payload).encode("utf-8"))

    def _decide(
        self, path: str, query: dict[str, list[str]], headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, dict[str, str], dict[str, Any] | Reply]:
        azure = path.startswith("/openai/deployments/") and path.endswith("/embeddings")
        if not azure and path != "/v1/embeddings":
            return 404, {}, _error(f"no route {path}", "NotFound")
        if azure and "api-version" not in query:
            return 404, {}, _error("api-version is required", "MissingApiVersion")
        if self.api_key is not None:
            given = headers.get("api-key") or headers.get("authorization", "").removeprefix(
                "Bearer "
            )
            if given != self.api_key:
                return 401, {}, _error("Access denied due to invalid subscription key.", "401")
        reply = self._next_reply()
        if reply != HEALTHY:
            with self._lock:
                self.faults += 1
        if reply.delay or self.latency:
            self._closing.wait(reply.delay + self.latency)
        if reply.disconnect or reply.body is not None:
            return reply.status, _retry_headers(reply), reply
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not all(isinstance(text, str) for text in inputs):
            return 400, {}, _error("'input' must be a string or an array of strings", "invalid")
        if reply.status != 200:
            return (
                reply.status,
                _retry_headers(reply),
                _error(reply.message or f"stub fault {reply.status}", str(reply.status)),
            )
        tokens = [self.count_tokens(text) for text in inputs]
        wait = self._quota_wait(sum(tokens))
        if wait is not None:
            seconds = math.ceil(wait)
            return (
                429,
                {"retry-after": str(seconds), "retry-after-ms": str(math.ceil(wait * 1000))},
                _error(
                    "Requests to the Embeddings_Create Operation have exceeded the token rate "
                    f"limit of the stub. Please retry after {seconds} seconds.",
                    "429",
                ),
            )
        size = reply.dimensions or body.get("dimensions") or self.dimensions
        as_base64 = body.get("encoding_format", "float") == "base64"
        data = []
        for index, text in enumerate(inputs[: max(len(inputs) - reply.drop, 0)]):
            vector = vector_for(text, int(size))
            embedding: object = (
                base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
                if as_base64
                else vector
            )
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        if reply.mangle is not None:
            data = reply.mangle(data)
        return (
            200,
            {},
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "stub"),
                "usage": {"prompt_tokens": sum(tokens), "total_tokens": sum(tokens)},
            },
        )


def _error(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "stub_error", "code": code}}


def _retry_headers(reply: Reply) -> dict[str, str]:
    headers: dict[str, str] = {}
    if reply.retry_after_ms is not None:
        headers["retry-after-ms"] = str(reply.retry_after_ms)
    if reply.retry_after is not None:
        headers["retry-after"] = reply.retry_after
    return headers


def _handler_for(stub: OpenAIStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            headers = {name.lower(): value for name, value in self.headers.items()}
            answer = stub.answer(self.path, headers, raw)
            if answer.disconnect:
                # SO_LINGER 0: close() sends a TCP RST, as a crashed proxy would.
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.close_connection = True
                self.connection.close()
                return
            try:
                self.send_response(answer.status)
                self.send_header("content-type", answer.content_type)
                self.send_header("content-length", str(len(answer.body)))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(answer.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test); nothing to answer

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: tests read `stub.exchanges` instead."""

    return Handler


__all__ = ["Answer", "Exchange", "OpenAIStub", "Reply", "approximate_tokens", "vector_for"]
