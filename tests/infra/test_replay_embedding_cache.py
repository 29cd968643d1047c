"""`python -m infra.replay samples/` run twice with the embedding cache on (issue 36 item
5): the second run makes no embedding request and projects the same documents, vectors
included, with the local SQLite cache and with the blob cache in Azurite."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from typing import TYPE_CHECKING

import pytest

from testing.openai_stub import OpenAIStub
from tests.paths import ROOT

if TYPE_CHECKING:
    from pathlib import Path

    from testing.azurite import Azurite

pytestmark = pytest.mark.integration

DIMENSIONS = 64


def replay_twice(stub: OpenAIStub, cache: dict[str, str], out: Path) -> tuple[int, int, str, str]:
    """(embedding requests of the first run, of the second, documents of each)."""
    environment = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "EMBEDDING_PROVIDER": "openai",
        "OPENAI_BASE_URL": stub.base_url,
        "EMBEDDING_MODEL": "text-embedding-3-small",
        "EMBEDDING_DIMENSIONS": str(DIMENSIONS),
        "CHUNK_WORKERS": "0",
        **cache,
    }
    counts = []
    for run in ("first", "second"):
        before = len(stub.requests)
        subprocess.run(
            [
                *(sys.executable, "-m", "infra.replay", "samples", "--require-vectors"),
                *("--write", str(out / f"{run}.jsonl")),
            ],
            cwd=ROOT,
            env=environment,
            check=True,
            capture_output=True,
            timeout=300,
        )
        counts.append(len(stub.requests) - before)
    first = (out / "first.jsonl").read_text(encoding="utf-8")
    second = (out / "second.jsonl").read_text(encoding="utf-8")
    return counts[0], counts[1], first, second


def test_a_second_replay_with_the_local_cache_embeds_nothing(tmp_path: Path) -> None:
    with OpenAIStub(dimensions=DIMENSIONS) as stub:
        cache = {"EMBEDDING_CACHE": "local", "EMBEDDING_CACHE_PATH": str(tmp_path / "cache")}
        first, second, documents, again = replay_twice(stub, cache, tmp_path)
    assert first > 0
    assert second == 0
    assert again == documents  # the same chunk documents, vectors byte for byte
    assert documents.count('"embedding": [') > 10


def test_a_second_replay_with_the_blob_cache_embeds_nothing(
    tmp_path: Path, azurite: Azurite
) -> None:
    with OpenAIStub(dimensions=DIMENSIONS) as stub:
        cache = {
            "EMBEDDING_CACHE": "blob",
            "EMBEDDING_CACHE_CONNECTION_STRING": azurite.connection_string,
            "EMBEDDING_CACHE_CONTAINER": f"replay-{uuid.uuid4().hex[:12]}",
        }
        first, second, documents, again = replay_twice(stub, cache, tmp_path)
    assert first > 0
    assert second == 0
    assert again == documents
