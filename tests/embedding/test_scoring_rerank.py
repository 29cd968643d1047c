"""The rerank `PairClient` against a Cohere-style stub on 127.0.0.1 (issue 16, item 3)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import TYPE_CHECKING

import pytest

from chunking import ChunkOptions, Limits, Unit
from chunking.pipeline import chunk_document
from chunking.plan.binary_params import BinarySplit
from chunking.plan.scoring import ScoringError
from skills.embedding.scoring import ScoringService, blocking_scoring, build_pair_client
from skills.embedding.scoring.rerank import RerankClient, rerank_url
from skills.skill.settings import SettingsError, load_settings
from testing.rerank_stub import Fault, RerankStub

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration

PAIRS = [
    ("the cat sat on the mat", "a cat on a mat"),
    ("the cat sat on the mat", "ships at sea"),
    ("ships sail far", "ships sail far away"),
]


@pytest.fixture
def stub() -> Iterator[RerankStub]:
    with RerankStub(api_key="secret") as server:
        yield server


def score(client: RerankClient, pairs: list[tuple[str, str]], timeout: float = 5.0) -> list[float]:
    async def run() -> list[float]:
        try:
            return await client.score(pairs, timeout)
        finally:
            await client.aclose()

    return asyncio.run(run())


def test_pairs_sharing_a_query_go_in_one_request_and_come_back_in_order(
    stub: RerankStub,
) -> None:
    scores = score(RerankClient(stub.endpoint, "secret", "rerank-v3.5"), PAIRS)
    assert scores[0] > scores[1]
    assert scores[2] == 1.0
    assert len(stub.requests) == 2
    first = next(r for r in stub.requests if r.body["query"] == PAIRS[0][0])
    assert first.path == "/v1/rerank"
    assert first.headers["authorization"] == "Bearer secret"
    assert first.body == {
        "query": PAIRS[0][0],
        "documents": [PAIRS[0][1], PAIRS[1][1]],
        "top_n": 2,
        "model": "rerank-v3.5",
    }


def test_the_endpoint_may_be_the_target_url_or_the_rerank_url() -> None:
    assert rerank_url("https://x.models.ai.azure.com") == "https://x.models.ai.azure.com/v1/rerank"
    assert rerank_url("https://x.example/") == "https://x.example/v1/rerank"
    assert rerank_url("https://x.example/v2/rerank") == "https://x.example/v2/rerank"


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (Fault(status=500), "answered HTTP 500"),
        (
            Fault(status=429, body=b'{"message": "slow down"}'),
            "answered HTTP 429 (its message is not",
        ),
        (Fault(body=b"<html>gateway</html>"), "answered something other than {results"),
        (Fault(body=b'{"results": [{"index": "x"}]}'), "answered something other than"),
        (Fault(drop=1), "scored 1 documents of 2 sent"),
    ],
)
def test_a_bad_answer_is_a_scoring_error_in_our_words(
    stub: RerankStub, fault: Fault, message: str
) -> None:
    stub.script(fault)
    with pytest.raises(ScoringError, match="the rerank endpoint") as caught:
        score(RerankClient(stub.endpoint, "secret"), PAIRS[:2])
    assert message in str(caught.value)
    assert "slow down" not in str(caught.value)  # the endpoint's own words never


def test_a_wrong_key_is_an_http_401(stub: RerankStub) -> None:
    with pytest.raises(ScoringError, match="HTTP 401"):
        score(RerankClient(stub.endpoint, "wrong"), PAIRS[:1])


def test_a_slow_endpoint_fails_within_the_timeout(stub: RerankStub) -> None:
    stub.script(Fault(delay=3.0))
    with pytest.raises(ScoringError, match=r"did not answer within 0\.3 s"):
        score(RerankClient(stub.endpoint, "secret"), PAIRS[:1], timeout=0.3)


def test_an_endpoint_that_is_not_there_is_a_scoring_error() -> None:
    with RerankStub() as gone:
        endpoint = gone.endpoint
    with pytest.raises(ScoringError, match="could not be reached: no connection") as caught:
        score(RerankClient(endpoint), PAIRS[:1])
    assert "Error" not in str(caught.value)  # no exception name in our words


def test_the_settings_build_a_rerank_client_and_refuse_two_scorers(stub: RerankStub) -> None:
    settings = load_settings(
        {"RERANK_ENDPOINT": stub.endpoint, "RERANK_API_KEY": "secret", "RERANK_MODEL": "m"},
        lambda model: False,
    )
    client = build_pair_client(settings)
    assert isinstance(client, RerankClient)
    assert client.url == stub.endpoint + "/v1/rerank"
    assert build_pair_client(load_settings({}, lambda model: False)) is None
    with pytest.raises(SettingsError, match="set CROSS_ENCODER_PATH or RERANK_ENDPOINT, not both"):
        load_settings({"RERANK_ENDPOINT": stub.endpoint, "CROSS_ENCODER_PATH": "/tmp"})
    with pytest.raises(SettingsError, match="RERANK_ENDPOINT must start with https://"):
        load_settings({"RERANK_ENDPOINT": "ftp://x"})
    with pytest.raises(SettingsError, match="RERANK_API_KEY is set without RERANK_ENDPOINT"):
        load_settings({"RERANK_API_KEY": "k"})


def test_the_binary_strategy_splits_with_the_rerank_scorer(stub: RerankStub) -> None:
    """The whole path: chunk_document on a thread, its pair scores from the stub through
    ScoringService on an event loop, as the CLI and the skill's threads use it."""
    cats = " ".join(f"The cat number {n} purrs on the warm mat." for n in range(12))
    ships = " ".join(f"A ship number {n} sails across the cold sea." for n in range(12))
    options = ChunkOptions(
        limits=Limits(Unit.CHARACTERS, 700, 0),
        title_prefix=False,
        strategy="binary",
        parameters=BinarySplit(scorer="rerank", candidates=64),
    )
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    service = ScoringService(pairs=RerankClient(stub.endpoint, "secret"))
    try:
        scoring = blocking_scoring(service, loop, time.monotonic() + 30)
        document = chunk_document(f"{cats} {ships}", options=options, scoring=scoring)
    finally:
        asyncio.run_coroutine_threadsafe(service.aclose(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
    assert [c.content.split()[1] for c in document.chunks] == ["cat", "ship"]
    assert stub.requests
