"""What the scored strategies (`semantic`, `binary`) may ask of the outside world.

Chunking stays pure: a strategy that needs sentence embeddings or similarity scores
gets them through `Scoring`, two plain callables the caller provides. The skill's
callables forward to the app's configured embedding provider, cross-encoder or
rerank endpoint (`skills.embedding.scoring`); tests pass functions with known answers. Either
may raise `ScoringError`, which fails only the document being chunked (the skill
turns it into that record's error).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

Vector = tuple[float, ...]
"""One embedding."""


class ScoringError(Exception):
    """A scorer failed, timed out, or is not configured: its message says which, in our
    own words, and is shown to the user as the record's error."""


class TextEmbedder(Protocol):
    """Embeds texts, one vector per text, in order."""

    def __call__(self, texts: Sequence[str], /) -> Sequence[Vector]:
        """Vectors for `texts`; raises `ScoringError`."""
        ...


class PairScorer(Protocol):
    """Scores how closely the second text of each pair follows from / matches the first
    (a cross-encoder's or reranker's relevance): higher is more similar."""

    def __call__(self, pairs: Sequence[tuple[str, str]], /) -> Sequence[float]:
        """One score per pair, in order; raises `ScoringError`."""
        ...


def _no_embedder(texts: Sequence[str]) -> Sequence[Vector]:
    raise ScoringError("this strategy needs an embedding provider, and none is configured")


def _no_pair_scorer(pairs: Sequence[tuple[str, str]]) -> Sequence[float]:
    raise ScoringError(
        "this scorer needs a cross-encoder or rerank endpoint, and none is configured"
    )


@dataclass(frozen=True, slots=True)
class Scoring:
    """The scorers a strategy may call; the defaults fail with a clear error."""

    embed: TextEmbedder = _no_embedder
    pairs: PairScorer = _no_pair_scorer
    pair_source: str = "none"
    """What `pairs` talks to (`crossEncoder`, `rerank` or `none`), for errors and stats."""


class CachedEmbedder:
    """Embeds each distinct text once (per document, or across documents while it lives):
    the semantic strategy costs one embedding per distinct sentence group, and a document
    chunked again (another limit in the evaluation grid) costs nothing more."""

    def __init__(self, embed: TextEmbedder, capacity: int = 100_000) -> None:
        self.embed = embed
        self.capacity = capacity
        self.cache: OrderedDict[str, Vector] = OrderedDict()
        self.calls = 0
        """Texts actually sent to `embed` (what the scoring cost is counted in)."""

    def __call__(self, texts: Sequence[str], /) -> Sequence[Vector]:
        missing = list(dict.fromkeys(text for text in texts if text not in self.cache))
        if missing:
            vectors = self.embed(missing)
            if len(vectors) != len(missing):
                raise ScoringError(
                    f"the embedding provider returned {len(vectors)} vectors for "
                    f"{len(missing)} texts"
                )
            self.calls += len(missing)
            for text, vector in zip(missing, vectors, strict=True):
                self.cache[text] = tuple(vector)
            while len(self.cache) > self.capacity:
                self.cache.popitem(last=False)
        answer: list[Vector] = []
        for text in texts:
            cached = self.cache.get(text)
            # None: evicted within this call (more distinct texts than the capacity)
            answer.append(cached if cached is not None else tuple(self.embed([text])[0]))
        return answer


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0 when either vector is all zeros."""
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return dot / norms if norms else 0.0
