"""Security: no fetching, no external entities, nothing secret in logs or answers, size limits.

- URLs in documents are text: the skill fetches none of them (a canary server on 127.0.0.1
  counts connections, and a socket guard refuses any connection off loopback).
- HTML parsing resolves no external entity, DTD or XInclude (a canary file's content
  never shows up), and does not expand internal entities (no "billion laughs").
- At the default log level (INFO) neither document text nor the API key is logged, even
  while the embedding service fails in every way it can.
- Bodies over MAX_REQUEST_BYTES get 413, with or without a Content-Length.
- Error answers carry a message, never a stack trace or a secret.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import socket
import threading
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from skills.skill.app import SERVER_ERROR_MESSAGE, build_app
from skills.skill.settings import Settings, load_settings
from testing.openai_stub import OpenAIStub, Reply
from tests.conftest import ExplodingEmbedder, function_app_with, skill_body
from tests.hardening_report import FIGURES

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from tests.conftest import FunctionCaller, LiveServers

pytestmark = [
    pytest.mark.integration,
    # bs4 warns that a page starting with <?xml is parsed as HTML; that is the point here.
    pytest.mark.filterwarnings("ignore::bs4.XMLParsedAsHTMLWarning"),
]

SECRET = "sk-SECRET-d0c5-4f1e-9a7b-LOGGED-NOWHERE"
"""A key that must never appear in a log line or an answer."""
MARKER = "Zanzibar-pelican-7c1f"
"""Distinctive document text that must never appear in a log line."""
TIMEOUT = httpx.Timeout(60.0)


class Canary:
    """A TCP server on 127.0.0.1 that only counts the connections it gets."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.1)
        self.port = self.server.getsockname()[1]
        self.connections = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        self.server.close()


@pytest.fixture
def canary() -> Iterator[Canary]:
    server = Canary()
    yield server
    server.close()


