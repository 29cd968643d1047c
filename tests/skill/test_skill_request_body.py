"""Reading a request body: the size limit, Content-Encoding gzip, and the deadline."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import time
import zlib
from typing import TYPE_CHECKING

import httpx
import pytest

from skills.skill.contract import RequestError
from skills.skill.request_body import LimitedGunzip, read_body
from skills.skill.settings import Settings
from tests.conftest import GUIDE, skill_body

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable

    from tests.conftest import LiveServers

TIMEOUT = httpx.Timeout(60.0)
LIMIT = 10_000
BOMB_BYTES = 256 * 2**20
"""What the bomb inflates to: 256 MiB of zeros, about 250 KB on the wire."""

BOMB_LIMIT = 2**20
"""A limit the bomb passes on the wire (it is smaller) but not once inflated."""

BODY = skill_body([{"recordId": "1", "data": {"text": GUIDE.format(n=1)}}])


@pytest.fixture(scope="module")
def bomb() -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: a gzip stream
    zeros = bytes(2**20)
    return b"".join([*(packer.compress(zeros) for _ in range(BOMB_BYTES // 2**20)), packer.flush()])


async def _parts(parts: Iterable[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


def read(
    parts: Iterable[bytes],
    encoding: str | None = None,
    length: str | None = None,
    limit: int = LIMIT,
    seconds: float = 10.0,
) -> bytes | RequestError:
    return asyncio.run(
        read_body(
            _parts(parts),
            content_length=length,
            content_encoding=encoding,
            limit=limit,
            deadline=seconds,
            started=time.monotonic(),
        )
    )


def status_and_message(result: object) -> tuple[int, str]:
    assert isinstance(result, RequestError), result
    return result.status, result.message


# --- gzip ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "encoding", ["gzip", "GZIP", " x-gzip ", "gzip, identity", "identity,gzip"]
)
def test_gzip_bodies_are_inflated(encoding: str) -> None:
    packed = gzip.compress(BODY)
    assert read([packed[:7], packed[7:50], packed[50:]], encoding) == BODY


@pytest.mark.parametrize("encoding", [None, "", "identity", "Identity"])
def test_plain_bodies_are_taken_as_they_are(encoding: str | None) -> None:
    assert read([BODY[:10], BODY[10:]], encoding) == BODY


def test_several_gzip_members_are_one_body() -> None:
    # RFC 1952: a gzip file may be several members one after the other.
    packed = gzip.compress(BODY[:100]) + gzip.compress(BODY[100:])
    assert read([packed], "gzip") == BODY


def test_the_limit_applies_after_decompression() -> None:
    body = b" " * (LIMIT - len(BODY)) + BODY
    assert read([gzip.compress(body)], "gzip") == body
    status, message = status_and_message(read([gzip.compress(body + b" ")], "gzip"))
    assert status == 413
    assert message == (
        f"The request body is {LIMIT + 1} bytes or more once decompressed (Content-Encoding: "
        f"gzip); the limit is {LIMIT} bytes of JSON (app setting MAX_REQUEST_BYTES). Lower "
        "the skill's batchSize or raise the limit."
    )


def test_a_gzip_bomb_is_inflated_no_further_than_the_limit(bomb: bytes) -> None:
    """Regression guard (issue 13, defect 7): the limit is applied while inflating, so a
    bomb costs at most the limit in memory, never its inflated size."""
    inflater = LimitedGunzip(LIMIT)
    assert inflater.feed(bomb) is None  # over the limit
    assert inflater.size == LIMIT + 1
    wire = [bomb[i : i + 65_536] for i in range(0, len(bomb), 65_536)]
    status, message = status_and_message(read(wire, "gzip", limit=BOMB_LIMIT))
    assert status == 413
    assert message.startswith(
        f"The request body is {BOMB_LIMIT + 1} bytes or more once decompressed"
    )


@pytest.mark.parametrize(
    ("parts", "words"),
    [
        ([b"{not gzip at all}"], "Content-Encoding: gzip, but the body does not start"),
        ([gzip.compress(BODY)[:-12]], "Content-Encoding: gzip, but the gzip data ends early"),
        ([b""], "Content-Encoding: gzip, but the gzip data ends early"),
        ([gzip.compress(BODY) + b"trailing junk"], "Content-Encoding: gzip, but what follows"),
    ],
)
def test_broken_gzip_is_a_400_that_says_so(parts: list[bytes], words: str) -> None:
    status, message = status_and_message(read(parts, "gzip"))
    assert status == 400
    assert message.startswith(words)


GZIP_HEADER = gzip.compress(BODY)[:10]
"""A gzip member's 10-byte header (magic, method, flags, time, xfl, os), no deflate data."""


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        (
            [b"{not gzip at all}"],
            "Content-Encoding: gzip, but the body does not start with gzip's header "
            "(bytes 1f 8b); send it compressed with gzip, or without the header.",
        ),
        (
            [GZIP_HEADER + b"\xff" * 40],
            "Content-Encoding: gzip, but the gzip data is damaged (it cannot be "
            "decompressed); compress the body again.",
        ),
        (
            [gzip.compress(BODY) + b"trailing junk"],
            "Content-Encoding: gzip, but what follows the gzip data is not gzip; send "
            "only the compressed body.",
        ),
    ],
)
def test_broken_gzip_is_refused_in_our_words_not_zlibs(parts: list[bytes], message: str) -> None:
    """Regression (issue 28.4): the 400 quoted zlib ("Error -3 while decompressing data:
    incorrect header check")."""
    status, said = status_and_message(read(parts, "gzip"))
    assert status == 400
    assert said == message
    assert "Error -3" not in said
    assert "header check" not in said


