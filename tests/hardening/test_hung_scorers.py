"""Scorer calls that hang (issue 35 item 7): a record waiting for its scorer is told so,
not to split a 473-character document, and records that need no scorer are not queued
behind those that wait for one. Over uvicorn on 127.0.0.1, with the real openai client
against the local stub (testing/openai_stub.py) made to hang."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from skills.embedding.settings import EmbeddingSettings, PairScorerSettings
from skills.skill.chunker_state import Overran
from skills.skill.contract import InputRecord
from skills.skill.service import _unfinished
from skills.skill.settings import Settings
from testing.openai_stub import OpenAIStub, Reply
from testing.rerank_stub import Fault, RerankStub
from tests.conftest import skill_body

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.conftest import LiveServers

pytestmark = pytest.mark.integration

DIMENSIONS = 8
KEY = "hung-key"
HANG = Reply(delay=600.0)
"""Until the stub stops (it answers at once then)."""
SMALL = (
    "# Notes\n\n"
    + "The cluster restarts its nodes one at a time during an upgrade. " * 4
    + "\n\nEach node drains its connections before it stops, and rejoins after. " * 3
)
"""Markdown of 478 characters, about issue 35's 473."""


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(dimensions=DIMENSIONS, api_key=KEY) as server:
        yield server


def hung_settings(stub: OpenAIStub, deadline: float, workers: int = 2) -> Settings:
    stub.default = HANG
    embedding = EmbeddingSettings(
        provider="azure_openai",
        provider_reason="test",
        model="text-embedding-3-small",
        dimensions=DIMENSIONS,
        azure_endpoint=stub.azure_endpoint,
        azure_deployment="emb",
        azure_api_key=KEY,
    )
    return Settings(chunk_workers=workers, deadline_seconds=deadline, embedding=embedding)


def status(server: str) -> str:
    """/api/health's status."""
    return str(httpx.get(f"{server}/api/health", timeout=10.0).json()["status"])


def busy(server: str) -> int:
    """Workers on a record now, as /api/health says."""
    health = httpx.get(f"{server}/api/health", timeout=10.0).json()
    return int(health["chunking"]["busy"])


def semantic(record_id: str) -> dict[str, Any]:
    return {"recordId": record_id, "data": {"text": SMALL, "strategy": "semantic"}}


@pytest.mark.parametrize("workers", [2, 0])
def test_small_records_whose_scorer_hangs_are_told_the_scorer_did_not_answer(
    live_servers: LiveServers, stub: OpenAIStub, workers: int
) -> None:
    """Regression (issue 35 item 7): two 473-character `semantic` records whose embedding
    calls hang were told to "split the document into smaller ones"."""
    server = live_servers.start(hung_settings(stub, deadline=2.0, workers=workers))
    give_up = time.monotonic() + 60.0  # workers ready (a guard, not a measurement)
    while status(server) == "starting" and time.monotonic() < give_up:
        time.sleep(0.05)
    body = skill_body([semantic("a"), semantic("b")])
    response = httpx.post(f"{server}/api/chunk", content=body, timeout=60.0)
    assert response.status_code == 200
    messages = []
    for value in response.json()["values"]:
        (error,) = value["errors"]
        assert value["data"] == {}
        assert "split the document" not in error["message"]
        messages.append(error["message"])
    # With threads (CHUNK_WORKERS=0) records run one after another: the second one is
    # told that the first took the time, which is what happened; or, when the first
    # gave up on its scorer early enough (a loaded machine), that its own call did not
    # answer either. Either way a message about its scorer names the deadline.
    waited = [message for message in messages if "embedding" in message]
    assert len(waited) == 2 if workers else len(waited) in {1, 2}
    assert all("deadline" in message for message in waited)


def test_a_record_stopped_while_waiting_for_its_scorer_is_told_so() -> None:
    """When the worker could not even fail the record in time, the app's own message
    names the scorer, not the record's size."""
    record = InputRecord("a", {"text": SMALL})
    (message,) = _unfinished(record, Overran("rerank"), Settings()).errors
    assert "waiting for the rerank scorer" in message
    assert "split the document" not in message
    (sized,) = _unfinished(record, Overran(), Settings()).errors
    assert "split the document" in sized


BINARY: dict[str, object] = {
    "text": " ".join(f"The cat number {n} purrs on the warm mat." for n in range(12))
    + " "
    + " ".join(f"A ship number {n} sails across the cold sea." for n in range(12)),
    "strategy": "binary",
    "binaryScorer": "rerank",
    "unit": "characters",
    "maximumPageLength": 700,
}
"""A record `binary` splits with the rerank endpoint's pair scores (~1,000 characters)."""


@pytest.fixture(scope="module")
def rerank() -> Iterator[RerankStub]:
    with RerankStub() as server:
        yield server


def test_a_request_that_needs_no_scorer_is_not_queued_behind_hung_scorer_calls(
    live_servers: LiveServers, rerank: RerankStub
) -> None:
    """Regression (issue 35 item 7): six scored records whose scorer calls hang took both
    workers and both spares, and a tiny `structure` request waited for their deadline.
    Now it is answered, chunked, while those records are still waiting for their scorer."""
    rerank.script(*[Fault(delay=40.0)] * 20)
    pairs = PairScorerSettings(rerank_endpoint=rerank.endpoint)
    server = live_servers.start(Settings(chunk_workers=2, deadline_seconds=15.0, pairs=pairs))
    hung: list[httpx.Response] = []

    def send_hung() -> None:
        body = skill_body([{"recordId": f"s{n}", "data": BINARY} for n in range(6)])
        hung.append(httpx.post(f"{server}/api/chunk", content=body, timeout=60.0))

    sender = threading.Thread(target=send_hung, daemon=True)
    sender.start()
    give_up = time.monotonic() + 30.0  # a guard against a broken stub, not a measurement
    while not rerank.requests and time.monotonic() < give_up:
        time.sleep(0.05)
    assert rerank.requests, "the binary records never called their scorer"
    tiny: dict[str, object] = {"recordId": "t", "data": {"text": "# Title\n\nA short paragraph."}}
    response = httpx.post(f"{server}/api/chunk", content=skill_body([tiny]), timeout=60.0)
    held = busy(server)  # workers still on the hung records
    sender.join(60.0)
    assert response.status_code == 200
    (value,) = response.json()["values"]
    assert value["errors"] == []
    assert value["data"]["chunks"]
    assert held, "the tiny request was answered only once the hung records ended"
    (answer,) = hung
    assert answer.status_code == 200
    messages = [
        error["message"] for record in answer.json()["values"] for error in record["errors"]
    ]
    assert len(messages) == 6
    assert any("rerank" in message for message in messages)
