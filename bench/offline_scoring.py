"""A deterministic offline scorer for the scored strategies: no model, no network.

`hashed_embedding` turns each text into a bag of its lowercased words hashed into a
fixed number of buckets (blake2b, so the same on every machine and run): texts that
share words have a high cosine, texts that share none have 0. It is what the corpus
audit, the throughput bench and the tests give `semantic` / `binary` so that they run
without a model; it says nothing about retrieval quality (the evaluation uses the
real local model for that).
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from chunking.scoring import Scoring, Vector, cosine

if TYPE_CHECKING:
    from collections.abc import Sequence

DIMENSIONS = 256
"""Buckets: enough that a few hundred distinct words rarely collide."""
_WORD = re.compile(r"\w+")


def hashed_vector(text: str, dimensions: int = DIMENSIONS) -> Vector:
    """The hashed bag of words of `text`."""
    vector = [0.0] * dimensions
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        vector[int.from_bytes(digest, "little") % dimensions] += 1.0
    return tuple(vector)


def hashed_embedding(texts: Sequence[str]) -> list[Vector]:
    """`hashed_vector` of each text, in order (a `TextEmbedder`)."""
    return [hashed_vector(text) for text in texts]


def hashed_pairs(pairs: Sequence[tuple[str, str]]) -> list[float]:
    """The cosine of each pair's hashed vectors (a `PairScorer`)."""
    return [cosine(hashed_vector(left), hashed_vector(right)) for left, right in pairs]


class Counted:
    """The hashed scorers, counting calls and texts (what the bench reports per MB)."""

    def __init__(self) -> None:
        self.calls = 0
        """Scorer calls: one per split of the `binary` strategy."""
        self.texts = 0
        """Texts embedded, or pairs scored."""

    def embed(self, texts: Sequence[str], /) -> list[Vector]:
        self.calls += 1
        self.texts += len(texts)
        return hashed_embedding(texts)

    def pairs(self, pairs: Sequence[tuple[str, str]], /) -> list[float]:
        self.calls += 1
        self.texts += len(pairs)
        return hashed_pairs(pairs)


def offline_scoring() -> tuple[Scoring, Counted]:
    """A `Scoring` of hashed vectors, with its counters. No cache across documents: the
    strategies keep one per document (`CachedEmbedder`), and a corpus's worth of vectors
    held at once would take gigabytes."""
    counted = Counted()
    return Scoring(embed=counted.embed, pairs=counted.pairs, pair_source="hashed"), counted