@pytest.mark.parametrize("encoding", ["br", "deflate", "zstd", "gzip, gzip", "compress"])
def test_other_content_encodings_are_a_415(encoding: str) -> None:
    status, message = status_and_message(read([BODY], encoding))
    assert status == 415
    assert message == (
        f"Content-Encoding {encoding.strip()!r} is not supported; send the body as plain "
        "JSON or with Content-Encoding: gzip."
    )


def test_a_gzip_body_sent_without_its_header_says_so() -> None:
    """Regression (issue 13, defect 7): it got "not valid JSON" with no word of compression."""
    status, message = status_and_message(read([gzip.compress(BODY)]))
    assert status == 400
    assert message == (
        "The request body is gzip data, but the request has no Content-Encoding: gzip "
        "header; send the header with it, or send the body as plain JSON."
    )


def test_a_declared_length_over_the_limit_is_refused_before_reading() -> None:
    status, message = status_and_message(read([], length=str(LIMIT + 1)))
    assert (status, message.startswith(f"The request body is {LIMIT + 1} bytes")) == (413, True)


# --- the deadline ---------------------------------------------------------------------------


def test_a_body_that_does_not_arrive_in_time_is_a_408() -> None:
    async def stalled() -> AsyncIterator[bytes]:
        yield b'{"values": ['
        await asyncio.sleep(60)
        yield b"]}"

    async def main() -> bytes | RequestError:
        return await read_body(
            stalled(),
            content_length="100",
            content_encoding=None,
            limit=LIMIT,
            deadline=0.2,
            started=time.monotonic(),
        )

    status, message = status_and_message(asyncio.run(main()))
    assert status == 408
    assert message == (
        "The request body did not arrive in full within the skill's deadline (0.2 s, app "
        "setting SKILL_DEADLINE_SECONDS): 12 of 100 bytes came. Send the whole body, with "
        "a Content-Length that matches it."
    )


# --- over real HTTP -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(live_servers: LiveServers) -> str:
    return live_servers.start(Settings(max_request_bytes=LIMIT, deadline_seconds=1.0))


@pytest.mark.integration
def test_a_gzip_body_is_answered_like_the_plain_one(server: str) -> None:
    """Regression (issue 13, defect 7): gzip bodies, as clients send them, were a 400."""
    plain = httpx.post(f"{server}/api/chunk", content=BODY, timeout=TIMEOUT)
    packed = httpx.post(
        f"{server}/api/chunk",
        content=gzip.compress(BODY),
        headers={"content-type": "application/json", "content-encoding": "gzip"},
        timeout=TIMEOUT,
    )
    assert (plain.status_code, packed.status_code) == (200, 200)
    assert packed.json() == plain.json()
    assert packed.json()["values"][0]["data"]["chunks"]


@pytest.mark.integration
def test_a_gzip_bomb_over_http_is_a_413(live_servers: LiveServers, bomb: bytes) -> None:
    roomy = live_servers.start(Settings(max_request_bytes=BOMB_LIMIT))
    response = httpx.post(
        f"{roomy}/api/chunk", content=bomb, headers={"content-encoding": "gzip"}, timeout=TIMEOUT
    )
    assert response.status_code == 413
    assert "once decompressed" in response.json()["error"]["message"]


@pytest.mark.integration
def test_an_unsupported_encoding_over_http_is_a_415_naming_gzip(server: str) -> None:
    response = httpx.post(
        f"{server}/api/chunk", content=BODY, headers={"content-encoding": "br"}, timeout=TIMEOUT
    )
    assert response.status_code == 415
    assert response.headers["accept-encoding"] == "gzip"
    assert response.headers["content-type"] == "application/json"


@pytest.mark.integration
def test_a_client_that_stalls_mid_body_gets_a_408_by_the_deadline(server: str) -> None:
    """Regression (issue 13, defect 7): a Content-Length larger than what the client sends,
    then silence, kept the request waiting forever under uvicorn."""
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(
            b"POST /api/chunk HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 5000\r\n\r\n" + BODY[:100]
        )
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            part = connection.recv(65_536)
            if not part:
                break
            answer += part
    head, _, payload = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer
    assert b"connection: close" in head.lower()
    message = json.loads(payload)["error"]["message"]
    assert message.startswith(
        "The request body did not arrive in full within the skill's deadline (1 s, app setting"
    )
    assert "100 of 5000 bytes came" in message
