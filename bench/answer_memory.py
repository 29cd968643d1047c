"""Memory of one answer: peak resident memory against the request's and the answer's bytes.

    python -m bench.answer_memory [--records 50,100,200] [--dimensions 0,1536]
        [--workers 0,2] [--settings 512/64/azureOpenAITokens,2000/500/characters]

Builds a request of N records of ~100 KB of markdown each (the repo's samples/eval docs,
concatenated and cut, as issue 26 item 5 did), answers it in a fresh subprocess with the
record settings of `--settings` and the chunking in the app's own thread (`--workers 0`)
or in worker processes (the deployed app's role: their memory is not the app's), and reports
the request's bytes, the answer's bytes, the chunks, and the subprocess's peak resident
memory while it answers, above what it held before (the kernel's high-water mark, VmHWM,
reset once the body is built: building it is the client's work, not the app's), plus the
body's own bytes (the app holds the body it read). With dimensions > 0
a stand-in embedder gives every chunk a vector of that many float32 values, as the
openai client hands them over (Python floats). The ratios (peak per request byte, peak
per answer byte) are what the skill's default limits are derived from
(docs/design/hardening.md, "Bounded answers").
"""

from __future__ import annotations

import argparse
import array
import asyncio
import gc
import json
import random
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from skills.embedding.embedder import EmbeddingOutcome, EmbeddingStats
from skills.skill.memory_budget import MemoryBudget, Reservation
from skills.skill.memory_cost import upper_cost
from skills.skill.service import Answer, answer_chunk_request
from skills.skill.settings import Settings
from skills.skill.workers import build_chunker

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

DOCS = Path(__file__).resolve().parent.parent / "samples" / "eval" / "docs"
RECORD_CHARACTERS = 100_000
"""Each record's text: ~100 KB, the issue's records."""
MIB = 2**20


def record_texts(count: int, characters: int = RECORD_CHARACTERS) -> list[str]:
    """`count` texts of `characters` each cut from the markdown samples, cycled."""
    stream = "\n\n".join(path.read_text("utf-8") for path in sorted(DOCS.glob("*.md")))
    texts = []
    offset = 0
    for _ in range(count):
        piece = ""
        while len(piece) < characters:
            take = stream[offset : offset + characters - len(piece)]
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


def record_settings(text: str) -> dict[str, object]:
    """A record's inputs from `maximumPageLength/pageOverlapLength/unit`."""
    limit, overlap, unit = text.split("/")
    return {"maximumPageLength": int(limit), "pageOverlapLength": int(overlap), "unit": unit}


def measure(
    records: int,
    dimensions: int,
    workers: int = 0,
    setting: str = "512/64/azureOpenAITokens",
    characters: int = RECORD_CHARACTERS,
) -> dict[str, float | str]:
    """One request answered in this process: sizes, chunks and peak memory above baseline."""
    settings = Settings(max_request_bytes=2**31, deadline_seconds=230.0, chunk_workers=workers)
    if dimensions:
        # As deployed: the settings name the provider whose vectors the answer will hold.
        embedding = replace(settings.embedding, provider="openai", dimensions=dimensions)
        settings = replace(settings, embedding=embedding)
    chunker = build_chunker(workers)
    inputs = record_settings(setting)

    async def run() -> tuple[bytes, Answer, float, int, Watched]:
        # Warm up (imports, tokenizer, workers) before the baseline is read; one event
        # loop for both, as the worker pool belongs to the loop that started it.
        warm = {"values": [{"recordId": "w", "data": {"text": "# W\n\nwarm " * 500}}]}
        await answer_chunk_request(json.dumps(warm).encode(), settings, chunker=chunker)
        texts = record_texts(records, characters)
        values = [{"recordId": str(n), "data": {"text": t, **inputs}} for n, t in enumerate(texts)]
        body = json.dumps({"values": values}).encode()
        del texts, values
        gc.collect()
        baseline = _resident("VmRSS") - len(body)
        _reset_high_water_mark()
        embedder = StandInEmbedder(dimensions) if dimensions else None
        started = time.monotonic()
        # The cost model's reservation, in a budget nothing else uses.
        reservation = Watched(MemoryBudget(2**50), 0)
        await reservation.grow_to(upper_cost(len(body), settings), time.monotonic() + 1)
        answered = await answer_chunk_request(
            body,
            settings,
            chunker=chunker,
            embedder=embedder,  # type: ignore[arg-type]
            reservation=reservation,
        )
        await chunker.aclose()
        return body, answered, time.monotonic() - started, baseline, reservation

    body, answered, seconds, baseline, reservation = asyncio.run(run())
    peak = _resident("VmHWM")
    # Until the chunks were counted, against what was held then; after, against the rest.
    before = max(reservation.peak_until_counted - baseline, 0)
    after = max(peak - baseline, 0) if reservation.peak_until_counted else 0
    values = json.loads(answered.body)["values"]
    chunks = sum(len(v["data"].get("chunks", [])) for v in values)
    failed = sum(1 for v in values if v["errors"])
    return {
        "records": records,
        "characters": characters,
        "dimensions": dimensions,
        "workers": workers,
        "setting": setting,
        "request_mb": len(body) / MIB,
        "answer_mb": len(answered.body) / MIB,
        "chunks": chunks,
        "failed": failed,
        "peak_above_baseline_mb": max(before, after) / MIB,
        "upper_cost_mb": reservation.upper / MIB,
        "held_until_counted_mb": reservation.counted / MIB,
        "peak_until_counted_mb": before / MIB,
        "held_once_counted_mb": reservation.settled / MIB,
        "peak_once_counted_mb": after / MIB,
        "baseline_mb": baseline / MIB,
        "seconds": seconds,
    }


