"""Where the scored strategies' embeddings and similarity scores come from, in the app.

`chunking.plan.scoring.Scoring` is what a strategy calls: two blocking callables. Here they
are backed by the app's own clients: sentence embeddings by the configured embedding
provider (the same `Embedder` that embeds chunks: batching, retries, Retry-After), and
pair scores by a `PairClient` (a local cross-encoder, `skills.embedding.scoring.cross_encoder`, or a
rerank endpoint, `skills.embedding.scoring.rerank`). `ScoringService` is the async side, in the
app's event loop; `blocking_scoring` turns it into a `Scoring` for code on another thread
(the CLI, the evaluation, CHUNK_WORKERS=0); `skills.skill.workers` forwards a worker process's
calls to it over the worker's pipe. Every failure becomes `ScoringError`, and so that
record's error, never the batch's.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from chunking.plan.scoring import Scoring, ScoringError, Vector
from skills.embedding.embedder import Failure
from skills.embedding.scoring.cross_encoder import CrossEncoderClient

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skills.embedding.embedder import Embedder
    from skills.embedding.settings import EmbeddingSettings, PairScorerSettings

T = TypeVar("T")


class ScorerSettings(Protocol):
    """What the scorers read of the app's settings (`skills.skill.settings.Settings` is one)."""

    @property
    def embedding(self) -> EmbeddingSettings:
        """The embedding provider's settings."""
        ...

    @property
    def pairs(self) -> PairScorerSettings:
        """The pair scorer's settings."""
        ...


class PairClient(Protocol):
    """Scores text pairs (query-like first, passage-like second): higher is more similar."""

    source: str
    """`crossEncoder` or `rerank`: what `binaryScorer` names it."""

    async def score(self, pairs: Sequence[tuple[str, str]], timeout: float) -> list[float]:
        """One score per pair, in order, within `timeout` seconds; raises `ScoringError`."""
        ...

    async def aclose(self) -> None:
        """Release the client's connections or model."""
        ...


@dataclass(frozen=True, slots=True)
class ScoringService:
    """The app's scorers, awaited in its event loop."""

    embedder: Embedder | None = None
    pairs: PairClient | None = None

    async def embed(self, texts: Sequence[str], timeout: float) -> list[Vector]:
        """Vectors of `texts` from the embedding provider; raises `ScoringError`."""
        if self.embedder is None:
            raise ScoringError(
                "this strategy embeds sentences, and no embedding provider is configured "
                "(EMBEDDING_PROVIDER is none)"
            )
        if not texts:
            return []
        outcome = await self.embedder.embed(texts, time.monotonic() + max(timeout, 0.0))
        vectors: list[Vector] = []
        for result in outcome.results:
            if isinstance(result, Failure):
                raise ScoringError(
                    f"embedding the sentences failed ({self.embedder.description}): "
                    f"{result.message}"
                )
            vectors.append(tuple(result))
        return vectors

    async def score(self, pairs: Sequence[tuple[str, str]], timeout: float) -> list[float]:
        """Scores of `pairs` from the pair client; raises `ScoringError`."""
        if self.pairs is None:
            raise ScoringError(
                "binaryScorer crossEncoder / rerank needs CROSS_ENCODER_PATH or "
                "RERANK_ENDPOINT in the app settings, and neither is set"
            )
        if not pairs:
            return []
        try:
            return await asyncio.wait_for(self.pairs.score(pairs, timeout), max(timeout, 0.0))
        except TimeoutError:
            raise ScoringError(
                f"the {self.pairs.source} scorer did not answer within {timeout:.1f} s"
            ) from None

    @property
    def pair_source(self) -> str:
        return "none" if self.pairs is None else self.pairs.source

    async def aclose(self) -> None:
        if self.pairs is not None:
            await self.pairs.aclose()


def blocking_scoring(
    service: ScoringService,
    loop: asyncio.AbstractEventLoop,
    deadline: float,
    grace: float | None = None,
) -> Scoring:
    """`Scoring` for a thread other than `loop`'s: each call runs on `loop` and waits until
    `deadline` (a time.monotonic() value) and `grace` more (`RESULT_GRACE_SECONDS`) for
    the call's own timeout to answer; a worker's bridge gives none (its record ends there)."""
    wait = RESULT_GRACE_SECONDS if grace is None else grace

    def embed(texts: Sequence[str]) -> Sequence[Vector]:
        left = deadline - time.monotonic()
        future = asyncio.run_coroutine_threadsafe(service.embed(texts, left), loop)
        return _result(future, left + wait, "embedding")

    def pairs(batch: Sequence[tuple[str, str]]) -> Sequence[float]:
        left = deadline - time.monotonic()
        future = asyncio.run_coroutine_threadsafe(service.score(batch, left), loop)
        return _result(future, left + wait, service.pair_source)

    return Scoring(embed=embed, pairs=pairs, pair_source=service.pair_source)


RESULT_GRACE_SECONDS = 0.5
"""How long past the deadline a call waits for its coroutine's own timeout to answer."""


def _result(future: concurrent.futures.Future[T], seconds: float, what: str) -> T:
    try:
        return future.result(max(seconds, 0.0))
    except concurrent.futures.TimeoutError:
        future.cancel()
        raise ScoringError(
            f"the {what} scorer did not answer before the record's deadline"
        ) from None


def build_pair_client(settings: ScorerSettings) -> PairClient | None:
    """The pair scorer the app settings configure: a local cross-encoder
    (CROSS_ENCODER_PATH), a rerank endpoint (RERANK_ENDPOINT), or None. Nothing is loaded
    or connected here: the model loads at its first score, the HTTP pool opens at the
    first request."""
    pairs = settings.pairs
    if pairs.cross_encoder_path:
        return CrossEncoderClient(pairs.cross_encoder_path)
    if pairs.rerank_endpoint:
        # Only the configured scorer's module loads (rerank brings httpx, ~60 ms).
        from skills.embedding.scoring.rerank import RerankClient  # noqa: PLC0415

        return RerankClient(pairs.rerank_endpoint, pairs.rerank_api_key, pairs.rerank_model)
    return None
