"""The model types: the outline every parser builds, the span a strategy plans, the chunk.

An outline is a source text plus spans into it: headings, blocks and verbatim
regions (code and tables).  The planner never learns which format the source
came from.  For markdown and plain text the source is the input itself; for
HTML it is the normalized text rendering the HTML parser builds.  A strategy plans
`Span`s of the outline's source; the pipeline turns them into `Chunk`s of the input's.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import Literal

from chunking.quick_init import quick_init

Format = Literal["markdown", "html", "text"]


class Level(IntEnum):
    """How strong a boundary is, from coarse to fine; lower is stronger.

    Section boundaries use the heading depth (1..6) as their level, so an H2
    boundary is stronger than an H3 boundary and both beat a block boundary.
    """

    DOCUMENT = 0
    H1 = 1
    H2 = 2
    H3 = 3
    H4 = 4
    H5 = 5
    H6 = 6
    BLOCK = 7
    LINE = 8
    SENTENCE = 9
    WORD = 10
    CHARACTER = 11


class BlockKind(Enum):
    """What a block is; how it may be split lives in the splitter's table."""

    HEADING = "heading"
    PARAGRAPH = "paragraph"
    LIST_ITEM = "list_item"
    QUOTE = "quote"
    CODE = "code"
    TABLE = "table"
    HTML = "html"
    RULE = "rule"
    MARKER = "marker"
    """Container markup, not content: a docfx tab group's closing `---`, `::: zone-end`."""
    OTHER = "other"
    MARKUP = "markup"
    """Lines of markup, not text (MDX: an opening component tag, `import`, a JSX
    comment): they go with what follows them, so no chunk ends right after them."""
    MARKUP_END = "markup_end"
    """Markup that goes with what precedes it (a closing or self-closing tag, or
    markup right before a heading), so no chunk starts with it."""


class RegionKind(Enum):
    """Verbatim regions split only between lines (code) or rows (tables)."""

    CODE = "code"
    TABLE = "table"


@quick_init
@dataclass(frozen=True, slots=True)
class Heading:
    """A heading: the span of its whole line(s) in the source, and its text."""

    start: int
    """Offset of the first character of the heading block (e.g. the `#`)."""
    end: int
    """Offset just past the heading block, excluding the final newline."""
    depth: int
    """Depth in the section tree, from 1: h1..h6 or the number of `#`, except in a
    container (a docfx tab or zone pivot), whose label is one below the section it
    is in, and whose headings nest below the label, so it may exceed 6."""
    text: str
    """The heading's plain text, inline markup removed, whitespace collapsed."""
    anchor: str | None = None
    """Fragment id a link can point at (HTML `id`, or a GitHub-style slug)."""
    section_end: int | None = None
    """Where the section ends at the latest: the end of the container whose label
    this heading is (a docfx tab group's `---`, a `::: zone-end`), after which the
    enclosing section goes on.  None: only the next heading of equal or lower depth
    ends it.  The headings inside a container end with it."""


@quick_init
@dataclass(frozen=True, slots=True)
class Block:
    """A unit the splitter packs whole when it can: paragraph, list item, fence..."""

    kind: BlockKind
    start: int
    """Offset of the block's first character."""
    end: int
    """Offset just past the block's last non-newline character."""


@quick_init
@dataclass(frozen=True, slots=True)
class Region:
    """A code block or table, which may only be split between lines/rows.

    A chunk that starts inside a region after `lead_end` is a continuation; it starts
    with its own row or line (the lead is not repeated in its embedded text), and no
    chunk ends inside the lead.
    """

    kind: RegionKind
    start: int
    """Offset of the region's first character (the opening fence / header row)."""
    end: int
    """Offset just past the region's last character."""
    lead_end: int
    """End of the lead (fence line or header rows), including its newline."""
    lead: str
    """The fence line with its info string, or the table's header and delimiter rows,
    newline-terminated."""


