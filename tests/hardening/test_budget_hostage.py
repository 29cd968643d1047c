"""The memory budget cannot be held hostage (issue 35): a request holds memory by the bytes
it has, never by what its headers declare, its body has a transfer deadline of its own,
and /api/health says "degraded" while clients that stopped sending hold the memory.

Reproductions (issue 35, item 1, under uvicorn): a request that declared
`Content-Length: 67108864` (or came chunked, or gzip) and sent a byte a second reserved the
whole MEMORY_BUDGET_BYTES before its body arrived; a tiny request got a 503 after half the
deadline, the reservation lasted until the 408 at the skill's deadline, and health said
"ok" throughout. Each test talks to uvicorn on 127.0.0.1 through a raw socket, with small
budgets and deadlines set through the settings; none asserts a time.
"""

from __future__ import annotations

import gzip
import json
import logging
import socket
import time
from contextlib import closing
from typing import TYPE_CHECKING

import httpx
import pytest

from skills.skill.app import build_app
from skills.skill.settings import Settings

if TYPE_CHECKING:
    from collections.abc import Callable

    from tests.conftest import LiveServers

pytestmark = pytest.mark.integration

GIVE_UP_SECONDS = 60.0
"""A bound on each wait of the test for a state (a hang fails; it is not a latency)."""
TINY = json.dumps({"values": [{"recordId": "tiny", "data": {"text": "# T\n\nHi."}}]}).encode()
BIG_DECLARED = 64 * 1024 * 1024
"""What the slow client declares: the default MAX_REQUEST_BYTES, all of it."""


def _serve(live_servers: LiveServers, **settings: float) -> str:
    budget = int(settings.pop("budget", 5_000_000))
    chosen = Settings(
        memory_budget_bytes=budget,
        chunk_workers=0,
        deadline_seconds=settings.pop("deadline", 20.0),
        transfer_deadline_seconds=settings.pop("transfer", 2.0),
    )
    return live_servers.start_app(build_app(chosen))


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=GIVE_UP_SECONDS)


