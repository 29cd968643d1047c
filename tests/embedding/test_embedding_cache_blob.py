"""The blob embedding cache against a real Azurite process: hits, misses, partial hits, and
every fault of issue 36 item 2 (throttled, slow, unreachable, full, corrupt, wrong length,
concurrent writers), through the real azure-storage-blob client and the OpenAI stub."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import TYPE_CHECKING

import pytest
from azure.storage.blob import ContainerClient

from skills.embedding.cache import cache_key, encode_vector
from skills.embedding.cache_stores import BLOB_PREFIX
from skills.embedding.clients import build_embedder
from skills.embedding.embedder import Failure
from testing.azurite import ACCOUNT, connection_string
from testing.openai_stub import OpenAIStub, vector_for
from testing.storage_faults import StorageFaults
from tests.embedding_cache_helpers import embed_once, stub_settings, stub_vectors

if TYPE_CHECKING:
    from collections.abc import Iterator

    from skills.embedding.cache import CacheState
    from skills.embedding.embedder import EmbeddingOutcome
    from skills.embedding.settings import EmbeddingSettings
    from testing.azurite import Azurite

pytestmark = pytest.mark.integration

DIMENSIONS = 24
TEXTS = [f"Chunk {n}: how to configure the indexer's schedule, part {n}." for n in range(20)]


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(dimensions=DIMENSIONS) as server:
        yield server


@pytest.fixture
def container() -> str:
    """A container of its own for each test: no test sees another's entries."""
    return f"cache-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def proxy(azurite: Azurite) -> Iterator[StorageFaults]:
    with StorageFaults(azurite.endpoint()) as faults:
        yield faults


def settings(
    stub: OpenAIStub, blob_connection: str, container: str, **more: str
) -> EmbeddingSettings:
    return stub_settings(
        stub,
        DIMENSIONS,
        EMBEDDING_CACHE="blob",
        EMBEDDING_CACHE_CONNECTION_STRING=blob_connection,
        EMBEDDING_CACHE_CONTAINER=container,
        **more,
    )


def through(proxy: StorageFaults) -> str:
    return connection_string({"blob": proxy.blob_url(ACCOUNT)})


def embed(
    chosen: EmbeddingSettings, texts: list[str], seconds: float = 30.0
) -> tuple[EmbeddingOutcome, CacheState]:
    return embed_once(chosen, texts, seconds)


def sent(stub: OpenAIStub, since: int) -> list[str]:
    """Every input the stub was asked to embed since request number `since`, sorted
    (batches run concurrently)."""
    return sorted(text for body in stub.requests[since:] for text in body["input"])


def right(outcome: EmbeddingOutcome, texts: list[str]) -> bool:
    return stub_vectors(outcome, texts, DIMENSIONS)


def test_second_run_makes_no_request_and_answers_the_same_floats(
    stub: OpenAIStub, azurite: Azurite, container: str
) -> None:
    chosen = settings(stub, azurite.connection_string, container)
    before = len(stub.requests)
    first, state = embed(chosen, TEXTS)
    assert sent(stub, before) == sorted(TEXTS)
    assert (state.hits, state.misses, state.writes) == (0, len(TEXTS), len(TEXTS))
    again = len(stub.requests)
    second, state = embed(chosen, TEXTS)
    assert len(stub.requests) == again  # not one embedding request
    assert second.results == first.results
    assert right(second, TEXTS)
    assert (second.stats.cached, second.stats.requests, second.stats.tokens) == (len(TEXTS), 0, 0)
    assert state.as_json()["hitRate"] == 1.0
    assert state.state == "ok"
    # Bit for bit: the floats' bytes, not only their values.
    assert [encode_vector(v) for v in second.results if not isinstance(v, Failure)] == [
        encode_vector(v) for v in first.results if not isinstance(v, Failure)
    ]


def test_one_batch_with_hits_and_misses_sends_only_the_misses(
    stub: OpenAIStub, azurite: Azurite, container: str
) -> None:
    chosen = settings(stub, azurite.connection_string, container)
    embed(chosen, TEXTS[::2])
    before = len(stub.requests)
    mixed, state = embed(chosen, TEXTS)
    assert sent(stub, before) == sorted(TEXTS[1::2])
    assert right(mixed, TEXTS)
    assert (mixed.stats.cached, state.hits, state.misses) == (10, 10, 10)


def test_the_key_holds_the_model_and_dimensions(
    stub: OpenAIStub, azurite: Azurite, container: str
) -> None:
    embed(settings(stub, azurite.connection_string, container), TEXTS[:3])
    before = len(stub.requests)
    other = settings(
        stub, azurite.connection_string, container, EMBEDDING_MODEL="text-embedding-3-large"
    )
    outcome, state = embed(other, TEXTS[:3])
    assert sent(stub, before) == sorted(TEXTS[:3])
    assert state.hits == 0
    assert right(outcome, TEXTS[:3])


