"""Chunking speed: ours against the peers and the floors, on the shared corpus.

    python -m bench.speed [--corpus DIR] [--quick] [--files N] [--unit tokens|characters]
                          [--no-peers] [--only markdown|html] [--rounds N]

Everything runs in this one process, one chunker after another, each over the
whole corpus after a warm-up document, in --rounds interleaved rounds (3;
each chunker keeps its fastest), with the same limits (512 cl100k
tokens / 64 overlap, or 2000 / 500 characters).  Prints markdown tables:
MB/s, chunk count, p50/p95/max chunk size, and each chunker's time divided by
ours; then the floors (block parse, one tokenizer pass) and our time divided
by each.  Times are CPU seconds of this process (steady on a shared machine;
the wall/CPU column shows when that and elapsed time differ).  A benchmark,
not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import compileall
import gc
import importlib.metadata
import math
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bench.documents import DEFAULT_CORPUS, Document, load_corpus, megabytes
from bench.floors import FLOORS, Floor
from bench.offline import offline
from bench.peers import PEERS, Kind, Peer
from chunking.measure.sizing import make_sizer
from chunking.options import DEFAULT_ENCODER, ChunkOptions, Limits, Unit
from chunking.pipeline import chunk_document

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from chunking.measure.sizing import Sizer

LIMITS: dict[str, Limits] = {
    "tokens": Limits(Unit.TOKENS, 512, 64),
    "characters": Limits(Unit.CHARACTERS, 2000, 500),
}
QUICK_FILES = 20
"""Files per corpus with --quick: enough to exercise every chunker, fast enough for CI."""
DEFAULT_ROUNDS = 3
"""Rounds per run: this machine's speed drifts by 5-10% within minutes."""
OURS = "ours: chunking.chunk_document"
PEER_PACKAGES = (
    "langchain-text-splitters",
    "semantic-text-splitter",
    "chonkie",
    "llama-index-core",
    "markdown-it-py",
    "beautifulsoup4",
    "lxml",
    "tiktoken",
)
# Goals of issue 19 (time ratios; a peer ratio is peer time / our time).
LANGCHAIN_TOKENS_SPEEDUP = 2.0
"""Tokens, markdown: at least twice LangChain's speed..."""
CHONKIE_TOKENS_SPEEDUP = 1.0
"""...and at least Chonkie's (structure-blind): the fastest chunker on the corpus."""
BEST_HTML_PEER_SPEEDUP = 3.0
"""HTML, both units: three times the best HTML peer."""
OUTLINE_SLOWDOWN = 2.0
"""Characters, markdown: within twice our own outline parse (and ahead of every
structure-aware peer)."""
P50, P95 = 0.50, 0.95


@dataclass(slots=True)
class Timing:
    """One chunker or floor over one corpus."""

    name: str
    seconds: float | None = None
    """CPU seconds of this process over the corpus; None when it could not run."""
    wall_seconds: float | None = None
    """Elapsed seconds over the same loop."""
    unavailable: str | None = None
    chunks: list[str] = field(default_factory=list)
    failures: int = 0
    """Documents it raised on (counted in the time, not in the chunks)."""
    first_failure: str | None = None
    peer: Peer | None = None


def _describe(error: BaseException) -> str:
    first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {first_line[:120]}" if first_line else type(error).__name__


def _timed(
    name: str, run: Callable[[Document], list[str] | None], documents: Sequence[Document]
) -> Timing:
    """Time `run` over all documents after one untimed warm-up document.

    The clock is this process's CPU time: on a shared 2-core machine it is
    far steadier than wall time, and every chunker here runs on one thread
    (the wall/CPU column shows it).  Objects that exist before the loop
    (imports, earlier chunkers' results) are frozen out of the garbage
    collector's view, so no chunker pays for the heap of the ones before it;
    only lists of chunk texts are kept, for the same reason.
    """
    timing = Timing(name)
    try:
        run(documents[0])
    except Exception as error:  # a peer's own bug or missing data: report, don't crash
        return Timing(name, unavailable=f"failed on the warm-up document: {_describe(error)}")
    chunks = timing.chunks
    gc.collect()
    gc.freeze()
    start, wall_start = time.process_time(), time.perf_counter()
    for document in documents:
        try:
            output = run(document)
        except Exception as error:
            timing.failures += 1
            if timing.first_failure is None:
                timing.first_failure = f"{document.name}: {_describe(error)}"
            continue
        if output is not None:
            chunks.extend(output)
    timing.seconds = time.process_time() - start
    timing.wall_seconds = time.perf_counter() - wall_start
    gc.unfreeze()
    return timing


