"""An OpenAI-compatible chat completions server on 127.0.0.1 for tests.

    with ChatStub() as stub:
        client = OpenAI(base_url=stub.base_url, api_key="k")  # POST /v1/chat/completions
        stub.say('{"questions": [...]}', Reply(status=429, retry_after_ms=5), ...)
        ...
        stub.requests  # every request body received, in arrival order

The embeddings stub's server (`OpenAIStub`) with chat routes: each request takes the next
scripted answer, a message's content (str) or a fault (`Reply`: a status, raw bytes, a
reset connection); with the script empty, `responder` writes the content from the
request (or, when `default` is set to a fault, it answers every request so). The
default responder is an honest model: it quotes lines of the section it
was shown.
"""

from __future__ import annotations

import json
import re
from collections import deque
from typing import TYPE_CHECKING, Any

from testing.openai_stub import HEALTHY, OpenAIStub, Reply, _error, _retry_headers

if TYPE_CHECKING:
    from collections.abc import Callable

SECTION = re.compile(r"<section>\n(.*)\n</section>", re.DOTALL)
COUNT = re.compile(r"Write (\d+) question")
WHERE = re.compile(r"^Document: (.*)\nSection: (.*)$", re.MULTILINE)
SHORTEST_QUOTED_LINE = 40
"""The honest responder quotes prose lines at least this long."""


def shown_section(body: dict[str, Any]) -> str:
    """The section text a chat request showed the model."""
    found = SECTION.search(str(body["messages"][-1]["content"]))
    return found.group(1) if found else ""


def asked_count(body: dict[str, Any]) -> int:
    """How many questions a chat request asked for."""
    found = COUNT.search(str(body["messages"][-1]["content"]))
    return int(found.group(1)) if found else 1


def honest_reply(body: dict[str, Any]) -> str:
    """Questions quoting the section's first long prose lines, exactly as they are."""
    lines = [line.strip() for line in shown_section(body).splitlines()]
    prose = [
        line
        for line in lines
        if len(line) >= SHORTEST_QUOTED_LINE and line[0].isalnum() and not line.startswith("#")
    ]
    where = WHERE.search(str(body["messages"][-1]["content"]))
    place = f"{where.group(2)} in {where.group(1)}" if where else "this part"
    items = [
        {"question": f"What does line {index} of {place} say?", "quote": quote, "kind": "fact"}
        for index, quote in enumerate(prose[: asked_count(body)], 1)
    ]
    return json.dumps({"questions": items})


def completion(content: str, model: str) -> dict[str, Any]:
    """A chat completion whose one choice says `content`."""
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class ChatStub(OpenAIStub):
    """The server, answering /v1/chat/completions and Azure's deployment route."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        responder: Callable[[dict[str, Any]], str] = honest_reply,
        json_mode: bool = True,
    ) -> None:
        """json_mode False: refuse `response_format` with a 400, as some servers do."""
        super().__init__(api_key=api_key)
        self.responder = responder
        self.json_mode = json_mode
        self._said: deque[str | Reply] = deque()

    def say(self, *answers: str | Reply) -> None:
        """Queue answers for the next chat requests, one each, in arrival order."""
        with self._lock:
            self._said.extend(answers)

    def _decide(
        self, path: str, query: dict[str, list[str]], headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[int, dict[str, str], dict[str, Any] | Reply]:
        azure = path.startswith("/openai/deployments/") and path.endswith("/chat/completions")
        if not azure and path != "/v1/chat/completions":
            return 404, {}, _error(f"no route {path}", "NotFound")
        if azure and "api-version" not in query:
            return 404, {}, _error("api-version is required", "MissingApiVersion")
        if self.api_key is not None:
            given = headers.get("api-key") or headers.get("authorization", "").removeprefix(
                "Bearer "
            )
            if given != self.api_key:
                return 401, {}, _error("Access denied due to invalid subscription key.", "401")
        if not self.json_mode and "response_format" in body:
            error = _error("response_format is not supported by this model", "invalid_request")
            error["error"]["param"] = "response_format"
            return 400, {}, error
        with self._lock:
            answer: str | Reply | None = self._said.popleft() if self._said else None
        if answer is None and self.default != HEALTHY:
            answer = self.default
        if isinstance(answer, Reply):
            with self._lock:
                self.faults += 1
            if answer.disconnect or answer.body is not None:
                return answer.status, _retry_headers(answer), answer
            return (
                answer.status,
                _retry_headers(answer),
                _error(answer.message or f"stub fault {answer.status}", str(answer.status)),
            )
        model = path.split("/")[3] if azure else str(body.get("model", "stub"))
        content = answer if answer is not None else self.responder(body)
        return 200, {}, completion(content, model)


__all__ = ["ChatStub", "asked_count", "completion", "honest_reply", "shown_section"]
