"""The heading tree over an outline: which sections hold an offset or a span."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chunking.model import BlockKind, Heading
from chunking.offsets import skip_space

if TYPE_CHECKING:
    from chunking.model import Outline


@dataclass(frozen=True, slots=True)
class SectionTree:
    """Section extents derived from the headings: heading i owns [start_i, ends[i])."""

    headings: tuple[Heading, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    """Where each heading's section ends: the next heading of equal or lower depth,
    or the end of the container (docfx tab, zone) it is in, whichever comes first."""
    parents: tuple[int, ...]
    """Index of the enclosing heading, or -1."""
    hidden: int
    """Index of the heading used as the document title (kept out of paths), or -1."""
    markers: dict[int, int]
    """End of each container end marker (docfx `---`, `::: zone-end`) and of each block
    of Layout page markers, by its start: like a heading, a marker a chunk begins with
    is skipped for its path."""

    @classmethod
    def build(cls, outline: Outline, hidden: int = -1) -> SectionTree:
        """Derive section extents and parents in one pass over the headings."""
        headings = outline.headings
        ends = [len(outline.source)] * len(headings)
        parents = [-1] * len(headings)
        open_stack: list[int] = []
        closes: list[int] = []
        """Where each open section ends at the latest: its container's end, or its parent's."""
        for index, heading in enumerate(headings):
            # A container's sections end with it, whatever comes next.
            while closes and closes[-1] <= heading.start:
                ends[open_stack.pop()] = closes.pop()
            while open_stack and headings[open_stack[-1]].depth >= heading.depth:
                ends[open_stack.pop()] = heading.start
                closes.pop()
            parents[index] = open_stack[-1] if open_stack else -1
            close = closes[-1] if closes else len(outline.source)
            if heading.section_end is not None:
                close = min(close, heading.section_end)
            open_stack.append(index)
            closes.append(close)
        for index, close in zip(open_stack, closes, strict=True):
            ends[index] = close
        return cls(
            headings=headings,
            starts=tuple(h.start for h in headings),
            ends=tuple(ends),
            parents=tuple(parents),
            hidden=hidden,
            markers=_skipped_markers(outline),
        )

    def chain_at(self, offset: int) -> list[int]:
        """Indices of the headings whose sections contain `offset`, outermost first."""
        index = bisect.bisect_right(self.starts, offset) - 1
        chain: list[int] = []
        while index >= 0:
            if self.ends[index] > offset:
                chain.append(index)
            index = self.parents[index]
        chain.reverse()
        return chain

    def chain_of_span(self, start: int, end: int) -> list[int]:
        """Headings of the smallest section holding all of [start, end), outermost first."""
        return [index for index in self.chain_at(start) if self.ends[index] >= end]

    def content_start(self, source: str, start: int, end: int) -> int:
        """The first offset of [start, end) past the headings it begins with.

        A chunk that begins with headings is about what follows them, so its
        heading path is taken from there (headings are glued to their content).
        """
        position = start
        index = bisect.bisect_left(self.starts, position)
        while True:
            if index < len(self.starts) and self.starts[index] == position:
                after = self.headings[index].end
                index += 1
            elif position in self.markers:
                after = self.markers[position]
            else:
                break
            after = skip_space(source, after, end)
            if after >= end:
                break
            position = after
            # An empty heading (a docfx zone's label) sits in the space just skipped.
            while index < len(self.starts) and self.starts[index] < position:
                index += 1
        return position

    def content_starts(self, source: str, end: int) -> list[int]:
        """`content_start(source, h.start, end)` of every heading `h`, in one pass.

        Built from the last heading back, each from the next one's: asked heading by
        heading, a run of headings without content (100,000 `# h` lines) is walked
        to its end from each of them, which is quadratic.
        """
        starts, headings = self.starts, self.headings
        found = [0] * len(starts)
        for index in range(len(starts) - 1, -1, -1):
            after = headings[index].end
            after = skip_space(source, after, end)
            if after >= end:
                found[index] = starts[index]
            else:
                # Past the empty headings (a docfx zone's label) in the space after it.
                following = index + 1
                while following < len(starts) and starts[following] < after:
                    following += 1
                if following < len(starts) and starts[following] == after:
                    found[index] = found[following]
                else:
                    found[index] = after
        return found

    def chain_of_chunk(self, source: str, start: int, end: int) -> list[int]:
        """The heading chain of a chunk: the smallest section holding all it holds.

        Headings a chunk begins with are glued to the content after them when they
        enclose it (`# A` `## B` text is about A › B).  A leading heading whose
        section ends before that content is an empty section: it is part of what
        the chunk holds, so the path is the common parent of it and the content
        (`# A` `## B` `# C` text is about none of them), and A and B stay in the
        chunk's text only.
        """
        content = self.content_start(source, start, end)
        index = bisect.bisect_left(self.starts, start)
        # The leading headings that enclose the content nest, so at most six are passed.
        while index < len(self.starts) and self.starts[index] < content:
            if self.ends[index] <= content:
                return self.chain_of_span(self.starts[index], end)
            index += 1
        return self.chain_of_span(content, end)

    def names(self, chain: list[int]) -> tuple[str, ...]:
        """The heading texts of a chain, without the title heading or empty headings."""
        return tuple(
            self.headings[i].text for i in chain if i != self.hidden and self.headings[i].text
        )

    def levels(self, chain: list[int]) -> tuple[tuple[int, str], ...]:
        """(depth, text) of a chain's headings, the title heading kept, empty ones left out."""
        return tuple(
            (self.headings[i].depth, self.headings[i].text) for i in chain if self.headings[i].text
        )

    def section_start_before(self, offset: int) -> int:
        """Start of the last heading at or before `offset`, or -1."""
        index = bisect.bisect_right(self.starts, offset) - 1
        return self.starts[index] if index >= 0 else -1


def _skipped_markers(outline: Outline) -> dict[int, int]:
    """Blocks a chunk's path looks past: container end markers, and page marker blocks
    (a Layout document begins with a page header, which is no section's content)."""
    pages = set() if outline.pages is None else {low for low, _ in outline.pages.markers}
    return {
        b.start: b.end
        for b in outline.blocks
        if b.kind is BlockKind.MARKER or (b.kind is BlockKind.MARKUP and b.start in pages)
    }
