"""The skill's HTTP surface as an ASGI app: `POST /api/chunk` and `GET /api/health`.

The same app runs under the Functions host (function_app.py wraps it in
`func.AsgiFunctionApp`) and under uvicorn locally; routes carry the `/api` prefix
because the host hands the full path to the app.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.routing import Route

from skills.embedding.embedder import BatchEmbedder
from skills.embedding.scoring import ScoringService, build_pair_client
from skills.skill.contract import RequestError, render_error
from skills.skill.health import health_report, misconfigured_report
from skills.skill.memory_budget import BudgetSlot, limit_malloc_arenas, transfer_deadline
from skills.skill.request_body import (
    CLIENT_LEFT,
    CLOSE,
    ERROR_HEADERS,
    ClientLeft,
    framing_error,
    read_body,
)
from skills.skill.request_log import show_request_log
from skills.skill.service import answer_chunk_request
from skills.skill.settings import SettingsError, settings_from_environment, settings_or_defaults
from skills.skill.workers import build_chunker

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping

    from starlette.requests import Request
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from skills.embedding.cache import CacheState
    from skills.embedding.embedder import Embedder
    from skills.embedding.local import ModelLoad
    from skills.embedding.scoring import PairClient
    from skills.skill.chunker_state import ChunkerState, RecordChunker
    from skills.skill.memory_budget import Reservation
    from skills.skill.request_body import BodyMemory
    from skills.skill.service import Answer
    from skills.skill.settings import Settings

logger = logging.getLogger(__name__)

JSON = "application/json"
HTTP_UNAVAILABLE = 503
HTTP_SERVER_ERROR = 500
SEND_PIECE = 256 * 1024
"""Bytes of an answer handed to uvicorn at a time: it waits for the socket to drain
(past its 64 KiB write buffer) before it takes the next."""
SERVER_ERROR_MESSAGE = (
    "The skill failed to answer this request because of an error on its side. Retry the "
    "request; if it fails again, the function app's logs say what went wrong."
)
"""The 500's message: the exception's type and text go to the logs only."""


def build_app(
    settings: Settings | SettingsError | None = None,
    *,
    embedder: Embedder | None = None,
    chunker: RecordChunker | None = None,
    pair_client: PairClient | None = None,
) -> Starlette:
    """The ASGI app; without `settings` it reads them from the environment at first use.

    Passing settings (or a SettingsError) is how tests and other hosts configure it.
    Without `embedder`, the one the settings ask for is built at the first request
    that has chunks to embed (none for EMBEDDING_PROVIDER=none). Without `chunker`, the
    settings' worker processes (CHUNK_WORKERS) start at the first request. The `binary`
    strategy's cross-encoder or rerank client is `pair_client`, or the settings' one.
    """
    current: Callable[[], Settings | SettingsError] = (
        settings_from_environment if settings is None else (lambda: settings)
    )
    skill = _Skill(current, embedder, chunker, pair_client)
    return Starlette(
        routes=[
            # The skill definition's httpMethod may be POST or PUT.
            Route("/api/chunk", skill.chunk, methods=["POST", "PUT"]),
            Route("/api/health", skill.health, methods=["GET"]),
        ],
        # No handler for Exception: Starlette's own re-raises after answering, and the
        # exception would leave Azure's adapter; _ServerErrors answers it instead.
        middleware=[Middleware(_ServerErrors), Middleware(_QuietLifespan)],
        exception_handlers={HTTPException: _http_error},
        lifespan=skill.lifespan,
    )


class _Skill:
    """One app's state and its handlers: where its settings come from, and the slots of
    what is built at first use (embedder, chunker, pair client, memory budget)."""

    def __init__(
        self,
        current: Callable[[], Settings | SettingsError],
        embedder: Embedder | None,
        chunker: RecordChunker | None,
        pair_client: PairClient | None,
    ) -> None:
        self.current = current
        self.embedders = _EmbedderSlot(embedder)
        self.chunkers = _ChunkerSlot(chunker)
        self.pair_clients = _PairClientSlot(pair_client)
        self.budgets = BudgetSlot()

    async def chunk(self, request: Request) -> Response:
        """`POST /api/chunk`: the body read within the memory budget, then answered."""
        started = time.monotonic()
        settings_now = self.current()
        limits = settings_or_defaults(settings_now)
        framing = framing_error(request.headers.items())
        if framing is not None:  # before a byte of the body is read
            return _error_response(framing, CLOSE)
        # Memory by what arrives: the body's bytes as they come, then what it may cost
        # (docs/design/hardening.md, "Memory in flight").
        admission = self.budgets.admission(limits, started)
        reservation = admission.reservation
        try:
            body = await _read_body(request, limits, started, admission)
            if isinstance(body, RequestError):
                reservation.release()
                return self._unread(body)
            refused = await admission.admit_body(len(body), limits)
            if refused is not None:
                reservation.release()
                return _error_response(refused, self.budgets.turned_away_headers())
            answer = await self._answer(body, settings_now, started, reservation)
        except BaseException:
            reservation.release()
            raise
        headers = None if answer.retry_after is None else {"Retry-After": str(answer.retry_after)}
        # Held until the answer has been read: its bytes are in memory until then.
        return _HeldAnswer(
            answer.body, answer.status, headers, reservation, transfer_deadline(limits)
        )

    async def _answer(
        self,
        body: bytes,
        settings: Settings | SettingsError,
        started: float,
        reservation: Reservation,
    ) -> Answer:
        """The answer to a body read in full: chunked (and embedded) with the app's parts,
        or, while the app settings are broken, every record answered with their error."""
        if isinstance(settings, SettingsError):
            return await answer_chunk_request(
                body, settings, started=started, reservation=reservation
            )
        return await answer_chunk_request(
            body,
            settings,
            started=started,
            embedder=self.embedders.get(settings),
            chunker=self.chunkers.get(settings),
            scoring=ScoringService(
                embedder=self.embedders.get(settings), pairs=self.pair_clients.get(settings)
            ),
            reservation=reservation,
        )

    def _unread(self, error: RequestError) -> Response:
        """The answer to a request whose body was not read: the client left, the budget
        turned it away, or the body broke a limit."""
        if error.status == CLIENT_LEFT:
            logger.info("%s", error.message)
            return _error_response(error, CLOSE)  # uvicorn drops it: no connection
        if error.status == HTTP_UNAVAILABLE:
            return _error_response(error, self.budgets.turned_away_headers())
        return _error_response(error, ERROR_HEADERS.get(error.status))

    async def health(self, request: Request) -> Response:
        """`GET /api/health` (`?pretty` indents it for a person reading curl's output)."""
        settings_now = self.current()
        if isinstance(settings_now, SettingsError):
            report, status = misconfigured_report(settings_now)
        else:
            report, status = health_report(
                settings_now,
                load=self.embedders.load(),
                cache=self.embedders.cache_state(),
                memory=self.budgets.get(settings_now).state(),
                chunking=self.chunkers.state(),
            )
        indent = 2 if "pretty" in request.query_params else None
        return _json_response(report, status, indent=indent)

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        """Start the workers with the app; close what was built when it stops."""
        settings_now = self.current()
        show_request_log()  # uvicorn: the line per request on stderr, as the host logs it
        limit_malloc_arenas()  # before the workers and the threads start
        if not isinstance(settings_now, SettingsError):
            self.chunkers.get(settings_now)  # workers start now, not at the first record
        try:
            yield
        except BaseException:
            # The host ended the loop (cancelled or closed this task) instead of sending
            # the shutdown message: stop the workers now, with nothing left to await.
            self.chunkers.close_now()
            raise
        await self.chunkers.close()
        await self.embedders.close()
        await self.pair_clients.close()


class _HeldAnswer(Response):
    """An answer whose memory stays reserved until the client has it, and no longer than
    the transfer deadline.

    Under uvicorn, the body goes out in SEND_PIECE pieces: the server waits for its
    socket to drain before it takes the next, so the answer stays in the app (counted in
    the budget) rather than in a socket buffer nobody counts. A client that has not read it
    all by the transfer deadline has its connection closed (uvicorn closes a connection
    whose answer the app left unfinished) and the memory is given back: 20 clients that
    never read ~55 MB answers held 1.2 GB, uncounted, until they went away (issue 35).
    Azure's adapter joins an answer's pieces into one body anyway, so it gets one piece.
    """

    def __init__(
        self,
        body: bytes,
        status: int,
        headers: Mapping[str, str] | None,
        reservation: Reservation,
        deadline: tuple[float, str],
    ) -> None:
        super().__init__(body, status_code=status, media_type=JSON, headers=headers)
        self.reservation = reservation
        self.deadline = deadline

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        reservation = self.reservation
        reservation.phase = "sending"
        reservation.progress()
        # What is held now is the answer (the records and the body are gone).
        reservation.shrink(len(self.body))
        seconds, setting = self.deadline
        # Azure's adapter joins the pieces into one body: one piece is not copied again.
        whole = "azure_functions.invocation_id" in scope or not self.body
        try:
            async with asyncio.timeout(seconds):
                await send(
                    {
                        "type": "http.response.start",
                        "status": self.status_code,
                        "headers": self.raw_headers,
                    }
                )
                if whole:
                    await send({"type": "http.response.body", "body": self.body})
                view = memoryview(self.body)
                for offset in range(0, len(view) if not whole else 0, SEND_PIECE):
                    more = offset + SEND_PIECE < len(view)
                    part = bytes(view[offset : offset + SEND_PIECE])
                    await send({"type": "http.response.body", "body": part, "more_body": more})
                    reservation.progress()
        except TimeoutError:
            logger.warning(
                "an answer of %d bytes was not read by its client within %g s (app setting "
                "%s); its connection is closed",
                len(self.body),
                seconds,
                setting,
            )
        finally:
            reservation.release()


class _ServerErrors:
    """Any exception while answering a request becomes the app's JSON 500, and stays here.

    A pure ASGI middleware inside Starlette's ServerErrorMiddleware: that one re-raises
    after it has answered (so that a server can log it), and Azure's AsgiMiddleware lets
    the exception leave the function, so the Functions host answered with its own 500.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception:  # a bug outside any record (records catch their own)
            logger.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            if not started:  # else the client already has a status line; nothing to add
                error = RequestError(HTTP_SERVER_ERROR, SERVER_ERROR_MESSAGE)
                await _error_response(error)(scope, receive, send)


class _QuietLifespan:
    """A lifespan ended by the host's loop, not by a shutdown message, is still a shutdown.

    Azure's adapter runs the ASGI lifespan in a task of the loop that served the first
    request; hosts and scripts end that loop at exit (asyncio.run cancels the task, a
    closed loop closes it), and Starlette reports that as "lifespan.shutdown.failed" with
    a traceback, which the adapter logs as an error. The lifespan stops the workers
    synchronously in that case, so the shutdown is complete: say so, quietly.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return
        interrupted = False

        async def receiving() -> Message:
            nonlocal interrupted
            try:
                return await receive()
            except (asyncio.CancelledError, GeneratorExit):
                interrupted = True
                raise

        async def sending(message: Message) -> None:
            if interrupted and message["type"] == "lifespan.shutdown.failed":
                message = {"type": "lifespan.shutdown.complete"}
            await send(message)

        await self.app(scope, receiving, sending)


class _PairClientSlot:
    """The app's pair scorer for `binary`: the injected one, or the settings' one built at
    first use (none unless CROSS_ENCODER_PATH or RERANK_ENDPOINT is set)."""

    def __init__(self, given: PairClient | None) -> None:
        self.given = given
        self.built: PairClient | None = None

    def get(self, settings: Settings) -> PairClient | None:
        if self.given is not None:
            return self.given
        if self.built is None:
            # Built once; nothing loads or connects until the first score.
            self.built = build_pair_client(settings)
        return self.built

    async def close(self) -> None:
        if self.built is not None:
            await self.built.aclose()


class _EmbedderSlot:
    """The app's embedder: the injected one, or the settings' one built at first use."""

    def __init__(self, given: Embedder | None) -> None:
        self.given = given
        self.built: Embedder | None = None

    def get(self, settings: Settings) -> Embedder | None:
        """The embedder; a failure to build it propagates (a logged 500), never a silent
        answer without vectors."""
        if self.given is not None:
            return self.given
        if settings.embedding.provider == "none":
            return None
        if self.built is None:
            # Imported here: the openai package and the providers load at first use.
            from skills.embedding.clients import build_embedder  # noqa: PLC0415

            self.built = build_embedder(settings.embedding)
        return self.built

    async def close(self) -> None:
        if self.built is not None:
            await self.built.aclose()

    def load(self) -> ModelLoad | None:
        """The local model's load, when the embedder runs one."""
        embedder = self.given or self.built
        return embedder.load() if isinstance(embedder, BatchEmbedder) else None

    def cache_state(self) -> CacheState | None:
        """The embedding cache's state, once the embedder that has one is built."""
        embedder = self.given or self.built
        if isinstance(embedder, BatchEmbedder) and embedder.cache is not None:
            return embedder.cache.state()
        return None


class _ChunkerSlot:
    """The app's chunker: the injected one, or the settings' worker pool built at first use."""

    def __init__(self, given: RecordChunker | None) -> None:
        self.chunker = given
        self.owned = False

    def get(self, settings: Settings) -> RecordChunker:
        if self.chunker is None:
            self.chunker, self.owned = build_chunker(settings.chunk_workers), True
        return self.chunker

    def state(self) -> ChunkerState | None:
        return None if self.chunker is None else self.chunker.state()

    def close_now(self) -> None:
        if self.chunker is not None and self.owned:
            self.chunker.close_now()

    async def close(self) -> None:
        if self.chunker is not None and self.owned:
            await self.chunker.aclose()
            self.chunker = None


async def _read_body(
    request: Request, settings: Settings, started: float, memory: BodyMemory
) -> bytes | RequestError:
    """The body (gunzipped if it came so), its bytes held in `memory` as they arrive, or a
    4xx: 413 as soon as it is known to exceed the limit, 408 if it has not arrived in full
    by the transfer deadline; or the 503 when it got no memory in time."""
    deadline, setting = transfer_deadline(settings)
    return await read_body(
        _parts(request),
        content_length=request.headers.get("content-length"),
        content_encoding=request.headers.get("content-encoding"),
        limit=settings.max_request_bytes,
        deadline=deadline,
        deadline_setting=setting,
        started=started,
        memory=memory,
    )


async def _parts(request: Request) -> AsyncIterator[bytes]:
    """The body's parts as they arrive; Starlette's ClientDisconnect as our ClientLeft."""
    try:
        async for part in request.stream():
            yield part
    except ClientDisconnect:
        raise ClientLeft from None


def _error_response(error: RequestError, headers: Mapping[str, str] | None = None) -> Response:
    return Response(render_error(error), status_code=error.status, media_type=JSON, headers=headers)


def _json_response(
    document: dict[str, object], status: int, *, indent: int | None = None
) -> Response:
    text = json.dumps(document, ensure_ascii=False, indent=indent) + ("\n" if indent else "")
    return Response(
        text.encode("utf-8"),
        status_code=status,
        media_type=JSON,
    )


async def _http_error(request: Request, exc: Exception) -> Response:
    """404, 405 and friends as JSON, so every answer of the skill is JSON."""
    if not isinstance(exc, HTTPException):  # registered for HTTPException only
        raise exc
    message = {
        404: f"No route {request.url.path}; the skill serves POST /api/chunk and GET /api/health.",
        405: f"{request.method} is not allowed on {request.url.path}.",
    }.get(exc.status_code, str(exc.detail))
    return _error_response(RequestError(exc.status_code, message), headers=exc.headers)