def _ours(limits: Limits, kind: Kind, encoder: str) -> Callable[[Document], list[str]]:
    options = ChunkOptions(limits=limits, encoder_model_name=encoder)

    def run(document: Document) -> list[str]:
        chunked = chunk_document(
            document.text, options=options, format=kind, file_name=document.name
        )
        return [chunk.text for chunk in chunked.chunks]

    return run


def time_peer(
    peer: Peer,
    limits: Limits,
    corpus: Path,
    documents: Sequence[Document],
    encoder: str = DEFAULT_ENCODER,
) -> Timing:
    """Build `peer` and time it; a peer that cannot be built is reported unavailable."""
    try:
        chunk = peer.build(limits, corpus, encoder)
    except Exception as error:  # ImportError, or a peer that cannot start offline
        return Timing(peer.name, unavailable=_describe(error), peer=peer)
    timing = _timed(peer.name, lambda document: chunk(document.text), documents)
    timing.peer = peer
    return timing


def _floor(floor: Floor, documents: Sequence[Document], encoder: str) -> Timing:
    try:
        run = floor.build(encoder)
    except Exception as error:
        return Timing(floor.name, unavailable=_describe(error))
    prepare = floor.prepare
    if prepare is not None:
        documents = [Document(d.name, prepare(d.text), d.size) for d in documents]

    def discard(document: Document) -> None:
        # A parser's result (markdown-it returns a token list) is dropped, not
        # mistaken for chunks and kept alive.
        run(document.text)

    return _timed(floor.name, discard, documents)


def _percentile(sorted_sizes: Sequence[int], fraction: float) -> int:
    """Nearest-rank percentile."""
    return sorted_sizes[max(0, math.ceil(fraction * len(sorted_sizes)) - 1)]


@dataclass(frozen=True, slots=True)
class CorpusReport:
    """Everything measured on one corpus."""

    kind: Kind
    documents: int
    megabytes: float
    ours: Timing
    peers: list[Timing]
    floors: list[Timing]

    def ratio(self, timing: Timing) -> float | None:
        """`timing`'s time divided by ours (above 1: we are faster)."""
        if timing.seconds is None or not self.ours.seconds:
            return None
        return timing.seconds / self.ours.seconds

    def block_parse(self) -> Timing | None:
        """The block-parse floor of this corpus."""
        names = {floor.name for floor in FLOORS if floor.kind == self.kind and floor.block_parse}
        return next((floor for floor in self.floors if floor.name in names), None)

    def outline(self) -> Timing | None:
        """The floor of our own outline parse of this corpus."""
        names = {floor.name for floor in FLOORS if floor.kind == self.kind and floor.outline}
        return next((floor for floor in self.floors if floor.name in names), None)


def measure(
    kind: Kind,
    documents: Sequence[Document],
    limits: Limits,
    corpus: Path,
    with_peers: bool,
    rounds: int = 1,
    encoder: str = DEFAULT_ENCODER,
) -> CorpusReport:
    """Time ours, then each peer, then each floor of `kind` over the documents.

    With several rounds the whole sequence runs again and each keeps its
    fastest round: a shared machine's slow spells then hit every chunker alike
    instead of whichever ran during one.
    """
    peers_of_kind = [peer for peer in PEERS if peer.kind == kind] if with_peers else []
    floors_of_kind = [floor for floor in FLOORS if floor.kind == kind]
    ours = _timed(OURS, _ours(limits, kind, encoder), documents)
    peers = [time_peer(peer, limits, corpus, documents, encoder) for peer in peers_of_kind]
    floors = [_floor(floor, documents, encoder) for floor in floors_of_kind]
    for _ in range(rounds - 1):
        _keep_faster(ours, _timed(OURS, _ours(limits, kind, encoder), documents))
        for timing, peer in zip(peers, peers_of_kind, strict=True):
            _keep_faster(timing, time_peer(peer, limits, corpus, documents, encoder))
        for timing, floor in zip(floors, floors_of_kind, strict=True):
            _keep_faster(timing, _floor(floor, documents, encoder))
    return CorpusReport(kind, len(documents), megabytes(list(documents)), ours, peers, floors)


