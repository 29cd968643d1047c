"""Embeddings through the skill: whole-request batching, vectors on their own chunks,
throttling within the deadline, 503 + Retry-After, per-record errors, health and logs."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from skills.embedding.clients import build_embedder
from skills.embedding.embedder import EmbeddingOutcome, EmbeddingStats
from skills.embedding.settings import EmbeddingSettings, local_provider_installed
from skills.skill.app import build_app
from skills.skill.service import answer_chunk_request
from skills.skill.settings import Settings, load_settings
from testing.openai_stub import OpenAIStub, Reply, approximate_tokens, vector_for
from tests.conftest import BAD_RECORDS, FunctionCaller, function_app_with, skill_body
from tests.paths import ROOT

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path

    from skills.embedding.embedder import Vector
    from skills.skill.service import Answer
    from tests.conftest import LiveServers

pytestmark = pytest.mark.integration

PROJECT = ROOT
DIMENSIONS = 16
KEY = "skill-key"
CHUNKS_PER_RECORD = 5
TIMEOUT = httpx.Timeout(60.0)


def document(n: int) -> str:
    """Markdown that chunks into exactly CHUNKS_PER_RECORD chunks at 400 characters."""
    parts = "".join(
        f"## Part {k}\n\n" + f"Sentence {k} about part {k} of document {n}. " * 5 + "\n\n"
        for k in range(CHUNKS_PER_RECORD)
    )
    return f"# Document {n}\n\n{parts}"


def records(count: int) -> list[dict[str, object]]:
    return [
        {
            "recordId": f"r{n}",
            "data": {"text": document(n), "unit": "characters", "maximumPageLength": 400},
        }
        for n in range(count)
    ]


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(dimensions=DIMENSIONS, api_key=KEY) as server:
        yield server


@pytest.fixture(autouse=True)
def fresh(stub: OpenAIStub) -> None:
    stub.reset()


def settings_for(stub: OpenAIStub, deadline: float = 30.0, **embedding: Any) -> Settings:
    values: dict[str, Any] = {
        "provider": "azure_openai",
        "provider_reason": "test",
        "model": "text-embedding-3-small",
        "dimensions": DIMENSIONS,
        "azure_endpoint": stub.azure_endpoint,
        "azure_deployment": "emb",
        "azure_api_key": KEY,
    }
    # Chunked in the app's threads: these tests time the embedding against short
    # deadlines, and starting worker processes on a loaded machine took a 3 s deadline
    # before a record was chunked (a 503 "busy" instead of the throttling one).
    return Settings(
        deadline_seconds=deadline,
        chunk_workers=0,
        embedding=EmbeddingSettings(**{**values, **embedding}),
    )


def answer(body: bytes, settings: Settings, credential: object | None = None) -> tuple[Answer, Any]:
    async def go() -> Answer:
        embedder = build_embedder(settings.embedding, credential=credential)
        assert embedder is not None
        try:
            return await answer_chunk_request(body, settings, embedder=embedder)
        finally:
            await embedder.aclose()

    result = asyncio.run(go())
    return result, json.loads(result.body)


def check_vectors(values: list[dict[str, Any]]) -> int:
    """Every chunk carries the stub's vector of its own text; returns the chunk count."""
    count = 0
    for value in values:
        assert value["errors"] == [], value["errors"]
        for chunk in value["data"]["chunks"]:
            assert chunk["embedding"] == vector_for(chunk["text"], DIMENSIONS)
            count += 1
    return count


def test_done_when_1000_chunks_take_ceil_1000_over_16_requests(stub: OpenAIStub) -> None:
    body = skill_body(records(200))
    result, response = answer(body, settings_for(stub))
    assert result.status == 200
    values = response["values"]
    assert check_vectors(values) == 1000
    assert len(stub.requests) == math.ceil(1000 / 16) == 63
    assert [len(request["input"]) for request in stub.requests].count(16) == 62
    # Requests mix chunks of different records: batching is across the whole request.
    texts = {text for request in stub.requests for text in request["input"]}
    assert len(texts) == 1000


