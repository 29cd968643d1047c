"""Fixtures for the skill tests: Azure's in-process adapter, live uvicorn servers, batches."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import azure.functions as func
import pytest
import uvicorn

from skills.skill.app import build_app
from testing.azurite import Azurite
from tests.answer_scan import ACTIVE, Recorder, recording

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from starlette.applications import Starlette

    from skills.embedding.embedder import EmbeddingOutcome
    from skills.skill.settings import Settings, SettingsError

SERVER_START_SECONDS = 10.0

GUIDE = """# Install guide {n}

Welcome to guide number {n}. It explains how to install the tool on a workstation.

## Requirements

You need Python 3.11 or newer, and about 50 MB of disk space. Check with `python -V`.

## Steps

1. Download the archive.
2. Unpack it next to your projects.
3. Run the installer and follow the prompts.

### Troubleshooting

If the installer fails, read the log it prints and try again with more permissions.
"""

NON_ASCII = """# Überblick {n}

Grüße aus Köln! Ça va? Ελληνικά κείμενα και ρωσικий текст.

## 日本語

日本語のテキストです。絵文字 😀 と 𝄞 も含みます。

## Emoji 🎉

Astral characters 🎉🎈 count twice in UTF-16 and four times in UTF-8.
"""

HTML_PAGE = """<!DOCTYPE html><html><head><title>Page {n}</title></head><body>
<h1 id="intro">Introduction {n}</h1><p>This page explains the product in a few words.</p>
<h2 id="usage">Usage</h2><p>Call the API with a JSON body. The answer comes back fast.</p>
</body></html>"""

PLAIN = "Plain notes {n}.\n\nFirst paragraph of notes.\n\nSecond paragraph, a bit longer."

BAD_RECORDS: tuple[tuple[object, str], ...] = (
    ({"title": "no text"}, "'text' is required"),
    ({"text": None}, "'text' is required"),
    ({"text": 42}, "'text' must be a string"),
    ({"text": "Hello.", "maximumPageLength": "abc"}, "'maximumPageLength' must be an integer"),
    ({"text": "Hello.", "maximumPageLength": True}, "'maximumPageLength' must be an integer"),
    ({"text": "Hello.", "unit": "chars"}, "'unit' must be one of"),
    ({"text": "Hello.", "maximumPageLength": 512, "pageOverlapLength": 300}, "pageOverlapLength"),
    ({"text": "Hello.", "textSplitMode": "words"}, "'textSplitMode' must be one of"),
    ("just a string", "data must be a JSON object"),
    ({"text": "Hello.", "encoderModelName": "no_such_encoding"}, "encoderModelName"),
)
"""(data, words its one error message must contain) for ten records that must fail."""


def good_record_data(n: int) -> dict[str, object]:
    """Record data that chunks into at least one chunk; varied by `n`."""
    kind = n % 6
    if kind == 0:
        return {"text": GUIDE.format(n=n), "fileName": f"guide-{n}.md"}
    if kind == 1:
        return {"text": NON_ASCII.format(n=n), "format": "markdown", "url": f"https://x.test/{n}"}
    if kind == 2:
        return {"text": HTML_PAGE.format(n=n), "contentType": "text/html"}
    if kind == 3:
        return {"text": PLAIN.format(n=n), "format": "text", "title": f"Notes {n}"}
    if kind == 4:
        return {
            "text": GUIDE.format(n=n),
            "unit": "characters",
            "maximumPageLength": "300",
            "pageOverlapLength": 30.0,
        }
    return {"text": GUIDE.format(n=n), "maximumPagesToTake": 1, "language": "de"}


@dataclass(frozen=True, slots=True)
class Batch:
    """A skill request and what each of its records should turn out as."""

    values: list[dict[str, object]]
    bad: dict[str, str]
    """recordId -> words its single error message contains."""

    def body(self) -> bytes:
        return skill_body(self.values)


def skill_body(values: list[dict[str, object]]) -> bytes:
    """A request body as an indexer sends it (lone surrogates stay \\uXXXX escapes)."""
    return json.dumps({"values": values}).encode("utf-8")


def hundred_with_ten_bad() -> Batch:
    """100 records, the 10 kinds of BAD_RECORDS spread among 90 good ones."""
    values: list[dict[str, object]] = []
    bad: dict[str, str] = {}
    for n in range(100):
        record_id = f"doc-{n:03d}"
        if n % 10 == 7:
            data, words = BAD_RECORDS[n // 10]
            bad[record_id] = words
        else:
            data = good_record_data(n)
        values.append({"recordId": record_id, "data": data})
    return Batch(values, bad)


@pytest.fixture
def batch_of_100() -> Batch:
    return hundred_with_ten_bad()


class FunctionCaller:
    """Calls the one function an AsgiFunctionApp registers, in-process, as the host would."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._functions: dict[int, tuple[func.AsgiFunctionApp, Callable[..., Any]]] = {}

    def __call__(
        self,
        app: func.AsgiFunctionApp,
        method: str,
        path: str,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
    ) -> func.HttpResponse:
        entry = self._functions.get(id(app))
        if entry is None:
            # get_functions() may be called only once per app object.
            (function,) = app.get_functions()
            entry = (app, function.get_user_function())
            self._functions[id(app)] = entry
        request = func.HttpRequest(
            method=method, url=f"http://localhost{path}", headers=headers or {}, body=body
        )
        response: func.HttpResponse = self.loop.run_until_complete(entry[1](request, None))
        for recorder in ACTIVE:
            recorder.exchange(f"function {path}", body, response.get_body())
        return response

    def close(self) -> None:
        for app, _ in self._functions.values():
            if app.startup_task_done:
                middleware: Any = app.middleware  # untyped in azure-functions
                self.loop.run_until_complete(middleware.notify_shutdown())
                app.startup_task_done = False  # or its __del__ runs the shutdown again


