"""Load: ten concurrent clients, as an indexer with degreeOfParallelism 10, for a bounded time.

The skill runs as documented (`python -m uvicorn function_app:api`) in a subprocess on
127.0.0.1, so its peak memory (VmHWM) can be read; embeddings come from the OpenAI stub with
a little latency. Every record of every batch must come back exactly as it does when the
skill is idle (same chunk ids, each chunk with the stub's vector of its own text). Latency
percentiles and peak memory are reported (terminal summary "hardening figures"); only
correctness and a generous memory bound are asserted.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from testing.openai_stub import OpenAIStub, vector_for
from tests.conftest import skill_body
from tests.hardening_report import FIGURES
from tests.paths import ROOT
from tests.servers import uvicorn_subprocess

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration

PROJECT = ROOT
FIXTURES = PROJECT / "tests" / "fixtures"
CLIENTS = 10
"""The indexer's maximum degreeOfParallelism."""
LOAD_SECONDS = 15.0
RECORDS_PER_BATCH = 3
DIMENSIONS = 64
STUB_LATENCY = 0.01
"""Seconds the embedding stub adds to each request."""
PEAK_MEMORY_BOUND_MB = 1_500
"""Generous: the skill idles at ~100 MB; an unbounded queue or a leak would pass this."""


def documents() -> list[tuple[str, dict[str, object]]]:
    """(name, record data) for every markdown and HTML fixture."""
    found: list[tuple[str, dict[str, object]]] = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.suffix not in (".md", ".html") or path.name == "SOURCES.md":
            continue
        found.append((path.name, {"text": path.read_text(encoding="utf-8"), "fileName": path.name}))
    return found


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(dimensions=DIMENSIONS, latency=STUB_LATENCY) as server:
        yield server


@pytest.fixture(scope="module")
def skill_process(stub: OpenAIStub) -> Iterator[tuple[str, int]]:
    """The documented local command, with the `openai` provider pointed at the stub."""
    env = {
        **os.environ,
        "EMBEDDING_PROVIDER": "openai",
        "OPENAI_BASE_URL": stub.base_url,
        "OPENAI_API_KEY": "load-test",
        "EMBEDDING_MODEL": "text-embedding-3-small",
        "EMBEDDING_DIMENSIONS": str(DIMENSIONS),
    }
    with uvicorn_subprocess(env) as (url, process):
        yield url, process.pid


def peak_memory_mb(pid: int) -> float:
    """The process's peak resident set size (VmHWM) in MB."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    (line,) = [line for line in status.splitlines() if line.startswith("VmHWM:")]
    return int(line.split()[1]) / 1024


def expected_chunk_ids(url: str, docs: list[tuple[str, dict[str, object]]]) -> dict[str, list[str]]:
    """Each document's chunk ids when the skill is idle (one document per request)."""
    expected: dict[str, list[str]] = {}
    with httpx.Client(timeout=60.0) as client:
        for name, data in docs:
            answer = client.post(
                f"{url}/api/chunk", content=skill_body([{"recordId": name, "data": data}])
            ).json()
            (value,) = answer["values"]
            assert value["errors"] == [], value["errors"]
            expected[name] = [chunk["id"] for chunk in value["data"]["chunks"]]
            assert expected[name]
    return expected


class Client(threading.Thread):
    """One of the indexer's parallel callers: sends batches and checks every answer."""

    def __init__(
        self,
        number: int,
        url: str,
        docs: list[tuple[str, dict[str, object]]],
        expected: dict[str, list[str]],
        stop: float,
    ) -> None:
        super().__init__(daemon=True)
        self.number = number
        self.url = url
        self.docs = docs
        self.expected = expected
        self.stop = stop
        self.latencies: list[float] = []
        self.records = 0
        self.problems: list[str] = []

    def run(self) -> None:
        batch = 0
        with httpx.Client(timeout=120.0) as client:
            while time.monotonic() < self.stop and not self.problems:
                picks = [
                    self.docs[(self.number * 7 + batch * RECORDS_PER_BATCH + k) % len(self.docs)]
                    for k in range(RECORDS_PER_BATCH)
                ]
                values: list[dict[str, object]] = [
                    {"recordId": f"c{self.number}-b{batch}-{k}-{name}", "data": data}
                    for k, (name, data) in enumerate(picks)
                ]
                started = time.monotonic()
                response = client.post(f"{self.url}/api/chunk", content=skill_body(values))
                self.latencies.append(time.monotonic() - started)
                self.check(response, values, [name for name, _ in picks])
                batch += 1

    def check(
        self, response: httpx.Response, values: list[dict[str, Any]], names: list[str]
    ) -> None:
        if response.status_code != 200:
            self.problems.append(f"HTTP {response.status_code}: {response.text[:200]}")
            return
        answered = response.json()["values"]
        if [value["recordId"] for value in answered] != [value["recordId"] for value in values]:
            self.problems.append("recordIds do not match the request")
            return
        for value, name in zip(answered, names, strict=True):
            if value["errors"]:
                self.problems.append(f"{value['recordId']}: {value['errors']}")
                continue
            chunks = value["data"]["chunks"]
            if [chunk["id"] for chunk in chunks] != self.expected[name]:
                self.problems.append(f"{value['recordId']}: chunks differ from the idle answer")
            for chunk in chunks:
                if chunk["size"] > 512 or chunk["embedding"] != vector_for(
                    chunk["text"], DIMENSIONS
                ):
                    self.problems.append(f"{value['recordId']}: wrong size or vector")
                    break
            self.records += 1


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def test_ten_concurrent_clients_get_every_record_right(
    skill_process: tuple[str, int], stub: OpenAIStub
) -> None:
    url, pid = skill_process
    docs = documents()
    assert len(docs) >= 10
    expected = expected_chunk_ids(url, docs)
    stop = time.monotonic() + LOAD_SECONDS
    clients = [Client(n, url, docs, expected, stop) for n in range(CLIENTS)]
    started = time.monotonic()
    for client in clients:
        client.start()
    for client in clients:
        client.join(LOAD_SECONDS + 120)
    elapsed = time.monotonic() - started
    assert not any(client.is_alive() for client in clients), "a client hung"
    problems = [problem for client in clients for problem in client.problems]
    assert problems == []

    latencies = [latency for client in clients for latency in client.latencies]
    records = sum(client.records for client in clients)
    peak = peak_memory_mb(pid)
    assert all(client.latencies for client in clients)  # every client got answers
    assert records == len(latencies) * RECORDS_PER_BATCH
    assert peak < PEAK_MEMORY_BOUND_MB
    FIGURES.add("records answered", records)
    p50, p99 = (round(percentile(latencies, share) * 1000) for share in (0.5, 0.99))
    FIGURES.note(
        "load",
        f"{CLIENTS} clients x {elapsed:.0f} s: {len(latencies)} batches, {records} records, "
        f"{len(stub.requests)} embedding requests; batch latency p50 {p50} ms, p99 {p99} ms, "
        f"max {max(latencies) * 1000:.0f} ms; server peak RSS (VmHWM) {peak:.0f} MB",
    )
