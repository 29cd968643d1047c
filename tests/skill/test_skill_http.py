"""The skill over real HTTP: uvicorn on 127.0.0.1, started by the tests."""

from __future__ import annotations

import os
import random
import threading
import time
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from skills.skill.settings import Settings
from tests.conftest import GUIDE, LiveServers, hundred_with_ten_bad, skill_body
from tests.paths import ROOT
from tests.servers import uvicorn_subprocess

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration

PROJECT = ROOT
TIMEOUT = httpx.Timeout(60.0)


@pytest.fixture(scope="module")
def base_url(live_servers: LiveServers) -> str:
    return live_servers.start(Settings())


def test_done_when_100_records_with_10_bad_ones_over_real_http(base_url: str) -> None:
    batch = hundred_with_ten_bad()
    response = httpx.post(
        f"{base_url}/api/chunk",
        content=batch.body(),
        headers={"content-type": "application/json"},
        timeout=TIMEOUT,
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    values: list[dict[str, Any]] = response.json()["values"]
    assert [value["recordId"] for value in values] == [v["recordId"] for v in batch.values]
    good = [value for value in values if not value["errors"]]
    bad = [value for value in values if value["errors"]]
    assert len(good) == 90
    assert all(value["data"]["chunks"] and value["data"]["textItems"] for value in good)
    assert len(bad) == 10
    for value in bad:
        assert value["data"] == {}
        (error,) = value["errors"]
        assert set(error) == {"message"}
        assert batch.bad[value["recordId"]] in error["message"]


def test_shuffled_batches_get_the_same_answers(base_url: str) -> None:
    batch = hundred_with_ten_bad()
    shuffled = list(batch.values)
    random.Random(7).shuffle(shuffled)
    first = httpx.post(f"{base_url}/api/chunk", content=batch.body(), timeout=TIMEOUT).json()
    second = httpx.post(
        f"{base_url}/api/chunk", content=skill_body(shuffled), timeout=TIMEOUT
    ).json()
    assert [v["recordId"] for v in second["values"]] == [v["recordId"] for v in shuffled]
    by_id = {value["recordId"]: value for value in first["values"]}
    assert all(by_id[value["recordId"]] == value for value in second["values"])


def test_unreadable_body_is_a_json_400(base_url: str) -> None:
    response = httpx.post(f"{base_url}/api/chunk", content=b"{", timeout=TIMEOUT)
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert "not valid JSON" in response.json()["error"]["message"]


def test_oversized_body_is_a_413(live_servers: LiveServers) -> None:
    small = live_servers.start(Settings(max_request_bytes=2000))
    body = skill_body([{"recordId": "1", "data": {"text": GUIDE.format(n=1) * 8}}])
    assert len(body) > 2000
    response = httpx.post(f"{small}/api/chunk", content=body, timeout=TIMEOUT)
    assert response.status_code == 413
    assert response.headers["content-type"] == "application/json"
    assert "MAX_REQUEST_BYTES" in response.json()["error"]["message"]


def test_health_stays_responsive_while_a_batch_is_chunked(base_url: str) -> None:
    big = "\n\n".join(f"## Part {n}\n\n" + "Words in a paragraph. " * 40 for n in range(1500))
    body = skill_body([{"recordId": "big", "data": {"text": big}}])
    with httpx.Client(timeout=TIMEOUT) as client:
        result: dict[str, httpx.Response] = {}
        worker = threading.Thread(
            target=lambda: result.setdefault(
                "chunk", client.post(f"{base_url}/api/chunk", content=body)
            )
        )
        worker.start()
        time.sleep(0.05)
        health = httpx.get(f"{base_url}/api/health", timeout=TIMEOUT)
        still_chunking = worker.is_alive()
        worker.join()
    assert still_chunking  # chunking runs on a worker thread, not on the event loop
    assert health.status_code == 200
    assert health.json()["status"] == "ok"
    assert result["chunk"].status_code == 200
    assert result["chunk"].json()["values"][0]["data"]["chunks"]


@pytest.fixture
def uvicorn_process() -> Iterator[str]:
    """`python -m uvicorn function_app:api`, the documented local command, as a subprocess."""
    env = {**os.environ, "CHUNK_UNIT": "characters", "CHUNK_MAXIMUM_PAGE_LENGTH": "1000"}
    with uvicorn_subprocess(env) as (url, _):
        yield url


def test_the_documented_uvicorn_command_serves_function_app(uvicorn_process: str) -> None:
    health = httpx.get(f"{uvicorn_process}/api/health", timeout=TIMEOUT).json()
    assert health["configuration"]["unit"]["value"] == "characters"
    assert health["configuration"]["maximumPageLength"] == {
        "value": 1000,
        "appSetting": "CHUNK_MAXIMUM_PAGE_LENGTH",
        "source": "app setting",
    }
    body = skill_body([{"recordId": "a", "data": {"text": GUIDE.format(n=1)}}])
    answer = httpx.post(f"{uvicorn_process}/api/chunk", content=body, timeout=TIMEOUT).json()
    (value,) = answer["values"]
    assert value["errors"] == []
    assert all(chunk["size"] <= 1000 for chunk in value["data"]["chunks"])
