"""Throughput of the `semantic` strategy with its embeddings stubbed, on the shared corpus.

    python -m bench.strategy_semantic [--corpus DIR] [--files N] [--unit tokens|characters]
                                      [--percentile P] [--window W]

Chunking only: sentence embeddings come from `bench.offline_scoring`, a deterministic
bag-of-words vector that costs microseconds, so the figures are the strategy's own
work (segmenting, windows, distances, packing) and its embedding bill: texts embedded
and embedder calls per MB. Prints, for the structure strategy and for semantic, CPU
seconds, MB/s and chunks. A benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bench.documents import DEFAULT_CORPUS, load_corpus, megabytes
from bench.offline_scoring import offline_scoring
from chunking.options import ChunkOptions, Limits, Unit
from chunking.pipeline import chunk_document
from chunking.plan.scoring import Scoring
from chunking.plan.semantic_params import SemanticBreaks

if TYPE_CHECKING:
    from collections.abc import Sequence

    from bench.documents import Document

LIMITS: dict[str, Limits] = {
    "tokens": Limits(Unit.TOKENS, 512, 64),
    "characters": Limits(Unit.CHARACTERS, 2000, 500),
}


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
        scoring, embedder = offline_scoring()
        options = ChunkOptions(limits=limits, strategy="semantic", parameters=breaks)
        seconds, chunks = _run(documents, options, scoring)
        print(
            f"| {kind} | semantic | {size:.1f} | {seconds:.1f} | {size / seconds:.2f} | "
            f"{chunks} | {embedder.texts} | {embedder.calls} | {embedder.texts / size:.0f} | "
            f"{embedder.calls / size:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
