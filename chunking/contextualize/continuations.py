"""Finding what a reader needs repeated around a chunk that continues a table or code
block: the header rows and fence lines, as spans of the source."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from chunking.model import Region, RegionKind, Repeated

FENCE_CHARACTERS = "`~"
QUOTE_MARKS = " \t>"
"""What may stand before a fence on its line: indentation, and blockquote markers."""


@dataclass(frozen=True, slots=True)
class Continuations:
    """The header rows and fence lines a chunk's reader text repeats, found in the
    regions of the source the chunks are spans of (the input's own markup, also when
    the embedded text leaves markup out)."""

    source: str
    regions: Sequence[Region]
    starts: tuple[int, ...]

    @classmethod
    def of(cls, source: str, regions: Sequence[Region]) -> Continuations:
        """The continuations of a document's regions (sorted by start, disjoint)."""
        return cls(source, regions, tuple(region.start for region in regions))

    def _holding(self, position: int) -> Region | None:
        """The region holding the character at `position`, if any."""
        index = bisect.bisect_right(self.starts, position) - 1
        if index < 0:
            return None
        region = self.regions[index]
        return region if position < region.end else None

    def opening(self, start: int) -> Repeated | None:
        """The header rows or fence line in front of a chunk starting at `start`, when it
        starts inside a table or fenced code block past them; None otherwise (and for
        indented code, which has no fence to repeat)."""
        region = self._holding(start)
        if region is None or not region.lead or start < region.lead_end:
            return None
        text = region.lead
        # The chunk starts at its first non-space: give the line its indentation back
        # (code's meaning, a table's or fence's place in a list item).
        line_start = self.source.rfind("\n", region.lead_end, start) + 1
        indent = self.source[max(line_start, region.lead_end) : start]
        if indent.isspace():
            text += indent
        return Repeated(region.start, region.lead_end, text)

    def closing(self, end: int) -> Repeated | None:
        """The closing fence after a chunk ending at `end` inside a fenced code block
        (its fence line held whole, its closing line not); None otherwise."""
        region = self._holding(end - 1)
        if region is None or region.kind is not RegionKind.CODE or not region.lead:
            return None
        if end < region.lead_end - 1:
            return None  # inside the fence line, cut because it is over the limit by itself
        head = region.lead.rstrip("\n")
        marks = head.lstrip(QUOTE_MARKS)
        fence = marks[: len(marks) - len(marks.lstrip(marks[:1]))]
        if not fence or fence[0] not in FENCE_CHARACTERS:
            return None
        last_line = self.source.rfind("\n", region.lead_end, region.end) + 1
        line = self.source[max(last_line, region.lead_end) : region.end]
        closes = last_line >= region.lead_end and _closes(line, fence)
        if closes and end > last_line:
            return None  # the chunk holds the closing fence
        if closes:
            return Repeated(last_line, region.end, line)
        # A fence the source never closes (it runs to the end of its container).
        return Repeated(region.end, region.end, head[: len(head) - len(marks)] + fence)


def _closes(line: str, fence: str) -> bool:
    """Whether `line` closes a code block opened by `fence` (the same character, at least
    as many, nothing after them but spaces)."""
    marks = line.lstrip(QUOTE_MARKS).rstrip()
    return len(marks) >= len(fence) and marks == fence[0] * len(marks)
