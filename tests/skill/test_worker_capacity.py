"""Small records keep a worker even while records that ran long hold every regular one,
and /api/health says "degraded" while they do (issue 26, item 2); tiny records go first.

Reproduction: two records under LARGE_CHARACTERS that ran to the deadline took both
workers, including the one kept for small records; a one-record request then waited 52 s
while health said "ok" with busy: 2.

Real parts: the app over HTTP on 127.0.0.1 with its own worker processes. The slow
records do not depend on any slow chunking path: they use the `semantic` strategy, whose
worker asks the app for sentence embeddings, and the test's embedder (injected through
build_app) holds every call whose text says "Hold" until the test lets go. So the test
orders events itself and asserts order and capacity, never a latency.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import httpx

from skills.embedding.embedder import EmbeddingOutcome, EmbeddingStats
from skills.skill.admission import LARGE_CHARACTERS, TINY_CHARACTERS
from skills.skill.app import build_app
from skills.skill.chunker_state import Done
from skills.skill.contract import InputRecord
from skills.skill.settings import Settings
from skills.skill.workers import ProcessChunker
from tests.conftest import GUIDE

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from skills.embedding.embedder import Failure, Vector
    from tests.conftest import LiveServers

WORKERS = 2
HOLD = "Hold"
"""Texts with this word wait in the embedder until the test releases them."""
GIVE_UP_SECONDS = 60.0
"""A bound on each wait of the test for a state (not a latency: a hang fails, not waits)."""
HELD: dict[str, object] = {
    "text": "# Held\n\n" + " ".join(f"{HOLD} sentence number {n}." for n in range(20)),
    "strategy": "semantic",
    "maximumPageLength": 200,
}
TINY: dict[str, object] = {"text": "# Tiny\n\nOne short paragraph."}


class HoldingEmbedder:
    """Answers at once, except calls with HOLD in a text: those wait for `release`."""

    description = "holding"

    def __init__(self) -> None:
        self.release = threading.Event()

    async def embed(
        self,
        texts: Sequence[str],
        deadline: float,
        progress: Callable[[int, int], None] | None = None,
    ) -> EmbeddingOutcome:
        if any(HOLD in text for text in texts):
            while not self.release.is_set():
                await asyncio.sleep(0.01)
        results: list[Vector | Failure] = [[1.0, float(len(text))] for text in texts]
        stats = EmbeddingStats(len(texts), len(texts), 0, 0, 1, 1, 0, 0, 0.0)
        return EmbeddingOutcome(tuple(results), stats)

    async def aclose(self) -> None:
        pass


def _body(record_id: str, data: dict[str, object]) -> bytes:
    return json.dumps({"values": [{"recordId": record_id, "data": data}]}).encode()


def _wait_for_health(
    client: httpx.Client, url: str, check: Callable[[dict[str, object]], bool]
) -> dict[str, object]:
    give_up = time.monotonic() + GIVE_UP_SECONDS
    while True:
        report: dict[str, object] = client.get(f"{url}/api/health").json()
        if check(report):
            return report
        assert time.monotonic() < give_up, report
        time.sleep(0.02)


def _chunking(report: dict[str, object]) -> dict[str, int]:
    chunking = report.get("chunking")
    assert isinstance(chunking, dict), report
    return chunking


def test_small_records_get_a_worker_while_long_running_records_hold_every_worker(
    live_servers: LiveServers,
) -> None:
    embedder = HoldingEmbedder()
    settings = Settings(chunk_workers=WORKERS, deadline_seconds=30.0)
    url = live_servers.start_app(build_app(settings, embedder=embedder))
    with httpx.Client(timeout=GIVE_UP_SECONDS) as client, ThreadPoolExecutor(WORKERS) as senders:
        _wait_for_health(client, url, lambda r: r["status"] == "ok")
        held = [
            senders.submit(client.post, f"{url}/api/chunk", content=_body(f"held{n}", HELD))
            for n in range(WORKERS)
        ]
        # Both regular workers are on a record that has run long: health must not say ok.
        stuck = _wait_for_health(client, url, lambda r: _chunking(r).get("long_running") == 2)
        assert stuck["status"] == "degraded"
        assert client.get(f"{url}/api/health").status_code == 503
        # A one-record request is chunked and answered while both held records still run.
        tiny = client.post(f"{url}/api/chunk", content=_body("tiny", TINY))
        assert tiny.status_code == 200, tiny.text
        (value,) = tiny.json()["values"]
        assert value["errors"] == []
        assert value["data"]["chunks"]
        assert not any(future.done() for future in held)
        assert _chunking(client.get(f"{url}/api/health").json())["spare"] >= 1
        embedder.release.set()
        for future in held:
            answer = future.result()
            assert answer.status_code == 200
            assert answer.json()["values"][0]["errors"] == []
        # Once a regular worker is free, health is ok again and the spare retires.
        after = _wait_for_health(
            client, url, lambda r: r["status"] == "ok" and _chunking(r)["spare"] == 0
        )
        assert _chunking(after)["long_running"] == 0


def test_a_tiny_record_goes_before_small_records_already_queued() -> None:
    """A one-record request does not wait behind a queue of whole batches: tiny records
    (TINY_CHARACTERS or less) are taken before the small ones queued earlier."""
    pool = ProcessChunker(1)
    medium = "\n\n".join(GUIDE.format(n=n) for n in range(200))  # ~90 K characters
    assert TINY_CHARACTERS < len(medium) <= LARGE_CHARACTERS
    finished: list[str] = []

    async def request(name: str, texts: list[str]) -> None:
        records = [InputRecord(f"{name}{n}", {"text": text}) for n, text in enumerate(texts)]
        outcomes = await pool.chunk(records, Settings(), time.monotonic() + GIVE_UP_SECONDS)
        assert all(isinstance(outcome, Done) for outcome in outcomes)
        finished.append(name)

    async def go() -> None:
        await request("warm", ["# Warm"])
        # Queued in this order while the one worker is busy with the first.
        await asyncio.gather(
            request("first", [medium]),
            request("batch", [medium] * 3),
            request("tiny", [GUIDE.format(n=0)]),
        )

    try:
        asyncio.run(go())
    finally:
        asyncio.run(pool.aclose())
    assert finished.index("tiny") < finished.index("batch"), finished
