"""Audit every corpus document at the issue's settings and print the figures.

    python -m bench.corpus_audit [CORPUS_DIR] [--strategy words [--words-per-chunk N]
                                 [--word-overlap M] [--word-scope section|document]]
                                 [--strategy semantic [--semantic-percentile P]
                                 [--semantic-window W] [--semantic-min-fill F]]
                                 [--strategy binary [--binary-scorer S]
                                 [--binary-candidates K] [--scores offline|app]]

Settings: 512 cl100k tokens / 64 overlap, and 2000 characters / 500 overlap, with the
structure strategy unless `--strategy` names another (its own options as the CLI's).
A scored strategy gets hashed bag-of-words vectors (`bench.offline_scoring`, no model)
unless `--scores app` asks for the app's scorers (the app settings in the environment:
the local model, a cross-encoder folder, a rerank endpoint).
Exits 1 if any invariant is violated, 2 if there is no document to audit.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from bench.documents import NOT_DOCUMENTS
from bench.offline_scoring import offline_scoring
from chunking.measure.sizing import make_sizer
from chunking.options import ChunkOptions, Limits, Unit
from chunking.pipeline import chunk_document, parse
from chunking.plan.binary_params import BinarySplit
from chunking.plan.semantic_params import SemanticBreaks
from chunking.plan.strategies import BY_NAME as STRATEGY_DECLARATIONS
from chunking.plan.strategies import STRATEGY_NAMES, parameters_of
from chunking.plan.words_params import WordWindows
from chunking.report.audit import Audit, audit_document, flag_path_debris
from skills.commands.cli import FLAGS, flag_values, needs_scoring
from skills.embedding.scoring.threaded import threaded_scoring
from skills.parameters import FLAG_PARAMETERS, read_strategy
from skills.skill.settings import load_settings

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from chunking.plan.scoring import Scoring

SETTINGS = {
    "512 tokens / 64": Limits(Unit.TOKENS, 512, 64),
    "2000 characters / 500": Limits(Unit.CHARACTERS, 2000, 500),
}
DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


def corpus_files(root: Path) -> list[Path]:
    """Markdown and HTML files under `root`, sorted."""
    return sorted(
        p
        for p in root.rglob("*")
        if p.suffix.lower() in {".md", ".html", ".htm"}
        and p.name not in NOT_DOCUMENTS
        and p.is_file()
    )


def audit_corpus(
    files: list[Path],
    limits: Limits,
    base: ChunkOptions | None = None,
    scoring: Callable[[], Scoring] | None = None,
) -> tuple[Audit, float]:
    """Chunk and audit every file at `limits` (the other options from `base`, default
    ones without; each document's `Scoring` from `scoring`); returns the audit and the
    seconds spent chunking (scoring included)."""
    options = replace(base or ChunkOptions(), limits=limits)
    sizer = make_sizer(limits.unit, options.encoder_model_name)
    total = Audit()
    seconds = 0.0
    for path in files:
        text = path.read_text(encoding="utf-8")
        began = time.perf_counter()
        document = chunk_document(
            text,
            options=options,
            file_name=path.name,
            scoring=scoring() if scoring is not None else None,
        )
        seconds += time.perf_counter() - began
        outline = parse(text, file_name=path.name)
        audit = audit_document(str(path), outline, document, options, sizer)
        flag_path_debris(audit, str(path), document)
        total.merge(audit)
    return total, seconds


NO_DOCUMENTS = 2
"""Exit status when the folder is missing or holds no markdown or HTML document."""


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.corpus_audit", description="Audit the corpus's chunks."
    )
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--strategy", choices=STRATEGY_NAMES, default="structure")
    for row in FLAG_PARAMETERS:
        if row.flag is not None and row.strategy is not None:
            # Read as `python -m chunking` reads it (`read_strategy`), not by argparse.
            parser.add_argument(row.flag.name, default=None)
    parser.add_argument(
        "--scores",
        choices=("offline", "app"),
        default="offline",
        help="a scored strategy's scorer: hashed vectors (default) or the app's scorers",
    )
    return parser


def _base_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> ChunkOptions:
    """The options besides the limits: the strategy and its own parameters."""
    strategy = STRATEGY_DECLARATIONS[args.strategy]
    defaults = None if strategy.parameters is None else strategy.parameters()
    parameters, problems = read_strategy(strategy.name, defaults, flag_values(args), FLAGS)
    if problems:
        parser.error("; ".join(problem.message for problem in problems))
    return ChunkOptions(strategy=strategy.name, parameters=parameters)


def _strategy_label(options: ChunkOptions) -> str:
    """`, strategy words 200/40 section` for a strategy other than the default."""
    if options.strategy == "structure":
        return ""
    own = parameters_of(options)
    if isinstance(own, WordWindows):
        return f", strategy words {own.size}/{own.overlap} {own.scope.value}"
    if isinstance(own, SemanticBreaks):
        return f", strategy semantic {own.percentile:g}/{own.window} fill {own.min_fill:g}"
    if isinstance(own, BinarySplit):
        return f", strategy binary {own.scorer} {own.candidates}"
    return f", strategy {options.strategy}"


@contextmanager
def _scorers(base: ChunkOptions, scores: str) -> Iterator[Callable[[], Scoring] | None]:
    """Each document's `Scoring` for a scored strategy: offline hashed vectors, or the
    app's scorers on a background event loop."""
    if not needs_scoring(base):
        yield None
    elif scores == "offline":
        scoring, _ = offline_scoring()
        yield lambda: scoring
    else:
        with threaded_scoring(load_settings(os.environ)) as factory:
            yield factory


def main(argv: list[str] | None = None) -> int:
    """Print one block of figures per setting; non-zero exit on any violation."""
    parser = _arguments()
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    base = _base_options(parser, args)
    root = args.corpus
    files = corpus_files(root)
    if not files:
        state = "it does not exist" if not root.is_dir() else "none found"
        print(f"no markdown or HTML documents under {root} ({state})", file=sys.stderr)
        return NO_DOCUMENTS
    size_mb = sum(p.stat().st_size for p in files) / 1e6
    with _scorers(base, args.scores) as scoring:
        # One scorer for both settings: the app's model is slow, and its clients start once.
        return _audit_settings(files, size_mb, base, scoring)


def _audit_settings(
    files: list[Path],
    size_mb: float,
    base: ChunkOptions,
    scoring: Callable[[], Scoring] | None,
) -> int:
    """Audit at each of `SETTINGS` and print the figures; 1 on any violation."""
    failed = False
    for label, limits in SETTINGS.items():
        audit, seconds = audit_corpus(files, limits, base, scoring)
        fills = sorted(audit.fill)
        print(
            f"== {label}{_strategy_label(base)}: {audit.documents} documents "
            f"({size_mb:.1f} MB), {audit.chunks} chunks"
        )
        rate = f"{size_mb / seconds:.2f} MB/s" if seconds > 0 else "too fast to time"
        print(f"   chunking time {seconds:.1f} s ({rate})")
        if fills:
            print(
                f"   fill of limit: mean {statistics.mean(fills):.2f}, median "
                f"{statistics.median(fills):.2f}, below 25%: "
                f"{sum(f < 0.25 for f in fills) / len(fills):.1%}"
            )
        else:
            print("   fill of limit: no chunks (the documents are empty)")
        kinds = [
            "oversize", "content_not_slice", "text_not_ending_in_content",
            "starts_not_increasing", "wrong_heading_path", "path_not_common_parent",
            "path_missing_from_text",
            "cut_inside_table_row", "cut_inside_code_line", "heading_in_code",
            "heading_in_front_matter", "lost_text", "heading_path_debris",
        ]  # fmt: skip
        for kind in kinds:
            print(f"   {kind}: {audit.violations[kind]}", end="")
            if audit.allowed[kind]:
                print(f" (plus {audit.allowed[kind]} where the row/line alone is too big)", end="")
            print()
        for kind, example in audit.examples.items():
            print(f"   e.g. {kind}: {example}")
        failed |= bool(audit.violations)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