@dataclass(frozen=True, slots=True)
class Pages:
    """The pages of a paged document (Layout markdown, or HTML with Layout's page comments):
    where each begins, and its markers."""

    starts: tuple[int, ...]
    """Offset where each page begins, ascending, the first 0: page n begins at
    `starts[n - 1]`, the line after the `<!-- PageBreak -->` that ends page n - 1."""
    markers: tuple[tuple[int, int], ...]
    """Sorted spans of the page marker lines (header, footer, number, break): metadata,
    so a chunk's pages are those of the characters it has outside them. Empty for HTML,
    whose rendering leaves the comments out."""

    def page_at(self, offset: int) -> int:
        """The 1-based page holding the character at `offset`."""
        return bisect.bisect_right(self.starts, offset)

    def range_of(self, source: str, start: int, end: int) -> tuple[int, int]:
        """First and last page of the text of `source[start:end]`, markers and spaces aside."""
        low, high = start, end
        while low < high:
            index = bisect.bisect_right(self.markers, (low, len(source))) - 1
            if index >= 0 and self.markers[index][0] <= low < self.markers[index][1]:
                low = self.markers[index][1]
            elif source[low].isspace():
                low += 1
            else:
                break
        while high > low:
            index = bisect.bisect_left(self.markers, (high, -1)) - 1
            if index >= 0 and self.markers[index][0] < high <= self.markers[index][1]:
                high = self.markers[index][0]
            elif source[high - 1].isspace():
                high -= 1
            else:
                break
        if low >= high:  # nothing but markers: the page they are on
            return self.page_at(start), self.page_at(start)
        return self.page_at(low), self.page_at(high - 1)


@quick_init
@dataclass(frozen=True, slots=True)
class Anchor:
    """An element id at an offset of the source, for deep links."""

    offset: int
    id: str


