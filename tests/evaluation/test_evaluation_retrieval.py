"""Retrieval modes, the context-budget metric and pooling over sets."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pytest

from chunking.options import Unit
from evaluation.budget import BUDGET_METRICS, budget_scores, fitting
from evaluation.chunkers import EvalChunk
from evaluation.metrics import bootstrap_mean
from evaluation.questions import Question
from evaluation.retrieval import HYBRID_DEPTH, RRF_K, fuse, keyword_rank, rank_modes, rerank
from evaluation.run import ALL_METRICS, Cost, SettingResult, Sweep, compare_with_baseline, recommend
from evaluation.sets import pool, set_name
from evaluation.settings import Setting

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path


def chunk(text: str, title: str = "", headings: tuple[str, ...] = (), start: int = 0) -> EvalChunk:
    return EvalChunk("doc.md", start, start + 10, text, title, headings)


def test_rrf_adds_reciprocal_ranks_with_k_60() -> None:
    vector = np.array([[0, 1, 2]])
    keyword = np.array([[1, 2, 0]])
    scores = {
        0: 1 / (RRF_K + 1) + 1 / (RRF_K + 3),
        1: 1 / (RRF_K + 2) + 1 / (RRF_K + 1),
        2: 1 / (RRF_K + 3) + 1 / (RRF_K + 2),
    }
    expected = sorted(scores, key=lambda index: -scores[index])
    assert expected == [1, 0, 2]
    assert fuse([vector, keyword], 3).tolist() == [expected]


def test_rrf_counts_only_the_top_of_each_ranking() -> None:
    last = HYBRID_DEPTH + 4
    deep = np.arange(last + 1)[None, :]
    short = np.array([[0, last]])
    # `last` is second in the short ranking and past the cut in the deep one, so it ties
    # with chunk 1 (second in the deep ranking only) and follows it in document order.
    assert fuse([deep, short], 3).tolist() == [[0, 1, last]]


def test_keyword_search_reads_the_text_and_title_fields_not_headings() -> None:
    """As the index makes them searchable: the heading path is in the text already."""
    chunks = [
        chunk("nothing relevant here at all"),
        chunk("also unrelated words", headings=("Refund policy",)),
        chunk("more filler text", title="Shipping guide"),
        chunk("the refund is paid in ten days"),
    ]
    order = keyword_rank(chunks, ["refund", "shipping"], 4)
    assert order[0, 0] == 3
    assert order[1, 0] == 2


def test_keyword_search_is_lowercased_and_keeps_single_characters() -> None:
    chunks = [chunk("Option X sets the mode"), chunk("Option Y sets the mode")]
    assert keyword_rank(chunks, ["y"], 2)[0, 0] == 1


def test_rerank_reorders_the_hybrid_head_by_the_pair_scores() -> None:
    chunks = [chunk("a"), chunk("b"), chunk("c")]
    order = np.array([[0, 1, 2]])
    scored: list[Sequence[tuple[str, str]]] = []

    def score(pairs: Sequence[tuple[str, str]]) -> list[float]:
        scored.append(pairs)
        return [{"a": 0.1, "b": 0.9, "c": 0.1}[text] for _, text in pairs]

    assert rerank(order, chunks, ["q"], score).tolist() == [[1, 0, 2]]
    assert [q for q, _ in scored[0]] == ["q", "q", "q"]


def test_rank_modes_runs_semantic_only_with_a_scorer() -> None:
    chunks = [chunk("alpha beta"), chunk("gamma delta")]
    vectors = np.eye(2, dtype=np.float32)
    modes = rank_modes(
        ("vector", "keyword", "hybrid", "semantic"), chunks, ["gamma"], vectors[1:], vectors
    )
    assert set(modes) == {"vector", "keyword", "hybrid"}
    assert modes["vector"][0, 0] == modes["keyword"][0, 0] == modes["hybrid"][0, 0] == 1


def test_the_budget_takes_chunks_in_rank_order_until_one_does_not_fit() -> None:
    assert fitting([400, 500, 100], 1000) == 3
    assert fitting([400, 700, 100], 1000) == 1
    assert fitting([1200], 1000) == 0


def test_budget_scores_need_the_whole_answer_in_a_chunk_within_the_budget() -> None:
    question = Question(1, "q", "doc.md", 100, 120)
    holding = EvalChunk("doc.md", 90, 130, "x")
    cutting = EvalChunk("doc.md", 110, 200, "y")
    values = budget_scores(question, [cutting, holding], [900, 900])
    assert values == {BUDGET_METRICS[0]: 0.0, BUDGET_METRICS[1]: 1.0}


def _result(
    chunker: str, values: list[float], retrieval: str = "vector", passages: str = "chunks"
) -> SettingResult:
    setting = Setting(chunker, Unit.TOKENS, 512, 51, "51")  # type: ignore[arg-type]
    arrays = {name: np.array(values) for name in ALL_METRICS}
    return SettingResult(
        setting=setting,
        per_question=arrays,
        means={name: bootstrap_mean(v) for name, v in arrays.items()},
        cost=Cost(chunks=len(values), tokens=0, storage_bytes=0, price=0.0),
        truncated_share=0.5 if chunker == "ours" else 0.0,
        warnings=(),
        traces=(),
        chunks=(),
        retrieval=retrieval,  # type: ignore[arg-type]
        passages=passages,  # type: ignore[arg-type]
    )


def test_pooling_concatenates_the_questions_of_every_set() -> None:
    first = Sweep(results=[_result("ours", [1, 1]), _result("split-skill", [0, 1])])
    second = Sweep(results=[_result("ours", [1, 0, 1]), _result("split-skill", [1, 0, 0])])
    ours, split = pool([first, second])
    assert ours.questions == split.questions == 5
    assert ours.means["complete@5"].mean == pytest.approx(4 / 5)
    assert ours.differences is not None
    assert ours.differences["complete@5"].mean == pytest.approx(2 / 5)
    assert split.differences is None
    assert ours.truncated_share == pytest.approx(0.5)


def test_pooling_pairs_each_mode_with_the_split_row_of_the_same_mode() -> None:
    sweep = Sweep(
        results=[
            _result("ours", [1, 1], "hybrid"),
            _result("split-skill", [0, 0], "hybrid"),
            _result("split-skill", [1, 1]),
        ]
    )
    ours = pool([sweep])[0]
    assert ours.label.endswith("hybrid")
    assert ours.differences is not None
    assert ours.differences["complete@5"].mean == pytest.approx(1.0)


def test_passage_rows_are_compared_with_the_split_row_of_the_same_passages() -> None:
    results = [
        _result("ours", [1, 1], "hybrid"),
        _result("ours", [1, 0], "hybrid", "neighbours"),
        _result("split-skill", [0, 0], "hybrid"),
        _result("split-skill", [1, 0], "hybrid", "neighbours"),
    ]
    assert results[1].label == f"{results[0].label} neighbours"
    assert results[0].label.endswith("hybrid")
    compared = {c.setting: c for c in compare_with_baseline(results)}
    assert compared[results[1].label].baseline == results[3].label
    assert compared[results[1].label].differences["complete@5"].mean == pytest.approx(0.0)
    assert compared[results[0].label].differences["complete@5"].mean == pytest.approx(1.0)
    pooled = {row.label: row for row in pool([Sweep(results=results)])}
    neighbours = pooled[results[1].label].differences
    assert neighbours is not None
    assert neighbours["complete@5"].mean == pytest.approx(0.0)


def test_the_recommendation_is_a_chunk_setting_never_a_way_of_handing_over() -> None:
    ours = replace(_result("ours", [1, 1, 1]), truncated_share=0.0)
    merged = replace(_result("ours", [1, 1, 1], "vector", "merged"), truncated_share=0.0)
    chosen = recommend([merged, ours, _result("split-skill", [0, 0, 0])])
    assert chosen is not None
    assert chosen.label == ours.label
    assert "merged" not in chosen.sentence


def test_a_set_folder_is_named_after_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "tatqa"
    assert set_name(folder / "docs", folder / "questions.jsonl") == "tatqa"
    assert set_name(tmp_path / "docs", tmp_path / "return-policy.jsonl") == "return-policy"
