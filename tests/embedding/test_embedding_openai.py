"""The real `openai` client against the OpenAI-compatible stub on 127.0.0.1: both paths,
both encodings, and every fault the embedder must turn into a clear result."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

import pytest

from skills.embedding.clients import build_embedder, retry_after_seconds
from skills.embedding.embedder import BatchEmbedder, Failure, FailureKind, RetryPolicy
from skills.embedding.settings import EmbeddingSettings
from testing.openai_stub import OpenAIStub, Reply, vector_for

if TYPE_CHECKING:
    from collections.abc import Iterator

    from skills.embedding.clients import EncodingFormat
    from skills.embedding.embedder import EmbeddingOutcome

pytestmark = pytest.mark.integration

DIMENSIONS = 32
KEY = "test-key"
FAST = RetryPolicy(max_retries=3, initial_backoff=0.01, max_backoff=0.05)
TEXTS = [f"chunk number {n} of the test" for n in range(7)]


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(dimensions=DIMENSIONS, api_key=KEY) as server:
        yield server


@pytest.fixture(autouse=True)
def fresh(stub: OpenAIStub) -> None:
    stub.reset()


def azure_settings(stub: OpenAIStub, **changes: Any) -> EmbeddingSettings:
    values: dict[str, Any] = {
        "provider": "azure_openai",
        "model": "text-embedding-3-small",
        "dimensions": DIMENSIONS,
        "send_dimensions": True,
        "azure_endpoint": stub.azure_endpoint,
        "azure_deployment": "embedding",
        "azure_api_key": KEY,
        "batch_size": 3,
    }
    return EmbeddingSettings(**{**values, **changes})


def plain_settings(stub: OpenAIStub, **changes: Any) -> EmbeddingSettings:
    values: dict[str, Any] = {
        "provider": "openai",
        "model": "my-embedder",
        "dimensions": DIMENSIONS,
        "send_dimensions": False,
        "openai_base_url": stub.base_url,
        "openai_api_key": KEY,
        "batch_size": 3,
    }
    return EmbeddingSettings(**{**values, **changes})


def make(
    settings: EmbeddingSettings,
    *,
    encoding_format: EncodingFormat | None = None,
    retry: RetryPolicy = FAST,
    credential: object | None = None,
) -> BatchEmbedder:
    embedder = build_embedder(
        settings, encoding_format=encoding_format, retry=retry, credential=credential
    )
    assert embedder is not None
    return embedder


def embed(embedder: BatchEmbedder, texts: list[str], seconds: float = 10.0) -> EmbeddingOutcome:
    async def go() -> EmbeddingOutcome:
        try:
            return await embedder.embed(texts, time.monotonic() + seconds)
        finally:
            await embedder.aclose()

    return asyncio.run(go())


def failures(outcome: EmbeddingOutcome) -> list[Failure]:
    return [result for result in outcome.results if isinstance(result, Failure)]


@pytest.mark.parametrize("encoding_format", [None, "float"])
def test_azure_path_with_api_key(stub: OpenAIStub, encoding_format: EncodingFormat | None) -> None:
    outcome = embed(make(azure_settings(stub), encoding_format=encoding_format), TEXTS)
    assert list(outcome.results) == [vector_for(text, DIMENSIONS) for text in TEXTS]
    exchanges = stub.exchanges
    assert sorted(len(e.body["input"]) for e in exchanges) == [1, 3, 3]  # concurrent: any order
    for exchange in exchanges:
        assert exchange.path == "/openai/deployments/embedding/embeddings"
        assert exchange.query["api-version"] == ["2024-10-21"]
        assert exchange.headers["api-key"] == KEY
        assert exchange.body["dimensions"] == DIMENSIONS
        assert exchange.body["encoding_format"] == (encoding_format or "base64")


@pytest.mark.parametrize("encoding_format", [None, "float"])
def test_plain_v1_path(stub: OpenAIStub, encoding_format: EncodingFormat | None) -> None:
    outcome = embed(make(plain_settings(stub), encoding_format=encoding_format), TEXTS)
    assert list(outcome.results) == [vector_for(text, DIMENSIONS) for text in TEXTS]
    for exchange in stub.exchanges:
        assert exchange.path == "/v1/embeddings"
        assert exchange.headers["authorization"] == f"Bearer {KEY}"
        assert exchange.body["model"] == "my-embedder"
        assert "dimensions" not in exchange.body  # not a text-embedding-3 model
        assert exchange.body["encoding_format"] == (encoding_format or "base64")


def test_429_with_retry_after_ms_is_retried(stub: OpenAIStub) -> None:
    stub.script(*[Reply(status=429, retry_after_ms=5)] * 3)
    outcome = embed(make(azure_settings(stub, batch_size=16, concurrency=1)), TEXTS)
    assert list(outcome.results) == [vector_for(text, DIMENSIONS) for text in TEXTS]
    assert stub.statuses == [429, 429, 429, 200]
    assert (outcome.stats.retries, outcome.stats.throttled) == (3, 3)
    assert outcome.retry_after == pytest.approx(0.005)


def test_500s_back_off_and_recover(stub: OpenAIStub) -> None:
    stub.script(Reply(status=500), Reply(status=503))
    outcome = embed(make(plain_settings(stub, batch_size=16)), TEXTS)
    assert not failures(outcome)
    assert stub.statuses == [500, 503, 200]


def test_persistent_500s_become_failures(stub: OpenAIStub) -> None:
    stub.default = Reply(status=500, message="backend exploded")
    outcome = embed(make(plain_settings(stub, batch_size=16)), TEXTS)
    assert len(stub.requests) == FAST.max_retries + 1
    (first, *_) = failures(outcome)
    assert first.kind is FailureKind.UNAVAILABLE
    assert "HTTP 500" in first.message
    assert "backend exploded" not in first.message  # the service's words go to the logs


def test_slow_answers_end_at_the_deadline(stub: OpenAIStub) -> None:
    stub.default = Reply(delay=3.0)
    outcome = embed(make(azure_settings(stub)), TEXTS, seconds=0.6)
    assert len(outcome.results) == len(TEXTS)
    assert {f.kind for f in failures(outcome)} <= {FailureKind.TIMEOUT, FailureKind.DEADLINE}
    assert len(failures(outcome)) == len(TEXTS)


def test_wrong_vector_count(stub: OpenAIStub) -> None:
    stub.script(Reply(drop=1))
    outcome = embed(make(azure_settings(stub, batch_size=16)), TEXTS)
    assert len(stub.requests) == 1  # a wrong answer is not retried
    assert {f.kind for f in failures(outcome)} == {FailureKind.BAD_RESPONSE}
    assert "returned 6 vectors for 7 inputs" in failures(outcome)[0].message


def test_no_vectors_at_all_is_a_bad_response(stub: OpenAIStub) -> None:
    stub.script(Reply(drop=7))
    outcome = embed(make(azure_settings(stub, batch_size=16)), TEXTS)
    assert {f.kind for f in failures(outcome)} == {FailureKind.BAD_RESPONSE}


def test_wrong_dimensions(stub: OpenAIStub) -> None:
    stub.default = Reply(dimensions=DIMENSIONS * 2)
    outcome = embed(make(azure_settings(stub), encoding_format="float"), TEXTS)
    assert len(failures(outcome)) == len(TEXTS)
    assert f"vectors of {DIMENSIONS * 2} dimensions, expected {DIMENSIONS}" in (
        failures(outcome)[0].message
    )


def test_401_is_an_auth_failure_and_not_retried(stub: OpenAIStub) -> None:
    outcome = embed(make(azure_settings(stub, azure_api_key="wrong", batch_size=16)), TEXTS)
    assert stub.statuses == [401]
    (first, *_) = failures(outcome)
    assert first.kind is FailureKind.AUTH
    assert "HTTP 401" in first.message
    assert "AZURE_OPENAI_API_KEY" in first.message


class FailingCredential:
    """A credential as azure-identity's would fail without a managed identity."""

    def __init__(self) -> None:
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **kwargs: object) -> object:
        self.scopes.append(scopes)
        raise RuntimeError("ManagedIdentityCredential: no identity endpoint")


