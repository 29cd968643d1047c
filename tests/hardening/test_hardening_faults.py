"""Faults around the embedding service, through the whole skill with the real openai client.

Every fault ends in one of three answers, always by the deadline:
- 200 with every record complete (the fault was retried away);
- 200 with per-record errors (`data: {}`) where a record's chunks could not all be embedded;
- 503 with Retry-After when nothing at all could be embedded for a transient reason.
Never a vector on the wrong chunk: every vector a record carries is the stub's vector of
that very chunk's text (testing/openai_stub.vector_for).
"""

from __future__ import annotations

import asyncio
import json
import random
import socket
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from skills.embedding.clients import build_embedder
from skills.embedding.embedder import RetryPolicy
from skills.embedding.settings import EmbeddingSettings
from skills.skill.service import answer_chunk_request
from skills.skill.settings import Settings
from testing.openai_stub import OpenAIStub, Reply, vector_for
from tests.conftest import skill_body
from tests.hardening_report import FIGURES

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from skills.embedding.embedder import EmbeddingOutcome
    from tests.conftest import LiveServers

pytestmark = pytest.mark.integration

DIMENSIONS = 8
KEY = "fault-key"
CHUNKS_PER_RECORD = 4
RECORDS = 6
FAST = RetryPolicy(max_retries=4, initial_backoff=0.01, max_backoff=0.05, request_timeout=0.5)
"""Quick retries so each scenario takes well under a second when it can recover."""
TRANSIENT_WORDS = ("throttled", "failed or could not be reached", "too slow", "deadline")
BAD_ANSWER_WORDS = "the embedding service's answer was wrong"


def document(n: int) -> str:
    """Markdown that chunks into CHUNKS_PER_RECORD chunks at 400 characters."""
    return f"# Document {n}\n\n" + "".join(
        f"## Part {k}\n\n" + f"Sentence {k} of part {k} in document {n}. " * 6 + "\n\n"
        for k in range(CHUNKS_PER_RECORD)
    )


def batch(count: int = RECORDS) -> bytes:
    return skill_body(
        [
            {
                "recordId": f"r{n}",
                "data": {"text": document(n), "unit": "characters", "maximumPageLength": 400},
            }
            for n in range(count)
        ]
    )


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(dimensions=DIMENSIONS, api_key=KEY) as server:
        yield server


@pytest.fixture(autouse=True)
def fresh(stub: OpenAIStub) -> Iterator[None]:
    stub.reset()
    yield
    FIGURES.add("faults injected", stub.faults)


def embedding_settings(endpoint: str, **changes: Any) -> EmbeddingSettings:
    values: dict[str, Any] = {
        "provider": "azure_openai",
        "provider_reason": "test",
        "model": "text-embedding-3-small",
        "dimensions": DIMENSIONS,
        "azure_endpoint": endpoint,
        "azure_deployment": "emb",
        "azure_api_key": KEY,
        "batch_size": 3,
        "concurrency": 2,
    }
    return EmbeddingSettings(**{**values, **changes})


class Recording:
    """An Embedder that passes through to the real one and keeps each outcome."""

    def __init__(self, settings: EmbeddingSettings, retry: RetryPolicy) -> None:
        embedder = build_embedder(settings, retry=retry)
        assert embedder is not None
        self.inner = embedder
        self.description = embedder.description
        self.outcomes: list[EmbeddingOutcome] = []

    async def embed(
        self,
        texts: Sequence[str],
        deadline: float,
        progress: Callable[[int, int], None] | None = None,
    ) -> EmbeddingOutcome:
        outcome = await self.inner.embed(texts, deadline, progress)
        self.outcomes.append(outcome)
        return outcome

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass(frozen=True, slots=True)
class Result:
    status: int
    retry_after: int | None
    body: Any
    seconds: float
    requests: int
    """Embedding requests the skill sent (or tried to)."""


def run(
    endpoint: str,
    *,
    deadline: float = 4.0,
    retry: RetryPolicy = FAST,
    body: bytes | None = None,
    **changes: Any,
) -> Result:
    """Answer a batch with the real client against `endpoint`; checks the deadline held."""
    settings = Settings(
        deadline_seconds=deadline, embedding=embedding_settings(endpoint, **changes)
    )
    embedder = Recording(settings.embedding, retry)

    async def go() -> Any:
        try:
            return await answer_chunk_request(
                batch() if body is None else body, settings, embedder=embedder
            )
        finally:
            await embedder.aclose()

    started = time.monotonic()
    answer = asyncio.run(go())
    seconds = time.monotonic() - started
    requests = sum(outcome.stats.requests for outcome in embedder.outcomes)
    FIGURES.add("records answered", RECORDS)
    return Result(answer.status, answer.retry_after, json.loads(answer.body), seconds, requests)


