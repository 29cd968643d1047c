"""Scaling: one ~16-million-character document against the same text as 100 KB documents.

    python -m bench.scale [--corpus DIR] [--characters N] [--unit tokens|characters]

For markdown and for HTML, concatenates corpus documents (cycling through the
corpus until the size is reached) into one big document with many sections,
and cuts the very same stream into ~100 KB and ~1 MB documents.  Each size is
chunked in a fresh subprocess; the report gives seconds per million
characters, its ratio to the 100 KB figure (linear time means ~1.0), and the
peak resident memory of that subprocess (its own `ru_maxrss`, read with
`os.wait4`, so one measurement never inherits another's peak).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from itertools import cycle
from pathlib import Path
from typing import TYPE_CHECKING

from bench.documents import DEFAULT_CORPUS, load_corpus
from bench.offline import offline
from bench.speed import LIMITS
from chunking.options import ChunkOptions
from chunking.pipeline import chunk_document

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from bench.peers import Kind

BIG_CHARACTERS = 16_000_000
"""The largest document an indexer sends (16 million characters)."""
SIZES = (100_000, 1_000_000)
"""Smaller documents cut from the same stream, to compare time per character with."""
INDEXER_TIMEOUT_SECONDS = 230
"""Azure AI Search's limit for one custom skill call."""
LINEAR_RATIO_GOAL = 1.3
MEMORY_GOAL_MB = 1500
WARM_UP_CHARACTERS = 20_000
"""Enough of the first document to load the encoding and parsers before timing."""
CHILD_TIMEOUT_SECONDS = 1800
KB_PER_MB = 1024
"""ru_maxrss is in KiB on Linux."""
MILLION = 1_000_000

_FRONT_MATTER = re.compile(r"\A\ufeff?---\r?\n.*?\r?\n---[ \t]*\r?\n", re.DOTALL)
_BODY = re.compile(r"<body\b[^>]*>(.*)</body\s*>", re.DOTALL | re.IGNORECASE)
_HTML_HEAD = (
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="UTF-8">\n'
    "<title>Concatenated corpus</title>\n</head>\n<body>\n"
)
_HTML_TAIL = "</body>\n</html>\n"


def _pieces(corpus: Path, kind: Kind) -> list[str]:
    """The corpus documents as parts of one document: no front matter, HTML body only."""
    pieces = []
    for document in load_corpus(corpus, kind):
        if kind == "markdown":
            text = _FRONT_MATTER.sub("", document.text).strip("\ufeff\n")
            pieces.append(text + "\n\n")
        else:
            body = _BODY.search(document.text)
            inner = body.group(1) if body else document.text
            pieces.append(f'<div class="page" id="page-{len(pieces)}">\n{inner}\n</div>\n')
    return pieces


def _wrap(kind: Kind, parts: Sequence[str]) -> str:
    body = "".join(parts)
    return f"{_HTML_HEAD}{body}{_HTML_TAIL}" if kind == "html" else body


def _documents(pieces: Sequence[str], kind: Kind, size: int, total: int) -> Iterator[str]:
    """Documents of at least `size` characters, from the cycled pieces, `total` in all."""
    stream = cycle(pieces)
    produced = 0
    while produced < total:
        parts: list[str] = []
        length = 0
        while length < size and produced + length < total:
            piece = next(stream)
            parts.append(piece)
            length += len(piece)
        produced += length
        yield _wrap(kind, parts)


@dataclass(frozen=True, slots=True)
class Measurement:
    """What one subprocess measured."""

    documents: int
    characters: int
    seconds: float
    chunks: int
    peak_mb: float

    @property
    def seconds_per_million(self) -> float:
        """Seconds per million characters of input."""
        return self.seconds / (self.characters / MILLION)


def _measure_in_child(directory: Path, kind: Kind, unit: str, chunk: bool) -> Measurement:
    """Run `--child` on the documents in `directory` and read the child's own peak RSS."""
    command = [sys.executable, "-m", "bench.scale", "--child", str(directory)]
    command += ["--kind", kind, "--unit", unit] + ([] if chunk else ["--no-chunk"])
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        watchdog = threading.Timer(CHILD_TIMEOUT_SECONDS, process.kill)
        watchdog.start()
        try:
            output = process.stdout.read() if process.stdout is not None else ""
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            watchdog.cancel()
        # wait4 reaped the child; tell Popen so it does not wait for it again.
        process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed with exit code {process.returncode}")
    result = json.loads(output)
    return Measurement(
        documents=result["documents"],
        characters=result["characters"],
        seconds=result["seconds"],
        chunks=result["chunks"],
        peak_mb=usage.ru_maxrss / KB_PER_MB,
    )


