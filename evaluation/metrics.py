"""Retrieval metrics per question, their means, and paired-bootstrap intervals.

A retrieved chunk *hits* a question when its span overlaps the reference span of the
same document, and is *complete* when its span contains the whole reference: the
lesson's check that a retrieved chunk really holds the answer, not just something
similar to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

    from evaluation.chunkers import EvalChunk
    from evaluation.questions import Question

K = 5
"""The k of hit@k, answer-complete@k and the character metrics."""
MRR_DEPTH = 10
BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_SEED = 20261201
CONFIDENCE = 0.95
METRICS = (
    "complete@5",
    "hit@5",
    "complete@1",
    "hit@1",
    "mrr@10",
    "recall@5",
    "precision@5",
    "iou@5",
)
"""Every per-question metric, in the order tables show them."""


@dataclass(frozen=True, slots=True)
class QuestionScores:
    """Every metric of one question at one setting."""

    values: dict[str, float]
    first_hit: int | None
    """0-based rank of the first overlapping chunk within MRR_DEPTH, if any."""
    complete_rank: int | None
    """0-based rank of the first chunk that holds the whole reference, within K."""


def score_question(question: Question, ranked: Sequence[EvalChunk]) -> QuestionScores:
    """The metrics of one question from its ranked chunks (best first, at least MRR_DEPTH)."""
    start, end = question.start, question.end

    def overlaps(chunk: EvalChunk) -> bool:
        return chunk.document == question.document and chunk.start < end and chunk.end > start

    def contains(chunk: EvalChunk) -> bool:
        return chunk.document == question.document and chunk.start <= start and chunk.end >= end

    first_hit = next((i for i, c in enumerate(ranked[:MRR_DEPTH]) if overlaps(c)), None)
    complete_rank = next((i for i, c in enumerate(ranked[:K]) if contains(c)), None)
    top_k = ranked[:K]
    retrieved = _union_length(top_k)
    found = _intersection(top_k, question)
    reference = end - start
    values = {
        "complete@5": float(complete_rank is not None),
        "hit@5": float(first_hit is not None and first_hit < K),
        "complete@1": float(complete_rank == 0),
        "hit@1": float(first_hit == 0),
        "mrr@10": 0.0 if first_hit is None else 1.0 / (first_hit + 1),
        "recall@5": found / reference,
        "precision@5": found / retrieved if retrieved else 0.0,
        "iou@5": found / (retrieved + reference - found),
    }
    return QuestionScores(values, first_hit, complete_rank)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _union_length(chunks: Sequence[EvalChunk]) -> int:
    """Characters covered by the chunks, each counted once (overlaps are not paid twice)."""
    by_document: dict[str, list[tuple[int, int]]] = {}
    for chunk in chunks:
        by_document.setdefault(chunk.document, []).append((chunk.start, chunk.end))
    return sum(e - s for spans in by_document.values() for s, e in _merged(spans))


def _intersection(chunks: Sequence[EvalChunk], question: Question) -> int:
    spans = [(c.start, c.end) for c in chunks if c.document == question.document]
    return sum(max(0, min(e, question.end) - max(s, question.start)) for s, e in _merged(spans))


def rank(
    query_vectors: npt.NDArray[np.float32], chunk_vectors: npt.NDArray[np.float32], depth: int
) -> npt.NDArray[np.intp]:
    """Exact cosine top-`depth` chunk indices per query (vectors are unit length).

    Ties are broken by chunk order (document order), so results are deterministic.
    """
    scores = query_vectors @ chunk_vectors.T
    depth = min(depth, scores.shape[1])
    order = np.lexsort((np.broadcast_to(np.arange(scores.shape[1]), scores.shape), -scores))
    return order[:, :depth]


@dataclass(frozen=True, slots=True)
class Interval:
    """A mean and its 95% bootstrap interval."""

    mean: float
    low: float
    high: float

    def excludes_zero(self) -> bool:
        """Whether the interval says the difference is real (at 95%)."""
        return self.low > 0 or self.high < 0


def bootstrap_mean(values: npt.NDArray[np.float64]) -> Interval:
    """The mean of per-question values with a percentile-bootstrap 95% interval."""
    return _bootstrap(values)


def paired_difference(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> Interval:
    """Mean of a − b over the same questions, with a paired-bootstrap 95% interval."""
    return _bootstrap(a - b)


def _bootstrap(values: npt.NDArray[np.float64]) -> Interval:
    count = len(values)
    if count == 0:
        return Interval(0.0, 0.0, 0.0)
    generator = np.random.default_rng(BOOTSTRAP_SEED)
    # The same resamples for every call: paired differences of two settings use the
    # same questions on both sides, and a re-run prints the same intervals.
    samples = generator.integers(0, count, size=(BOOTSTRAP_SAMPLES, count))
    means = values[samples].mean(axis=1)
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return Interval(float(values.mean()), float(low), float(high))
