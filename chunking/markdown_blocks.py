"""What a markdown parser reports to the outline builder, in lines, whichever parser it is.

Two parsers stand behind `markdown_outline.py`: pulldown-cmark through
pyromark (Rust, the default: about ten times faster than markdown-it-py's block
parse) and markdown-it-py (the reference, and the fallback should the Rust
parser ever fail on a document).  Each turns its own events or tokens into these
records; nothing parser-specific gets further.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, AnyStr, Protocol

if TYPE_CHECKING:
    from chunking.outline import BlockKind, RegionKind


@dataclass(frozen=True, slots=True)
class LineBlock:
    """A top-level block (or an item of a top-level list) as a range of lines."""

    kind: BlockKind
    first: int
    """Index of the block's first line."""
    stop: int
    """Index of the line after the block's last line."""
    depth: int = 0
    """Heading depth 1..6; 0 for any other block."""
    text: str = ""
    """A heading's plain text: inline markup removed, whitespace collapsed."""


@dataclass(frozen=True, slots=True)
class LineRegion:
    """A code block or table at any depth, as a range of lines."""

    kind: RegionKind
    first: int
    stop: int
    lead_lines: int
    """Lines repeated before a continuation: 1 (fence line), 2 (table header and
    delimiter row) or 0 (indented code has nothing to repeat)."""


@dataclass(frozen=True, slots=True)
class ParsedMarkdown:
    """A parser's findings: blocks and regions in document order, and any front matter."""

    blocks: list[LineBlock]
    regions: list[LineRegion]
    front_matter: tuple[int, str] | None
    """The line after the front matter's closing fence, and its YAML text."""


class BlockParser(Protocol):
    """Parses markdown (no byte order mark) into line-based blocks."""

    def __call__(self, text: str) -> ParsedMarkdown:
        """Blocks, regions and front matter of `text`."""
        ...


_LINE_BREAK = re.compile(r"\r\n?|\n")
_LINE_BREAK_BYTES = re.compile(rb"\r\n?|\n")
_LONE_CR = re.compile(r"\r(?!\n)")
_LONE_CR_BYTES = re.compile(rb"\r(?!\n)")
_PLUS_ONE = (1).__add__


def line_starts(text: str) -> list[int]:
    """Code point offsets where lines start.

    CommonMark lines end at "\n", "\r\n" or a lone "\r"; both parsers number
    lines that way, so their line numbers index this table.
    """
    return _line_starts(text, "\r", "\n", _LONE_CR, _LINE_BREAK)


def utf8_line_starts(text: str) -> list[int]:
    """UTF-8 byte offsets where lines start, for parsers that report byte ranges."""
    return _line_starts(text.encode("utf-8"), b"\r", b"\n", _LONE_CR_BYTES, _LINE_BREAK_BYTES)


def _line_starts(
    text: AnyStr,
    cr: AnyStr,
    lf: AnyStr,
    lone_cr: re.Pattern[AnyStr],
    line_break: re.Pattern[AnyStr],
) -> list[int]:
    if cr not in text or not lone_cr.search(text):
        # CRLF lines start after the LF like LF lines; splitting and summing
        # lengths runs in C, where the regex scan costs a call per line.
        return list(accumulate(map(_PLUS_ONE, map(len, text.split(lf))), initial=0))[:-1]
    return [0, *(match.end() for match in line_break.finditer(text))]
