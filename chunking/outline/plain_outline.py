"""Planning on the embedded text: a markdown outline with its markup noise left out.

A chunk's limit is on its embedded text, which leaves out link targets, HTML tags,
comments, page markers and MDX markup (`parse.markdown.plain_text`).  Planning cuts on the raw
source counted that markup against the limit: a chunk of a link-heavy page held less
than the limit allowed, a raw `<h1>` before a table left no allowed cut and split a
row, and lines of page markers alone could outgrow the limit and force a cut inside a
marker.  So the splitter plans on the plain text, an outline like any other, and each
planned span is mapped back to the source span that shows it (`content`).

Stripping the document once also replaces stripping each chunk and measuring it
again: with overlap, most text was stripped twice.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chunking.model import Anchor, Block, BlockKind, Heading, Outline, Pages, Region
from chunking.offsets import skip_space, skip_space_back, trim
from chunking.parse.markdown.plain_text import PlainText, code_regions, left_out, plain_text

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass(frozen=True, slots=True)
class PlainOutline:
    """An outline of a markdown source's embedded text, and the way back to the source."""

    outline: Outline
    """The plain text's outline: the splitter plans on it."""
    plain: PlainText
    source_blocks: tuple[Block, ...]
    """The source outline's blocks."""
    plain_blocks: tuple[tuple[int, int], ...]
    """Where each source block is in the plain text (empty: markup alone)."""
    _block_starts: tuple[int, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_block_starts", tuple(b.start for b in self.source_blocks))

    def plain_span(self, start: int, end: int) -> tuple[int, int]:
        """Where the text of the source span `[start, end)` is in the plain text: what a
        chunk of that `content` embeds (without the spaces the markup around it leaves)."""
        low, high = self.plain.plain_start(start), self.plain.plain_end(end)
        return _trimmed(self.outline.source, low, high)

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """The source span a planned span `[start, end)` of the plain text stands for.

        A span that begins (ends) where a block's text begins (ends) takes the whole
        block, its markup included (a figure's `<figure>`, a paragraph's first `[`),
        and the markup lines next to it that go with it: an opening tag or page
        marker before it, a closing tag or container marker after it.
        """
        low, high = self.plain.source_span(start, end)
        blocks, spans, source = self.source_blocks, self.plain_blocks, self.plain.source
        index = bisect.bisect_right(self._block_starts, low) - 1
        if index >= 0 and spans[index][0] == start and blocks[index].end > low:
            low = skip_space(source, blocks[index].start, low)
        while (
            index > 0
            and blocks[index - 1].kind is BlockKind.MARKUP
            and spans[index - 1][0] == spans[index - 1][1]
            and not source[blocks[index - 1].end : low].strip()
        ):
            index -= 1
            low = blocks[index].start
        index = bisect.bisect_left(self._block_starts, high) - 1
        if index >= 0 and spans[index][1] == end and blocks[index].end > high:
            high = skip_space_back(source, blocks[index].end, high)
        while (
            index + 1 < len(blocks)
            and blocks[index + 1].kind in _GOES_BEFORE
            and spans[index + 1][0] == spans[index + 1][1]
            and not source[high : blocks[index + 1].start].strip()
        ):
            index += 1
            high = blocks[index].end
        return low, max(low, high)


_GOES_BEFORE = frozenset({BlockKind.MARKUP_END, BlockKind.MARKER})
"""Markup that ends what precedes it: a closing tag, a docfx `---` or `::: zone-end`."""


def plain_outline(outline: Outline) -> PlainOutline:
    """`outline` with the markup noise of its body left out (front matter and trailing
    link definitions stay as they are: no chunk holds them)."""
    plain = plain_text(
        outline.source,
        outline.body_start,
        outline.content_end,
        code_regions(outline),
        left_out(outline),
    )
    if plain.unchanged:
        # No markup at all: the plain text is the source.
        same = tuple((block.start, block.end) for block in outline.blocks)
        return PlainOutline(outline, plain, outline.blocks, same)
    text = plain.text
    start_of, end_of = plain.plain_start, plain.plain_end
    blocks, headings, regions, block_spans = _moved_units(outline, plain)
    pages = outline.pages
    return PlainOutline(
        outline=Outline(
            source=text,
            format=outline.format,
            title=outline.title,
            body_start=start_of(outline.body_start),
            body_end=None if outline.body_end is None else start_of(outline.body_end),
            headings=headings,
            blocks=blocks,
            regions=regions,
            anchors=tuple(Anchor(start_of(a.offset), a.id) for a in outline.anchors),
            warnings=outline.warnings,
            # Hidden spans and page markers are not in the plain text at all.
            hidden=(),
            pages=None if pages is None else Pages(tuple(map(start_of, pages.starts)), ()),
            unbroken=_unbroken(outline.unbroken, text, start_of, end_of),
        ),
        plain=plain,
        source_blocks=outline.blocks,
        plain_blocks=block_spans,
    )


def _moved_units(
    outline: Outline, plain: PlainText
) -> tuple[tuple[Block, ...], tuple[Heading, ...], tuple[Region, ...], tuple[tuple[int, int], ...]]:
    """The outline's blocks, headings and regions at their plain offsets, and where
    each source block is in the plain text (empty: markup alone)."""
    text = plain.text
    units: list[Block | Heading | Region] = [*outline.blocks, *outline.headings, *outline.regions]
    # One search for every offset: blocks, headings and regions, the regions' lead ends
    # and the headings' section ends (as starts), then the ends.
    lows, highs = plain.plain_offsets(
        [
            *(unit.start for unit in units),
            *(region.lead_end for region in outline.regions),
            *(h.start if h.section_end is None else h.section_end for h in outline.headings),
        ],
        [unit.end for unit in units],
    )
    count, heading_count, region_count = (
        len(outline.blocks),
        len(outline.headings),
        len(outline.regions),
    )
    lead_ends = lows[len(units) : len(units) + region_count]
    section_ends = lows[len(units) + region_count :]
    spans = [_trimmed(text, low, high) for low, high in zip(lows, highs, strict=False)]
    blocks: list[Block] = []
    for block, (low, high) in zip(outline.blocks, spans, strict=False):
        # Markup alone (an MDX tag line, a container marker) is no block of the text.
        if high > low or block.kind is BlockKind.HEADING:
            blocks.append(Block(block.kind, low, high))
    headings = tuple(
        Heading(
            low,
            high,
            depth=heading.depth,
            text=heading.text,
            anchor=heading.anchor,
            section_end=None if heading.section_end is None else section_end,
        )
        for heading, (low, high), section_end in zip(
            outline.headings, spans[count : count + heading_count], section_ends, strict=True
        )
    )
    regions = tuple(
        _region(region, text, start, end, lead_end)
        for region, start, end, lead_end in zip(
            outline.regions,
            lows[count + heading_count : len(units)],
            highs[count + heading_count :],
            lead_ends,
            strict=True,
        )
    )
    return tuple(blocks), headings, regions, tuple(spans[:count])


def _trimmed(text: str, low: int, high: int) -> tuple[int, int]:
    """A block's plain span without the spaces markup left out of its ends leaves (an
    empty span, markup alone, stays at its start)."""
    start, end = trim(text, low, high)
    return (start, end) if start < end else (low, low)


def _region(region: Region, text: str, start: int, end: int, lead_end: int) -> Region:
    """`region` at its plain offsets, its lead the plain text of the source's."""
    end = max(start, end)
    if not region.lead:
        return Region(region.kind, start, end, start, "")
    lead_end = min(max(start, lead_end), end)
    lead = text[start:lead_end]
    if region.lead.endswith("\n") and not lead.endswith("\n"):
        lead += "\n"  # the document ends on the lead line, as in the source outline
    return Region(region.kind, start, end, lead_end, lead)


def _unbroken(
    spans: Sequence[tuple[int, int]], text: str, start_of: _Map, end_of: _Map
) -> tuple[tuple[int, int], ...]:
    """The spans no chunk ends in, `low < end <= high`: `high` is a character (a second
    half's first, a figure's last), so it maps to the last text character up to it."""
    kept = []
    for low, high in spans:
        plain_low, plain_high = end_of(low), end_of(high + 1)
        # Ending in the spaces after `low` is ending at `low` (a figure's `<figure>`
        # line leaves a line break before its text).
        plain_low, plain_high = trim(text, plain_low, plain_high)
        if plain_high - 1 > plain_low:
            kept.append((plain_low, plain_high - 1))
    return tuple(kept)


if TYPE_CHECKING:
    from collections.abc import Callable

    _Map = Callable[[int], int]
