"""Read a request body off the wire: the size limit, Content-Encoding gzip, the deadline.

The size limit (MAX_REQUEST_BYTES) holds for the JSON itself, so a gzip body is
inflated part by part and refused as soon as it grows past the limit: a small
"gzip bomb" costs no more memory than a plain body at the limit would.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from typing import TYPE_CHECKING, Protocol

from skills.skill.contract import RequestError
from skills.skill.service import too_large

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping, Sequence

GZIP_WBITS = 16 + zlib.MAX_WBITS
"""zlib's window bits for a gzip stream (header and trailer) with the largest window."""
GZIP_MAGIC = b"\x1f\x8b"
"""The first two bytes of every gzip stream (RFC 1952)."""
GZIP_NAMES = frozenset({"gzip", "x-gzip"})
"""Content-Encoding names of gzip; RFC 9110 asks servers to take x-gzip as gzip."""
IDENTITY = "identity"
"""The Content-Encoding of a body that is not encoded (the same as no header)."""

ERROR_HEADERS: Mapping[int, Mapping[str, str]] = {
    408: {"Connection": "close"},
    415: {"Accept-Encoding": "gzip"},
}
"""Response headers that go with a body error: after a 408 the connection still holds
part of a body, so it is closed (RFC 9110 15.5.9); a 415 for a content coding names the
codings the skill accepts (RFC 9110 15.5.16)."""


CONFLICTING_FRAMING = (
    "The request has both a Content-Length and a Transfer-Encoding header, which say "
    "different things about where its body ends (RFC 9112, section 6.3); send one of them: "
    "Content-Length with the body's size, or Transfer-Encoding: chunked alone."
)
CLOSE = {"Connection": "close"}
"""Headers for an answer sent before the body was read: the connection still holds it."""


def framing_error(headers: Sequence[tuple[str, str]]) -> RequestError | None:
    """The 400 for a request whose headers frame its body two ways (`headers` as sent,
    names in any case, every value).

    With both, a server reads the body by Transfer-Encoding and ignores the length; a
    proxy in front may not, and the two then disagree on where the next request starts
    (request smuggling). RFC 9112 lets a server refuse such a request, and the skill has
    no client that sends one: the indexer sends Content-Length.
    """
    names = {name.lower() for name, _ in headers}
    if "content-length" in names and "transfer-encoding" in names:
        return RequestError(400, CONFLICTING_FRAMING)
    return None


class BodyMemory(Protocol):
    """Where a body's bytes are held as they arrive (the app's memory budget)."""

    async def hold(self, size: int) -> RequestError | None:
        """Hold memory for `size` bytes of body in all; the 503 when none came in time."""
        ...


CLIENT_LEFT = 499
"""The status of a request whose client closed its connection before its body was in
(nginx's "client closed request"); nobody reads it, the log line says what happened."""


class ClientLeft(Exception):
    """The client closed its connection while its body was arriving (raised by the parts
    iterator of `read_body`; the server's own exception is translated at the edge)."""


class NotGzip(ValueError):
    """Data declared gzip that is not; the message says why in the skill's words."""


class LimitedGunzip:
    """Inflates a gzip body part by part, never producing more than `limit` + 1 bytes."""

    __slots__ = ("_fed", "_inflater", "_members", "limit", "size")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        """Bytes inflated so far; past `limit` the body is refused."""
        self._inflater = zlib.decompressobj(GZIP_WBITS)
        self._members = 0
        """gzip members inflated whole so far."""
        self._fed = 0
        """Bytes of the current member fed to zlib so far."""

    def feed(self, data: bytes) -> bytes | None:
        """The bytes `data` inflates to, or None once the body is over the limit.

        Raises NotGzip for data that is not gzip.
        """
        pieces: list[bytes] = []
        while data:
            # Never ask for more than one byte past the limit: a bomb stops right there.
            try:
                piece = self._inflater.decompress(data, self.limit + 1 - self.size)
            except zlib.error as error:
                # zlib's own text ("Error -3 while decompressing data: incorrect header
                # check") names its internals; the caller gets what is wrong instead.
                raise NotGzip(self._why_not(data)) from error
            self._fed += len(data) - len(self._inflater.unconsumed_tail)
            self.size += len(piece)
            if self.size > self.limit:
                return None
            pieces.append(piece)
            if self._inflater.eof:
                data = self._inflater.unused_data
                self._members += 1
                self._fed = 0
                if data:  # RFC 1952: members may follow one another
                    self._inflater = zlib.decompressobj(GZIP_WBITS)
            else:
                data = self._inflater.unconsumed_tail
        return b"".join(pieces)

    def _why_not(self, data: bytes) -> str:
        """Why zlib refused `data`, from where in the stream it stands."""
        at_start = self._fed == 0
        if not at_start or data[: len(GZIP_MAGIC)] == GZIP_MAGIC[: len(data)]:
            return "the gzip data is damaged (it cannot be decompressed); compress the body again"
        if self._members:
            return "what follows the gzip data is not gzip; send only the compressed body"
        return (
            "the body does not start with gzip's header (bytes 1f 8b); send it compressed "
            "with gzip, or without the header"
        )

    @property
    def complete(self) -> bool:
        """Whether the data fed so far ends where a gzip member ends."""
        return self._inflater.eof


