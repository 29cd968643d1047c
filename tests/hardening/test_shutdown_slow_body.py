"""SIGTERM and a client that sends its body slowly (issue 35 item 7), over the documented
uvicorn command in a child process and a raw socket.

uvicorn answers the requests in flight before it stops, and tells the app nothing until
every connection's task has ended (the lifespan shutdown comes after), so what bounds
the wait is the body's own deadline (TRANSFER_DEADLINE_SECONDS): the app then answers
408 and closes the connection, and the server exits while the client is still sending."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import time

import pytest

from tests.servers import uvicorn_subprocess
from tests.skill.test_skill_deadline import skill_env

pytestmark = pytest.mark.integration

DECLARED = 100_000
"""The body the client declares: at a byte per PACE it would take hours to send."""
PACE = 0.2
GIVE_UP_SECONDS = 120.0
"""A guard against a server that never exits, not a measurement."""


def test_sigterm_does_not_wait_for_a_slow_body_past_its_transfer_deadline() -> None:
    """Was: SIGTERM waited 57 s of the 60 s skill deadline for a client sending a byte a
    second; the body's own deadline (30 s by default, 2 s here) ends that wait."""
    env = skill_env(TRANSFER_DEADLINE_SECONDS="2")
    with uvicorn_subprocess(env) as (url, server):
        port = int(url.rsplit(":", 1)[1])
        client = socket.create_connection(("127.0.0.1", port))
        client.sendall(
            b"POST /api/chunk HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\n" + f"Content-Length: {DECLARED}\r\n\r\n{{".encode()
        )
        sent = 1
        server.send_signal(signal.SIGTERM)
        give_up = time.monotonic() + GIVE_UP_SECONDS
        with contextlib.suppress(OSError):  # the server closes the connection under it
            while server.poll() is None and time.monotonic() < give_up:
                client.sendall(b" ")
                sent += 1
                time.sleep(PACE)
        client.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(GIVE_UP_SECONDS)
        assert server.returncode is not None, "the server still waits for the slow body"
        assert sent < DECLARED  # it exited while the body was still arriving
