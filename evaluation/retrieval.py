"""Retrieval modes of the evaluation, as Azure AI Search ranks a query on the chunk index.

- `vector`: exact cosine over the embedded texts (the index's HNSW approximates it).
- `keyword`: BM25 (bm25s, Lucene's variant, k1 1.2 and b 0.75 as the service sets them)
  over the fields the index makes searchable (`skills.search.definitions.FULL_TEXT_FIELDS`:
  `chunk`, the embedded text, and `title`), each its own BM25 field, the scores added, as
  a `searchMode=any` query over several fields adds them. Text is lower-cased and cut at
  word boundaries with no stemming and no stop words, as the service's default
  `standard.lucene` analyzer does.
  A Split-skill index has no headings, and its `title` is the file name, as the portal's
  import wizard maps `metadata_storage_name`.
- `hybrid`: Reciprocal Rank Fusion of the two rankings, each cut at HYBRID_DEPTH, with
  k = 60, the constant the service documents.
- `semantic`: the hybrid top HYBRID_DEPTH reranked by a local cross-encoder reading the
  question with each chunk's embedded text. It only approximates the service's semantic
  ranker (a Microsoft model we cannot run, reading `title` and `chunk` of
  the semantic configuration), so it is reported as its own mode, never as Azure's.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy.typing as npt

    from evaluation.chunkers import EvalChunk

RetrievalMode = Literal["vector", "keyword", "hybrid", "semantic"]
RETRIEVAL_MODES: tuple[RetrievalMode, ...] = ("vector", "keyword", "hybrid", "semantic")
RRF_K = 60
"""Reciprocal Rank Fusion's constant, as Azure AI Search documents it."""
HYBRID_DEPTH = 50
"""Results each side of a hybrid query brings to the fusion, and what the semantic
ranker reranks (the service's semantic ranker takes the top 50)."""
RANK_DEPTH = 50
"""Chunks each mode ranks per question: enough for @10 and for the context budgets."""
BM25_K1 = 1.2
BM25_B = 0.75
TOKEN_PATTERN = r"(?u)\b\w+\b"
"""Words as the standard analyzer cuts them, single letters and digits included."""


def vector_rank(
    query_vectors: npt.NDArray[np.float32], chunk_vectors: npt.NDArray[np.float32], depth: int
) -> npt.NDArray[np.intp]:
    """Exact cosine top-`depth` per query (unit vectors); ties go to document order."""
    scores = query_vectors @ chunk_vectors.T
    return _top(scores.astype(np.float64), depth)


def _top(scores: npt.NDArray[np.float64], depth: int) -> npt.NDArray[np.intp]:
    depth = min(depth, scores.shape[1])
    order = np.lexsort((np.broadcast_to(np.arange(scores.shape[1]), scores.shape), -scores))
    return order[:, :depth]


def _bm25s() -> Any:
    """The bm25s module, imported at first use (it ships no type information)."""
    return importlib.import_module("bm25s")


def _tokenize(texts: Sequence[str]) -> list[list[str]]:
    bm25s = _bm25s()

    tokens = bm25s.tokenize(
        list(texts),
        lower=True,
        token_pattern=TOKEN_PATTERN,
        stopwords=None,
        stemmer=None,
        return_ids=False,
        show_progress=False,
    )
    return [list(row) for row in tokens]


def keyword_scores(chunks: Sequence[EvalChunk], queries: Sequence[str]) -> npt.NDArray[np.float64]:
    """BM25 score of every chunk for every query: the searchable fields' scores added."""
    bm25s = _bm25s()

    fields = ([chunk.text for chunk in chunks], [chunk.title for chunk in chunks])
    query_tokens = _tokenize(queries)
    total = np.zeros((len(queries), len(chunks)), dtype=np.float64)
    for texts in fields:
        tokens = _tokenize(texts)
        if not any(tokens):
            continue  # an empty field (no headings) scores nothing
        retriever = bm25s.BM25(method="lucene", k1=BM25_K1, b=BM25_B)
        vocabulary: dict[str, int] = {}
        ids = [[vocabulary.setdefault(t, len(vocabulary)) for t in row] for row in tokens]
        corpus = bm25s.tokenization.Tokenized(ids=ids, vocab=vocabulary)
        retriever.index(corpus, show_progress=False)
        for row, words in enumerate(query_tokens):
            known = [w for w in words if w in vocabulary]
            if known:
                total[row] += retriever.get_scores(known)
    return total