class Watched(Reservation):
    """A reservation that notes what it held and the process's peak when the chunks were
    counted (`settle`), and starts the high-water mark again from there."""

    __slots__ = ("counted", "peak_until_counted", "settled", "upper")

    def __init__(self, budget: MemoryBudget, cost: int) -> None:
        super().__init__(budget, cost)
        self.upper = self.counted = self.settled = self.peak_until_counted = 0

    async def grow_to(self, cost: int, until: float) -> bool:
        self.upper = max(self.upper, cost)
        return await super().grow_to(cost, until)

    def settle(self, cost: int) -> None:
        self.peak_until_counted = _resident("VmHWM")
        self.counted = self.cost
        super().settle(cost)
        self.settled = self.cost
        _reset_high_water_mark()


def _resident(field: str) -> int:
    """Bytes of this process's resident memory: now (VmRSS) or at most (VmHWM)."""
    status = Path("/proc/self/status").read_text(encoding="ascii")
    kilobytes = next(line.split()[1] for line in status.splitlines() if line.startswith(field))
    return int(kilobytes) * 1024


def _reset_high_water_mark() -> None:
    """Make VmHWM the resident memory now (Linux: clear_refs 5)."""
    Path("/proc/self/clear_refs").write_text("5", encoding="ascii")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--records",
        default="50,100,200",
        help="records per request, each N or NxCHARACTERS (1x16000000: an S3 indexer's "
        f"largest document; records are {RECORD_CHARACTERS:,} characters otherwise)",
    )
    parser.add_argument("--dimensions", default="0,1536")
    parser.add_argument("--workers", default="0", help="0 (the app's threads) and/or N")
    parser.add_argument(
        "--settings", default="512/64/azureOpenAITokens", help="limit/overlap/unit, ..."
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        records, dimensions, workers, setting, characters = args.one.split(",")
        row = measure(int(records), int(dimensions), int(workers), setting, int(characters))
        print(json.dumps(row))
        return
    header = (
        "workers setting characters records dims request_MB answer_MB chunks failed peak_MB "
        "peak/request peak/answer s | upper_MB held_until_counted_MB peak_until_counted_MB "
        "ratio held_once_counted_MB peak_once_counted_MB ratio"
    )
    print(header)
    grid = [
        (workers, setting, characters, dimensions, records)
        for workers in map(int, args.workers.split(","))
        for setting in args.settings.split(",")
        for dimensions in map(int, args.dimensions.split(","))
        for records, characters in map(_shape, args.records.split(","))
    ]
    worst = 0.0
    for workers, setting, characters, dimensions, records in grid:
        one = f"{records},{dimensions},{workers},{setting},{characters}"
        run = subprocess.run(
            [sys.executable, "-m", "bench.answer_memory", "--one", one],
            capture_output=True,
            text=True,
            check=True,
        )
        row = json.loads(run.stdout.strip().splitlines()[-1])
        peak = row["peak_above_baseline_mb"]
        print(
            f"{workers} {setting} {characters} {records} {dimensions} "
            f"{row['request_mb']:.1f} {row['answer_mb']:.1f} "
            f"{row['chunks']} {row['failed']} {peak:.0f} "
            f"{peak / row['request_mb']:.1f} {peak / max(row['answer_mb'], 1e-9):.2f} "
            f"{row['seconds']:.1f} | {row['upper_cost_mb']:.0f} "
            f"{row['held_until_counted_mb']:.0f} {row['peak_until_counted_mb']:.0f} "
            f"{_ratio(row['peak_until_counted_mb'], row['held_until_counted_mb'])} "
            f"{row['held_once_counted_mb']:.0f} {row['peak_once_counted_mb']:.0f} "
            f"{_ratio(row['peak_once_counted_mb'], row['held_once_counted_mb'])}",
            flush=True,
        )
        worst = max(worst, row["peak_until_counted_mb"] / max(row["held_until_counted_mb"], 1e-9))
        worst = max(worst, row["peak_once_counted_mb"] / max(row["held_once_counted_mb"], 1e-9))
    print(f"worst peak / held: {worst:.2f}")


def _ratio(peak: float, held: float) -> str:
    return f"{peak / held:.2f}" if held else "-"


def _shape(text: str) -> tuple[int, int]:
    """Records and characters each from `N` or `NxCHARACTERS`."""
    records, _, characters = text.partition("x")
    return int(records), int(characters or RECORD_CHARACTERS)


if __name__ == "__main__":
    main()
