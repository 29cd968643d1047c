"""Memory of one answer: peak resident memory against the request's and the answer's bytes.

    python -m bench.answer_memory [--records 50,100,200] [--dimensions 0,1536]

Builds a request of N records of ~100 KB of markdown each (the repo's samples/eval docs,
concatenated and cut, as issue 26 item 5 did), answers it in a fresh subprocess with the
default settings (tokens 512/64) and the chunking in the app's own thread, and reports
the request's bytes, the answer's bytes, the chunks, and the subprocess's peak resident
memory above what it held before the body was built (`ru_maxrss`). With dimensions > 0
a stand-in embedder gives every chunk a vector of that many float32 values, as the
openai client hands them over (Python floats). The ratios (peak per request byte, peak
per answer byte) are what the skill's default limits are derived from
(docs/design/hardening.md, "Bounded answers").
"""

from __future__ import annotations

import argparse
import array
import asyncio
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from skills.embedding.embedder import EmbeddingOutcome, EmbeddingStats
from skills.skill.service import answer_chunk_request
from skills.skill.settings import Settings
from skills.skill.thread_chunker import ThreadChunker

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

DOCS = Path(__file__).resolve().parent.parent / "samples" / "eval" / "docs"
RECORD_CHARACTERS = 100_000
"""Each record's text: ~100 KB, the issue's records."""
MIB = 2**20


def record_texts(count: int) -> list[str]:
    """`count` texts of RECORD_CHARACTERS cut from the markdown samples, cycled."""
    stream = "\n\n".join(path.read_text("utf-8") for path in sorted(DOCS.glob("*.md")))
    texts = []
    offset = 0
    for _ in range(count):
        piece = ""
        while len(piece) < RECORD_CHARACTERS:
            take = stream[offset : offset + RECORD_CHARACTERS - len(piece)]
            piece += take
            offset = (offset + len(take)) % len(stream)
        texts.append(piece)
    return texts


class StandInEmbedder:
    """Vectors of `dimensions` float32 values for every text, at once (no I/O)."""

    description = "stand-in"

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions

    async def embed(
        self,
        texts: Sequence[str],
        deadline: float,
        progress: Callable[[int, int], None] | None = None,
    ) -> object:

        generator = random.Random(0)
        # float32 values as Python floats, as the openai client's base64 reply decodes.
        results = tuple(
            array.array(
                "f", (generator.uniform(-0.1, 0.1) for _ in range(self.dimensions))
            ).tolist()
            for _ in texts
        )
        stats = EmbeddingStats(len(texts), len(texts), 0, 0, 1, 1, 0, 0, 0.0)
        return EmbeddingOutcome(results, stats)

    async def aclose(self) -> None:
        return None


def measure(records: int, dimensions: int) -> dict[str, float]:
    """One request answered in this process: sizes, chunks and peak memory above baseline."""

    settings = Settings(max_request_bytes=2**31, deadline_seconds=230.0, chunk_workers=0)
    # Warm up (imports, tokenizer) before the baseline is read.
    warm = json.dumps({"values": [{"recordId": "w", "data": {"text": "# W\n\nwarm " * 500}}]})
    asyncio.run(answer_chunk_request(warm.encode(), settings, chunker=ThreadChunker()))
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    texts = record_texts(records)
    body = json.dumps(
        {"values": [{"recordId": str(n), "data": {"text": t}} for n, t in enumerate(texts)]}
    ).encode()
    del texts
    embedder = StandInEmbedder(dimensions) if dimensions else None
    started = time.monotonic()
    answer = asyncio.run(
        answer_chunk_request(
            body,
            settings,
            chunker=ThreadChunker(),
            embedder=embedder,  # type: ignore[arg-type]
        )
    )
    seconds = time.monotonic() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    values = json.loads(answer.body)["values"]
    chunks = sum(len(v["data"].get("chunks", [])) for v in values)
    failed = sum(1 for v in values if v["errors"])
    return {
        "records": records,
        "dimensions": dimensions,
        "request_mb": len(body) / MIB,
        "answer_mb": len(answer.body) / MIB,
        "chunks": chunks,
        "failed": failed,
        "peak_above_baseline_mb": max(peak - baseline, 0) / MIB,
        "baseline_mb": baseline / MIB,
        "seconds": seconds,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", default="50,100,200")
    parser.add_argument("--dimensions", default="0,1536")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        records, dimensions = map(int, args.one.split(","))
        print(json.dumps(measure(records, dimensions)))
        return
    header = "records dims request_MB answer_MB chunks failed peak_MB peak/request peak/answer s"
    print(header)
    for dimensions in map(int, args.dimensions.split(",")):
        for records in map(int, args.records.split(",")):
            run = subprocess.run(
                [sys.executable, "-m", "bench.answer_memory", "--one", f"{records},{dimensions}"],
                capture_output=True,
                text=True,
                check=True,
            )
            row = json.loads(run.stdout.strip().splitlines()[-1])
            peak = row["peak_above_baseline_mb"]
            print(
                f"{records} {dimensions} {row['request_mb']:.1f} {row['answer_mb']:.1f} "
                f"{row['chunks']} {row['failed']} {peak:.0f} "
                f"{peak / row['request_mb']:.1f} {peak / max(row['answer_mb'], 1e-9):.2f} "
                f"{row['seconds']:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
