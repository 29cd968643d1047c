"""Two instances of the skill (uvicorn, real HTTP) sharing one blob container in Azurite:
the second answers the same request with the same bytes and no embedding request, and
/api/health says the cache's state and hit rate, without the connection string."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import httpx
import pytest

from skills.skill.settings import load_settings
from testing.openai_stub import OpenAIStub
from testing.storage_faults import wait_until
from tests.conftest import skill_body

if TYPE_CHECKING:
    from skills.skill.settings import Settings
    from testing.azurite import Azurite
    from tests.conftest import LiveServers

pytestmark = pytest.mark.integration

DIMENSIONS = 32
GUIDE = """# Rotate keys

Keys are rotated every ninety days.

## Before you start

Find the storage account and the apps that read its keys. {n}

## Steps

Regenerate the secondary key, move every app to it, then regenerate the primary key.
Wait for the apps to pick up the new key before you regenerate the other one, or they
lose access for as long as their configuration is stale.

## Check

Read the storage account's sign-in logs: no request should fail with an old key.
"""


def settings(stub: OpenAIStub, azurite: Azurite, container: str) -> Settings:
    return load_settings(
        {
            "EMBEDDING_PROVIDER": "openai",
            "OPENAI_BASE_URL": stub.base_url,
            "EMBEDDING_MODEL": "text-embedding-3-small",
            "EMBEDDING_DIMENSIONS": str(DIMENSIONS),
            "EMBEDDING_CACHE": "blob",
            "EMBEDDING_CACHE_CONNECTION_STRING": azurite.connection_string,
            "EMBEDDING_CACHE_CONTAINER": container,
            "CHUNK_WORKERS": "0",
        }
    )


def body() -> bytes:
    return skill_body(
        [
            {
                "recordId": f"r{n}",
                "data": {"text": GUIDE.format(n=n), "unit": "characters", "maximumPageLength": 300},
            }
            for n in range(8)
        ]
    )


def test_a_second_instance_answers_the_same_bytes_without_embedding_requests(
    azurite: Azurite, live_servers: LiveServers
) -> None:
    container = f"skill-{uuid.uuid4().hex[:12]}"
    with OpenAIStub(dimensions=DIMENSIONS) as stub:
        first = live_servers.start(settings(stub, azurite, container))
        second = live_servers.start(settings(stub, azurite, container))
        with httpx.Client(timeout=60) as client:
            unused = client.get(f"{second}/api/health").json()["embeddingCache"]
            assert unused == {"mode": "blob", "state": "unused"}
            answer = client.post(f"{first}/api/chunk", content=body())
            assert answer.status_code == 200
            assert all(not r["errors"] for r in answer.json()["values"]), answer.text[:800]
            # The same sections in every guide make the same texts: one entry each.
            chunks = len({c["text"] for r in answer.json()["values"] for c in r["data"]["chunks"]})
            assert chunks >= 10
            made = len(stub.requests)
            assert made > 0

            def written() -> bool:
                health = client.get(f"{first}/api/health").json()["embeddingCache"]
                return bool(health["writes"] == chunks)

            assert wait_until(written)
            again = client.post(f"{second}/api/chunk", content=body())
            assert again.status_code == 200
            assert again.content == answer.content  # byte for byte, vectors included
            assert len(stub.requests) == made  # no embedding request from the second
            health = client.get(f"{second}/api/health")
    cache = health.json()["embeddingCache"]
    assert cache["state"] == "ok"
    assert (cache["hits"], cache["misses"], cache["hitRate"]) == (chunks, 0, 1.0)
    assert b"AccountKey" not in health.content
    configuration = health.json()["configuration"]
    assert configuration["embeddingCacheConnectionString"]["value"] == "set"
    assert configuration["embeddingCache"] == {
        "value": "blob",
        "appSetting": "EMBEDDING_CACHE",
        "source": "app setting",
    }
