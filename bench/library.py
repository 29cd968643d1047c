"""Throughput of the library API (`skills.skill.library.chunk_records`) on one core.

    python -m bench.library [--corpus DIR] [--rounds 3] [--limit N]

What the push path and Spark do per document before embedding: the skill's own record
handling and chunking, in one process, one record at a time. Prints documents, MB and
chunks per second per core for the corpus markdown and HTML, and the core-hours a million
such documents take (so many cores finish them in an hour). Embedding is not included:
its pace is set by the embedding quota (README, "Sizing for a quota").
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bench.documents import DEFAULT_CORPUS, load_corpus, megabytes
from skills.skill.library import chunk_records
from skills.skill.settings import Settings

if TYPE_CHECKING:
    from bench.peers import Kind

MILLION = 1_000_000
SECONDS_PER_HOUR = 3600


def measure(corpus: Path, kind: Kind, rounds: int, limit: int | None) -> tuple[str, ...]:
    """One table row: documents/s, MB/s, chunks/s and core-hours per million documents."""
    documents = load_corpus(corpus, kind, limit)
    records = [{"text": d.text, "fileName": Path(d.name).name} for d in documents]
    settings = Settings(chunk_workers=0)
    best = float("inf")
    chunks = 0
    for _ in range(rounds):
        started = time.process_time()
        answers = chunk_records(records, settings)
        best = min(best, time.process_time() - started)
        chunks = sum(len(a.chunks) for a in answers)
    per_second = len(documents) / best
    core_hours = MILLION / per_second / SECONDS_PER_HOUR
    return (
        kind,
        f"{len(documents)}",
        f"{per_second:.0f}",
        f"{megabytes(documents) / best:.2f}",
        f"{chunks / best:.0f}",
        f"{core_hours:.1f}",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, help="documents per format (spread evenly)")
    args = parser.parse_args(argv)
    print(
        "| format | documents | documents/s per core | MB/s | chunks/s | core-hours per "
        "million documents |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    kinds: tuple[Kind, ...] = ("markdown", "html")
    for kind in kinds:
        print("| " + " | ".join(measure(args.corpus, kind, args.rounds, args.limit)) + " |")
    print("\nCPU time of one process (best of the rounds); 512 tokens, 64 overlap, no embedding.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
