"""The embedding cache's key, its lossless values, its settings, and the local SQLite store
(several processes on one file, a corrupt file, an unwritable one)."""

from __future__ import annotations

import math
import os
import struct
import subprocess
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skills.embedding.cache import CacheIdentity, cache_key, decode_vector, encode_vector
from skills.embedding.cache_stores import SQLITE_FILE_NAME
from skills.embedding.settings import load_embedding_settings
from testing.openai_stub import OpenAIStub
from tests.embedding_cache_helpers import embed_once, stub_settings, stub_vectors
from tests.paths import ROOT

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from skills.embedding.cache import CacheState
    from skills.embedding.embedder import EmbeddingOutcome
    from skills.embedding.settings import EmbeddingSettings

DIMENSIONS = 12
TEXTS = [f"Section {n}: rotate the storage keys every {n} days." for n in range(12)]
IDENTITY = CacheIdentity("azure_openai", "text-embedding-3-small", "emb", 1536, "base64")


def bits(vector: list[float]) -> bytes:
    return struct.pack(f"<{len(vector)}d", *vector)


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=64))
def test_a_stored_vector_comes_back_bit_for_bit(vector: list[float]) -> None:
    decoded = decode_vector(encode_vector(vector), len(vector))
    assert decoded is not None
    assert bits(decoded) == bits(vector)  # -0.0 and the last bit included


@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1))
def test_float32_values_take_four_bytes_each(vector: list[float]) -> None:
    assert len(encode_vector(vector)) == len(encode_vector([0.5] * len(vector)))
    assert len(encode_vector(vector)) < 8 * len(vector) + 16


@given(st.binary(max_size=200), st.integers(1, 40))
def test_any_bytes_are_a_vector_of_the_right_length_or_nothing(data: bytes, size: int) -> None:
    decoded = decode_vector(data, size)
    assert decoded is None or (len(decoded) == size and all(map(math.isfinite, decoded)))


def test_wrong_length_and_flipped_bits_are_not_vectors() -> None:
    stored = encode_vector([0.25, -1.5, 3.0])
    assert decode_vector(stored, 3) == [0.25, -1.5, 3.0]
    assert decode_vector(stored, 4) is None
    assert decode_vector(stored[:-1] + bytes([stored[-1] ^ 1]), 3) is None
    assert decode_vector(stored[:-4], 3) is None
    assert decode_vector(encode_vector([math.pi]), 1) == [math.pi]  # float64 kept


def test_the_key_is_the_identity_and_the_exact_text() -> None:
    key = cache_key(IDENTITY, "text")
    assert key == cache_key(IDENTITY, "text")
    assert len(key) == 64
    assert int(key, 16) >= 0
    others = [
        cache_key(IDENTITY, "text "),
        cache_key(IDENTITY, "Text"),
        cache_key(replace(IDENTITY, provider="openai"), "text"),
        cache_key(replace(IDENTITY, model="text-embedding-3-large"), "text"),
        cache_key(replace(IDENTITY, deployment="other"), "text"),
        cache_key(replace(IDENTITY, dimensions=256), "text"),
        cache_key(replace(IDENTITY, variant="float"), "text"),
        cache_key(IDENTITY, "\ud800 lone surrogate"),
    ]
    assert len({key, *others}) == len(others) + 1


def test_bad_cache_settings_are_named() -> None:
    problems: list[str] = []
    load_embedding_settings({"EMBEDDING_CACHE": "disk"}, problems)
    load_embedding_settings({"EMBEDDING_CACHE": "local"}, problems)
    load_embedding_settings({"EMBEDDING_CACHE": "blob"}, problems)
    load_embedding_settings(
        {
            "EMBEDDING_CACHE": "blob",
            "EMBEDDING_CACHE_ACCOUNT_URL": "https://a.blob.core.windows.net",
            "EMBEDDING_CACHE_CONNECTION_STRING": "AccountKey=x",
            "EMBEDDING_CACHE_CONTAINER": "Bad_Name",
        },
        problems,
    )
    load_embedding_settings({"EMBEDDING_CACHE_LOOKUP_SECONDS": "0"}, problems)
    load_embedding_settings(
        {"EMBEDDING_CACHE": "blob", "EMBEDDING_CACHE_ACCOUNT_URL": "ftp://user:pw@host/"},
        problems,
    )
    assert len(problems) == 7
    assert "EMBEDDING_CACHE_ACCOUNT_URL must start with https:// or http://" in problems[-1]
    assert "pw" not in problems[-1]
    assert "EMBEDDING_CACHE must be one of off, local, blob (got 'disk')" in problems
    assert any("needs EMBEDDING_CACHE_PATH" in problem for problem in problems)
    assert any("EMBEDDING_CACHE_ACCOUNT_URL (reached with" in problem for problem in problems)
    assert any("not both" in problem for problem in problems)
    assert any("'Bad_Name'" in problem for problem in problems)
    assert any("EMBEDDING_CACHE_LOOKUP_SECONDS" in problem for problem in problems)
    assert not any("AccountKey" in problem for problem in problems)


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(dimensions=DIMENSIONS) as server:
        yield server


def local(stub: OpenAIStub, path: Path) -> EmbeddingSettings:
    return stub_settings(stub, DIMENSIONS, EMBEDDING_CACHE="local", EMBEDDING_CACHE_PATH=str(path))


def embed(chosen: EmbeddingSettings, texts: list[str]) -> tuple[EmbeddingOutcome, CacheState]:
    return embed_once(chosen, texts)


def right(outcome: EmbeddingOutcome, texts: list[str]) -> bool:
    return stub_vectors(outcome, texts, DIMENSIONS)


def test_a_folder_gets_one_sqlite_file_and_a_second_run_sends_nothing(
    stub: OpenAIStub, tmp_path: Path
) -> None:
    chosen = local(stub, tmp_path)
    first, state = embed(chosen, TEXTS[:6])
    assert (state.misses, state.writes) == (6, 6)
    assert (tmp_path / SQLITE_FILE_NAME).is_file()
    before = len(stub.requests)
    second, state = embed(chosen, TEXTS)
    inputs = sorted(text for body in stub.requests[before:] for text in body["input"])
    assert inputs == sorted(TEXTS[6:])
    assert right(second, TEXTS)
    assert second.results[:6] == first.results
    assert (state.hits, state.misses, second.stats.cached) == (6, 6, 6)
    # No document text is stored: only keys and vectors.
    stored = (tmp_path / SQLITE_FILE_NAME).read_bytes()
    assert not any(text.encode() in stored for text in TEXTS)


def test_processes_sharing_one_file_write_the_same_keys_harmlessly(
    stub: OpenAIStub, tmp_path: Path
) -> None:
    script = (
        "import asyncio, sys, time\n"
        "from skills.embedding.clients import build_embedder\n"
        "from skills.embedding.settings import load_embedding_settings\n"
        "p = []\n"
        f"s = load_embedding_settings({{'EMBEDDING_PROVIDER': 'openai', 'OPENAI_BASE_URL': "
        f"{stub.base_url!r}, 'EMBEDDING_DIMENSIONS': '{DIMENSIONS}', 'EMBEDDING_CACHE': 'local', "
        f"'EMBEDDING_CACHE_PATH': sys.argv[1]}}, p)\n"
        "async def run():\n"
        "    e = build_embedder(s)\n"
        f"    o = await e.embed({TEXTS!r}, time.monotonic() + 60)\n"
        "    await e.aclose()\n"
        "    assert o.stats.failed == 0 and e.cache.state().write_errors == 0\n"
        "asyncio.run(run())\n"
    )
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    children = [
        subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], env=environment)
        for _ in range(3)
    ]
    assert [child.wait(120) for child in children] == [0, 0, 0]
    before = len(stub.requests)
    outcome, state = embed(local(stub, tmp_path), TEXTS)
    assert len(stub.requests) == before
    assert state.hits == len(TEXTS)
    assert right(outcome, TEXTS)


def test_a_file_that_is_not_a_cache_costs_misses_not_records(
    stub: OpenAIStub, tmp_path: Path
) -> None:
    broken = tmp_path / "cache.sqlite3"
    broken.write_bytes(b"this is not a SQLite database, it is a text file " * 100)
    outcome, state = embed(local(stub, broken), TEXTS[:4])
    assert right(outcome, TEXTS[:4])
    assert state.state == "failing"
    assert state.last_error is not None
    assert "not a cache file" in state.last_error


def test_a_path_that_cannot_hold_a_file_costs_misses_not_records(
    stub: OpenAIStub, tmp_path: Path
) -> None:
    obstacle = tmp_path / "a-file"
    obstacle.write_text("x", encoding="utf-8")
    outcome, state = embed(local(stub, obstacle / "cache.sqlite3"), TEXTS[:4])
    assert right(outcome, TEXTS[:4])
    assert state.state == "failing"
    assert state.write_errors == 4
