"""Parse markdown into an `Outline`: headings, blocks and verbatim regions as offsets.

A block parser (`pulldown_parser`, or `markdown_it_parser` should the first
fail) reports blocks as line ranges; one line-start table built over the
original text turns them into code point offsets, so the outline's source is
the input unchanged, whatever its line endings.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chunking.model import Anchor, Block, BlockKind, Heading, Outline, Region
from chunking.offsets import skip_space_back
from chunking.parse.front_matter import front_matter_title, metadata_block
from chunking.parse.gc_pause import paused_gc
from chunking.parse.markdown import mdx, pulldown_parser
from chunking.parse.markdown.blocks import line_starts
from chunking.parse.markdown.docfx import docfx_containers
from chunking.parse.markdown.pages import marker_lines, page_layout

if TYPE_CHECKING:
    from chunking.parse.markdown.blocks import BlockParser, LineRegion, ParsedMarkdown


# A leading byte order mark hides front matter from the parsers (they want `-`
# as the very first character), and real files carry one.
_BOM = "\ufeff"

# Unicode categories a GitHub-style slug keeps: letters, marks and numbers.
_SLUG_CATEGORIES = frozenset("LMN")
_SLUG_KEEP = frozenset(" -_")
_ASCII_NOT_SLUG = re.compile(r"[^a-z0-9 _-]")
_NON_SPACE = re.compile(r"\S")


@dataclass(frozen=True, slots=True)
class _Lines:
    """Where each line of the original text starts, as markdown-it counts lines."""

    text: str
    """The original text."""
    starts: Sequence[int]
    """Offset of the first character of each line; line 0 skips a BOM."""

    def start(self, line: int) -> int:
        """Offset where `line` starts; the end of the text for lines past the last."""
        return self.starts[line] if line < len(self.starts) else len(self.text)

    def has_break(self, line: int) -> bool:
        """Whether `line` ends with a line break (every line but the last does)."""
        return line + 1 < len(self.starts)

    def end(self, stop_line: int, floor: int) -> int:
        """Offset just past the last non-whitespace character before `stop_line`.

        Never goes below `floor`, the span's start.
        """
        end = self.start(stop_line)
        return skip_space_back(self.text, end, floor)


def parse_markdown(
    text: str,
    parser: BlockParser = pulldown_parser.parse_blocks,
    fallback: BlockParser | None = None,
    *,
    file_name: str | None = None,
) -> Outline:
    """Parse markdown `text` into an outline whose offsets index `text` itself.

    `parser` reads the blocks; should it fail, `fallback` does, with a warning
    (markdown-it-py's, loaded only then, when none is given).
    `file_name` tells an MDX page (`.mdx`) when its text does not.
    """
    # Blocks, headings and anchors by the million, none in a cycle: the collector's
    # rescans of the growing heap took a quarter of the time to chunk a million
    # heading lines (10.3 s, 7.9 s with it paused here).
    with paused_gc():
        return _outline(text, parser, fallback, file_name)


def _outline(
    text: str, parser: BlockParser, fallback: BlockParser | None, file_name: str | None
) -> Outline:
    has_bom = text.startswith(_BOM)
    lines = _line_table(text, skip=len(_BOM) if has_bom else 0)
    parsed, warnings, markup = mdx.parse_mdx(
        text[len(_BOM) :] if has_bom else text,
        file_name,
        lambda body: _parse_blocks(body, parser, fallback),
    )

    body_start, title = _body_start_and_title(text, parsed, lines, has_bom, warnings)
    # A block ends before the markup lines that trail it (the parser saw them blank).
    seen = text if markup is None else _BOM * has_bom + markup.masked
    spans, heading_texts = _block_spans(text, seen, parsed, lines, body_start)
    regions = _regions(parsed, lines)

    if markup is not None:
        spans = mdx.with_markup_blocks(spans, markup.blocks_after(body_start, len(_BOM) * has_bom))
    blocks = _cover_gaps(text, body_start, _without_overlaps(spans))
    blocks, pages, unbroken = page_layout(text, blocks)
    body_end = _trailing_references_start(text, blocks)
    headings = _headings(blocks, heading_texts)
    regions.sort(key=lambda region: region.start)
    blocks, headings = docfx_containers(text, blocks, headings, regions)
    return Outline(
        source=text,
        format="markdown",
        title=title,
        body_start=body_start,
        body_end=body_end,
        headings=headings,
        blocks=tuple(blocks),
        regions=tuple(regions),
        anchors=tuple(Anchor(h.start, h.anchor) for h in headings if h.anchor is not None),
        warnings=tuple(warnings),
        pages=pages,
        unbroken=unbroken,
        hidden=_hidden(
            () if markup is None else markup.hidden_after(body_start, len(_BOM) * has_bom),
            marker_lines(text, pages),
        ),
    )


def _body_start_and_title(
    text: str, parsed: ParsedMarkdown, lines: _Lines, has_bom: bool, warnings: list[str]
) -> tuple[int, str | None]:
    """Where the body begins after front matter or a metadata block, and the title that
    gives (a front matter's warning added to `warnings`)."""
    title: str | None = None
    body_start = lines.start(0)
    if parsed.front_matter is not None:
        stop, content = parsed.front_matter
        body_start = lines.start(stop)
        title, warning = front_matter_title(content)
        if warning is not None:
            warnings.append(warning)
    elif (metadata := metadata_block(text, len(_BOM) if has_bom else 0)) is not None:
        # MultiMarkdown `Title:` metadata or a Pandoc `%` title block: metadata like YAML
        # front matter, not body text, and its title is the document's.
        body_start, title = metadata
    return body_start, title


def _block_spans(
    text: str, seen: str, parsed: ParsedMarkdown, lines: _Lines, body_start: int
) -> tuple[list[Block], dict[int, tuple[int, str, str | None]]]:
    """The parsed blocks of the body as spans of `text`, each ending before the blank
    lines `seen` (the text as the parser saw it) has after it; and the depth, text and
    anchor of each heading by its start."""
    spans: list[Block] = []
    heading_texts: dict[int, tuple[int, str, str | None]] = {}
    # `_Lines.start` and `_Lines.end` inlined: this loop meets every block.
    starts, line_count, text_end = lines.starts, len(lines.starts), len(text)
    heading, html = BlockKind.HEADING, BlockKind.HTML
    for block in parsed.blocks:
        kind = block.kind
        if kind is heading:
            start = starts[block.first] if block.first < line_count else text_end
            while start < text_end and text[start] in " \t":  # the first non-blank
                start += 1
            heading_texts[start] = (block.depth, block.text, block.anchor)
        else:
            start = starts[block.first] if block.first < line_count else text_end
        end = starts[block.stop] if block.stop < line_count else text_end
        if start < body_start:
            continue  # the metadata block, read above
        end = skip_space_back(seen, end, start)
        if kind is html and _HTML_HEADING_HINT.search(text, start, end):
            spans.extend(_html_headings(text, start, end, heading_texts))
        else:
            spans.append(Block(kind, start, end))
    return spans, heading_texts


def _regions(parsed: ParsedMarkdown, lines: _Lines) -> list[Region]:
    """The parsed code blocks and tables as spans of the text, the empty ones left out."""
    regions: list[Region] = []
    for line_region in parsed.regions:
        region = _region(line_region, lines)
        # An indented code block of only Unicode spaces (which the parsers do
        # not count as blank) is empty once trimmed, and so is its block.
        if region.end > region.start:
            regions.append(region)
    return regions


def _hidden(
    markup: tuple[tuple[int, int], ...], markers: tuple[tuple[int, int], ...]
) -> tuple[tuple[int, int], ...]:
    """MDX markup and page marker lines, sorted (the two never overlap: markers are
    lines of their own, and MDX comments are `{/* */}`)."""
    if not markers:
        return markup
    return tuple(sorted((*markup, *markers)))


def _parse_blocks(
    text: str, parser: BlockParser, fallback: BlockParser | None
) -> tuple[ParsedMarkdown, list[str]]:
    """The parser's blocks; the fallback's, with a warning, if the parser fails."""
    try:
        return parser(text), []
    # pyo3 turns a Rust panic into PanicException, a BaseException: whatever the
    # Rust parser does, the document still gets parsed.
    except BaseException as error:
        if not isinstance(error, Exception) and type(error).__name__ != "PanicException":
            raise
        # A panic's message may quote the document: its kind at warning level, the rest
        # at debug. logging loads here: a start-up in characters mode had no other use for it.
        import logging  # noqa: PLC0415

        logger = logging.getLogger(__name__)
        logger.warning("the markdown parser failed (%s); fell back", type(error).__name__)
        logger.debug("the markdown parser's failure", exc_info=error)
        if fallback is None:
            from chunking.parse.markdown import markdown_it_parser  # noqa: PLC0415

            fallback = markdown_it_parser.parse_blocks
        return fallback(text), [
            "the markdown parser failed on this document, so the fallback parser "
            "(markdown-it-py) read it; the chunks are still complete"
        ]


def _line_table(text: str, skip: int) -> _Lines:
    """Build the line-start table in one scan; line 0 starts at `skip`."""
    starts = line_starts(text)
    starts[0] = skip
    return _Lines(text, starts)


def _region(region: LineRegion, lines: _Lines) -> Region:
    """The verbatim region of a fence, indented code or table on its lines."""
    start = lines.start(region.first)
    end = lines.end(region.stop, floor=start)
    if region.lead_lines == 0:
        return Region(region.kind, start, end, lead_end=start, lead="")
    last_lead_line = region.first + region.lead_lines - 1
    lead_end = lines.start(last_lead_line + 1)
    lead = lines.text[start:lead_end]
    if not lines.has_break(last_lead_line):
        # The document ends on the lead line: the lead still ends a line when
        # it is repeated in front of a continuation.
        lead += "\n"
    # A region that is only its lead (an unclosed fence at the end, a table
    # without rows) ends before the lead's newline; keep lead_end inside it.
    return Region(region.kind, start, end, lead_end=min(lead_end, end), lead=lead)


def _without_overlaps(spans: Sequence[Block]) -> list[Block]:
    """Drop what overlaps an earlier block, so blocks tile the text in order."""
    kept: list[Block] = []
    previous_end = 0
    for span in spans:
        start = max(span.start, previous_end)
        if span.end <= start:
            continue
        kept.append(span if start == span.start else Block(span.kind, start, span.end))
        previous_end = span.end
    return kept


def _cover_gaps(text: str, body_start: int, blocks: Sequence[Block]) -> list[Block]:
    """Wrap non-blank text no token covers (e.g. link reference definitions) in OTHER blocks."""
    covered: list[Block] = []
    gap_start = body_start
    for block in [*blocks, Block(BlockKind.OTHER, len(text), len(text))]:
        # Gaps are nearly always blank lines: look for text without slicing.
        if gap_start < block.start and _NON_SPACE.search(text, gap_start, block.start):
            gap = text[gap_start : block.start]
            stripped = gap.strip()
            start = gap_start + (len(gap) - len(gap.lstrip()))
            covered.append(Block(BlockKind.OTHER, start, start + len(stripped)))
        if block.end > block.start:
            covered.append(block)
        gap_start = max(gap_start, block.end)
    return covered


_LINE_START = "(?:^|(?<=\\A\ufeff))"
"""A line start, the first line's after a byte order mark too."""
_HTML_HEADING_HINT = re.compile(_LINE_START + r"[ \t]*<[hH][1-6]", re.MULTILINE)
_HTML_HEADING = re.compile(
    # The element on its own line(s).  Its content may not cross another heading
    # tag, so each try stops at the next one and a block is read in one pass.
    _LINE_START + r"[ \t]*(?P<element><[hH](?P<depth>[1-6])(?P<attributes>[\s/][^<>]*)?>"
    r"(?P<inner>[^<]*(?:<(?!/?[hH][1-6][\s/>])[^<]*)*)</[hH](?P=depth)\s*>)[ \t]*$",
    re.MULTILINE,
)
_HTML_ID = re.compile(r"""(?:^|\s)id\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""", re.IGNORECASE)
_PERMALINK = re.compile(
    # Sphinx/Pelican `headerlink` and GitHub `anchor` links: a pilcrow or an icon.
    r"""<a\s[^<>]*\bclass\s*=\s*["'][^"']*\b(?:headerlink|anchor)\b[^<>]*>"""
    r"[^<]*(?:<(?!/?a[\s>])[^<]*)*</a\s*>",
    re.IGNORECASE,
)
_IMAGE_ALT = re.compile(
    r"""<img\s[^<>]*?\balt\s*=\s*(?:"([^"<>]*)"|'([^'<>]*)')[^<>]*>""", re.IGNORECASE
)
_TAG = re.compile(r"<[^<>]*>")
"""Tags, and the patterns above, stop at the next `<`: no try rescans the text after it."""
_PILCROW = "\u00b6"


def _html_headings(
    text: str, start: int, end: int, heading_texts: dict[int, tuple[int, str, str | None]]
) -> list[Block]:
    """An HTML block split around the `<h1>`..`<h6>` elements on their own lines.

    README-style raw headings become headings as in HTML input: the element's
    text, and its `id` for the anchor (else the slug).  A heading without text
    (a logo image without alt text) stays HTML.
    """
    pieces: list[Block] = []
    position = start
    for found in _HTML_HEADING.finditer(text, start, end):
        heading_text = _html_heading_text(found.group("inner"))
        if not heading_text:
            continue
        element_start = found.start("element")
        if _NON_SPACE.search(text, position, element_start):
            before_end = len(text[:element_start].rstrip())
            pieces.append(Block(BlockKind.HTML, position, before_end))
        attributes = found.group("attributes") or ""
        given = _HTML_ID.search(attributes)
        anchor = next((g for g in given.groups() if g is not None), "") if given else ""
        heading_texts[element_start] = (
            int(found.group("depth")),
            heading_text,
            _unescape(anchor).strip() or None,
        )
        pieces.append(Block(BlockKind.HEADING, element_start, found.end("element")))
        position = found.end()
    rest = _NON_SPACE.search(text, position, end)
    if rest is not None:
        pieces.append(Block(BlockKind.HTML, rest.start() if pieces else start, end))
    return pieces


def _html_heading_text(inner: str) -> str:
    """A raw HTML heading's text: tags and permalinks removed, entities resolved."""
    inner = _PERMALINK.sub("", inner)
    inner = _IMAGE_ALT.sub(lambda image: image.group(1) or image.group(2) or "", inner)
    plain = _unescape(_TAG.sub("", inner))
    return " ".join(plain.split()).rstrip(_PILCROW).rstrip()


def _unescape(text: str) -> str:
    """`text` with its character references resolved."""
    import html  # noqa: PLC0415  # raw HTML headings only: a start-up skips its entity table

    return html.unescape(text)


_REFERENCE_DEFINITION = re.compile(r" {0,3}\[[^\]\n]+\]:")


def _trailing_references_start(text: str, blocks: Sequence[Block]) -> int | None:
    """Start of the link reference definitions (and comments) that end a document.

    Microsoft Learn pages end with dozens of `[id]: url` lines under comments like
    `<!-- LINKS - Internal -->`.  They are link targets, not content: chunked, they
    fill the last chunk with URLs.  None when the document does not end that way.
    """
    start: int | None = None
    has_reference = False
    for block in reversed(blocks):
        snippet = text[block.start : block.end]
        if block.kind is BlockKind.OTHER and _REFERENCE_DEFINITION.match(snippet):
            has_reference = True
        elif not (
            block.kind is BlockKind.HTML
            and snippet.lstrip().startswith("<!--")
            and snippet.rstrip().endswith("-->")
        ):
            break
        start = block.start
    if not has_reference or start is None or start <= blocks[0].start:
        return None
    return start


def _headings(
    blocks: Sequence[Block], texts: dict[int, tuple[int, str, str | None]]
) -> tuple[Heading, ...]:
    """One heading per HEADING block, with its text and anchor: the id the heading
    sets (`{#id}`, `{/*id*/}`), else a unique GitHub-style slug."""
    slugs = _Slugger()
    slug_of: dict[str, str] = {}
    """Slugs by heading text: documents repeat headings (`Example`, `Syntax`), and a
    slug costs a pass over the text per character class."""
    headings: list[Heading] = []
    heading = BlockKind.HEADING
    for block in blocks:
        if block.kind is not heading:
            continue
        found = texts.get(block.start)
        if found is None:
            continue
        depth, text, given = found
        if given is not None:
            headings.append(Heading(block.start, block.end, depth, text, slugs.claim(given)))
            continue
        slug = slug_of.get(text)
        if slug is None:
            slug = slug_of[text] = _slug(text)
        headings.append(Heading(block.start, block.end, depth, text, slugs.unique(slug)))
    return tuple(headings)


def _slug(text: str) -> str:
    """GitHub-style slug: lowercase, only letters, digits, `-`, `_`; spaces become `-`."""
    if text.isascii():
        # The same rule, one regex pass: ASCII letters and digits are L and N.
        return _ASCII_NOT_SLUG.sub("", text.lower()).replace(" ", "-")
    kept = (
        char
        for char in text.lower()
        if char in _SLUG_KEEP or unicodedata.category(char)[0] in _SLUG_CATEGORIES
    )
    return "".join(kept).replace(" ", "-")


class _Slugger:
    """Makes slugs unique within a document the way github-slugger does."""

    def __init__(self) -> None:
        self._occurrences: dict[str, int] = {}

    def claim(self, anchor: str) -> str:
        """Take `anchor`, an id the document sets itself, as it is: later slugs avoid it."""
        self._occurrences.setdefault(anchor, 0)
        return anchor

    def unique(self, slug: str) -> str | None:
        """`slug`, or `slug-1`, `slug-2`... if taken; None for an empty slug."""
        if not slug:
            return None
        candidate = slug
        while candidate in self._occurrences:
            self._occurrences[slug] += 1
            candidate = f"{slug}-{self._occurrences[slug]}"
        self._occurrences[candidate] = 0
        return candidate