def test_corrupt_and_wrong_length_entries_are_ignored_then_replaced(
    stub: OpenAIStub, azurite: Azurite, container: str
) -> None:
    chosen = settings(stub, azurite.connection_string, container)
    embed(chosen, TEXTS[:4])
    build = build_embedder(chosen)
    assert build is not None
    assert build.cache is not None
    identity = build.cache.identity
    blobs = ContainerClient.from_connection_string(azurite.connection_string, container)
    garbage = {
        TEXTS[0]: b"\x00not a vector",
        TEXTS[1]: encode_vector([0.5] * (DIMENSIONS - 1)),  # wrong length
        TEXTS[2]: encode_vector(vector_for(TEXTS[2], DIMENSIONS))[:-4] + b"\x01\x02\x03\x04",
    }
    for text, data in garbage.items():
        blobs.upload_blob(BLOB_PREFIX + cache_key(identity, text), data, overwrite=True)
    before = len(stub.requests)
    outcome, state = embed(chosen, TEXTS[:4])
    assert right(outcome, TEXTS[:4])
    assert sent(stub, before) == sorted(garbage)
    assert (state.corrupt, state.hits) == (3, 1)
    again = len(stub.requests)
    outcome, state = embed(chosen, TEXTS[:4])  # replaced by the run before
    assert len(stub.requests) == again
    assert state.hits == 4
    assert right(outcome, TEXTS[:4])
    blobs.close()


@pytest.mark.parametrize("status", [503, 429, 500])
def test_a_throttled_or_failing_store_costs_misses_not_records(
    stub: OpenAIStub, container: str, proxy: StorageFaults, status: int
) -> None:
    chosen = settings(stub, through(proxy), container)
    embed(chosen, TEXTS[:5])
    proxy.fail(status)
    before = len(stub.requests)
    outcome, state = embed(chosen, TEXTS[:5])
    assert right(outcome, TEXTS[:5])
    assert sent(stub, before) == sorted(TEXTS[:5])
    assert state.state == "failing"
    assert state.hits == 0
    assert state.skipped == 5
    assert state.last_error is not None
    assert str(status) in state.last_error
    proxy.passing()
    again = len(stub.requests)
    outcome, state = embed(chosen, TEXTS[:5])
    assert len(stub.requests) == again
    assert state.state == "ok"
    assert right(outcome, TEXTS[:5])


def test_a_stalled_store_is_given_up_within_the_lookup_budget(
    stub: OpenAIStub, container: str, proxy: StorageFaults
) -> None:
    chosen = settings(stub, through(proxy), container, EMBEDDING_CACHE_LOOKUP_SECONDS="0.3")
    proxy.stall(120.0)
    before = len(stub.requests)

    # A deadline far below the stall: waiting for the store would fail every chunk.
    async def run() -> tuple[EmbeddingOutcome, CacheState]:
        embedder = build_embedder(chosen)
        assert embedder is not None
        assert embedder.cache is not None
        outcome = await embedder.embed(TEXTS, time.monotonic() + 8.0)
        proxy.passing()  # let the writes through, then close
        await embedder.aclose()
        return outcome, embedder.cache.state()

    outcome, state = asyncio.run(run())
    assert right(outcome, TEXTS)
    assert sent(stub, before) == sorted(TEXTS)
    assert state.skipped == len(TEXTS)
    assert state.last_error is not None
    assert "budget" in state.last_error


def test_an_unreachable_store_costs_misses_not_records(stub: OpenAIStub, container: str) -> None:
    with StorageFaults("http://127.0.0.1:9") as closed:
        nowhere = through(closed)
    chosen = settings(stub, nowhere, container)  # the proxy has stopped: nothing listens
    outcome, state = embed(chosen, TEXTS[:3])
    assert right(outcome, TEXTS[:3])
    assert state.state == "failing"
    assert state.write_errors == 3
    assert state.last_error is not None
    assert "could not be reached" in state.last_error


def test_a_full_store_refusing_writes_costs_nothing_but_the_entries(
    stub: OpenAIStub, container: str, proxy: StorageFaults
) -> None:
    chosen = settings(stub, through(proxy), container)
    proxy.fail(409, method="PUT")
    outcome, state = embed(chosen, TEXTS[:3])
    assert right(outcome, TEXTS[:3])
    assert (state.writes, state.write_errors, state.state) == (0, 3, "failing")
    before = len(stub.requests)
    outcome, state = embed(chosen, TEXTS[:3])
    assert right(outcome, TEXTS[:3])
    assert sent(stub, before) == sorted(TEXTS[:3])