@dataclass(frozen=True, slots=True)
class Outline:
    """A parsed document: the source text and structural spans into it.

    Invariants every parser keeps:
    - `headings`, `blocks`, `regions` and `anchors` are sorted by start offset;
    - blocks do not overlap and every heading is also a block of kind HEADING;
    - a heading's `section_end`, if set, lies in `end..content_end`;
    - every offset lies in `body_start..len(source)`;
    - every non-whitespace character from `body_start` on lies in some block;
    - chunks cover `body_start..content_end`.
    """

    source: str
    """The text offsets point into (the input, or the HTML rendering)."""
    format: Format
    title: str | None = None
    """Title from metadata (front matter `title`, HTML `<title>`), if any."""
    body_start: int = 0
    """Where chunkable content begins (after YAML front matter)."""
    body_end: int | None = None
    """Where chunkable content ends (None: the end of the source).  Markdown's
    trailing link reference definitions (`[id]: url` lines) lie past it: they are
    link targets, not content, and would fill a document's last chunk with URLs."""
    headings: tuple[Heading, ...] = ()
    blocks: tuple[Block, ...] = ()
    regions: tuple[Region, ...] = ()
    anchors: tuple[Anchor, ...] = ()
    warnings: tuple[str, ...] = ()
    """Things the parser dropped or repaired, said plainly."""
    hidden: tuple[tuple[int, int], ...] = ()
    """Sorted, disjoint spans of markup a reader never sees (MDX tags, `import` lines,
    JSX comments, Layout page marker lines with their line breaks): inside chunks'
    `content`, left out of their embedded text."""
    pages: Pages | None = None
    """Where each page begins, for a document with page markers (Layout markdown or HTML)."""
    unbroken: tuple[tuple[int, int], ...] = ()
    """Sorted spans `(low, high)` no chunk ends in (`low < end <= high`) unless nothing
    else fits: a paragraph or table interrupted by page markers, from its first half's
    end to its second half's start, and a `<figure>`."""
    _anchor_offsets: tuple[int, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_anchor_offsets", tuple(a.offset for a in self.anchors))

    @property
    def content_end(self) -> int:
        """Where chunkable content ends."""
        return len(self.source) if self.body_end is None else self.body_end

    def anchor_at(self, offset: int) -> str | None:
        """The id of the nearest anchor at or before `offset`, if any."""
        index = bisect.bisect_right(self._anchor_offsets, offset) - 1
        return self.anchors[index].id if index >= 0 else None


# -- planned spans and chunks ---------------------------------------------------


@quick_init
@dataclass(frozen=True, slots=True)
class Span:
    """A planned chunk: a source span and what its embedded text needs."""

    start: int
    end: int
    chain: tuple[int, ...]
    """Heading indices of the smallest section holding the span."""
    headings: tuple[str, ...]
    """Their texts, as the prefix shows them (no title heading, no empty heading)."""
    text: str
    """The full embedded text."""
    size: int

    def with_text(self, text: str, size: int) -> Span:
        """The span with another embedded text: `dataclasses.replace` cost a tenth of
        the markup stripping on the markdown corpus (it reflects on the fields)."""
        return Span(self.start, self.end, self.chain, self.headings, text, size)


@quick_init
@dataclass(frozen=True, slots=True)
class Repeated:
    """Source text a chunk's reader text repeats around its content: the table's header
    and delimiter rows or the opening fence line in front of a continuation, the closing
    fence after a chunk that ends inside a code block."""

    start: int
    end: int
    """The span of the source it copies; empty (at the code block's end) for the closing
    fence of a fence the source never closes, which is then written like its opening."""
    text: str
    """What the reader text shows: `source[start:end]` (newline-terminated for an opening;
    the line alone for a closing fence), and for an opening the indentation of the chunk's
    first line after it, which `content` leaves out as chunks start at a non-space
    character."""


@quick_init
@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk. `content == source[start:end]`; `text` is what gets embedded;
    `reader_text` is what a reader (a person, or a model answering from the chunk) gets."""

    ordinal: int
    """0-based position among the document's chunks."""
    start: int
    """Offset (code points) of the first character in the source."""
    end: int
    """Offset just past the last character in the source."""
    content: str
    """The source slice `source[start:end]`."""
    text: str
    """Prefix (title and heading path) + content: what is embedded."""
    title: str
    """The document title."""
    headings: tuple[str, ...]
    """Heading path of the smallest section holding the chunk, outermost first, no title."""
    anchor: str | None
    """Fragment id of the nearest heading or element at or before the chunk's start."""
    size: int
    """Size of `text` in the chosen unit; never above `maximumPageLength`."""
    id: str
    """Deterministic id: a hash of the source, the span and the settings."""
    outline_path: tuple[tuple[int, str], ...] = ()
    """(depth, text) of each heading on the chunk's path, outermost first, the title
    heading included (`headings` leaves it out): what Layout-style `sections` show."""
    page_from: int | None = None
    """1-based page of the chunk's first character (page markers and spaces aside), for
    a document with page markers (Layout markdown: `<!-- PageBreak -->`); None without."""
    page_to: int | None = None
    """1-based page of the chunk's last character (page markers aside), or None."""
    prefix: str = ""
    """The title and heading path in front of the content in `text`, separator included
    ('' when the prefix is off or the chunk has no title and no heading)."""
    opening: Repeated | None = None
    """For a chunk that starts inside a table or fenced code block past its header rows
    or fence line: those rows or that line, which `content` does not hold."""
    closing: Repeated | None = None
    """For a chunk that ends inside a fenced code block: its closing fence line."""

    @property
    def reader_text(self) -> str:
        """The chunk as a reader needs it, self-contained: `prefix`, the `opening` of a
        continuation, `content`, then the `closing` fence. Derived, never planned on: the
        limit is `text`'s (the repeated rows, the fence lines and the markup `text`
        leaves out are not counted; docs/design/chunking-rules.md)."""
        opening = "" if self.opening is None else self.opening.text
        closing = "" if self.closing is None else "\n" + self.closing.text
        return f"{self.prefix}{opening}{self.content}{closing}"


@dataclass(frozen=True, slots=True)
class ChunkedDocument:
    """The result of chunking one document."""

    source: str
    """The text the chunk offsets point into (the HTML rendering for HTML)."""
    format: Format
    """The format the document was parsed as."""
    title: str
    chunks: tuple[Chunk, ...]
    warnings: tuple[str, ...]
    """Things a user should know: dropped parts, shortened headings, fallbacks."""
