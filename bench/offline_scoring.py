"""A deterministic offline scorer for the scored strategies: no model, no network.

`hashed_embedding` turns each text into a bag of its lowercased words hashed into a
fixed number of buckets (crc32, so the same on every machine and run): texts that
share words have a high cosine, texts that share none have 0. It is what the corpus
audit, the throughput bench and the tests give `semantic` / `binary` so that they run
without a model; it says nothing about retrieval quality (the evaluation uses the
real local model for that).
"""

from __future__ import annotations

import functools
import re
import zlib
from typing import TYPE_CHECKING

import numpy as np

from chunking.plan.scoring import Scoring, Vector, cosine

if TYPE_CHECKING:
    from collections.abc import Sequence

DIMENSIONS = 256
"""Buckets: enough that a few hundred distinct words rarely collide."""
_WORD = re.compile(r"\w+")


@functools.lru_cache(maxsize=1 << 16)
def _bucket(word: str) -> int:
    # crc32, not hash(): the same bucket in every process (hash() is salted per run);
    # cached, as a corpus repeats its words: the bench times the strategy, not this.
    return zlib.crc32(word.encode("utf-8", "surrogatepass")) % DIMENSIONS


def hashed_vector(text: str) -> Vector:
    """The hashed bag of words of `text`, L2-normalised (all zeros without a word)."""
    buckets = [_bucket(word) for word in _WORD.findall(text.lower())]
    counts = np.bincount(buckets, minlength=DIMENSIONS).astype(np.float64)
    norm = float(np.linalg.norm(counts))
    return tuple((counts / norm if norm else counts).tolist())


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