def _keep_faster(best: Timing, again: Timing) -> None:
    """Keep `again`'s times in `best` if they are lower (the chunks of round one stay)."""
    if best.seconds is None or again.seconds is None or again.seconds >= best.seconds:
        return
    best.seconds, best.wall_seconds = again.seconds, again.wall_seconds


def _fmt_ratio(ratio: float | None) -> str:
    return "–" if ratio is None else f"{ratio:.2f}×"


def _mb_per_s(report: CorpusReport, timing: Timing) -> str:
    if timing.seconds is None:
        return "–"
    return f"{report.megabytes / timing.seconds:.2f}" if timing.seconds > 0 else "∞"


def _wall_over_cpu(timing: Timing) -> str:
    if timing.seconds is None or timing.wall_seconds is None or timing.seconds <= 0:
        return "–"
    return f"{timing.wall_seconds / timing.seconds:.2f}"


def _chunker_row(report: CorpusReport, timing: Timing, sizer: Sizer) -> str:
    name = timing.name
    if timing.unavailable is not None:
        return f"| {name} | unavailable: {timing.unavailable} | | | | | | |"
    if timing.failures:
        name += f" (raised on {timing.failures} documents, e.g. {timing.first_failure})"
    sizes = sorted(sizer.size(text) for text in timing.chunks)
    stats = (
        f"{_percentile(sizes, P50)} | {_percentile(sizes, P95)} | {sizes[-1]}"
        if sizes
        else "– | – | –"
    )
    return (
        f"| {name} | {_mb_per_s(report, timing)} | {len(sizes)} | {stats} | "
        f"{_fmt_ratio(report.ratio(timing))} | {_wall_over_cpu(timing)} |"
    )