@pytest.fixture
def no_outside_connections(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Refuse (and record) every connection attempt to an address off loopback."""
    attempts: list[object] = []
    connect = socket.socket.connect
    connect_ex = socket.socket.connect_ex

    def outside(address: object) -> bool:
        if isinstance(address, tuple) and address:
            try:
                return not ipaddress.ip_address(str(address[0])).is_loopback
            except ValueError:  # a host name: resolving it is already too much
                return True
        return False

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if outside(address):
            attempts.append(address)
            raise ConnectionRefusedError(f"test guard: no connection to {address!r}")
        connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        if outside(address):
            attempts.append(address)
            return 111  # ECONNREFUSED
        return connect_ex(self, address)

    def no_lookups(*arguments: object, **keywords: object) -> list[Any]:
        host = arguments[0] if arguments else keywords.get("host")
        if host in ("127.0.0.1", "localhost", "::1", None):
            return real_getaddrinfo(*arguments, **keywords)  # type: ignore[arg-type]
        attempts.append(host)
        raise socket.gaierror(f"test guard: no lookup of {host!r}")

    real_getaddrinfo = socket.getaddrinfo
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", no_lookups)
    return attempts


def hostile_documents(url: str, secret_file: Path) -> dict[str, dict[str, object]]:
    """Record data whose documents point at `url` and `secret_file` in every way they can."""
    file_url = secret_file.as_uri()
    html = f"""<?xml version="1.0"?><?xml-stylesheet href="{url}/xsl"?>
<!DOCTYPE html SYSTEM "{url}/dtd" [
  <!ENTITY file SYSTEM "{file_url}">
  <!ENTITY remote SYSTEM "{url}/entity">
  <!ENTITY % param SYSTEM "{url}/param"> %param;
  <!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
  <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
]>
<html xmlns:xi="http://www.w3.org/2001/XInclude"><head><base href="{url}/">
<link rel="stylesheet" href="{url}/css"><link rel="import" href="{url}/import">
<script src="{url}/js"></script><meta http-equiv="refresh" content="0;url={url}/refresh">
<style>@import url({url}/imported.css); body {{ background: url({url}/bg.png) }}</style>
</head><body><h1>Title &file; &remote; &d;</h1><p>{MARKER} body text.</p>
<img src="{url}/img.png" srcset="{url}/2x.png 2x"><iframe src="{url}/frame"></iframe>
<object data="{url}/object"></object><embed src="{url}/embed"><video src="{url}/v"></video>
<xi:include href="{file_url}" parse="text"/><svg><image href="{url}/svg.png"/></svg>
<a href="{url}/link">a link</a></body></html>"""
    markdown = (
        f"# Links\n\n![image]({url}/md.png) <{url}/autolink> [link]({url}/l)\n\n"
        f'<img src="{url}/raw.png"> <iframe src="{url}/raw-frame"></iframe>\n\n'
        f"[ref]: {url}/reference\n\n{MARKER} text. ![ref image][ref]\n"
    )
    return {
        "html": {"text": html, "format": "html"},
        "html-auto": {"text": html, "contentType": "text/html"},
        "markdown": {"text": markdown, "format": "markdown", "url": f"{url}/doc"},
        "outside": {
            "text": markdown.replace(url, "http://example.com"),
            "url": "http://example.com/",
        },
    }


def test_urls_in_documents_are_never_fetched(
    live_servers: LiveServers,
    canary: Canary,
    no_outside_connections: list[object],
    tmp_path: Path,
) -> None:
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text("CANARY-FILE-CONTENT", encoding="utf-8")
    documents = hostile_documents(canary.url, secret_file)
    base = live_servers.start(Settings())
    values: list[dict[str, object]] = [
        {"recordId": name, "data": data} for name, data in documents.items()
    ]
    response = httpx.post(f"{base}/api/chunk", content=skill_body(values), timeout=TIMEOUT)
    assert response.status_code == 200
    answered = response.json()["values"]
    assert all(value["errors"] == [] for value in answered)
    assert all(value["data"]["chunks"] for value in answered)
    assert canary.connections == 0
    assert no_outside_connections == []
    FIGURES.add("inputs tried", len(values))
    FIGURES.add("records answered", len(values))


def test_html_resolves_no_external_entity_and_expands_no_entity(tmp_path: Path) -> None:
    from chunking import chunk_document

    secret_file = tmp_path / "secret.txt"
    secret_file.write_text("CANARY-FILE-CONTENT", encoding="utf-8")
    html = hostile_documents("http://127.0.0.1:9", secret_file)["html"]["text"]
    assert isinstance(html, str)
    document = chunk_document(html, format="html")
    rendered = "".join(chunk.text for chunk in document.chunks)
    assert "CANARY-FILE-CONTENT" not in rendered
    assert "a" * 100 not in rendered  # &d; would be 10,000 a's
    assert MARKER in rendered
    assert len(document.source) < len(html)


# --- logs -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(dimensions=8, api_key=SECRET) as server:
        yield server


def test_logs_at_info_hold_no_document_text_and_no_key(
    stub: OpenAIStub,
    call_function: FunctionCaller,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every kind of request and embedding fault, logged at INFO: no text, no key."""
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", stub.azure_endpoint)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("AZURE_OPENAI_EMBEDDING_DEPLOYMENT", "emb")
    monkeypatch.setenv("EMBEDDING_DIMENSIONS", "8")
    monkeypatch.setenv("EMBEDDING_MAX_RETRIES", "2")
    monkeypatch.setenv("SKILL_DEADLINE_SECONDS", "4")
    settings = load_settings(os.environ)
    assert settings.embedding.azure_api_key == SECRET
    app = function_app_with(settings)
    good: list[dict[str, object]] = [
        {"recordId": f"r{n}", "data": {"text": f"# {MARKER} {n}\n\n{MARKER} says hello. " * 3}}
        for n in range(3)
    ]
    bad: list[dict[str, object]] = [
        {"recordId": "bad-type", "data": {"text": 42, "title": MARKER}},
        {"recordId": "bad-limit", "data": {"text": MARKER, "maximumPageLength": MARKER}},
    ]
    faults = [
        Reply(),
        Reply(status=429, retry_after_ms=5),
        Reply(status=500, message=f"upstream failed on {MARKER}"),
        Reply(status=401),
        Reply(body=b"null"),
        Reply(body=b"{not json"),
        Reply(disconnect=True),
        Reply(dimensions=3),
    ]
    caplog.set_level(logging.INFO)
    answers: list[bytes] = []
    for fault in faults:
        stub.reset()
        stub.script(fault)
        response = call_function(app, "POST", "/api/chunk", skill_body(good + bad))
        answers.append(response.get_body())
    for body in (b"{", b"[]", b'{"values": [{"recordId": "x"}, {"recordId": "x"}]}'):
        answers.append(call_function(app, "POST", "/api/chunk", body).get_body())
    answers.append(call_function(app, "GET", "/api/health").get_body())

    logged = caplog.text + "".join(str(record.args) for record in caplog.records)
    assert any(r.getMessage().startswith("embedding ") for r in caplog.records)
    assert MARKER not in logged
    assert SECRET not in logged
    for body in answers:
        text = body.decode("utf-8")
        assert SECRET not in text
        assert "Traceback" not in text
        assert 'File "' not in text
    FIGURES.add("faults injected", len(faults) + 1)
    FIGURES.add("records answered", len(faults) * len(good + bad) + len(good))


def test_logs_at_every_level_hold_none_of_the_embedding_services_text(
    stub: OpenAIStub,
    call_function: FunctionCaller,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression (issue 28.10): the log quoted the service's error text, which can echo
    the input ("... your input 'secret clause' ..."). Our summary is logged instead: the
    status, its code and how long the service's message was."""
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", stub.azure_endpoint)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("AZURE_OPENAI_EMBEDDING_DEPLOYMENT", "emb")
    monkeypatch.setenv("EMBEDDING_DIMENSIONS", "8")
    monkeypatch.setenv("EMBEDDING_MAX_RETRIES", "0")
    app = function_app_with(load_settings(os.environ))
    records: list[dict[str, object]] = [{"recordId": "1", "data": {"text": "Hello there."}}]
    faults = [
        Reply(status=400, message=f"This input is not allowed: {MARKER}"),
        Reply(status=500, message=f"upstream failed on {MARKER}"),
        Reply(body=b'{"data": [{"embedding": "' + MARKER.encode() + b'", "index": 0}]}'),
    ]
    caplog.set_level(logging.DEBUG)
    for fault in faults:
        stub.reset()
        stub.script(fault)
        call_function(app, "POST", "/api/chunk", skill_body(records))
    # The skill's own loggers: at DEBUG, openai's and the adapter's log what they carry.
    ours = [record for record in caplog.records if record.name.startswith("skills")]
    logged = "\n".join(record.getMessage() for record in ours)
    assert "embedding request answered HTTP 400" in logged
    assert MARKER not in logged


def test_a_crash_outside_any_record_answers_without_trace_or_secret(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The exception's own message carries a secret: the caller still sees none of it."""
    app = build_app(Settings(), embedder=ExplodingEmbedder(f"boom with {SECRET}"))
    transport = httpx.ASGITransport(app=app)  # raises what the app lets out: nothing
    body = skill_body([{"recordId": "1", "data": {"text": "x"}}])

    async def post() -> httpx.Response:
        async with httpx.AsyncClient(transport=transport, base_url="http://skill") as client:
            return await client.post("/api/chunk", content=body)

    with caplog.at_level(logging.ERROR):
        response = asyncio.run(post())
    assert response.status_code == 500
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error": {"status": 500, "message": SERVER_ERROR_MESSAGE}}
    assert SECRET not in response.text
    assert "RuntimeError" not in response.text
    assert "RuntimeError" in caplog.text  # the trace is in the logs, for the operator


# --- request size -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_server(live_servers: LiveServers) -> str:
    return live_servers.start(Settings(max_request_bytes=10_000))


def body_of(size: int) -> bytes:
    """A valid request body of exactly `size` bytes."""
    empty = skill_body([{"recordId": "1", "data": {"text": ""}}])
    return skill_body([{"recordId": "1", "data": {"text": "x" * (size - len(empty))}}])


def test_a_body_at_the_limit_is_answered(small_server: str) -> None:
    body = body_of(10_000)
    assert len(body) == 10_000
    response = httpx.post(f"{small_server}/api/chunk", content=body, timeout=TIMEOUT)
    assert response.status_code == 200


def test_a_body_one_byte_over_the_limit_is_a_413(small_server: str) -> None:
    response = httpx.post(f"{small_server}/api/chunk", content=body_of(10_001), timeout=TIMEOUT)
    assert response.status_code == 413
    assert "MAX_REQUEST_BYTES" in response.json()["error"]["message"]


def test_a_streamed_body_without_content_length_is_cut_off_at_the_limit(small_server: str) -> None:
    sent = [0]

    def chunks() -> Iterator[bytes]:
        yield b'{"values": [{"recordId": "1", "data": {"text": "'
        for _ in range(1_000):  # 1 MB in all, 100 times the limit
            sent[0] += 1
            yield b"x" * 1_000
        yield b'"}}]}'

    response = httpx.post(f"{small_server}/api/chunk", content=chunks(), timeout=TIMEOUT)
    assert response.status_code == 413
    assert "the limit is 10000 bytes" in response.json()["error"]["message"]


def test_a_huge_declared_length_is_refused_before_reading(small_server: str) -> None:
    """A Content-Length of 10 GB gets 413 at once; the server does not wait for the body."""
    host, port = small_server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(
            b"POST /api/chunk HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 10000000000\r\n\r\n{"
        )
        answer = connection.recv(65_536)
    assert answer.startswith(b"HTTP/1.1 413")
