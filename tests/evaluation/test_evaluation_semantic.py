"""`--retrieval semantic`: the hybrid top 50 reranked by a local ONNX cross-encoder."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

from evaluation.chunkers import EvalChunk
from evaluation.multi import pair_scorer, parse_retrievals
from evaluation.retrieval import rank_modes

if TYPE_CHECKING:
    from pathlib import Path

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")


def test_semantic_reranks_the_hybrid_ranking_by_the_configured_cross_encoder(
    tmp_path: Path,
) -> None:
    from tests.embedding.test_scoring_cross_encoder import write_model, write_tokenizer

    write_model(tmp_path / "model.onnx")
    write_tokenizer(tmp_path / "tokenizer.json")
    score = pair_scorer(str(tmp_path))
    assert score is not None
    texts = ["bad sea bad ship", "the cat on the mat", "good cat good mat"]
    chunks = [EvalChunk("doc.md", 10 * i, 10 * i + 9, text) for i, text in enumerate(texts)]
    vectors = np.eye(3, dtype=np.float32)
    # The vector query points at chunk 0; the cross-encoder's weights favour "good".
    modes = rank_modes(
        parse_retrievals("hybrid,semantic"), chunks, ["the sea"], vectors[:1], vectors, score
    )
    assert modes["hybrid"][0, 0] == 0
    assert modes["semantic"][0].tolist() == [2, 1, 0]


def test_without_a_cross_encoder_there_is_no_scorer() -> None:
    assert pair_scorer(None) is None
    assert pair_scorer("") is None
