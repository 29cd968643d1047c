"""What chunking in killable worker processes costs on the normal path.

    python -m bench.workers [--corpus DIR] [--rounds 3] [--batch 10]

Answers the corpus documents (markdown and HTML) as skill requests, once with the
records chunked in a thread of the app (CHUNK_WORKERS=0, the old way: nothing can stop
a record) and once through the worker processes (the default: a record that overruns its
deadline is killed). Both run in this process, one request at a time, one worker, so
the difference is the hop itself: pickling the record and its chunks through a pipe.
Prints seconds per request and the ratio, for one-record requests and for batches.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bench.documents import DEFAULT_CORPUS, load_corpus
from skills.skill.service import answer_chunk_request
from skills.skill.settings import load_settings
from skills.skill.thread_chunker import ThreadChunker
from skills.skill.workers import ProcessChunker

if TYPE_CHECKING:
    from skills.skill.chunker_state import RecordChunker

OVERHEAD_GOAL_MS = 1.0
"""The worker hop may add at most 1 ms per record (an embedding request takes 100+ ms)."""


def _bodies(corpus: Path, batch: int) -> list[bytes]:
    documents = [*load_corpus(corpus, "markdown"), *load_corpus(corpus, "html")]
    values = [
        {"recordId": str(n), "data": {"text": document.text, "fileName": document.name}}
        for n, document in enumerate(documents)
    ]
    return [
        json.dumps({"values": values[start : start + batch]}).encode()
        for start in range(0, len(values), batch)
    ]


async def _time(chunker: RecordChunker, bodies: list[bytes], rounds: int) -> float:
    """The best of `rounds` total times over every body, in seconds."""
    settings = load_settings({"EMBEDDING_PROVIDER": "none"})
    await answer_chunk_request(bodies[0], settings, chunker=chunker)  # warm
    totals = []
    for _ in range(rounds):
        started = time.perf_counter()
        for body in bodies:
            answer = await answer_chunk_request(body, settings, chunker=chunker)
            assert answer.status == 200, answer.body[:200]
        totals.append(time.perf_counter() - started)
    return min(totals)


async def _compare(corpus: Path, rounds: int, batch: int) -> list[tuple[str, int, float, float]]:
    pool = ProcessChunker(1)
    rows = []
    try:
        for size in (1, batch):
            bodies = _bodies(corpus, size)
            thread = await _time(ThreadChunker(), bodies, rounds)
            process = await _time(pool, bodies, rounds)
            records = sum(len(json.loads(body)["values"]) for body in bodies)
            name = f"{size} record(s) per request ({len(bodies)} requests)"
            rows.append((name, records, thread, process))
    finally:
        await pool.aclose()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=10)
    args = parser.parse_args(argv)
    rows = asyncio.run(_compare(args.corpus, args.rounds, args.batch))
    print(f"{'requests':<44} {'thread s':>9} {'workers s':>10} {'ratio':>6} {'ms/record':>10}")
    worst = 0.0
    for name, records, thread, process in rows:
        extra_ms = (process - thread) / records * 1000
        worst = max(worst, extra_ms)
        print(
            f"{name:<44} {thread:>9.3f} {process:>10.3f} {process / thread:>6.2f} {extra_ms:>10.2f}"
        )
    verdict = "met" if worst <= OVERHEAD_GOAL_MS else "NOT met"
    print(
        f"worker overhead: at most {worst:.2f} ms per record "
        f"(goal <= {OVERHEAD_GOAL_MS:g}: {verdict})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