def test_concurrent_writers_of_the_same_keys_are_harmless(
    stub: OpenAIStub, azurite: Azurite, container: str
) -> None:
    chosen = settings(stub, azurite.connection_string, container)

    async def together() -> list[EmbeddingOutcome]:
        embedders = [build_embedder(chosen) for _ in range(4)]
        outcomes = await asyncio.gather(
            *(e.embed(TEXTS, time.monotonic() + 30) for e in embedders if e is not None)
        )
        await asyncio.gather(*(e.aclose() for e in embedders if e is not None))
        return list(outcomes)

    for outcome in asyncio.run(together()):
        assert right(outcome, TEXTS)
    before = len(stub.requests)
    outcome, state = embed(chosen, TEXTS)
    assert len(stub.requests) == before
    assert state.corrupt == 0
    assert right(outcome, TEXTS)


def test_writes_never_hold_the_answer(
    stub: OpenAIStub, container: str, proxy: StorageFaults
) -> None:
    chosen = settings(stub, through(proxy), container)
    proxy.stall(120.0, method="PUT")  # every write hangs until released

    async def run() -> tuple[EmbeddingOutcome, CacheState]:
        embedder = build_embedder(chosen)
        assert embedder is not None
        assert embedder.cache is not None
        # A deadline far below the stall: an answer that waited for a write would fail.
        outcome = await embedder.embed(TEXTS, time.monotonic() + 8.0)
        state = embedder.cache.state()
        proxy.passing()
        await embedder.aclose()
        return outcome, state

    outcome, state = asyncio.run(run())
    assert right(outcome, TEXTS)
    assert state.writes == 0  # none had finished when the answer was back


def test_after_a_failure_requests_skip_the_store_for_a_rest(
    stub: OpenAIStub, container: str, proxy: StorageFaults
) -> None:
    chosen = settings(stub, through(proxy), container)
    proxy.fail(503, method="GET")

    async def run() -> tuple[list[EmbeddingOutcome], CacheState, int]:
        embedder = build_embedder(chosen)
        assert embedder is not None
        assert embedder.cache is not None
        first = await embedder.embed(TEXTS[:4], time.monotonic() + 30)
        asked = sum(1 for method, _ in proxy.requests if method == "GET")
        second = await embedder.embed(TEXTS[4:8], time.monotonic() + 30)
        again = sum(1 for method, _ in proxy.requests if method == "GET") - asked
        state = embedder.cache.state()
        proxy.passing()
        await embedder.aclose()
        return [first, second], state, again

    (first, second), state, again = asyncio.run(run())
    assert right(first, TEXTS[:4])
    assert right(second, TEXTS[4:8])
    assert again == 0  # the second request did not wait on the failing store
    assert state.skipped == 8


def test_a_full_write_queue_drops_vectors_not_records(
    stub: OpenAIStub, container: str, proxy: StorageFaults, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = len(encode_vector(vector_for(TEXTS[0], DIMENSIONS)))
    monkeypatch.setattr("skills.embedding.cache.WRITE_QUEUE_BYTES", 3 * entry)
    chosen = settings(stub, through(proxy), container)
    proxy.stall(120.0, method="PUT")  # nothing leaves the queue

    async def run() -> tuple[EmbeddingOutcome, CacheState]:
        embedder = build_embedder(chosen)
        assert embedder is not None
        assert embedder.cache is not None
        outcome = await embedder.embed(TEXTS[:10], time.monotonic() + 30)
        state = embedder.cache.state()
        proxy.passing()
        await embedder.aclose()
        return outcome, state

    outcome, state = asyncio.run(run())
    assert right(outcome, TEXTS[:10])
    assert state.writes_dropped == 7


def test_a_lookup_out_of_time_keeps_what_came_back(
    stub: OpenAIStub, container: str, proxy: StorageFaults
) -> None:
    chosen = settings(stub, through(proxy), container, EMBEDDING_CACHE_LOOKUP_SECONDS="1")
    embed(chosen, TEXTS[:6])
    build = build_embedder(chosen)
    assert build is not None
    assert build.cache is not None
    slow = cache_key(build.cache.identity, TEXTS[0])
    proxy.stall(120.0, method="GET", path=slow)  # one entry's read hangs
    before = len(stub.requests)

    async def run() -> tuple[EmbeddingOutcome, CacheState]:
        embedder = build_embedder(chosen)
        assert embedder is not None
        assert embedder.cache is not None
        outcome = await embedder.embed(TEXTS[:6], time.monotonic() + 30)
        state = embedder.cache.state()
        proxy.passing()
        await embedder.aclose()
        return outcome, state

    outcome, state = asyncio.run(run())
    assert right(outcome, TEXTS[:6])
    assert sent(stub, before) == [TEXTS[0]]  # the five that came back were hits
    assert (state.hits, state.misses, state.state) == (5, 1, "ok")