@pytest.fixture(scope="session")
def call_function() -> Iterator[FunctionCaller]:
    """Invoke an AsgiFunctionApp's registered function with a func.HttpRequest."""
    loop = asyncio.new_event_loop()
    caller = FunctionCaller(loop)
    yield caller
    caller.close()
    loop.close()


def function_app_with(settings: Settings | SettingsError) -> func.AsgiFunctionApp:
    """What function_app.py builds, but with the given settings instead of the environment."""
    return func.AsgiFunctionApp(app=build_app(settings), http_auth_level=func.AuthLevel.FUNCTION)


class ExplodingEmbedder:
    """An Embedder with a bug outside any record: it raises, with `detail` and the first
    text in the exception's message (which no answer may show)."""

    description = "exploding"

    def __init__(self, detail: str) -> None:
        self.detail = detail

    async def embed(
        self,
        texts: Sequence[str],
        deadline: float,
        progress: Callable[[int, int], None] | None = None,
    ) -> EmbeddingOutcome:
        raise RuntimeError(f"{self.detail} and {texts[0][:40]}")

    async def aclose(self) -> None:
        pass


class LiveServers:
    """uvicorn servers on 127.0.0.1, each in a thread, stopped at the end of the session."""

    def __init__(self) -> None:
        self._running: list[tuple[Any, threading.Thread]] = []

    def start(self, settings: Settings | SettingsError) -> str:
        """Serve build_app(settings) on a free port; returns its base URL."""
        return self.start_app(build_app(settings))

    def start_app(self, app: Starlette, send_buffer: int | None = None) -> str:
        """Serve `app` on a free port; returns its base URL. With `send_buffer`, its
        connections' kernel send buffers are that small (they inherit the listener's)."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if send_buffer is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
        sock.bind(("127.0.0.1", 0))  # the OS picks a free port; no race with other tests
        port = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        give_up = time.monotonic() + SERVER_START_SECONDS
        while not server.started:
            if time.monotonic() > give_up or not thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        self._running.append((server, thread))
        return f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        for server, thread in self._running:
            server.should_exit = True
            thread.join(SERVER_START_SECONDS)


@pytest.fixture(scope="session")
def live_servers() -> Iterator[LiveServers]:
    servers = LiveServers()
    yield servers
    servers.stop()


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Azurite]:
    """Azurite (blob) on a free port of 127.0.0.1 with its own data folder, for the
    session; skipped, saying why, where node or the npm package is missing."""
    why = Azurite.available()
    if why is not None:
        pytest.skip(why)
    with Azurite(tmp_path_factory.mktemp("azurite")) as server:
        yield server


@pytest.fixture(autouse=True)
def answers_in_our_words() -> Iterator[None]:
    """Every answer a test gets from the skill, and every log line of the skill's, passes
    one scan (testing/leaks.py `dishonest`): no secret, URL user info or query, library
    message, exception name or traceback."""
    recorder = Recorder()
    yield from recording(recorder)
    problems = recorder.findings()
    if problems:
        pytest.fail("not in the skill's words:\n" + "\n".join(problems[:10]), pytrace=False)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the figures the hardening tests collected (tests/hardening_report.py)."""
    from tests.hardening_report import FIGURES

    lines = FIGURES.lines()
    if lines:
        terminalreporter.section("hardening figures")
        for line in lines:
            terminalreporter.write_line(line)