def test_a_token_budget_adds_requests(stub: OpenAIStub) -> None:
    result, response = answer(
        skill_body(records(40)), settings_for(stub, batch_size=2048, batch_tokens=8191)
    )
    assert result.status == 200
    assert check_vectors(response["values"]) == 200
    tokens = [sum(map(approximate_tokens, request["input"])) for request in stub.requests]
    assert sum(len(request["input"]) for request in stub.requests) == 200
    assert len(tokens) == math.ceil(sum(tokens) / 8191)  # full requests, fewest possible
    assert all(total <= 8191 for total in tokens)


def test_a_burst_of_429s_that_fits_the_deadline_ends_complete(stub: OpenAIStub) -> None:
    stub.script(*[Reply(status=429, retry_after_ms=20)] * 12)
    result, response = answer(
        skill_body(records(40)), settings_for(stub, deadline=20, max_retries=12)
    )
    assert result.status == 200
    assert check_vectors(response["values"]) == 200
    assert stub.statuses.count(429) == 12
    assert stub.statuses.count(200) == math.ceil(200 / 16)


def test_a_burst_past_the_deadline_gives_per_record_errors(stub: OpenAIStub) -> None:
    stub.script(Reply(), Reply(), Reply())  # the first three requests succeed ...
    stub.default = Reply(status=429, retry_after_ms=5000)  # ... then the quota is gone
    settings = settings_for(stub, deadline=2.0, batch_size=CHUNKS_PER_RECORD, concurrency=1)
    result, response = answer(skill_body(records(8)), settings)
    assert result.status == 200
    values = response["values"]
    assert check_vectors(values[:3]) == 15
    for value in values[3:]:
        assert value["data"] == {}
        (error,) = value["errors"]
        assert "throttled (HTTP 429)" in error["message"]
        assert "the indexer may retry" in error["message"]
        assert f"{CHUNKS_PER_RECORD} of {CHUNKS_PER_RECORD} chunks" in error["message"]


def test_nothing_embedded_because_of_throttling_is_a_503(
    stub: OpenAIStub, call_function: FunctionCaller
) -> None:
    stub.default = Reply(status=429, retry_after="7")
    app = function_app_with(settings_for(stub, deadline=3.0))
    response = call_function(app, "POST", "/api/chunk", skill_body(records(3)))
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "7"
    assert response.mimetype == "application/json"
    message = json.loads(response.get_body())["error"]["message"]
    assert "throttling or unavailable" in message
    assert "none of the 15 chunks" in message


def test_a_service_that_is_down_is_a_503_with_a_default_retry_after(stub: OpenAIStub) -> None:
    stub.default = Reply(status=500)
    result, _ = answer(skill_body(records(2)), settings_for(stub, deadline=1.5))
    assert result.status == 503
    assert result.retry_after == 10


def test_refused_credentials_are_per_record_errors_not_a_503(stub: OpenAIStub) -> None:
    result, response = answer(skill_body(records(3)), settings_for(stub, azure_api_key="wrong"))
    assert result.status == 200
    assert stub.statuses == [401]
    for value in response["values"]:
        (error,) = value["errors"]
        assert "could not be authenticated" in error["message"]
        assert "HTTP 401" in error["message"]


# --- faults no retry can fix: at once, per record, naming the app setting; never a 503 ----

UPSTREAM = "upstream-words-5e1d"
"""In the stub's error messages; the service's words go to the logs, not to records."""


def plain_settings_for(stub: OpenAIStub, **embedding: Any) -> Settings:
    """The `openai` provider (an OpenAI-compatible server) against the stub."""
    values = {"provider": "openai", "openai_base_url": stub.base_url, "openai_api_key": KEY}
    return settings_for(stub, **{**values, **embedding})