def _child(directory: Path, kind: Kind, unit: str, chunk: bool) -> None:
    """Chunk every document in `directory` (one file each) and print the totals as JSON."""
    options = ChunkOptions(limits=LIMITS[unit])
    paths = sorted(directory.iterdir())
    texts = [path.read_text(encoding="utf-8") for path in paths]
    with offline():
        chunk_document(texts[0][:WARM_UP_CHARACTERS], options=options, format=kind)
        chunks = 0
        start = time.process_time()
        if chunk:
            for text in texts:
                chunks += len(chunk_document(text, options=options, format=kind).chunks)
        seconds = time.process_time() - start
    print(
        json.dumps(
            {
                "documents": len(texts),
                "characters": sum(len(text) for text in texts),
                "seconds": seconds,
                "chunks": chunks,
            }
        )
    )


def _write(directory: Path, documents: Iterator[str]) -> None:
    directory.mkdir()
    for index, text in enumerate(documents):
        (directory / f"{index:05d}.txt").write_text(text, encoding="utf-8")


def run(corpus: Path, characters: int, unit: str) -> list[str]:
    """Measure both kinds and return the report as markdown lines."""
    limits = LIMITS[unit]
    lines = [
        "# Chunking time against document size",
        "",
        f"{limits.maximum_page_length} {unit} / {limits.page_overlap_length} overlap; "
        f"each row is a fresh process; peak RSS is that process's ru_maxrss.",
        "",
        "| document | documents × mean size | chunks | seconds | s per M chars | "
        "÷ 100 KB | peak RSS |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    summary = []
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as work:
        for kind in ("markdown", "html"):
            pieces = _pieces(corpus, kind)
            if not pieces:
                lines.append(f"| {kind}: no files under {corpus} | | | | | | |")
                continue
            results: list[tuple[str, Measurement]] = []
            for size in (*SIZES, characters):
                directory = Path(work) / f"{kind}-{size}"
                _write(directory, _documents(pieces, kind, size, characters))
                label = f"{kind}, ~{size / MILLION:g} M chars"
                results.append((label, _measure_in_child(directory, kind, unit, chunk=True)))
            baseline = _measure_in_child(
                Path(work) / f"{kind}-{characters}", kind, unit, chunk=False
            )
            reference = results[0][1].seconds_per_million
            for label, measured in results:
                mean = measured.characters / measured.documents / MILLION
                lines.append(
                    f"| {label} | {measured.documents} × {mean:.2f} M | {measured.chunks} | "
                    f"{measured.seconds:.2f} | {measured.seconds_per_million:.3f} | "
                    f"{measured.seconds_per_million / reference:.2f}× | "
                    f"{measured.peak_mb:.0f} MB |"
                )
            lines.append(
                f"| {kind}: the big document loaded, not chunked | | | | | | "
                f"{baseline.peak_mb:.0f} MB |"
            )
            big = results[-1][1]
            ratio = big.seconds_per_million / reference
            summary.append(
                f"- {kind}: {big.characters / MILLION:.1f} M characters in {big.seconds:.1f} s "
                f"({100 * big.seconds / INDEXER_TIMEOUT_SECONDS:.0f}% of the indexer's "
                f"{INDEXER_TIMEOUT_SECONDS} s); time per M chars {ratio:.2f}× the 100 KB "
                f"documents' (goal ≤ {LINEAR_RATIO_GOAL}×: "
                f"{'met' if ratio <= LINEAR_RATIO_GOAL else 'MISSED'}); peak RSS "
                f"{big.peak_mb:.0f} MB (goal < {MEMORY_GOAL_MB} MB: "
                f"{'met' if big.peak_mb < MEMORY_GOAL_MB else 'MISSED'})"
            )
    return [*lines, "", *summary, ""]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the scaling benchmark (or, with --child, one measurement) and print it."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.scale", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--characters", type=int, default=BIG_CHARACTERS)
    parser.add_argument("--unit", choices=sorted(LIMITS), default="tokens")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--kind", choices=["markdown", "html"], help=argparse.SUPPRESS)
    parser.add_argument("--no-chunk", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        _child(args.child, args.kind, args.unit, chunk=not args.no_chunk)
        return 0
    print("\n".join(run(args.corpus, args.characters, args.unit)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
