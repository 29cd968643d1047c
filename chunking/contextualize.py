"""Joining title, heading path and content into the text to embed, and finding what a
reader needs repeated around a chunk that continues a table or code block."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chunking.model import RegionKind, Repeated

if TYPE_CHECKING:
    from collections.abc import Sequence

    from chunking.measure.sizing import TextSizer
    from chunking.model import Region
    from chunking.options import ChunkOptions

PREFIX_SHARE = 0.25
"""At most this share of `maximumPageLength` goes to the title and heading path,
so every chunk keeps at least three quarters of its room for content."""
ELLIPSIS = "…"


@dataclass(slots=True)
class Contextualizer:
    """Builds prefixes (cached per heading path) and embedded texts."""

    sizer: TextSizer
    title: str
    maximum: int
    enabled: bool
    heading_separator: str
    prefix_separator: str
    path: str = "path"
    """`ChunkOptions.prefix_path`: the whole heading path, the innermost heading, or none."""
    shortened: set[tuple[str, ...]] = field(default_factory=set)
    """Heading paths whose prefix had to be shortened (reported as warnings)."""
    _cache: dict[tuple[str, ...], tuple[str, int]] = field(default_factory=dict)

    @classmethod
    def for_options(cls, sizer: TextSizer, title: str, options: ChunkOptions) -> Contextualizer:
        """The contextualizer `options` ask for, for a document titled `title`."""
        return cls(
            sizer=sizer,
            title=title,
            maximum=options.limits.maximum_page_length,
            enabled=options.title_prefix,
            heading_separator=options.heading_separator,
            prefix_separator=options.prefix_separator,
            path=options.prefix_path,
        )

    def prefix(self, headings: tuple[str, ...]) -> tuple[str, int]:
        """The prefix text for a heading path (separator included) and its size."""
        cached = self._cache.get(headings)
        if cached is None:
            cached = self._build_prefix(headings)
            self._cache[headings] = cached
        return cached

    @property
    def prefix_limit(self) -> int:
        """The most a prefix may measure: PREFIX_SHARE of `maximum`."""
        return int(self.maximum * PREFIX_SHARE)

    def title_too_long(self) -> bool:
        """Whether the title alone is over the prefix limit, so every prefix shortens it."""
        self.prefix(())
        return () in self.shortened

    def text(self, headings: tuple[str, ...], content: str) -> str:
        """The embedded text: prefix, content."""
        return self.prefix(headings)[0] + content

    def _join(self, parts: list[str]) -> str:
        return self.heading_separator.join(parts) + self.prefix_separator

    def _build_prefix(self, headings: tuple[str, ...]) -> tuple[str, int]:
        if not self.enabled:
            return "", 0
        named = {"leaf": headings[-1:], "title": ()}.get(self.path, headings)
        parts = [p for p in (self.title, *named) if p]
        if not parts:
            return "", 0
        allowed = self.prefix_limit
        text = self._join(parts)
        size = self.sizer.size(text)
        if size <= allowed:
            return text, size
        self.shortened.add(headings)
        # Keep the title and the innermost heading; the middle of the path goes first.
        while len(parts) > 2:
            parts = (
                [parts[0], ELLIPSIS, parts[-1]] if parts[1] != ELLIPSIS else [parts[0], *parts[2:]]
            )
            text = self._join(parts)
            size = self.sizer.size(text)
            if size <= allowed:
                return text, size
        # Still too long: shorten each remaining part to its leading words.
        parts = [self._truncate(part, allowed // len(parts)) for part in parts]
        text = self._join(parts)
        return text, self.sizer.size(text)

    def _truncate(self, part: str, allowed: int) -> str:
        """The longest word-boundary prefix of `part` that fits `allowed`, plus an ellipsis."""
        words = part.split()
        low, high = 0, len(words)
        while low < high:
            middle = (low + high + 1) // 2
            if self.sizer.size(" ".join(words[:middle]) + ELLIPSIS) <= allowed:
                low = middle
            else:
                high = middle - 1
        if low:
            return " ".join(words[:low]) + ELLIPSIS
        # One giant word: cut characters.
        low, high = 0, len(part)
        while low < high:
            middle = (low + high + 1) // 2
            if self.sizer.size(part[:middle] + ELLIPSIS) <= allowed:
                low = middle
            else:
                high = middle - 1
        return part[:low] + ELLIPSIS


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
