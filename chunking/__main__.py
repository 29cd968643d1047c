"""`python -m chunking [FILE ...]`: print one JSON object per chunk per line."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, TextIO, get_args

from chunking.options import ChunkOptions, Limits, OptionError, Sections, SplitMode, Unit
from chunking.pipeline import FormatName, chunk_document
from chunking.pipes import run_piped

if TYPE_CHECKING:
    from collections.abc import Sequence


TOKEN_OVERLAP_SHARE = 0.125
"""Without --overlap, tokens overlap by an eighth of --max (64 of 512, the default)."""
CHARACTER_OVERLAP_SHARE = 0.25
"""Without --overlap, characters overlap by a quarter (500 of 2000, Microsoft's advice)."""


class _Parser(argparse.ArgumentParser):
    """argparse that exits with status 2 and one line, as the issue asks."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message}\n")


def _arguments() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m chunking",
        description="Chunk markdown, HTML or text by structure; prints JSON lines.",
    )
    parser.add_argument("files", nargs="*", help="files to chunk (stdin when none)")
    parser.add_argument("--format", choices=get_args(FormatName), default="auto")
    parser.add_argument("--unit", choices=[u.value for u in Unit], default=Unit.TOKENS.value)
    parser.add_argument(
        "--max", type=int, default=None, help="maximumPageLength (512 tokens / 2000 characters)"
    )
    parser.add_argument(
        "--overlap",
        type=int,
        default=None,
        help="pageOverlapLength (an eighth of --max for tokens, a quarter for characters)",
    )
    parser.add_argument("--pages", type=int, default=0, help="maximumPagesToTake (0 = all)")
    parser.add_argument("--mode", choices=[m.value for m in SplitMode], default="pages")
    parser.add_argument("--language", default="en", help="defaultLanguageCode")
    parser.add_argument("--encoder", default="cl100k_base", help="encoderModelName")
    parser.add_argument("--title", default=None, help="title when the document has none")
    parser.add_argument("--no-title-prefix", action="store_true")
    parser.add_argument(
        "--sections",
        choices=[s.value for s in Sections],
        default=Sections.APART.value,
        help="apart: a heading ends a chunk (default); packed: small sections share chunks",
    )
    parser.add_argument(
        "--keep-markup",
        action="store_true",
        help="embed markdown as written (default: without link targets, tags, directives)",
    )
    return parser


def _options(args: argparse.Namespace) -> ChunkOptions:
    unit = Unit(args.unit)
    default_max, overlap_share = (
        (2000, CHARACTER_OVERLAP_SHARE) if unit is Unit.CHARACTERS else (512, TOKEN_OVERLAP_SHARE)
    )
    maximum = default_max if args.max is None else args.max
    limits = Limits(
        unit=unit,
        maximum_page_length=maximum,
        page_overlap_length=int(maximum * overlap_share) if args.overlap is None else args.overlap,
        maximum_pages_to_take=args.pages,
    )
    return ChunkOptions(
        limits=limits,
        mode=SplitMode(args.mode),
        encoder_model_name=args.encoder,
        language=args.language,
        title_prefix=not args.no_title_prefix,
        section_fill=Sections(args.sections).fill,
        strip_markup=not args.keep_markup,
    )


def _read(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    with open(name, encoding="utf-8", errors="surrogateescape") as handle:
        return handle.read()


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _arguments()
    args = parser.parse_args(argv)
    out = out or sys.stdout
    try:
        options = _options(args)
    except OptionError as error:
        parser.error(str(error))
    for name in args.files or ["-"]:
        try:
            text = _read(name)
        except OSError as error:
            parser.exit(2, f"{parser.prog}: cannot read {name}: {error.strerror}\n")
        try:
            document = chunk_document(
                text,
                options=options,
                format=args.format,
                title=args.title,
                file_name=None if name == "-" else name,
            )
        except OptionError as error:
            parser.error(str(error))
        for warning in document.warnings:
            print(f"{name}: warning: {warning}", file=sys.stderr)
        for chunk in document.chunks:
            record = {
                "source": name,
                "ordinal": chunk.ordinal,
                "content": chunk.content,
                "text": chunk.text,
                "start": chunk.start,
                "end": chunk.end,
                "headings": list(chunk.headings),
                "title": chunk.title,
                "size": chunk.size,
                "anchor": chunk.anchor,
                "id": chunk.id,
            }
            line = json.dumps(record, ensure_ascii=False)
            if not line.isascii():
                try:
                    line.encode("utf-8")
                except UnicodeEncodeError:  # lone surrogates: fall back to \u escapes
                    line = json.dumps(record)
            out.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(run_piped(main))
