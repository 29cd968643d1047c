"""The evaluation's metrics against hand-computed cases, ranking ties, and the bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluation.chunkers import EvalChunk
from evaluation.metrics import (
    bootstrap_mean,
    paired_difference,
    rank,
    score_question,
)
from evaluation.questions import Question


def question(start: int, end: int, document: str = "a.md") -> Question:
    return Question(1, "q?", document, start, end)


def chunk(start: int, end: int, document: str = "a.md") -> EvalChunk:
    return EvalChunk(document, start, end, f"{document}:{start}-{end}")


def filler(count: int, first: int = 0) -> list[EvalChunk]:
    """Distinct 10-character chunks of another document: never hits."""
    return [chunk(10 * n, 10 * n + 10, "other.md") for n in range(first, first + count)]


def test_a_reference_cut_by_a_boundary_is_a_hit_but_not_complete() -> None:
    # Reference [40, 60); chunks cut at 50: each holds half of it.
    ranked = [chunk(0, 50), chunk(50, 100), *filler(8)]
    scores = score_question(question(40, 60), ranked).values
    assert scores["hit@1"] == 1.0
    assert scores["hit@5"] == 1.0
    assert scores["complete@5"] == 0.0
    assert scores["complete@1"] == 0.0
    assert scores["mrr@10"] == 1.0
    # Both halves are in the top 5: all 20 reference characters are retrieved, out of
    # 100 (two chunks) + 3 x 10 (filler) = 130 retrieved.
    assert scores["recall@5"] == pytest.approx(1.0)
    assert scores["precision@5"] == pytest.approx(20 / 130)
    assert scores["iou@5"] == pytest.approx(20 / 130)


def test_overlap_rescues_the_cut_reference() -> None:
    # The second chunk starts 15 characters back (overlap) and now holds all of [40, 60).
    ranked = [*filler(2), chunk(35, 100), chunk(0, 50), *filler(6, first=2)]
    scores = score_question(question(40, 60), ranked).values
    assert scores["complete@5"] == 1.0
    assert scores["complete@1"] == 0.0
    assert scores["hit@1"] == 0.0
    assert scores["mrr@10"] == pytest.approx(1 / 3)
    # The two chunks of a.md overlap: their union [0, 100) is counted once.
    assert scores["precision@5"] == pytest.approx(20 / (100 + 30))


def test_a_chunk_of_another_document_never_counts() -> None:
    ranked = [chunk(0, 100, "b.md"), *filler(9)]
    scores = score_question(question(40, 60), ranked).values
    assert scores == {
        "complete@5": 0.0,
        "hit@5": 0.0,
        "complete@1": 0.0,
        "hit@1": 0.0,
        "mrr@10": 0.0,
        "recall@5": 0.0,
        "precision@5": 0.0,
        "iou@5": 0.0,
    }


def test_a_hit_below_rank_five_counts_only_for_mrr() -> None:
    ranked = [*filler(6), chunk(0, 100), *filler(3)]
    scores = score_question(question(40, 60), ranked)
    assert scores.values["hit@5"] == 0.0
    assert scores.values["mrr@10"] == pytest.approx(1 / 7)
    assert scores.first_hit == 6


def test_touching_is_not_overlapping() -> None:
    ranked = [chunk(0, 40), chunk(60, 80), *filler(8)]
    assert score_question(question(40, 60), ranked).values["hit@5"] == 0.0


def test_exact_span_is_complete_with_iou_one() -> None:
    ranked = [chunk(40, 60), *filler(9)]
    scores = score_question(question(40, 60), ranked).values
    assert scores["complete@1"] == 1.0
    # top 5 = the exact chunk + 4 filler chunks of 10: IoU = 20 / 60.
    assert scores["iou@5"] == pytest.approx(20 / 60)


def test_ties_rank_in_document_order() -> None:
    queries = np.array([[1.0, 0.0]], dtype=np.float32)
    chunks = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    assert rank(queries, chunks, 4).tolist() == [[1, 2, 3, 0]]
    # The tie stays broken the same way whatever order the equal rows come in.
    assert rank(queries, chunks[[2, 1, 0, 3]], 2).tolist() == [[0, 1]]


def test_rank_depth_is_capped_by_the_number_of_chunks() -> None:
    queries = np.eye(2, dtype=np.float32)
    assert rank(queries, np.eye(2, dtype=np.float32), 10).shape == (2, 2)


def test_bootstrap_of_constant_values_has_no_width() -> None:
    interval = bootstrap_mean(np.full(50, 0.4))
    assert (interval.mean, interval.low, interval.high) == pytest.approx((0.4, 0.4, 0.4))
    assert paired_difference(np.ones(30), np.ones(30)).excludes_zero() is False


def test_paired_difference_sees_a_consistent_gain_that_unpaired_noise_hides() -> None:
    generator = np.random.default_rng(1)
    base = generator.integers(0, 2, 200).astype(float)
    better = base.copy()
    better[:20] = 1.0  # 20 questions fixed, none broken
    difference = paired_difference(better, base)
    assert difference.mean == pytest.approx((better - base).mean())
    assert difference.excludes_zero()
    assert difference.low > 0


@given(st.lists(st.floats(0, 1), min_size=1, max_size=60))
def test_bootstrap_interval_holds_the_mean(values: list[float]) -> None:
    interval = bootstrap_mean(np.array(values))
    assert interval.low - 1e-9 <= interval.mean <= interval.high + 1e-9
    assert interval.low >= 0 - 1e-9
    assert interval.high <= 1 + 1e-9


@given(
    st.integers(0, 200),
    st.integers(1, 50),
    st.lists(st.tuples(st.integers(0, 300), st.integers(1, 100)), min_size=1, max_size=12),
)
def test_metrics_stay_consistent(start: int, length: int, spans: list[tuple[int, int]]) -> None:
    reference = question(start, start + length)
    ranked = [chunk(s, s + n) for s, n in spans]
    values = score_question(reference, ranked).values
    for name, value in values.items():
        assert 0.0 <= value <= 1.0, name
    assert values["complete@5"] <= values["hit@5"]
    assert values["complete@1"] <= values["hit@1"] <= values["hit@5"]
    assert values["iou@5"] <= min(values["recall@5"], values["precision@5"]) + 1e-12
    assert (values["recall@5"] == 1.0) >= (values["complete@5"] == 1.0)
    assert (values["hit@5"] > 0) == (values["recall@5"] > 0)
