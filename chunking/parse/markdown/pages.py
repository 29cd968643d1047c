"""Page markers of Layout markdown: where pages begin, and blocks the markers must not part.

Azure's Document Layout skill (Document Intelligence `outputContentFormat=markdown`) and
the Content Understanding skill write a PDF's page furniture as HTML comments on lines of
their own: `<!-- PageHeader="..." -->`, `<!-- PageFooter="..." -->`,
`<!-- PageNumber="..." -->`, and `<!-- PageBreak -->` between pages.  They are metadata:
the page map comes from them, the comments (and the header and footer text inside them)
are left out of embedded text by the comment rule, and they are not a structural boundary:
a paragraph cut in two by a page break, or a table the converter split across pages with
its header row repeated, stays one block.  A `<figure>` (caption, the text detected in the
image, an inlined description) is one block as well, so it is packed whole when it fits.
"""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING

from chunking.model import Block, BlockKind, Pages
from chunking.parse.page_markers import PAGE_BREAK_BODY, PAGE_MARKER_BODY

if TYPE_CHECKING:
    from collections.abc import Sequence

_MARKER = rf"<!--{PAGE_MARKER_BODY}-->"
_MARKER_BLOCK = re.compile(rf"[ \t]*{_MARKER}(?:\s*{_MARKER})*[ \t]*")
"""A block of nothing but page markers (the parsers make each comment line a block)."""
_PAGE_BREAK = re.compile(rf"<!--{PAGE_BREAK_BODY}-->")
_MARKER_LINE = re.compile(rf"^[ \t]*{_MARKER}[ \t]*(?=\r?$)", re.MULTILINE)
"""A marker on a line of its own, wherever the parser put the line (an HTML block such
as a table takes the lines up to the next blank one)."""
_HINT = "<!--"
_SENTENCE_END = re.compile(r"[.!?…:;。！？][\"'”’)\]»]*\s*\Z")
"""Text that ends a sentence: a page break after it is a place to cut like any other."""
_TABLE_HEADER = re.compile(
    r"\s*<table\b[^>]*>\s*(?:<caption>.*?</caption>\s*)?(<tr>.*?</tr>)", re.DOTALL
)
_FIGURE_OPEN = re.compile(r"[ \t]*<figure\b", re.IGNORECASE)
_FIGURE_CLOSE = re.compile(r"</figure\s*>", re.IGNORECASE)


def page_layout(
    source: str, blocks: Sequence[Block]
) -> tuple[list[Block], Pages | None, tuple[tuple[int, int], ...]]:
    """Blocks with page markers and figures resolved, the page map, and the no-cut spans.

    A document without page markers or figures gets its blocks back unchanged and no
    page map.  Marker blocks become MARKUP (they go with what follows them), or
    MARKUP_END at the end of the document; a paragraph a page break interrupts
    mid-sentence, and a table continued on the next page under the same header row,
    become one block, with no cut allowed between their halves; nor inside a figure.
    """
    if _HINT not in source and "<figure" not in source.lower():
        return list(blocks), None, ()
    joined = _figures(source, blocks)
    # A figure is cut inside only when it is alone over the limit (all other cuts
    # forbidden, the splitter cuts where it must).
    figures = [
        (block.start, block.end - 1)
        for block in joined
        if block.kind is BlockKind.HTML and _FIGURE_OPEN.match(source, block.start, block.end)
    ]
    kinds = [
        BlockKind.MARKUP
        if block.kind is BlockKind.HTML and _MARKER_BLOCK.fullmatch(source, block.start, block.end)
        else block.kind
        for block in joined
    ]
    if BlockKind.MARKUP not in kinds:
        return joined, None, tuple(figures)
    out: list[Block] = []
    unbroken: list[tuple[int, int]] = []
    index = 0
    while index < len(joined):
        if kinds[index] is not BlockKind.MARKUP:
            out.append(joined[index])
            index += 1
            continue
        run_end = index
        while run_end < len(joined) and kinds[run_end] is BlockKind.MARKUP:
            run_end += 1
        after = joined[run_end] if run_end < len(joined) else None
        before = out[-1] if out else None
        if before is not None and after is not None and _continues(source, before, after):
            out[-1] = Block(before.kind, before.start, after.end)
            # No chunk ends between the halves: not at the end of the first, not in
            # the markers, not before the second.
            unbroken.append((before.end - 1, after.start))
            index = run_end + 1
            continue
        kind = BlockKind.MARKUP if after is not None else BlockKind.MARKUP_END
        out.extend(Block(kind, b.start, b.end) for b in joined[index:run_end])
        index = run_end
    return out, _pages(source, _markers(source, joined)), tuple(sorted((*unbroken, *figures)))