def render(report: CorpusReport, limits: Limits, sizer: Sizer) -> list[str]:
    """The markdown tables for one corpus."""
    unit = "tokens" if limits.unit is Unit.TOKENS else "characters"
    lines = [
        f"## {report.kind}: {report.documents} files, {report.megabytes:.2f} MB; "
        f"{limits.maximum_page_length} {unit} max / {limits.page_overlap_length} overlap",
        "",
        f"| chunker | MB/s | chunks | p50 {unit} | p95 {unit} | max {unit} | time ÷ ours "
        "| wall ÷ CPU |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [_chunker_row(report, timing, sizer) for timing in (report.ours, *report.peers)]
    lines += [
        "",
        "| floor | MB/s | our time ÷ floor | wall ÷ CPU |",
        "| --- | ---: | ---: | ---: |",
    ]
    for floor in report.floors:
        if floor.unavailable is not None:
            lines.append(f"| {floor.name} | unavailable: {floor.unavailable} | | |")
            continue
        ours_over = (
            f"{report.ours.seconds / floor.seconds:.2f}×"
            if report.ours.seconds is not None and floor.seconds
            else "–"
        )
        lines.append(
            f"| {floor.name} | {_mb_per_s(report, floor)} | {ours_over} | {_wall_over_cpu(floor)} |"
        )
    lines.append("")
    return lines


def _verdict(met: bool | None) -> str:
    return {True: "met", False: "MISSED", None: "n/a"}[met]


def goals(reports: Sequence[CorpusReport], limits: Limits) -> list[str]:
    """Issue 19's speed goals, each with the measured ratio and met/MISSED."""
    lines = ["## Goals (issue 19)", ""]
    tokens = limits.unit is Unit.TOKENS
    for report in reports:
        available = [peer for peer in report.peers if peer.seconds is not None]
        if report.kind == "markdown":
            outline = report.outline()
            over_outline = (
                report.ours.seconds / outline.seconds
                if outline is not None and outline.seconds and report.ours.seconds is not None
                else None
            )
            if not tokens:
                met = None if over_outline is None else over_outline <= OUTLINE_SLOWDOWN
                lines.append(
                    f"- markdown: our time ÷ our outline parse = {_fmt_ratio(over_outline)} "
                    f"(goal ≤ {OUTLINE_SLOWDOWN}×): {_verdict(met)}"
                )
            for peer in available:
                ratio = report.ratio(peer)
                if peer.peer is None or ratio is None:
                    continue
                goal = _peer_goal(peer.peer, tokens, ratio)
                lines.append(f"- markdown: {peer.name}: {_fmt_ratio(ratio)} ({goal}")
        else:
            ratios = [(report.ratio(peer) or 0.0, peer.name) for peer in available]
            if not ratios:
                lines.append("- html: no HTML peer measured")
                continue
            best_ratio, best = min(ratios)
            lines.append(
                f"- html: best peer ({best}): {_fmt_ratio(best_ratio)} "
                f"(goal ≥ {BEST_HTML_PEER_SPEEDUP}×): "
                f"{_verdict(best_ratio >= BEST_HTML_PEER_SPEEDUP)}"
            )
    lines.append("")
    return lines


def _peer_goal(peer: Peer, tokens: bool, ratio: float) -> str:
    """A markdown peer's goal and verdict (or `reported`), with the closing parenthesis."""
    if tokens and peer.name.startswith("LangChain"):
        return f"goal ≥ {LANGCHAIN_TOKENS_SPEEDUP}×): {_verdict(ratio >= LANGCHAIN_TOKENS_SPEEDUP)}"
    if tokens and peer.name.startswith("Chonkie"):
        return f"goal ≥ {CHONKIE_TOKENS_SPEEDUP}×): {_verdict(ratio >= CHONKIE_TOKENS_SPEEDUP)}"
    if peer.structure_aware:
        return f"goal > 1×, ahead of every structure-aware peer): {_verdict(ratio > 1)}"
    return "reported)"


def _versions() -> str:
    found = []
    for package in PEER_PACKAGES:
        try:
            found.append(f"{package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{package} (not installed)")
    return ", ".join(found)


START_UP_UNITS = ("characters", "azureOpenAITokens")
HEAVY_PACKAGES = ("bs4", "lxml", "markdown_it", "numpy", "tiktoken", "yaml")
"""Packages a markdown document should load only when it needs them (issue 40)."""


PROJECT = Path(__file__).resolve().parent.parent
OUR_PACKAGES = ("chunking", "skills")
"""What `python -m chunking` imports of ours: the packages whose bytecode a start-up
finds cached or compiles."""


def _chunk_command(
    unit: str, path: Path, *flags: str, cwd: Path = PROJECT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, "-m", "chunking", "--unit", unit, str(path)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )


def start_up_seconds(
    unit: str, path: Path, cwd: Path = PROJECT, env: dict[str, str] | None = None
) -> float:
    """CPU seconds of one `python -m chunking --unit UNIT PATH` process run in `cwd`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    _chunk_command(unit, path, cwd=cwd, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def imported_packages(unit: str, path: Path) -> set[str]:
    """The top-level packages that command imports (`-X importtime` names every module)."""
    stderr = _chunk_command(unit, path, "-X", "importtime").stderr
    return {
        line.rsplit("|", 1)[1].strip().split(".", 1)[0]
        for line in stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }


def _cache_bytecode() -> None:
    """Compile our packages' bytecode into their __pycache__, as any run that may write
    there leaves it (PYTHONDONTWRITEBYTECODE or a read-only tree would leave none)."""
    for package in OUR_PACKAGES:
        compileall.compile_dir(PROJECT / package, quiet=1)


def _copy_without_bytecode(folder: Path) -> Path:
    """Our packages copied into `folder` with no __pycache__ and no compiled build: a
    process run there with PYTHONDONTWRITEBYTECODE compiles every module of ours it
    imports, as a read-only deployment without .pyc files does at each start."""
    for package in OUR_PACKAGES:
        shutil.copytree(
            PROJECT / package,
            folder / package,
            ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"),
        )
    return folder


def start_up_report(rounds: int) -> list[str]:
    """The start-up table: best CPU of `rounds` processes per unit, interleaved, with our
    bytecode cached and without it."""
    best: dict[tuple[str, bool], float] = {}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "one-line.md"
        path.write_text("# Hello\n", encoding="utf-8")
        _cache_bytecode()
        uncached = _copy_without_bytecode(Path(folder) / "tree")
        no_writes = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        for _ in range(rounds):
            for unit in START_UP_UNITS:
                for cached in (True, False):
                    cwd, env = (PROJECT, None) if cached else (uncached, no_writes)
                    cpu = start_up_seconds(unit, path, cwd, env)
                    best[unit, cached] = min(cpu, best.get((unit, cached), cpu))
        loaded = {unit: imported_packages(unit, path) for unit in START_UP_UNITS}
    rows = [
        "# Start-up of python -m chunking on a one-line markdown file",
        "",
        f"| unit | CPU seconds (best of {rounds}) | without our bytecode cached "
        "| heavy packages loaded |",
        "| --- | ---: | ---: | --- |",
    ]
    for unit in START_UP_UNITS:
        heavy = ", ".join(name for name in HEAVY_PACKAGES if name in loaded[unit]) or "none"
        rows.append(f"| {unit} | {best[unit, True]:.3f} | {best[unit, False]:.3f} | {heavy} |")
    return rows


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.speed", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="corpus root")
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_FILES} files per corpus (a smoke run)"
    )
    parser.add_argument("--files", type=int, help="files per corpus, spread evenly")
    parser.add_argument("--unit", choices=sorted(LIMITS), default="tokens")
    parser.add_argument(
        "--encoder",
        default=DEFAULT_ENCODER,
        help="tiktoken encoding for the token unit, ours and the peers' (o200k_base: GPT-4o)",
    )
    parser.add_argument("--no-peers", action="store_true", help="only ours and the floors")
    parser.add_argument("--only", choices=["markdown", "html"], help="one corpus instead of both")
    parser.add_argument(
        "--start-up",
        action="store_true",
        help="only the start-up: CPU of `python -m chunking` on a one-line markdown file, "
        "per unit, best of --rounds fresh processes, with our bytecode cached and without "
        "(a copy of our packages, nothing written), and the heavy packages it loads",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=DEFAULT_ROUNDS,
        help="run every chunker this many times, interleaved, and keep each one's fastest",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the report."""
    args = parse_args(argv)
    if args.start_up:
        print("\n".join(start_up_report(max(1, args.rounds))))
        return 0
    limit = args.files if args.files is not None else QUICK_FILES if args.quick else None
    limits = LIMITS[args.unit]
    kinds: list[Kind] = [args.only] if args.only else ["markdown", "html"]
    print("# Chunking speed")
    print()
    print(
        f"Python {platform.python_version()} on {platform.machine()}, one process; "
        f"corpus {args.corpus}; tokens of {args.encoder}"
    )
    print(f"Packages: {_versions()}")
    print()
    reports = []
    with offline():
        sizer = make_sizer(limits.unit, args.encoder)
        for kind in kinds:
            documents = load_corpus(args.corpus, kind, limit)
            if not documents:
                print(f"## {kind}: no files under {args.corpus}")
                print()
                continue
            report = measure(
                kind,
                documents,
                limits,
                args.corpus,
                not args.no_peers,
                max(1, args.rounds),
                args.encoder,
            )
            reports.append(report)
            print("\n".join(render(report, limits, sizer)), flush=True)
    print("\n".join(goals(reports, limits)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
