"""`python -m chunking [FILE ...]`: print one JSON object per chunk per line."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, TextIO

from chunking.cli.pipes import command_name, run_piped
from chunking.options import OptionError
from chunking.parse.decode import blank
from chunking.pipeline import chunk_document
from chunking.plan.scoring import ScoringError
from skills.commands.cli import (
    Parser,
    add_chunk_arguments,
    command_line_scoring,
    defaults_epilog,
    expand_folders,
    read_chunk_arguments,
    read_or_exit,
)

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from chunking.model import ChunkedDocument

SCORING_FAILED = 1
"""Exit status when a scored strategy's scorer fails (not configured, unreachable)."""


def _arguments() -> argparse.ArgumentParser:
    parser = Parser(
        prog=command_name("python -m chunking", "chunk"),
        description="Chunk markdown, HTML or text by structure; prints one JSON line per "
        "chunk. The defaults are the local skill's, so this previews what it gives.",
        epilog=f"{defaults_epilog()}\n\nexamples:\n"
        "  python -m chunking samples/concepts-network.md\n"
        "  python -m chunking --unit characters --max 2000 --overlap 200 page.html",
    )
    parser.add_argument("files", nargs="*", help="files to chunk (stdin when none)")
    add_chunk_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _arguments()
    args = parser.parse_args(argv)
    out = out or sys.stdout
    read = read_chunk_arguments(args)
    if isinstance(read, tuple):
        parser.error("; ".join(problem.message for problem in read))
    options = read.options
    with command_line_scoring(parser, options) as scoring:
        for name in expand_folders(parser, args.files or ["-"]):
            text = read_or_exit(parser, name)
            empty = blank(text)
            if empty is not None:  # as the skill answers such a record: a warning
                print(f"{name}: warning: the file {empty}; it has no chunks", file=sys.stderr)
                continue
            try:
                document = chunk_document(
                    text,
                    options=options,
                    format=read.format,
                    title=read.title,
                    file_name=None if name == "-" else name,
                    scoring=scoring(),
                )
            except OptionError as error:
                parser.error(str(error))
            except ScoringError as error:
                print(f"{parser.prog}: {name}: {error}", file=sys.stderr)
                return SCORING_FAILED
            _write(name, document, out)
    return 0


def _write(name: str, document: ChunkedDocument, out: TextIO) -> None:
    """The document's warnings on stderr, one JSON line per chunk on `out`."""
    for warning in document.warnings:
        print(f"{name}: warning: {warning}", file=sys.stderr)
    for chunk in document.chunks:
        record = {
            "source": name,
            "ordinal": chunk.ordinal,
            "content": chunk.content,
            "text": chunk.text,
            "readerText": chunk.reader_text,
            "start": chunk.start,
            "end": chunk.end,
            "headings": list(chunk.headings),
            "title": chunk.title,
            "size": chunk.size,
            "anchor": chunk.anchor,
            "id": chunk.id,
            "pageNumberFrom": chunk.page_from,
            "pageNumberTo": chunk.page_to,
        }
        line = json.dumps(record, ensure_ascii=False)
        if not line.isascii():
            try:
                line.encode("utf-8")
            except UnicodeEncodeError:  # lone surrogates: fall back to \u escapes
                line = json.dumps(record)
        out.write(line + "\n")


def console() -> int:
    """`chunk FILE ...`: `python -m chunking` as a console script."""
    return run_piped(main)


if __name__ == "__main__":
    sys.exit(run_piped(main))