def keyword_rank(
    chunks: Sequence[EvalChunk], queries: Sequence[str], depth: int
) -> npt.NDArray[np.intp]:
    """BM25 top-`depth` per query; chunks that match no word follow in document order
    (the service would return fewer results; the metrics count them as misses anyway)."""
    return _top(keyword_scores(chunks, queries), depth)


def fuse(
    rankings: Sequence[npt.NDArray[np.intp]], depth: int, k: int = RRF_K
) -> npt.NDArray[np.intp]:
    """Reciprocal Rank Fusion: a chunk scores Σ 1/(k + rank) over the rankings it is in
    (rank from 1, each ranking cut at HYBRID_DEPTH); ties go to document order."""
    questions = rankings[0].shape[0]
    width = int(max(int(r.max()) for r in rankings if r.size) + 1)
    scores = np.zeros((questions, width), dtype=np.float64)
    rows = np.arange(questions)[:, None]
    for ranking in rankings:
        cut = ranking[:, :HYBRID_DEPTH]
        weights = 1.0 / (k + 1 + np.arange(cut.shape[1]))
        np.add.at(scores, (np.broadcast_to(rows, cut.shape), cut), weights)
    return _top(scores, depth)


def rerank(
    order: npt.NDArray[np.intp],
    chunks: Sequence[EvalChunk],
    queries: Sequence[str],
    score: Callable[[Sequence[tuple[str, str]]], list[float]],
) -> npt.NDArray[np.intp]:
    """The first HYBRID_DEPTH of each ranking reordered by `score(question, chunk text)`
    (stable: equal scores keep the hybrid order); the rest stay behind them."""
    reordered = order.copy()
    for row, query in enumerate(queries):
        head = order[row, :HYBRID_DEPTH]
        scores = np.asarray(score([(query, chunks[int(i)].text) for i in head]), dtype=np.float64)
        reordered[row, : len(head)] = head[np.argsort(-scores, kind="stable")]
    return reordered


def rank_modes(
    modes: Sequence[RetrievalMode],
    chunks: Sequence[EvalChunk],
    queries: Sequence[str],
    query_vectors: npt.NDArray[np.float32],
    chunk_vectors: npt.NDArray[np.float32],
    pair_scorer: Callable[[Sequence[tuple[str, str]]], list[float]] | None = None,
    depth: int = RANK_DEPTH,
) -> dict[RetrievalMode, npt.NDArray[np.intp]]:
    """The ranking of each mode asked for (each computed once, the hybrid reused)."""
    wanted = max(depth, HYBRID_DEPTH)
    vector = vector_rank(query_vectors, chunk_vectors, wanted)
    keyword = keyword_rank(chunks, queries, wanted) if set(modes) - {"vector"} else None
    found: dict[RetrievalMode, npt.NDArray[np.intp]] = {}
    hybrid = fuse([vector, keyword], wanted) if keyword is not None else None
    for mode in modes:
        if mode == "vector":
            found[mode] = vector[:, :depth]
        elif mode == "keyword" and keyword is not None:
            found[mode] = keyword[:, :depth]
        elif mode == "hybrid" and hybrid is not None:
            found[mode] = hybrid[:, :depth]
        elif mode == "semantic" and hybrid is not None and pair_scorer is not None:
            found[mode] = rerank(hybrid, chunks, queries, pair_scorer)[:, :depth]
    return found
