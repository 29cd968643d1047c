"""`python -m chunking.report FILE [chunk options] -o map.html`: write a document's chunk map."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from chunking.cli.pipes import command_name, run_piped
from chunking.options import OptionError
from chunking.plan.scoring import ScoringError
from skills.commands.chunk_map.build import map_document
from skills.commands.chunk_map.page import render_chunk_map, settings_line
from skills.commands.cli import (
    Parser,
    add_chunk_arguments,
    command_line_scoring,
    defaults_epilog,
    defaults_reason,
    read_chunk_arguments,
    read_or_exit,
)

if TYPE_CHECKING:
    from collections.abc import Sequence


def _arguments() -> Parser:
    parser = Parser(
        prog=command_name("python -m chunking.report", "chunk-map"),
        description="Write one document's chunk map: a self-contained HTML page of the text "
        "with each chunk's span as a coloured band, overlaps striped, and each chunk's "
        "embedded prefix and size. The defaults are the local skill's.",
        epilog=f"{defaults_epilog()}\n\nexamples:\n"
        "  python -m chunking.report samples/concepts-network.md -o map.html\n"
        "  python -m chunking.report page.html --unit characters --max 2000 -o map.html",
    )
    parser.add_argument("file", help="the document (markdown, HTML or text; - for stdin)")
    parser.add_argument(
        "-o", "--output", required=True, help="the HTML file to write (- for stdout)"
    )
    add_chunk_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _arguments()
    args = parser.parse_args(argv)
    read = read_chunk_arguments(args)
    if isinstance(read, tuple):
        parser.error("; ".join(problem.message for problem in read))
    options = read.options
    name = args.file
    text = read_or_exit(parser, name)
    with command_line_scoring(parser, options) as scoring:
        try:
            chunk_map = map_document(
                text,
                options=options,
                name="stdin" if name == "-" else Path(name).name,
                format=read.format,
                title=read.title,
                file_name=None if name == "-" else name,
                scoring=scoring(),
            )
        except OptionError as error:
            parser.error(str(error))
        except ScoringError as error:
            parser.exit(1, f"{parser.prog}: {name}: {error}\n")
    # surrogateescape: bytes that were not UTF-8 go back out as they came in.
    page = render_chunk_map(chunk_map).encode("utf-8", errors="surrogateescape")
    if args.output == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(page)
        return 0
    try:
        Path(args.output).write_bytes(page)
    except OSError as error:
        parser.exit(2, f"{parser.prog}: cannot write {args.output}: {error.strerror}\n")
    document = chunk_map.document
    reason = defaults_reason(args, options)
    why = f" ({reason})" if reason else ""
    print(
        f"{args.output}: {len(document.chunks)} chunks of {name}, "
        f"{len(document.warnings)} warning(s); {settings_line(options)}{why}",
        file=sys.stderr,
    )
    return 0


def console() -> int:
    """`chunk-map FILE -o map.html`: `python -m chunking.report` as a console script."""
    return run_piped(main)


if __name__ == "__main__":
    sys.exit(run_piped(main))