def _markers(source: str, blocks: Sequence[Block]) -> tuple[tuple[int, int], ...]:
    """Spans of the marker lines outside code (a code block may show one as an example)."""
    code = [b for b in blocks if b.kind is BlockKind.CODE]
    code_starts = [b.start for b in code]
    spans: list[tuple[int, int]] = []
    for match in _MARKER_LINE.finditer(source):
        low, high = match.span()
        index = bisect.bisect_right(code_starts, low) - 1
        if index < 0 or low >= code[index].end:
            spans.append((low, high))
    return tuple(spans)


def marker_lines(source: str, pages: Pages | None) -> tuple[tuple[int, int], ...]:
    """The page marker lines, each with its line break, to leave out of embedded text
    whole: a sentence a page break interrupts reads on without a run of blank lines."""
    if pages is None:
        return ()
    spans: list[tuple[int, int]] = []
    for low, high in pages.markers:
        if source.startswith("\r\n", high):
            spans.append((low, high + 2))
        elif source.startswith(("\n", "\r"), high):
            spans.append((low, high + 1))
        else:
            spans.append((low, high))
    return tuple(spans)


def _continues(source: str, before: Block, after: Block) -> bool:
    """Whether `after` goes on with `before` across the page markers between them."""
    if before.kind is BlockKind.PARAGRAPH and after.kind is BlockKind.PARAGRAPH:
        return _SENTENCE_END.search(source, before.start, before.end) is None
    if before.kind is BlockKind.HTML and after.kind is BlockKind.HTML:
        first = _TABLE_HEADER.match(source, before.start, before.end)
        second = _TABLE_HEADER.match(source, after.start, after.end)
        return first is not None and second is not None and first.group(1) == second.group(1)
    return False


def _figures(source: str, blocks: Sequence[Block]) -> list[Block]:
    """`<figure>` ... `</figure>` (blank lines inside make it several blocks) as one block."""
    out: list[Block] = []
    index = 0
    while index < len(blocks):
        block = blocks[index]
        if block.kind is BlockKind.HTML and _FIGURE_OPEN.match(source, block.start, block.end):
            stop = index
            while stop < len(blocks) and not _FIGURE_CLOSE.search(
                source, blocks[stop].start, blocks[stop].end
            ):
                if stop > index and blocks[stop].kind is BlockKind.HEADING:
                    break  # unclosed: a heading ends it
                stop += 1
            if stop < len(blocks) and blocks[stop].kind is not BlockKind.HEADING:
                out.append(Block(BlockKind.HTML, block.start, blocks[stop].end))
                index = stop + 1
                continue
        out.append(block)
        index += 1
    return out


def _pages(source: str, markers: tuple[tuple[int, int], ...]) -> Pages:
    """Pages numbered 1, 2, ... by the page breaks before them, as Content Understanding
    numbers them (`pageNumberFrom`: the physical page, not the printed `PageNumber`)."""
    starts = [0]
    for low, high in markers:
        if _PAGE_BREAK.search(source, low, high):
            # The next page begins on the line after the break.
            starts.append(high + (2 if source.startswith("\r\n", high) else 1))
    return Pages(starts=tuple(starts), markers=markers)
