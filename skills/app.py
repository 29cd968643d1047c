"""The skill's HTTP surface as an ASGI app: `POST /api/chunk` and `GET /api/health`.

The same app runs under the Functions host (function_app.py wraps it in
`func.AsgiFunctionApp`) and under uvicorn locally; routes carry the `/api` prefix
because the host hands the full path to the app.
"""

from __future__ import annotations

import contextlib
import json
import logging
import platform
import time
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import Route

from skills import __version__
from skills.contract import RequestError, render_error
from skills.request_body import ERROR_HEADERS, read_body
from skills.service import answer_chunk_request, request_limit
from skills.settings import (
    DEFAULT_DEADLINE_SECONDS,
    SettingsError,
    describe_settings,
    settings_from_environment,
)
from skills.workers import build_chunker

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping

    from starlette.requests import Request

    from skills.embedding import Embedder
    from skills.settings import Settings
    from skills.workers import ChunkerState, RecordChunker

logger = logging.getLogger(__name__)

JSON = "application/json"
HTTP_UNAVAILABLE = 503


def build_app(
    settings: Settings | SettingsError | None = None,
    *,
    embedder: Embedder | None = None,
    chunker: RecordChunker | None = None,
) -> Starlette:
    """The ASGI app; without `settings` it reads them from the environment at first use.

    Passing settings (or a SettingsError) is how tests and other hosts configure it.
    Without `embedder`, the one the settings ask for is built at the first request
    that has chunks to embed (none for EMBEDDING_PROVIDER=none). Without `chunker`, the
    settings' worker processes (CHUNK_WORKERS) start at the first request.
    """
    current: Callable[[], Settings | SettingsError] = (
        settings_from_environment if settings is None else (lambda: settings)
    )
    embedders = _EmbedderSlot(embedder)
    chunkers = _ChunkerSlot(chunker)

    async def chunk(request: Request) -> Response:
        started = time.monotonic()
        settings_now = current()
        body = await _read_body(request, settings_now, started)
        if isinstance(body, RequestError):
            return _error_response(body, ERROR_HEADERS.get(body.status))
        answer = await answer_chunk_request(
            body,
            settings_now,
            started=started,
            embedder=embedders.get(settings_now),
            chunker=chunkers.get(settings_now),
        )
        headers = None if answer.retry_after is None else {"Retry-After": str(answer.retry_after)}
        return Response(answer.body, status_code=answer.status, media_type=JSON, headers=headers)

    async def health(request: Request) -> Response:
        settings_now = current()
        report: dict[str, object] = {
            "status": "ok",
            "version": __version__,
            "python": platform.python_version(),
        }
        if isinstance(settings_now, SettingsError):
            report["status"] = "misconfigured"
            report["error"] = str(settings_now)
            status = HTTP_UNAVAILABLE
        else:
            embedding = settings_now.embedding
            embeds = embedding.provider != "none"  # no model is used, whatever is configured
            report["embedding"] = {
                "provider": embedding.provider,
                "reason": embedding.provider_reason,
                "model": embedding.model if embeds else None,
                "dimensions": embedding.dimensions if embeds else None,
            }
            report["configuration"] = describe_settings(settings_now)
            status = 200
            state = chunkers.state()
            if state is not None:
                report["chunking"] = state.as_json()
                report["status"] = state.status
                if state.degraded:
                    # Overrunning work is being stopped: not "ok". Starting workers are
                    # not a fault: requests wait for them (within their deadline).
                    status = HTTP_UNAVAILABLE
        return _json_response(report, status)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        settings_now = current()
        if not isinstance(settings_now, SettingsError):
            chunkers.get(settings_now)  # workers start now, not at the first record
        yield
        await chunkers.close()
        await embedders.close()

    return Starlette(
        routes=[
            # The skill definition's httpMethod may be POST or PUT.
            Route("/api/chunk", chunk, methods=["POST", "PUT"]),
            Route("/api/health", health, methods=["GET"]),
        ],
        exception_handlers={HTTPException: _http_error, Exception: _server_error},
        lifespan=lifespan,
    )


class _EmbedderSlot:
    """The app's embedder: the injected one, or the settings' one built at first use."""

    def __init__(self, given: Embedder | None) -> None:
        self.given = given
        self.built: Embedder | None = None

    def get(self, settings: Settings | SettingsError) -> Embedder | None:
        """The embedder; a failure to build it propagates (a logged 500), never a silent
        answer without vectors."""
        if self.given is not None:
            return self.given
        if isinstance(settings, SettingsError) or settings.embedding.provider == "none":
            return None
        if self.built is None:
            # Imported here: the openai package and the providers load at first use.
            from skills.embedding_clients import build_embedder  # noqa: PLC0415

            self.built = build_embedder(settings.embedding)
        return self.built

    async def close(self) -> None:
        if self.built is not None:
            await self.built.aclose()


class _ChunkerSlot:
    """The app's chunker: the injected one, or the settings' worker pool built at first use."""

    def __init__(self, given: RecordChunker | None) -> None:
        self.chunker = given
        self.owned = False

    def get(self, settings: Settings | SettingsError) -> RecordChunker:
        if self.chunker is None:
            # A misconfigured app still answers every record (with the settings' error).
            workers = 0 if isinstance(settings, SettingsError) else settings.chunk_workers
            self.chunker, self.owned = build_chunker(workers), True
        return self.chunker

    def state(self) -> ChunkerState | None:
        return None if self.chunker is None else self.chunker.state()

    async def close(self) -> None:
        if self.chunker is not None and self.owned:
            await self.chunker.aclose()
            self.chunker = None


async def _read_body(
    request: Request, settings: Settings | SettingsError, started: float
) -> bytes | RequestError:
    """The body (gunzipped if it came so), or a 4xx: 413 as soon as it is known to exceed
    the limit, and 408 if it has not arrived in full by the deadline."""
    deadline = (
        DEFAULT_DEADLINE_SECONDS
        if isinstance(settings, SettingsError)
        else settings.deadline_seconds
    )
    return await read_body(
        request.stream(),
        content_length=request.headers.get("content-length"),
        content_encoding=request.headers.get("content-encoding"),
        limit=request_limit(settings),
        deadline=deadline,
        started=started,
    )


def _error_response(error: RequestError, headers: Mapping[str, str] | None = None) -> Response:
    return Response(render_error(error), status_code=error.status, media_type=JSON, headers=headers)


def _json_response(document: dict[str, object], status: int) -> Response:
    return Response(
        json.dumps(document, ensure_ascii=False).encode("utf-8"),
        status_code=status,
        media_type=JSON,
    )


async def _http_error(request: Request, exc: Exception) -> Response:
    """404, 405 and friends as JSON, so every answer of the skill is JSON."""
    if not isinstance(exc, HTTPException):
        return await _server_error(request, exc)
    message = {
        404: f"No route {request.url.path}; the skill serves POST /api/chunk and GET /api/health.",
        405: f"{request.method} is not allowed on {request.url.path}.",
    }.get(exc.status_code, str(exc.detail))
    return _error_response(RequestError(exc.status_code, message), headers=exc.headers)


async def _server_error(request: Request, exc: Exception) -> Response:
    """A bug outside any record (records catch their own); still JSON, and logged."""
    logger.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return _error_response(
        RequestError(500, f"internal error: {type(exc).__name__}; see the function's logs")
    )
