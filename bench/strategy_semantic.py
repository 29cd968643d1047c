"""Throughput of the `semantic` strategy with its embeddings stubbed, on the shared corpus.

    python -m bench.strategy_semantic [--corpus DIR] [--files N] [--unit tokens|characters]
                                      [--percentile P] [--window W]

Chunking only: sentence embeddings come from `hashed_embedder`, a deterministic
bag-of-words vector that costs microseconds, so the figures are the strategy's own
work (segmenting, windows, distances, packing) and its embedding bill: texts embedded
and embedder calls per MB. Prints, for the structure strategy and for semantic, CPU
seconds, MB/s and chunks. A benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bench.documents import DEFAULT_CORPUS, load_corpus, megabytes
from chunking.options import ChunkOptions, Limits, SemanticBreaks, Unit
from chunking.pipeline import chunk_document
from chunking.scoring import Scoring

if TYPE_CHECKING:
    from collections.abc import Sequence

    from bench.documents import Document
    from chunking.scoring import Vector

HASHED_DIMENSIONS = 256
"""Buckets of the hashed bag of words: enough that two words rarely share one."""
_WORD = re.compile(r"\w+")
LIMITS: dict[str, Limits] = {
    "tokens": Limits(Unit.TOKENS, 512, 64),
    "characters": Limits(Unit.CHARACTERS, 2000, 500),
}


@functools.lru_cache(maxsize=1 << 16)
def _bucket(word: str) -> int:
    # crc32, not hash(): the same bucket in every process (hash() is salted per run).
    return zlib.crc32(word.encode("utf-8", "surrogatepass")) % HASHED_DIMENSIONS


def hashed_vector(text: str) -> Vector:
    """A deterministic offline embedding: counts of the lower-cased words of `text` in
    `HASHED_DIMENSIONS` hashed buckets, L2-normalised (all zeros without a word)."""
    buckets = [_bucket(word) for word in _WORD.findall(text.lower())]
    counts = np.bincount(buckets, minlength=HASHED_DIMENSIONS).astype(np.float64)
    norm = float(np.linalg.norm(counts))
    return tuple((counts / norm if norm else counts).tolist())


@dataclass(slots=True)
class HashedEmbedder:
    """`hashed_vector` as a `TextEmbedder` that counts what it is asked."""

    texts: int = 0
    calls: int = 0

    def __call__(self, texts: Sequence[str], /) -> list[Vector]:
        self.calls += 1
        self.texts += len(texts)
        return [hashed_vector(text) for text in texts]


def hashed_scoring(embedder: HashedEmbedder | None = None) -> Scoring:
    """A `Scoring` whose embeddings are hashed bags of words (no model, no network)."""
    return Scoring(embed=embedder or HashedEmbedder())


def _run(
    documents: Sequence[Document], options: ChunkOptions, scoring: Scoring
) -> tuple[float, int]:
    """CPU seconds and chunks over every document."""
    chunks = 0
    began = time.process_time()
    for document in documents:
        chunks += len(
            chunk_document(
                document.text, options=options, file_name=document.name, scoring=scoring
            ).chunks
        )
    return time.process_time() - began, chunks


def main(argv: list[str] | None = None) -> int:
    """Print the structure and semantic figures for each corpus kind."""
    parser = argparse.ArgumentParser(prog="python -m bench.strategy_semantic")
    parser.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    parser.add_argument("--files", type=int, default=None, help="files per kind (all)")
    parser.add_argument("--unit", choices=list(LIMITS), default="tokens")
    parser.add_argument("--percentile", type=float, default=SemanticBreaks().percentile)
    parser.add_argument("--window", type=int, default=SemanticBreaks().window)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    limits = LIMITS[args.unit]
    breaks = SemanticBreaks(percentile=args.percentile, window=args.window)
    print(f"limits {limits.maximum_page_length} {limits.unit.value}; semantic {breaks}")
    print("| corpus | strategy | MB | CPU s | MB/s | chunks | texts embedded | calls | "
          "texts/MB | calls/MB |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for kind in ("markdown", "html"):
        documents = load_corpus(Path(args.corpus), kind, args.files)
        if not documents:
            continue
        size = megabytes(documents)
        seconds, chunks = _run(documents, ChunkOptions(limits=limits), Scoring())
        print(f"| {kind} | structure | {size:.1f} | {seconds:.1f} | {size / seconds:.2f} | "
              f"{chunks} | 0 | 0 | 0 | 0 |")  # fmt: skip
        embedder = HashedEmbedder()
        options = ChunkOptions(limits=limits, strategy="semantic", semantic=breaks)
        seconds, chunks = _run(documents, options, hashed_scoring(embedder))
        print(
            f"| {kind} | semantic | {size:.1f} | {seconds:.1f} | {size / seconds:.2f} | "
            f"{chunks} | {embedder.texts} | {embedder.calls} | {embedder.texts / size:.0f} | "
            f"{embedder.calls / size:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