async def read_body(
    parts: AsyncIterator[bytes],
    *,
    content_length: str | None,
    content_encoding: str | None,
    limit: int,
    deadline: float,
    started: float,
    deadline_setting: str = "SKILL_DEADLINE_SECONDS",
    memory: BodyMemory | None = None,
) -> bytes | RequestError:
    """The body's JSON bytes, or the 4xx (or 503) that says why there are none.

    413 as soon as the body (or, for gzip, what it inflates to) is known to exceed
    `limit`; 415 for a content coding other than gzip; 400 for broken gzip (in the
    skill's words, never zlib's), or gzip sent
    without its header; 408 when the body has not arrived in full `deadline` seconds
    after `started` (time.monotonic()), when the request came (app setting
    `deadline_setting`). With `memory`, the bytes are held there as they arrive (what
    they inflate to, for gzip), and the time spent waiting for it does not count against
    `deadline`: a body that gets no memory in time is its 503.
    """
    codings = [
        name
        for name in (part.strip().lower() for part in (content_encoding or "").split(","))
        if name and name != IDENTITY
    ]
    if len(codings) > 1 or (codings and codings[0] not in GZIP_NAMES):
        return RequestError(
            415,
            f"Content-Encoding {(content_encoding or '').strip()!r} is not supported; send the "
            "body as plain JSON or with Content-Encoding: gzip.",
        )
    declared = (content_length or "").strip()
    if declared.isdigit() and int(declared) > limit:
        return too_large(int(declared), limit)
    received = _Received(started + deadline, declared if declared.isdigit() else "")
    read = await _read(parts, limit, gunzip=bool(codings), received=received, memory=memory)
    if read is not None:
        return read
    whose = "the skill's deadline" if deadline_setting.startswith("SKILL") else "its deadline"
    return RequestError(
        408,
        f"The request body did not arrive in full within {whose} "
        f"({deadline:g} s, app setting {deadline_setting}): {received.size} of "
        f"{declared or 'an unknown number of'} bytes came. Send the whole body, with a "
        "Content-Length that matches it.",
    )


def _loop_time(monotonic: float) -> float:
    """The event loop's clock reading at time.monotonic() reading `monotonic`."""
    return asyncio.get_running_loop().time() + (monotonic - time.monotonic())


class _Received:
    """How many bytes came off the wire (for the 408 message), and by when the rest must."""

    __slots__ = ("declared", "size", "until")

    def __init__(self, until: float, declared: str = "") -> None:
        self.size = 0
        self.declared = declared
        """The Content-Length the request declared, if it was a number."""
        self.until = until
        """time.monotonic() by which the body must be in; later by each wait for memory."""


async def _read(
    parts: AsyncIterator[bytes],
    limit: int,
    *,
    gunzip: bool,
    received: _Received,
    memory: BodyMemory | None,
) -> bytes | RequestError | None:
    """The body, its 4xx or 503, or None when it did not arrive by `received.until`."""
    inflater = LimitedGunzip(limit) if gunzip else None
    pieces: list[bytes] = []
    held = 0
    iterator = aiter(parts)
    while True:
        try:
            async with asyncio.timeout_at(_loop_time(received.until)):
                part = await anext(iterator)
        except StopAsyncIteration:
            break
        except TimeoutError:
            return None
        except ClientLeft:
            return RequestError(
                CLIENT_LEFT,
                f"The client closed its connection before its request body was in "
                f"({received.size} of {received.declared or 'an unknown number of'} bytes "
                "came); there is nobody to answer.",
            )
        received.size += len(part)
        if received.size > limit:  # on the wire, too, nothing over the limit is kept
            return too_large(received.size, limit)
        if inflater is None:
            piece = part
        else:
            try:
                inflated = inflater.feed(part)
            except NotGzip as error:
                return _not_gzip(str(error))
            if inflated is None:
                return _too_large_inflated(inflater.size, limit)
            piece = inflated
        pieces.append(piece)
        held += len(piece)
        if memory is not None and part:
            waited_from = time.monotonic()
            refused = await memory.hold(held)
            if refused is not None:
                return refused
            received.until += time.monotonic() - waited_from
    if inflater is not None and not inflater.complete:
        return _not_gzip("the gzip data ends early (truncated)")
    body = b"".join(pieces)
    if inflater is None and body.startswith(GZIP_MAGIC):
        return RequestError(
            400,
            "The request body is gzip data, but the request has no Content-Encoding: gzip "
            "header; send the header with it, or send the body as plain JSON.",
        )
    return body


def _not_gzip(why: str) -> RequestError:
    return RequestError(400, f"Content-Encoding: gzip, but {why}.")


def _too_large_inflated(size: int, limit: int) -> RequestError:
    return RequestError(
        413,
        f"The request body is {size} bytes or more once decompressed (Content-Encoding: "
        f"gzip); the limit is {limit} bytes of JSON (app setting MAX_REQUEST_BYTES). Lower "
        "the skill's batchSize or raise the limit.",
    )


__all__ = [
    "CLOSE",
    "ERROR_HEADERS",
    "BodyMemory",
    "LimitedGunzip",
    "NotGzip",
    "framing_error",
    "read_body",
]