def check_records(result: Result) -> tuple[int, int]:
    """(complete, failed) records; each complete chunk carries its own text's vector."""
    assert result.status == 200, result.body
    values = result.body["values"]
    assert [value["recordId"] for value in values] == [f"r{n}" for n in range(RECORDS)]
    complete = failed = 0
    for value in values:
        if value["errors"]:
            assert value["data"] == {}
            (error,) = value["errors"]
            assert error["message"].startswith("not embedded: ")
            failed += 1
            continue
        chunks = value["data"]["chunks"]
        assert len(chunks) == CHUNKS_PER_RECORD
        for chunk in chunks:
            assert chunk["embedding"] == vector_for(chunk["text"], DIMENSIONS)
        complete += 1
    return complete, failed


def closed_port_endpoint() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens there now: connection refused


# --- the service cannot be reached, or breaks the connection -----------------------------


def test_connection_refused_is_a_503_with_retry_after() -> None:
    result = run(closed_port_endpoint())
    assert result.status == 503
    assert result.retry_after == 10
    assert "could not be reached" in result.body["error"]["message"]
    assert result.requests == 8 * (FAST.max_retries + 1)  # 24 chunks in 8 batches, each retried
    FIGURES.add("faults injected", result.requests)


def test_connections_reset_on_every_request_are_a_503(stub: OpenAIStub) -> None:
    stub.default = Reply(disconnect=True)
    result = run(stub.azure_endpoint)
    assert result.status == 503
    assert "could not be reached" in result.body["error"]["message"]


def test_a_few_resets_are_retried_to_a_complete_answer(stub: OpenAIStub) -> None:
    stub.script(*[Reply(disconnect=True)] * 4)
    assert check_records(run(stub.azure_endpoint)) == (RECORDS, 0)
    assert stub.faults == 4


def test_timeouts_are_retried_to_a_complete_answer(stub: OpenAIStub) -> None:
    stub.script(Reply(delay=2.0), Reply(delay=2.0))  # longer than the 0.5 s request timeout
    result = run(stub.azure_endpoint)
    assert check_records(result) == (RECORDS, 0)


def test_a_slow_service_gives_a_complete_answer(stub: OpenAIStub) -> None:
    stub.default = Reply(delay=0.1)
    assert check_records(run(stub.azure_endpoint)) == (RECORDS, 0)


def test_a_hanging_service_is_answered_at_the_deadline(stub: OpenAIStub) -> None:
    stub.default = Reply(delay=30.0)
    slow = RetryPolicy(max_retries=2, request_timeout=60.0)
    result = run(stub.azure_endpoint, deadline=1.5, retry=slow)
    assert result.status == 503


def test_a_service_slow_for_some_batches_fails_only_their_records(stub: OpenAIStub) -> None:
    """Fast batches keep their vectors; the batches still waiting at the deadline fail."""
    stub.script(Reply(), Reply(), Reply(delay=30.0), Reply(delay=30.0))
    slow = RetryPolicy(max_retries=0, request_timeout=60.0)
    result = run(stub.azure_endpoint, deadline=1.5, retry=slow, concurrency=1, batch_size=6)
    complete, failed = check_records(result)
    assert (complete, failed) == (3, 3)
    for value in result.body["values"][3:]:
        assert "deadline" in value["errors"][0]["message"]


# --- throttling and server errors ----------------------------------------------------------


def test_a_429_storm_that_passes_is_retried_to_a_complete_answer(stub: OpenAIStub) -> None:
    stub.script(*[Reply(status=429, retry_after_ms=5)] * 30)
    result = run(stub.azure_endpoint, retry=RetryPolicy(max_retries=40, initial_backoff=0.01))
    assert check_records(result) == (RECORDS, 0)
    assert stub.statuses.count(429) == 30


def test_a_429_storm_that_lasts_is_a_503_with_the_services_hint(stub: OpenAIStub) -> None:
    stub.default = Reply(status=429, retry_after="3")
    result = run(stub.azure_endpoint, deadline=2.0)
    assert result.status == 503
    assert result.retry_after == 3


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_server_errors_are_retried_to_a_complete_answer(stub: OpenAIStub, status: int) -> None:
    stub.script(*[Reply(status=status)] * 3)
    assert check_records(run(stub.azure_endpoint)) == (RECORDS, 0)


def test_a_gateway_html_error_page_is_retried(stub: OpenAIStub) -> None:
    stub.script(
        Reply(status=502, body=b"<html><h1>Bad Gateway</h1></html>", content_type="text/html")
    )
    assert check_records(run(stub.azure_endpoint)) == (RECORDS, 0)


def test_persistent_server_errors_are_a_503(stub: OpenAIStub) -> None:
    stub.default = Reply(status=500)
    result = run(stub.azure_endpoint, deadline=2.0)
    assert result.status == 503
    assert "failed" in result.body["error"]["message"]


