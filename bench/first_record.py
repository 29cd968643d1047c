"""A first record against a hundredth (issue 40): what a fresh process or a new worker
pays before its first answer, over what every later record pays.

    python -m bench.first_record [--corpus DIR] [--rounds 3] [--records 100]

Two places a record can be the first:
- **a fresh process** (the Function host's first call with CHUNK_WORKERS=0, a script
  using the library): `chunk_record` called `--records` times on one corpus page in a new
  Python process that has imported only the skill's record module; CPU seconds of each
  call, best of `--rounds` processes per position.
- **a new worker pool** (the default: records chunked in worker processes forked from a
  warm forkserver): wall seconds of each one-record request through `ProcessChunker(1)`
  from its creation, in a new process each round (best of `--rounds` per position). The
  first includes starting the forkserver, its warm-up (`skills.skill.worker_warmup`) and
  the fork: what an app's first request pays.
- **a replacement worker**: the same through a second `ProcessChunker(1)` in that
  process, whose forkserver is already warm: what a worker replacing a killed one pays.

The goal: the first no slower than the hundredth by more than the start-up budget
(0.25 s in tokens, 0.15 s in characters). The page is the corpus's median-sized
markdown file, the same text every time, so the records differ only in what is warm.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bench.documents import DEFAULT_CORPUS, load_corpus

if TYPE_CHECKING:
    from bench.documents import Document

UNITS = ("characters", "azureOpenAITokens")
BUDGET = {"characters": 0.15, "azureOpenAITokens": 0.25}
"""Issue 40's start-up goals, seconds of CPU."""
PROJECT = Path(__file__).resolve().parent.parent

_FRESH = """
import json, sys, time
from skills.skill.chunk_records import chunk_record
from skills.skill.contract import InputRecord
from skills.skill.settings import Settings

data, count = json.loads(sys.stdin.read()), int(sys.argv[1])
settings = Settings()
seconds = []
for number in range(count):
    started = time.process_time()
    record = chunk_record(InputRecord(str(number), data), settings)
    seconds.append(time.process_time() - started)
    assert not record.errors, record.errors
print(json.dumps(seconds))
"""
"""One fresh process: the CPU seconds of each `chunk_record` call on the same data."""


def median_page(corpus: Path) -> Document | None:
    """The corpus's median-sized markdown page (None: the corpus has none)."""
    documents = sorted(load_corpus(corpus, "markdown"), key=lambda document: document.size)
    return documents[len(documents) // 2] if documents else None


def fresh_process(page: Document, unit: str, records: int) -> list[float]:
    """CPU seconds of each of `records` calls in one new process."""
    data = {"text": page.text, "fileName": page.name, "unit": unit}
    done = subprocess.run(
        [sys.executable, "-c", _FRESH, str(records)],
        cwd=PROJECT,
        input=json.dumps(data),
        capture_output=True,
        text=True,
        check=True,
    )
    seconds: list[float] = json.loads(done.stdout)
    return seconds


async def worker_pool(text: str, name: str, unit: str, records: int) -> list[float]:
    """Wall seconds of each of `records` one-record requests to a new one-worker pool."""
    from skills.skill.service import answer_chunk_request
    from skills.skill.settings import load_settings
    from skills.skill.workers import ProcessChunker

    settings = load_settings({"EMBEDDING_PROVIDER": "none"})
    values = [{"recordId": "1", "data": {"text": text, "fileName": name, "unit": unit}}]
    body = json.dumps({"values": values}).encode()
    seconds = []
    started = time.perf_counter()
    pool = ProcessChunker(1)
    try:
        for _ in range(records):
            answer = await answer_chunk_request(body, settings, chunker=pool)
            assert answer.status == 200, answer.body[:200]
            assert b'"errors": []' in answer.body or b'"errors":[]' in answer.body
            now = time.perf_counter()
            seconds.append(now - started)
            started = now
    finally:
        await pool.aclose()
    return seconds


def pools_in_a_new_process(page: Document, unit: str, records: int) -> list[list[float]]:
    """Each request's seconds through a new app process's first pool, then its second."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.first_record", "--pools", unit, str(records)],
        cwd=PROJECT,
        input=json.dumps({"text": page.text, "name": page.name}),
        capture_output=True,
        text=True,
        check=True,
    )
    pools: list[list[float]] = json.loads(done.stdout)
    return pools


async def _two_pools(unit: str, records: int) -> list[list[float]]:
    page = json.loads(sys.stdin.read())
    return [await worker_pool(page["text"], page["name"], unit, records) for _ in range(2)]


def _best(runs: list[list[float]]) -> list[float]:
    """Position by position, the fastest of the runs."""
    return [min(column) for column in zip(*runs, strict=True)]


def report(page: Document, rounds: int, records: int) -> list[str]:
    """The table: first, hundredth and their difference, per unit and place."""
    rows = [
        f"# First record against record {records}: {page.name} ({page.size:,} bytes)",
        "",
        f"| unit | where | first (s) | record {records} (s) | difference (s) | goal |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for unit in UNITS:
        pools = [pools_in_a_new_process(page, unit, records) for _ in range(rounds)]
        fresh = [fresh_process(page, unit, records) for _ in range(rounds)]
        places = {
            "fresh process, CPU": _best(fresh),
            "new worker pool, wall": _best([first for first, _ in pools]),
            "replacement worker, wall": _best([second for _, second in pools]),
        }
        for place, seconds in places.items():
            difference = seconds[0] - seconds[-1]
            verdict = "met" if difference <= BUDGET[unit] else "NOT met"
            rows.append(
                f"| {unit} | {place} | {seconds[0]:.3f} | {seconds[-1]:.4f} | "
                f"{difference:.3f} | <= {BUDGET[unit]:g}: {verdict} |"
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.first_record", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="corpus root")
    parser.add_argument("--rounds", type=int, default=3, help="fresh processes/pools per unit")
    parser.add_argument("--records", type=int, default=100, help="records per process/pool")
    parser.add_argument("--pools", nargs=2, metavar=("UNIT", "RECORDS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.pools:  # the child of `pools_in_a_new_process`: the page on stdin
        unit, records = args.pools
        print(json.dumps(asyncio.run(_two_pools(unit, int(records)))))
        return 0
    page = median_page(args.corpus)
    if page is None:
        print(f"{parser.prog}: no markdown file under {args.corpus}", file=sys.stderr)
        return 2
    print("\n".join(report(page, max(1, args.rounds), max(2, args.records))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
