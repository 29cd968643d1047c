"""A Cohere-style rerank server (`POST /v1/rerank`) on 127.0.0.1 for tests.

    with RerankStub(api_key="k") as stub:
        client = RerankClient(stub.endpoint, "k", "rerank-v3.5")
        stub.script(Fault(status=500), Fault(delay=2.0), ...)
        ...
        stub.requests  # every request (headers and body), in arrival order

A real HTTP server (http.server, one thread per connection) in a background thread.
Each request takes the next scripted fault; with none left it answers as Azure AI
Foundry's rerank deployments do: `{id, results: [{index, relevance_score}]}`, most
relevant first, where a document's relevance is the share of the query's words it
holds (so a test knows the order to expect).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from testing.http_stub import LocalHTTPStub

_WORD = re.compile(r"\w+")


def relevance(query: str, document: str) -> float:
    """The share of the query's distinct words the document holds (0..1)."""
    asked = set(_WORD.findall(query.lower()))
    held = set(_WORD.findall(document.lower()))
    return len(asked & held) / len(asked) if asked else 0.0


@dataclass(frozen=True, slots=True)
class Fault:
    """How the stub answers one request instead of correctly."""

    status: int = 200
    delay: float = 0.0
    """Seconds to wait before answering (a slow endpoint)."""
    body: bytes | None = None
    """These bytes as the answer (not JSON, a wrong shape)."""
    drop: int = 0
    """Leave this many results out of a correct answer (a wrong count)."""


@dataclass(frozen=True, slots=True)
class Request:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class RerankStub(LocalHTTPStub):
    """The server; configure it, then use it as a context manager."""

    def __init__(self, api_key: str | None = None) -> None:
        super().__init__()
        self.api_key = api_key
        self.faults: deque[Fault] = deque()
        self.requests: list[Request] = []
        self._lock = threading.Lock()

    def script(self, *faults: Fault) -> None:
        with self._lock:
            self.faults.extend(faults)

    @property
    def endpoint(self) -> str:
        """The deployment's target URL (the client adds /v1/rerank)."""
        return self.url

    def answer(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, bytes, float]:
        """(status, body, delay) for one request."""
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        with self._lock:
            self.requests.append(Request(path, headers, body))
            fault = self.faults.popleft() if self.faults else Fault()
        if path != "/v1/rerank":
            return 404, b'{"message": "not found"}', 0.0
        if self.api_key and headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, b'{"message": "invalid api key"}', 0.0
        if fault.status != 200 or fault.body is not None:
            return fault.status, fault.body or b'{"message": "internal error"}', fault.delay
        query, documents = body["query"], body["documents"]
        scored = sorted(
            ((relevance(query, doc), index) for index, doc in enumerate(documents)),
            key=lambda item: (-item[0], item[1]),
        )
        scored = scored[: body.get("top_n", len(documents))][: len(documents) - fault.drop]
        results = [{"index": index, "relevance_score": score} for score, index in scored]
        return 200, json.dumps({"id": "stub", "results": results}).encode(), fault.delay

    def handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", "0")))
                headers = {name.lower(): value for name, value in self.headers.items()}
                status, body, delay = stub.answer(self.path, headers, raw)
                if delay:
                    time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler
