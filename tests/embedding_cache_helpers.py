"""The embedding cache tests' common steps: settings against the OpenAI stub, one run of
an embedder with its cache (built, used, closed), and whether it got the stub's vectors."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from skills.embedding.clients import build_embedder
from skills.embedding.settings import load_embedding_settings
from testing.openai_stub import vector_for

if TYPE_CHECKING:
    from skills.embedding.cache import CacheState
    from skills.embedding.embedder import EmbeddingOutcome
    from skills.embedding.settings import EmbeddingSettings
    from testing.openai_stub import OpenAIStub


def stub_settings(stub: OpenAIStub, dimensions: int, **cache: str) -> EmbeddingSettings:
    """The `openai` provider at the stub, with the cache app settings `cache`."""
    problems: list[str] = []
    chosen = load_embedding_settings(
        {
            "EMBEDDING_PROVIDER": "openai",
            "OPENAI_BASE_URL": stub.base_url,
            "EMBEDDING_MODEL": "text-embedding-3-small",
            "EMBEDDING_DIMENSIONS": str(dimensions),
            "EMBEDDING_MAX_RETRIES": "0",
            **cache,
        },
        problems,
    )
    assert problems == []
    return chosen


def embed_once(
    chosen: EmbeddingSettings, texts: list[str], seconds: float = 30.0
) -> tuple[EmbeddingOutcome, CacheState]:
    """One embedder's run (closing it writes what its cache queued) and its cache's state."""

    async def run() -> tuple[EmbeddingOutcome, CacheState]:
        embedder = build_embedder(chosen)
        assert embedder is not None
        assert embedder.cache is not None
        try:
            outcome = await embedder.embed(texts, time.monotonic() + seconds)
        finally:
            await embedder.aclose()
        return outcome, embedder.cache.state()

    return asyncio.run(run())


def stub_vectors(outcome: EmbeddingOutcome, texts: list[str], dimensions: int) -> bool:
    """Whether every text got the stub's vector for it."""
    return list(outcome.results) == [vector_for(text, dimensions) for text in texts]