class StaticCredential:
    """A Microsoft Entra ID credential that hands out a fixed token."""

    def get_token(self, *scopes: str, **kwargs: object) -> object:
        from azure.core.credentials import AccessToken

        return AccessToken(KEY, int(time.time()) + 3600)


def permanent_fault(settings: Settings, *words: str, credential: object | None = None) -> str:
    """Answer 3 records; each failed at once with the same error, naming `words`."""
    result, response = answer(skill_body(records(3)), settings, credential)
    assert result.status == 200, response
    messages: set[str] = set()
    for value in response["values"]:
        assert value["data"] == {}
        (error,) = value["errors"]
        messages.add(error["message"])
    (message,) = messages
    for word in words:
        assert word in message
    assert "may retry" not in message
    assert UPSTREAM not in message
    return message


def test_regression_an_ftp_base_url_is_a_per_record_error_not_a_503(stub: OpenAIStub) -> None:
    """Was: 503 "throttling or unavailable ... retry" after 16 s of retries."""
    settings = plain_settings_for(stub, openai_base_url="ftp://x")
    assert "https://" in permanent_fault(settings, "OPENAI_BASE_URL")


def test_regression_a_key_http_cannot_carry_is_a_per_record_error_not_a_503(
    stub: OpenAIStub,
) -> None:
    """A key with a line break is never sent: was a 503 after 16 s of retries."""
    permanent_fault(settings_for(stub, azure_api_key="skill\nkey"), "AZURE_OPENAI_API_KEY")
    assert stub.requests == []


PERMANENT: dict[str, tuple[str, dict[str, Any], Reply | None, tuple[str, ...]]] = {
    "an ftp Azure endpoint": (
        "azure",
        {"azure_endpoint": "ftp://x"},
        None,
        ("AZURE_OPENAI_ENDPOINT",),
    ),
    "a base URL without a scheme": (
        "plain",
        {"openai_base_url": "localhost:8000/v1"},
        None,
        ("OPENAI_BASE_URL",),
    ),
    "https to a plain-HTTP server": (
        "plain",
        {"https": True},
        None,
        ("OPENAI_BASE_URL", "http://"),
    ),
    "a non-ASCII letter in the key (was: 'the answer was wrong', UnicodeEncodeError)": (
        "plain",
        {"openai_api_key": "caf\u00e9"},
        None,
        ("OPENAI_API_KEY",),
    ),
    "a wrong Azure key": ("azure", {"azure_api_key": "wrong"}, None, ("AZURE_OPENAI_API_KEY",)),
    "a wrong OpenAI key": ("plain", {"openai_api_key": "wrong"}, None, ("OPENAI_API_KEY",)),
    "403 for the managed identity": (
        "azure",
        {"azure_api_key": None},
        Reply(status=403, message=f"PermissionDenied {UPSTREAM}"),
        ("HTTP 403", "Cognitive Services OpenAI User", "AZURE_OPENAI_API_KEY"),
    ),
    "404: no such deployment": (
        "azure",
        {},
        Reply(status=404, message=f"DeploymentNotFound {UPSTREAM}"),
        ("HTTP 404", "AZURE_OPENAI_EMBEDDING_DEPLOYMENT", "AZURE_OPENAI_ENDPOINT"),
    ),
    "404: no such model or path": (
        "plain",
        {},
        Reply(status=404, message=f"model not found {UPSTREAM}"),
        ("HTTP 404", "OPENAI_BASE_URL", "EMBEDDING_MODEL"),
    ),
    "400 on Azure": (
        "azure",
        {},
        Reply(status=400, message=f"dimensions not supported {UPSTREAM}"),
        ("HTTP 400", "EMBEDDING_MODEL", "EMBEDDING_DIMENSIONS", "AZURE_OPENAI_API_VERSION"),
    ),
    "400 on OpenAI": (
        "plain",
        {},
        Reply(status=400, message=f"bad request {UPSTREAM}"),
        ("HTTP 400", "EMBEDDING_MODEL", "EMBEDDING_DIMENSIONS"),
    ),
}
"""(provider, embedding settings, the stub's answer, words of each record's error)."""