# --- wrong answers: per-record errors, never a misplaced vector -----------------------------

WRONG_ANSWERS: dict[str, tuple[Reply, str]] = {
    "malformed JSON": (Reply(body=b'{"data": [{"index": 0, "embedd'), "could not be read"),
    "an empty body": (Reply(body=b""), "could not be read"),
    "HTML with status 200": (
        Reply(body=b"<html>maintenance</html>", content_type="text/html"),
        "could not be read",
    ),
    "JSON null (regression: was an internal error)": (Reply(body=b"null"), "could not be read"),
    "a JSON array (regression: was an internal error)": (Reply(body=b"[]"), "could not be read"),
    "items without embeddings (regression: was an internal error)": (
        Reply(mangle=lambda data: [{"index": item["index"]} for item in data]),
        "is not a list of embeddings",
    ),
    "one vector too few": (Reply(drop=1), "vectors for 3 inputs"),
    "no vectors (regression: was the openai package's own words)": (
        Reply(drop=3),
        "could not be read",
    ),
    "one vector too many": (
        Reply(mangle=lambda data: [*data, {**data[0], "index": len(data)}]),
        "returned 4 vectors for 3 inputs",
    ),
    "a repeated index": (
        Reply(mangle=lambda data: [{**item, "index": 0} for item in data]),
        "missing or repeated indexes",
    ),
    "wrong dimensions": (Reply(dimensions=DIMENSIONS * 2), "vectors of 16 dimensions, expected 8"),
    "NaN values": (
        Reply(
            mangle=lambda data: [
                {**item, "embedding": [float("nan")] * DIMENSIONS} for item in data
            ]
        ),
        "NaN or infinite",
    ),
}


@pytest.mark.parametrize("name", list(WRONG_ANSWERS))
def test_a_wrong_answer_fails_only_the_records_of_its_batch(stub: OpenAIStub, name: str) -> None:
    """The first request (chunks 0-2, all of record r0) gets the wrong answer; no retry."""
    reply, words = WRONG_ANSWERS[name]
    stub.script(reply)
    result = run(stub.azure_endpoint, concurrency=1)
    assert check_records(result) == (RECORDS - 1, 1)
    (error,) = result.body["values"][0]["errors"]
    assert BAD_ANSWER_WORDS in error["message"]
    assert words in error["message"]
    assert result.requests == (RECORDS * CHUNKS_PER_RECORD + 2) // 3  # nothing retried


def test_vectors_in_reverse_order_are_put_back_by_index(stub: OpenAIStub) -> None:
    stub.default = Reply(mangle=lambda data: data[::-1])
    assert check_records(run(stub.azure_endpoint)) == (RECORDS, 0)


# --- everything at once ------------------------------------------------------------------------


CHAOS = (
    Reply(disconnect=True),
    Reply(status=429, retry_after_ms=3),
    Reply(status=500),
    Reply(status=503, retry_after_ms=2),
    Reply(delay=1.0),
    Reply(drop=1),
    Reply(dimensions=DIMENSIONS + 1),
    Reply(body=b"{not json"),
    Reply(mangle=lambda data: data[::-1]),
    Reply(),
    Reply(),
    Reply(),
)


@pytest.mark.parametrize("seed", range(8))
def test_random_faults_never_misplace_a_vector(stub: OpenAIStub, seed: int) -> None:
    """Whatever mix of faults: each record is complete and right, or failed with data {}."""
    rng = random.Random(seed)
    stub.script(*(rng.choice(CHAOS) for _ in range(40)))
    result = run(stub.azure_endpoint, deadline=3.0, concurrency=3)
    if result.status == 503:
        return
    complete, failed = check_records(result)
    assert complete + failed == RECORDS
    for value in result.body["values"]:
        for error in value["errors"]:
            message = error["message"]
            assert BAD_ANSWER_WORDS in message or any(w in message for w in TRANSIENT_WORDS)


def test_over_real_http_faults_end_in_a_complete_answer(
    stub: OpenAIStub, live_servers: LiveServers
) -> None:
    """The app as uvicorn serves it, its embedder built from settings (default retry policy)."""
    settings = Settings(deadline_seconds=10.0, embedding=embedding_settings(stub.azure_endpoint))
    url = live_servers.start(settings)
    stub.script(
        Reply(disconnect=True),
        Reply(status=429, retry_after_ms=10),
        Reply(status=502),
        Reply(body=b"", status=503),
    )
    response = httpx.post(f"{url}/api/chunk", content=batch(), timeout=30.0)
    assert response.status_code == 200
    values = response.json()["values"]
    assert all(value["errors"] == [] for value in values)
    for value in values:
        for chunk in value["data"]["chunks"]:
            assert chunk["embedding"] == vector_for(chunk["text"], DIMENSIONS)
    FIGURES.add("records answered", RECORDS)