class StaticCredential:
    """A credential that hands out a fixed token."""

    def get_token(self, *scopes: str, **kwargs: object) -> object:
        from azure.core.credentials import AccessToken

        return AccessToken(KEY, int(time.time()) + 3600)


def test_without_a_key_a_token_provider_is_used(stub: OpenAIStub) -> None:
    embedder = make(azure_settings(stub, azure_api_key=None), credential=StaticCredential())
    client: Any = embedder.client
    assert client.client._azure_ad_token_provider is not None
    assert "Microsoft Entra ID" in embedder.description
    outcome = embed(embedder, TEXTS[:2])
    assert not failures(outcome)
    assert stub.exchanges[0].headers["authorization"] == f"Bearer {KEY}"
    assert "api-key" not in stub.exchanges[0].headers


def test_a_credential_failure_is_a_clear_auth_failure(stub: OpenAIStub) -> None:
    credential = FailingCredential()
    outcome = embed(make(azure_settings(stub, azure_api_key=None), credential=credential), TEXTS)
    assert stub.requests == []  # nothing was sent without a token
    assert credential.scopes[0] == ("https://cognitiveservices.azure.com/.default",)
    (first, *_) = failures(outcome)
    assert first.kind is FailureKind.AUTH
    assert "no Microsoft Entra ID token" in first.message
    assert "Cognitive Services OpenAI User" in first.message


def test_a_token_quota_answers_429_with_retry_after(stub: OpenAIStub) -> None:
    with OpenAIStub(dimensions=4, tokens_per_minute=30, window_seconds=0.3) as quota:
        embedder = make(
            plain_settings(quota, dimensions=4, openai_api_key=None, batch_size=1, concurrency=1),
            retry=RetryPolicy(max_retries=10),
        )
        texts = ["one two three four five six seven eight nine ten"] * 4  # 10 tokens each
        outcome = embed(embedder, texts)
        statuses = quota.statuses
        assert not failures(outcome)
        assert statuses.count(200) == 4
        assert 429 in statuses  # the fourth request had to wait for the window
        throttled = next(e for e in quota.exchanges if e.status == 429)
        assert throttled.body["input"] == texts[:1]


def test_retry_after_header_forms() -> None:
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "2.5"}) == 2.5
    assert retry_after_seconds({}) is None
    future = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    seconds = retry_after_seconds({"retry-after": future})
    assert seconds is not None
    assert 25 < seconds <= 31