@pytest.mark.parametrize("name", list(PERMANENT))
def test_a_fault_no_retry_can_fix_fails_each_record_at_once(stub: OpenAIStub, name: str) -> None:
    provider, given, reply, words = PERMANENT[name]
    changes = dict(given)
    if changes.pop("https", False):
        changes["openai_base_url"] = stub.base_url.replace("http://", "https://")
    settings = (settings_for if provider == "azure" else plain_settings_for)(stub, **changes)
    if reply is not None:
        stub.default = reply
    entra = settings.embedding.provider == "azure_openai" and not settings.embedding.azure_api_key
    permanent_fault(settings, *words, credential=StaticCredential() if entra else None)
    assert len(stub.requests) <= 1  # one batch, sent at most once


def test_wrong_dimensions_are_per_record_errors(stub: OpenAIStub) -> None:
    stub.default = Reply(dimensions=DIMENSIONS + 1)
    result, response = answer(skill_body(records(2)), settings_for(stub))
    assert result.status == 200
    for value in response["values"]:
        assert value["data"] == {}
        (error,) = value["errors"]
        assert (
            f"vectors of {DIMENSIONS + 1} dimensions, expected {DIMENSIONS}" in (error["message"])
        )


def test_wrong_vector_count_is_a_per_record_error(stub: OpenAIStub) -> None:
    stub.default = Reply(drop=1)
    result, response = answer(skill_body(records(2)), settings_for(stub))
    assert result.status == 200
    assert all("vectors for" in value["errors"][0]["message"] for value in response["values"])


def test_records_that_fail_chunking_keep_their_own_errors(stub: OpenAIStub) -> None:
    values = records(2) + [
        {"recordId": f"bad{n}", "data": data} for n, (data, _) in enumerate(BAD_RECORDS[:3])
    ]
    _, response = answer(skill_body(values), settings_for(stub))
    good, bad = response["values"][:2], response["values"][2:]
    assert check_vectors(good) == 10
    for value, (_, words) in zip(bad, BAD_RECORDS[:3], strict=False):
        (error,) = value["errors"]
        assert words in error["message"]
    assert sum(len(request["input"]) for request in stub.requests) == 10


def test_the_request_is_logged_without_document_text(
    stub: OpenAIStub, caplog: pytest.LogCaptureFixture
) -> None:
    stub.script(Reply(status=429, retry_after_ms=1))
    with caplog.at_level(logging.INFO, logger="skills.skill.service"):
        answer(skill_body(records(4)), settings_for(stub))
    (record,) = [r for r in caplog.records if r.getMessage().startswith("embedding ")]
    fields = record.embedding  # type: ignore[attr-defined]
    assert fields["records"] == 4
    assert fields["chunks"] == fields["embedded"] == 20
    assert (fields["batches"], fields["requests"], fields["retries"]) == (2, 3, 1)
    assert fields["throttled"] == 1
    assert fields["tokens"] > 20
    assert fields["seconds"] >= 0
    assert "Sentence" not in record.getMessage()


class CountingEmbedder:
    """A fake Embedder injected through build_app: one fixed vector per text, counted."""

    description = "fake"

    def __init__(self) -> None:
        self.calls: list[int] = []

    async def embed(
        self,
        texts: Sequence[str],
        deadline: float,
        progress: Callable[[int, int], None] | None = None,
    ) -> EmbeddingOutcome:
        self.calls.append(len(texts))
        results: tuple[Vector, ...] = tuple([float(len(text))] for text in texts)
        stats = EmbeddingStats(len(texts), len(texts), 0, 0, 1, 1, 0, 0, 0.0)
        return EmbeddingOutcome(results, stats)

    async def aclose(self) -> None:
        pass


