"""Throughput of the `binary` strategy, scoring stubbed, against `structure` on the corpus.

    python -m bench.strategy_binary [CORPUS_DIR] [--limit N] [--candidates K]

Chunking only: the scorer is `bench.offline_scoring`'s hashed bag-of-words (no model,
microseconds a text), so the figures are the strategy's own cost plus what it asks of a
scorer: scorer calls per MB (one per split) and texts embedded per MB (each distinct
side text of a document once, at most 2K a call). A real model's time is those texts
times its own rate (multilingual-e5-small on CPU: about 100 texts a second a core).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from bench.documents import load_corpus, megabytes
from bench.offline_scoring import offline_scoring
from chunking.options import ChunkOptions, Limits, Unit
from chunking.pipeline import chunk_document
from chunking.plan.binary_params import BinarySplit

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
LIMITS = Limits(Unit.TOKENS, 512, 64)
ROUNDS = 2
"""Each strategy runs this often and the fastest round counts: the first one also pays
for loading the encoding and warming caches, and the machine is shared."""


def main(argv: list[str] | None = None) -> int:
    """Print MB/s of structure and binary, and binary's scorer calls and texts per MB."""
    parser = argparse.ArgumentParser(prog="python -m bench.strategy_binary")
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--limit", type=int, default=None, help="documents per kind")
    parser.add_argument("--candidates", type=int, default=BinarySplit().candidates)
    args = parser.parse_args(argv)
    documents = [
        *load_corpus(args.corpus, "markdown", args.limit),
        *load_corpus(args.corpus, "html", args.limit),
    ]
    size = megabytes(documents)
    print(f"{len(documents)} documents, {size:.1f} MB, {LIMITS.maximum_page_length} tokens")
    for strategy in ("structure", "binary"):
        options = ChunkOptions(
            limits=LIMITS,
            strategy=strategy,
            parameters=BinarySplit(candidates=args.candidates) if strategy == "binary" else None,
        )
        seconds = math.inf
        for _ in range(ROUNDS):
            scoring, counted = offline_scoring()
            chunks = 0
            began = time.perf_counter()
            for document in documents:
                result = chunk_document(
                    document.text, options=options, file_name=document.name, scoring=scoring
                )
                chunks += len(result.chunks)
            seconds = min(seconds, time.perf_counter() - began)
        line = f"{strategy:9}  {size / seconds:6.2f} MB/s  {chunks} chunks"
        if counted.calls:
            line += (
                f"  {counted.calls / size:,.0f} scorer calls/MB"
                f"  {counted.texts / size:,.0f} texts/MB"
                f"  ({counted.calls:,} calls, {counted.texts:,} texts)"
            )
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
