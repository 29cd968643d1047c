"""What a markdown parser reports to the outline builder, in lines, whichever parser it is.

Two parsers stand behind `markdown_outline.py`: pulldown-cmark through
pyromark (Rust, the default: about ten times faster than markdown-it-py's block
parse) and markdown-it-py (the reference, and the fallback should the Rust
parser ever fail on a document).  Each turns its own events or tokens into these
records; nothing parser-specific gets further.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

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