def test_an_injected_embedder_is_called_once_per_request(call_function: FunctionCaller) -> None:
    import azure.functions as func

    fake = CountingEmbedder()
    app = func.AsgiFunctionApp(app=build_app(Settings(), embedder=fake))
    response = call_function(app, "POST", "/api/chunk", skill_body(records(7)))
    values = json.loads(response.get_body())["values"]
    assert fake.calls == [35]
    for value in values:
        for chunk in value["data"]["chunks"]:
            assert chunk["embedding"] == [float(len(chunk["text"]))]


def test_without_a_provider_chunks_have_no_embedding(call_function: FunctionCaller) -> None:
    app = function_app_with(Settings())
    response = call_function(app, "POST", "/api/chunk", skill_body(records(2)))
    for value in json.loads(response.get_body())["values"]:
        assert value["data"]["chunks"]
        assert all("embedding" not in chunk for chunk in value["data"]["chunks"])


def test_health_says_which_provider_is_active(
    stub: OpenAIStub, call_function: FunctionCaller
) -> None:
    app = function_app_with(settings_for(stub))
    health = json.loads(call_function(app, "GET", "/api/health").get_body())
    assert health["embedding"]["provider"] == "azure_openai"
    assert health["embedding"]["dimensions"] == DIMENSIONS
    assert health["configuration"]["azureOpenAIApiKey"]["value"] == "set"
    assert KEY not in json.dumps(health)


def test_health_says_none_without_endpoint_or_local_model(call_function: FunctionCaller) -> None:
    app = function_app_with(load_settings({}, local_installed=lambda _model: False))
    health = json.loads(call_function(app, "GET", "/api/health").get_body())
    assert health["embedding"]["provider"] == "none"
    assert "no local model installed" in health["embedding"]["reason"]
    endpoint = load_settings({"AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com"})
    assert endpoint.embedding.provider == "azure_openai"
    assert endpoint.embedding.azure_deployment == "text-embedding-3-small"


@pytest.mark.skipif(local_provider_installed(), reason="the local model is installed here")
def test_the_default_provider_is_none_when_the_local_model_is_not_installed() -> None:
    assert load_settings({}).embedding.provider == "none"


@pytest.fixture(scope="module")
def skill_over_http(stub: OpenAIStub, live_servers: LiveServers) -> str:
    return live_servers.start(settings_for(stub, deadline=5.0))


def test_over_real_http_with_the_stub_behind_it(stub: OpenAIStub, skill_over_http: str) -> None:
    response = httpx.post(
        f"{skill_over_http}/api/chunk", content=skill_body(records(10)), timeout=TIMEOUT
    )
    assert response.status_code == 200
    assert check_vectors(response.json()["values"]) == 50
    assert len(stub.requests) == math.ceil(50 / 16)

    stub.default = Reply(status=429, retry_after_ms=30_000)
    refused = httpx.post(
        f"{skill_over_http}/api/chunk", content=skill_body(records(1)), timeout=TIMEOUT
    )
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "30"
    assert refused.headers["content-type"] == "application/json"


def test_the_command_line_shows_a_progress_bar(stub: OpenAIStub, tmp_path: Path) -> None:
    files = []
    for n in range(3):
        path = tmp_path / f"doc{n}.md"
        path.write_text(document(n), encoding="utf-8")
        files.append(str(path))
    env = {
        **os.environ,
        "EMBEDDING_PROVIDER": "openai",
        "OPENAI_BASE_URL": stub.base_url,
        "OPENAI_API_KEY": KEY,
        "EMBEDDING_MODEL": "stub-model",
        "EMBEDDING_DIMENSIONS": str(DIMENSIONS),
        "EMBEDDING_BATCH_SIZE": "4",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "skills",
            *files,
            "-i",
            "unit=characters",
            "-i",
            "maximumPageLength=400",
            "--compact",
            "--progress",
        ],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "embedding [" in done.stderr
    assert "15/15 chunks" in done.stderr
    assert check_vectors(json.loads(done.stdout)["values"]) == 15
    assert len(stub.requests) == math.ceil(15 / 4)
