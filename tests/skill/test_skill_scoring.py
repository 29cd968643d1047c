"""The scored strategies through the skill: a worker process asks the app for sentence
embeddings over its pipe, and a scorer that fails or hangs fails only its record.

Real parts: the app over HTTP on 127.0.0.1 with its own worker processes (forked from the
forkserver, as in production), and in-process through `azure.functions`; only the
embedder is a stand-in (the app's `Embedder` protocol, injected through build_app).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING

import httpx
import pytest

from skills.embedding.embedder import (
    EmbeddingOutcome,
    EmbeddingStats,
    Failure,
    FailureKind,
)
from skills.embedding.scoring import ScoringService
from skills.skill.app import build_app
from skills.skill.service import answer_chunk_request
from skills.skill.settings import Settings, load_settings
from skills.skill.thread_chunker import ThreadChunker
from skills.skill.workers import ProcessChunker
from testing.rerank_stub import RerankStub

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from skills.embedding.embedder import Vector
    from tests.conftest import LiveServers

TOPICS = ("apples", "engines")
"""The fake embedder's two dimensions: sentences about one or the other."""


def _document() -> str:
    fruit = " ".join(f"Apples grow in orchard {i} and apples are sweet." for i in range(12))
    motors = " ".join(f"Engines burn fuel in cylinder {i} and engines get hot." for i in range(12))
    return f"# Notes\n\n{fruit}\n\n{motors}\n"


class TopicEmbedder:
    """One dimension per topic word, counted; every call's texts are kept."""

    description = "topics"

    def __init__(self, *, hang: bool = False, fail: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.hang = hang
        self.fail = fail

    async def embed(
        self,
        texts: Sequence[str],
        deadline: float,
        progress: Callable[[int, int], None] | None = None,
    ) -> EmbeddingOutcome:
        self.calls.append(list(texts))
        if self.hang:
            await asyncio.sleep(3600)
        results: list[Vector | Failure]
        if self.fail:
            failure = Failure(FailureKind.UNAVAILABLE, "HTTP 500 from the test's service")
            results = [failure] * len(texts)
        else:
            results = [
                [float(text.lower().count(topic)) + 0.01 for topic in TOPICS] for text in texts
            ]
        stats = EmbeddingStats(len(texts), len(texts), 0, 0, 1, 1, 0, 0, 0.0)
        return EmbeddingOutcome(tuple(results), stats)

    async def aclose(self) -> None:
        pass


def _body(*records: dict[str, object]) -> bytes:
    values = [{"recordId": str(i), "data": data} for i, data in enumerate(records)]
    return json.dumps({"values": values}).encode()


SEMANTIC = {"text": _document(), "strategy": "semantic", "maximumPageLength": 200}
STRUCTURE = {"text": _document(), "maximumPageLength": 200}


def test_a_worker_process_gets_sentence_embeddings_from_the_apps_embedder(
    live_servers: LiveServers,
) -> None:
    embedder = TopicEmbedder()
    url = live_servers.start_app(build_app(Settings(chunk_workers=1), embedder=embedder))
    response = httpx.post(f"{url}/api/chunk", content=_body(SEMANTIC, STRUCTURE), timeout=60)
    assert response.status_code == 200
    semantic, structure = response.json()["values"]
    assert semantic["errors"] == []
    assert structure["errors"] == []
    chunks = semantic["data"]["chunks"]
    assert chunks
    # The cut falls where the topic changes: no chunk mixes apples and engines.
    for chunk in chunks:
        body = chunk["content"].lower()
        assert not ("apples" in body and "engines" in body), body
    # Sentences were embedded while chunking, then every chunk of both records in one go.
    *sentence_calls, chunk_call = embedder.calls
    assert sentence_calls, "the worker never asked the app for sentence embeddings"
    every_chunk = [c["text"] for value in (semantic, structure) for c in value["data"]["chunks"]]
    assert chunk_call == every_chunk
    assert all("embedding" in chunk for chunk in chunks)


def test_a_failing_sentence_embedder_fails_only_the_semantic_record() -> None:
    scoring = ScoringService(embedder=TopicEmbedder(fail=True))
    answer = asyncio.run(
        answer_chunk_request(
            _body(SEMANTIC, STRUCTURE), Settings(), chunker=ThreadChunker(), scoring=scoring
        )
    )
    semantic, structure = json.loads(answer.body)["values"]
    assert semantic["data"] == {}
    (error,) = semantic["errors"]
    assert "strategy 'semantic' could not score the text" in error["message"]
    assert "HTTP 500 from the test's service" in error["message"]
    assert structure["errors"] == []
    assert structure["data"]["chunks"]


@pytest.mark.parametrize("chunker", ["processes", "thread"])
def test_a_hanging_sentence_embedder_ends_its_record_at_the_deadline(chunker: str) -> None:
    async def run() -> tuple[dict[str, object], float, dict[str, object]]:
        workers = ProcessChunker(1) if chunker == "processes" else ThreadChunker()
        scoring = ScoringService(embedder=TopicEmbedder(hang=True))
        settings = Settings(deadline_seconds=3)
        started = time.monotonic()
        try:
            answer = await answer_chunk_request(
                _body(SEMANTIC), settings, chunker=workers, scoring=scoring
            )
            took = time.monotonic() - started
            # The same chunker answers the next request normally.
            after = await answer_chunk_request(_body(STRUCTURE), settings, chunker=workers)
        finally:
            await workers.aclose()
        return json.loads(answer.body)["values"][0], took, json.loads(after.body)["values"][0]

    record, took, after = asyncio.run(run())
    assert took < 3 + 1.5
    assert record["data"] == {}
    assert record["errors"], record
    assert after["errors"] == []
    assert after["data"]["chunks"]  # type: ignore[index]


def test_without_an_embedding_provider_a_semantic_record_says_so() -> None:
    answer = asyncio.run(answer_chunk_request(_body(SEMANTIC, STRUCTURE), Settings()))
    semantic, structure = json.loads(answer.body)["values"]
    (error,) = semantic["errors"]
    assert "no embedding provider is configured" in error["message"]
    assert structure["data"]["chunks"]


def test_the_app_scores_binary_splits_with_the_rerank_endpoint_its_settings_name(
    live_servers: LiveServers,
) -> None:
    """RERANK_ENDPOINT in the app settings: the worker's pair scores go through the app's
    rerank client (built from the settings) to the endpoint, over real HTTP both ways."""
    cats = " ".join(f"The cat number {n} purrs on the warm mat." for n in range(12))
    ships = " ".join(f"A ship number {n} sails across the cold sea." for n in range(12))
    record = {
        "text": f"{cats} {ships}",
        "strategy": "binary",
        "binaryScorer": "rerank",
        "binaryCandidates": 64,
        "unit": "characters",
        "maximumPageLength": 700,
    }
    with RerankStub(api_key="secret") as stub:
        settings = load_settings(
            {"RERANK_ENDPOINT": stub.endpoint, "RERANK_API_KEY": "secret", "CHUNK_WORKERS": "1"},
            lambda model: False,
        )
        url = live_servers.start_app(build_app(settings))
        response = httpx.post(f"{url}/api/chunk", content=_body(record), timeout=60)
        asked = len(stub.requests)
    (value,) = response.json()["values"]
    assert value["errors"] == []
    assert [chunk["content"].split()[1] for chunk in value["data"]["chunks"]] == ["cat", "ship"]
    assert asked > 0
