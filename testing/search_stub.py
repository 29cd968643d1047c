"""A local stand-in for the Azure AI Search REST endpoint, for the real azure-search-documents SDK.

It serves one index on 127.0.0.1 (plain http; the SDK sends `api-key` over it): the index
definition (`GET /indexes('NAME')`), a search that understands the one filter the push
path sends (`search.in(field, 'a,b', ',')`), and document indexing with the service's
limits (1,000 documents and 16 MB per request, 413/400 past them) and its answers: 200
when every document succeeded, 207 with per-document status codes when some did not.
Faults are scripted: whole requests answered 503, and documents refused by key. A
ranked search is scripted too: `ranking` is the answer (best first, with scores) to any
search, and `searches` keeps every search request's body for the test to check.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote, urlsplit

from testing.http_stub import LocalHTTPStub

MAX_DOCUMENTS = 1000
MAX_BYTES = 16 * 1024 * 1024
_SEARCH_IN = re.compile(r"search\.in\((\w+), '([^']*)', ','\)")
_PATH = re.compile(
    r"/indexes(?:\('([^']+)'\)|/([^/]+))(?:/docs/(search\.index|search\.post\.search))?$"
)


@dataclass(frozen=True, slots=True)
class Exchange:
    method: str
    path: str
    status: int
    documents: int = 0
    """Documents in an indexing request."""


class SearchStub(LocalHTTPStub):
    """The server; use it as a context manager."""

    def __init__(self, index: dict[str, Any], *, api_key: str) -> None:
        super().__init__()
        self.index = index
        self.api_key = api_key
        self.key_field = next(f["name"] for f in index["fields"] if f.get("key"))
        self.documents: dict[str, dict[str, Any]] = {}
        self.unavailable = 0
        """Indexing requests still to be answered 503 as a whole."""
        self.refusals: dict[str, deque[int]] = {}
        """Key -> status codes to answer for that document, one per attempt."""
        self.ranking: list[dict[str, Any]] | None = None
        """The documents (each with `@search.score`) every search answers, best first,
        cut to `top` and `select`; None: the filtered search over the indexed documents."""
        self.searches: list[dict[str, Any]] = []
        """The body of each search request, as the SDK sent it."""
        self.log: list[Exchange] = []
        self.lock = threading.Lock()

    def refuse(self, key: str, *statuses: int) -> None:
        """Answer the next attempts to index `key` with these per-document statuses."""
        with self.lock:
            self.refusals[key] = deque(statuses)

    @property
    def endpoint(self) -> str:
        return self.url

    def indexing_requests(self) -> list[Exchange]:
        with self.lock:
            return [e for e in self.log if e.path.endswith("search.index")]

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _handler_for(self)

    # -- answering ---------------------------------------------------------------------

    def answer(self, method: str, path: str, body: bytes) -> tuple[int, dict[str, Any] | None]:
        match = _PATH.match(unquote(urlsplit(path).path))
        if match is None or (match.group(1) or match.group(2)) != self.index["name"]:
            return 404, {"error": {"code": "", "message": f"no such resource: {path}"}}
        operation = match.group(3)
        if method == "GET" and operation is None:
            return 200, self.index
        if method == "POST" and operation == "search.post.search":
            try:
                return 200, self._search(json.loads(body))
            except _Refused as refused:
                return refused.status, {"error": {"code": "", "message": refused.message}}
        if method == "POST" and operation == "search.index":
            return self._index(body)
        return 405, {"error": {"code": "", "message": f"{method} {path} is not served"}}

    def _search(self, query: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.searches.append(query)
            ranking = None if self.ranking is None else list(self.ranking)
        if ranking is not None:
            return self._ranked(query, ranking)
        found = list(self.documents.values())
        text = query.get("filter") or ""
        if text:
            match = _SEARCH_IN.fullmatch(text)
            if match is None:
                raise ValueError(f"the stub understands only search.in filters, not {text!r}")
            values = set(match.group(2).split(","))
            found = [d for d in found if d.get(match.group(1)) in values]
        select = [name for name in (query.get("select") or "").split(",") if name]
        top = int(query.get("top") or 50)
        rows = [
            {"@search.score": 1.0, **({k: d.get(k) for k in select} if select else d)}
            for d in found[:top]
        ]
        return {"value": rows}

    def _ranked(self, query: dict[str, Any], ranking: list[dict[str, Any]]) -> dict[str, Any]:
        """The scripted ranking as the service answers it: `top` rows, `select`ed fields
        (a field the index lacks is the service's 400), the score kept."""
        select = [name for name in (query.get("select") or "").split(",") if name]
        known = {f["name"] for f in self.index["fields"]}
        unknown = [name for name in select if name not in known]
        if unknown:
            message = f"Could not find a property named '{unknown[0]}' on type 'search.document'."
            raise _Refused(400, message)
        top = int(query.get("top") or 50)
        rows = [
            {
                "@search.score": row.get("@search.score", 1.0),
                # The semantic ranker's score, when the scripted row has one.
                **{k: v for k, v in row.items() if k == "@search.rerankerScore"},
                **{k: v for k, v in row.items() if k[0] != "@" and (not select or k in select)},
            }
            for row in ranking[:top]
        ]
        return {"value": rows}

    def _index(self, body: bytes) -> tuple[int, dict[str, Any] | None]:
        with self.lock:
            if self.unavailable:
                self.unavailable -= 1
                return 503, {"error": {"code": "", "message": "Service Unavailable"}}
        if len(body) > MAX_BYTES:
            return 413, {"error": {"code": "", "message": "The request is too large"}}
        actions = json.loads(body)["value"]
        if len(actions) > MAX_DOCUMENTS:
            return 400, {"error": {"code": "", "message": "more than 1000 documents"}}
        results = []
        for action in actions:
            key = str(action[self.key_field])
            with self.lock:
                pending = self.refusals.get(key)
                status = pending.popleft() if pending else None
            if status is not None:
                results.append(
                    {"key": key, "status": False, "errorMessage": "refused", "statusCode": status}
                )
                continue
            kind = action.get("@search.action", "upload")
            with self.lock:
                if kind == "delete":
                    self.documents.pop(key, None)
                else:
                    self.documents[key] = {k: v for k, v in action.items() if k[0] != "@"}
            results.append({"key": key, "status": True, "errorMessage": None, "statusCode": 200})
        failed = any(not r["status"] for r in results)
        return (207 if failed else 200), {"value": results}


class _Refused(Exception):
    """A request the service would answer with an error status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _handler_for(stub: SearchStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            answer: dict[str, Any] | None
            if self.headers.get("api-key") != stub.api_key:
                status, answer = 403, {"error": {"code": "", "message": "wrong api-key"}}
            else:
                status, answer = stub.answer(method, self.path, body)
            documents = 0
            if self.path.split("?")[0].endswith("search.index") and body:
                documents = len(json.loads(body).get("value", []))
            with stub.lock:
                stub.log.append(Exchange(method, self.path.split("?")[0], status, documents))
            payload = json.dumps(answer).encode() if answer is not None else b""
            self.send_response(status)
            self.send_header("content-type", "application/json; odata.metadata=none")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

    return Handler
