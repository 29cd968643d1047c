"""Shared helpers for the infra tests: the parsed Bicep, a recording HTTP server."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from pycep import BicepParser

from testing.http_stub import LocalHTTPStub

INFRA = Path(__file__).resolve().parent.parent / "infra"


@functools.cache
def parsed_bicep() -> dict[str, dict[str, Any]]:
    """infra/main.bicep and infra/resources.bicep as pycep trees, parsed once."""
    parser = BicepParser()
    trees: dict[str, dict[str, Any]] = {}
    for name in ("main", "resources"):
        tree: Any = parser.parse(file_path=INFRA / f"{name}.bicep")
        trees[name] = tree
    return trees


@dataclass(frozen=True, slots=True)
class Call:
    """One request the recording server received."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any


@dataclass
class RecordingService(LocalHTTPStub):
    """A plain-http stand-in for Azure AI Search and Resource Manager that records calls.

    PUT stores the body and echoes it; GET answers what was stored (or 404); POST to
    search.reset/search.run answers 204/202; POST .../listKeys answers `function_keys`.
    """

    function_key: str = "key-from-resource-manager"
    calls: list[Call] = field(default_factory=list)
    stored: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        LocalHTTPStub.__init__(self)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> Any:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                parts = urlsplit(self.path)
                service.calls.append(
                    Call(
                        self.command,
                        unquote(parts.path),
                        parts.query,
                        {k.lower(): v for k, v in self.headers.items()},
                        body,
                    )
                )
                return body

            def _answer(self, status: int, body: Any = None) -> None:
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; odata.metadata=minimal")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_PUT(self) -> None:
                body = self._record()
                path = unquote(urlsplit(self.path).path)
                created = path not in service.stored
                service.stored[path] = body
                self._answer(201 if created else 200, {**body, "@odata.etag": '"1"'})

            def do_GET(self) -> None:
                self._record()
                path = unquote(urlsplit(self.path).path)
                if path in service.stored:
                    self._answer(200, service.stored[path])
                else:
                    self._answer(404, {"error": {"code": "ResourceNotFound", "message": "no"}})

            def do_DELETE(self) -> None:
                self._record()
                service.stored.pop(unquote(urlsplit(self.path).path), None)
                self._answer(204)

            def do_POST(self) -> None:
                self._record()
                path = urlsplit(self.path).path
                if path.endswith("/listKeys"):
                    self._answer(200, {"functionKeys": {"default": service.function_key}})
                elif path.endswith("search.run"):
                    self._answer(202)
                else:
                    self._answer(204)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def sequence(self) -> list[tuple[str, str]]:
        """(method, path) of every call, in order."""
        return [(call.method, call.path) for call in self.calls]
