"""Record every answer the tests get from the skill, and every log line, for one scan.

conftest.py's autouse fixture wraps httpx's clients (real HTTP, uvicorn in a thread or a
subprocess, httpx's ASGI transport) and the Functions adapter's caller; at the end of
each test every answer from a skill route and every log line of the skill's loggers
must pass testing/leaks.py's `dishonest` check.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from testing.leaks import log_findings, scan_answer, sent_text

if TYPE_CHECKING:
    from collections.abc import Iterator

SKILL_PATHS = ("/api/",)
"""Routes whose answers are the skill's (the stubs serve /v1/..., /indexes/...)."""
SKILL_LOGGERS = (
    "skills",
    "chunking",
    "function_app",
    "uvicorn",
    "azure.functions",
    "azure.core",
    "azure.storage",
    "httpx",
    "httpcore",
    "openai",
)
"""The loggers of the skill's process: its own and those of the libraries it calls."""


@dataclass(slots=True)
class Recorder:
    """Answers and log lines seen during one test."""

    exchanges: list[tuple[str, bytes, bytes]] = field(default_factory=list)
    """(url, request body, answer body)."""
    log_lines: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, request: httpx.Request, response: httpx.Response) -> None:
        """Keep a skill route's answer (a streamed one nobody read is skipped)."""
        if not request.url.path.startswith(SKILL_PATHS):
            return
        try:
            content = response.content
            sent = request.content
        except (httpx.ResponseNotRead, httpx.RequestNotRead):
            return
        self.exchange(str(request.url), sent, content)

    def exchange(self, url: str, request: bytes, answer: bytes) -> None:
        """Keep an answer got some other way (the Functions adapter)."""
        with self.lock:
            self.exchanges.append((url, request, answer))

    def findings(self) -> list[str]:
        """Every answer or log line that is not in the skill's words, with what it holds."""
        with self.lock:
            exchanges, lines = list(self.exchanges), list(self.log_lines)
        problems = [
            f"answer from {url}: {found} in {answer[:300]!r}"
            for url, request, answer in exchanges
            if (found := scan_answer(answer, request))
        ]
        sent = "\n".join(sent_text(request) for _, request, _ in exchanges)
        problems += [
            f"log line: {found} in {line[:300]!r}"
            for line in lines
            if (found := log_findings(line, sent))
        ]
        return problems


class _LogTap(logging.Handler):
    def __init__(self, recorder: Recorder) -> None:
        super().__init__(logging.DEBUG)
        self.recorder = recorder

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith(SKILL_LOGGERS):
            try:
                line = record.getMessage()
            except (TypeError, ValueError):
                return
            with self.recorder.lock:
                self.recorder.log_lines.append(line)


ACTIVE: list[Recorder] = []
"""The recorder of the test running now (conftest.py's fixture pushes and pops it)."""


def recording(recorder: Recorder) -> Iterator[None]:
    """Record answers and log lines while the generator is suspended."""
    ACTIVE.append(recorder)
    sync_send, async_send = httpx.Client.send, httpx.AsyncClient.send

    def send(self: httpx.Client, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        response = sync_send(self, request, **kwargs)
        recorder.answer(request, response)
        return response

    async def asend(
        self: httpx.AsyncClient, request: httpx.Request, **kwargs: Any
    ) -> httpx.Response:
        response = await async_send(self, request, **kwargs)
        recorder.answer(request, response)
        return response

    tap = _LogTap(recorder)
    root = logging.getLogger()
    root.addHandler(tap)
    httpx.Client.send = send  # type: ignore[method-assign]
    httpx.AsyncClient.send = asend  # type: ignore[method-assign]
    try:
        yield
    finally:
        httpx.Client.send = sync_send  # type: ignore[method-assign]
        httpx.AsyncClient.send = async_send  # type: ignore[method-assign]
        root.removeHandler(tap)
        ACTIVE.remove(recorder)