def _answer(connection: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """The status, headers and body of the one answer on `connection` (read to its end)."""
    data = b""
    while b"\r\n\r\n" not in data:
        part = connection.recv(65_536)
        assert part, data
        data += part
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        part = connection.recv(65_536)
        assert part, body
        body += part
    return int(lines[0].split()[1]), headers, body


def _health(client: httpx.Client, url: str) -> httpx.Response:
    return client.get(f"{url}/api/health")


def _wait_for(
    client: httpx.Client, url: str, check: Callable[[httpx.Response], bool]
) -> httpx.Response:
    give_up = time.monotonic() + GIVE_UP_SECONDS
    while not check(health := _health(client, url)):
        assert time.monotonic() < give_up, health.json().get("memory")
        time.sleep(0.02)
    return health


FRAMINGS = {
    "content-length": (f"Content-Length: {BIG_DECLARED}\r\n", b'{"values": ['),
    "chunked": ("Transfer-Encoding: chunked\r\n", b'c\r\n{"values": [\r\n'),
    "gzip": (
        f"Content-Encoding: gzip\r\nContent-Length: {BIG_DECLARED}\r\n",
        gzip.compress(b'{"values": [' + b" " * 100_000)[:40],
    ),
}


@pytest.mark.parametrize("framing", sorted(FRAMINGS))
def test_a_body_that_trickles_in_holds_only_what_arrived_and_gets_its_own_deadline(
    live_servers: LiveServers, framing: str
) -> None:
    """Regression (issue 35, item 1): the slow request reserved the whole budget from its
    declared length (the limit, for chunked or gzip), and a tiny request got a 503."""
    url = _serve(live_servers, deadline=20.0, transfer=2.0)
    header, first = FRAMINGS[framing]
    with closing(_connect(url)) as slow, httpx.Client(timeout=GIVE_UP_SECONDS) as client:
        slow.sendall(
            f"POST /api/chunk HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"{header}\r\n".encode()
            + first
        )
        memory = _wait_for(client, url, lambda h: h.json()["memory"]["requests"] == 1)
        assert memory.json()["memory"]["in_flight"] <= 2 * len(first) + 200_000
        tiny = client.post(f"{url}/api/chunk", content=TINY)
        assert tiny.status_code == 200, tiny.text
        assert tiny.json()["values"][0]["data"]["chunks"]
        status, headers, body = _answer(slow)
        assert status == 408
        assert headers["connection"] == "close"
        message = json.loads(body)["error"]["message"]
        assert "(2 s, app setting TRANSFER_DEADLINE_SECONDS)" in message
        after = _wait_for(client, url, lambda h: h.json()["memory"]["requests"] == 0)
    assert after.json()["memory"]["in_flight"] == 0
    assert after.json()["memory"]["turned_away"] == 0


def test_health_is_degraded_while_a_client_that_stopped_sending_holds_the_memory(
    live_servers: LiveServers,
) -> None:
    """Regression (issue 35, item 1): health said 200 "ok" while `in_flight` was the whole
    budget, held by a request whose client had stopped sending."""
    budget = 400_000
    url = _serve(live_servers, budget=budget, deadline=30.0, transfer=4.0)
    sent = b'{"values": [{"recordId": "r", "data": {"text": "' + b"x" * 60_000
    with closing(_connect(url)) as slow, httpx.Client(timeout=GIVE_UP_SECONDS) as client:
        slow.sendall(
            b"POST /api/chunk HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 150000\r\n\r\n" + sent
        )
        stalled = _wait_for(client, url, lambda h: h.json()["status"] != "ok")
        assert stalled.status_code == 503
        memory = stalled.json()["memory"]
        assert stalled.json()["status"] == "degraded"
        assert memory["held_by_stalled_requests"] is True
        assert memory["stalled"] >= budget // 4
        status, _, _ = _answer(slow)
        assert status == 408
        healthy = _wait_for(client, url, lambda h: h.json()["memory"]["requests"] == 0)
    assert (healthy.status_code, healthy.json()["status"]) == (200, "ok")
    assert healthy.json()["memory"]["stalled"] == 0


def _chunked(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n"


def test_a_request_framed_two_ways_is_a_400_and_holds_nothing(live_servers: LiveServers) -> None:
    """Regression (issue 35, item 3): `Content-Length: 1` with `Transfer-Encoding:
    chunked` and a 60 MB body: 8 such requests took the app to 754 MB with nothing
    reserved, and the records were refused with a misleading "lower the batchSize"."""
    url = _serve(live_servers)
    with closing(_connect(url)) as liar, httpx.Client(timeout=GIVE_UP_SECONDS) as client:
        liar.sendall(
            b"POST /api/chunk HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n" + _chunked(TINY)
        )
        status, headers, body = _answer(liar)
        assert status == 400
        assert headers["connection"] == "close"
        message = json.loads(body)["error"]["message"]
        assert message.startswith("The request has both a Content-Length and a Transfer-Encoding")
        assert "RFC 9112" in message
        memory = _wait_for(client, url, lambda h: h.json()["memory"]["requests"] == 0)
    assert memory.json()["memory"]["peak"] == 0  # not a byte of its body was held
    # Either framing alone is answered.
    with closing(_connect(url)) as honest:
        honest.sendall(
            b"POST /api/chunk HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n" + _chunked(TINY)
        )
        status, _, body = _answer(honest)
    assert status == 200
    assert json.loads(body)["values"][0]["data"]["chunks"]


SMALL_BUFFER = 4096
"""Socket buffers for the never-reading client and the server's connections: a 1 MB
answer cannot hide in the kernel's (loopback buffers grow to several MB otherwise)."""


def test_an_answer_nobody_reads_holds_its_memory_until_the_transfer_deadline_then_is_dropped(
    live_servers: LiveServers,
) -> None:
    """Regression (issue 35, item 2): the reservation ended when the answer was handed to
    the socket, not when it was read: 20 clients that never read ~55 MB answers took the
    app to 1,210 MB while `in_flight` was 0 and health "ok", freed only when they left."""
    text = "# Words\n\n" + "Plain words in a sentence of text. " * 6_000  # ~200,000
    data = {"text": text, "unit": "characters", "maximumPageLength": 300, "pageOverlapLength": 0}
    record = {"recordId": "r", "data": data}
    body = json.dumps({"values": [record]}).encode()
    settings = Settings(
        memory_budget_bytes=200_000_000,
        chunk_workers=0,
        deadline_seconds=30.0,
        transfer_deadline_seconds=2.0,
    )
    url = live_servers.start_app(build_app(settings), send_buffer=SMALL_BUFFER)
    with httpx.Client(timeout=GIVE_UP_SECONDS) as client:
        host, port = url.removeprefix("http://").split(":")
        reader = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SMALL_BUFFER)
        reader.settimeout(GIVE_UP_SECONDS)
        reader.connect((host, int(port)))
        with closing(reader):
            reader.sendall(
                b"POST /api/chunk HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            # Its answer waits on the client: held, and stalled.
            held = _wait_for(client, url, lambda h: h.json()["memory"]["stalled"] > 500_000)
            assert held.json()["memory"]["requests"] == 1
            # A tiny request is answered meanwhile.
            assert client.post(f"{url}/api/chunk", content=TINY).status_code == 200
            # By the transfer deadline it is dropped, and its memory given back.
            after = _wait_for(client, url, lambda h: h.json()["memory"]["requests"] == 0)
            assert after.json()["memory"]["in_flight"] == 0
            received = b""
            while part := reader.recv(65_536):
                received += part
        head, _, answer = received.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        declared = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        # The connection was closed before the answer was read in full.
        assert 0 < len(answer) < declared


def test_a_client_that_leaves_mid_body_frees_its_memory_without_an_unhandled_error(
    live_servers: LiveServers, caplog: pytest.LogCaptureFixture
) -> None:
    """Regression (found by the soak of issue 35): a client that closed its connection
    while its body was still arriving raised Starlette's ClientDisconnect out of the
    handler: "unhandled error on POST /api/chunk" with a traceback in the log, and a 500
    written to a connection nobody reads."""
    url = _serve(live_servers, deadline=20.0, transfer=10.0)
    with httpx.Client(timeout=GIVE_UP_SECONDS) as client:
        with caplog.at_level(logging.INFO, logger="skills"):
            leaver = _connect(url)
            leaver.sendall(
                b"POST /api/chunk HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 500000\r\n\r\n" + b'{"values": [' + b" " * 100_000
            )
            _wait_for(client, url, lambda h: h.json()["memory"]["requests"] == 1)
            leaver.close()
            after = _wait_for(client, url, lambda h: h.json()["memory"]["requests"] == 0)
        assert after.json()["memory"]["in_flight"] == 0
        assert client.post(f"{url}/api/chunk", content=TINY).status_code == 200
    assert "unhandled error" not in caplog.text
    assert "Traceback" not in caplog.text
    left = [r.getMessage() for r in caplog.records if "closed its connection" in r.getMessage()]
    assert left, caplog.text
    assert "100012 of 500000 bytes" in left[0]
