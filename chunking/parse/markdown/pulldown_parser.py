"""pulldown-cmark (through pyromark) as a block parser: the default, fast path.

pulldown-cmark is CommonMark-compliant and written in Rust; its event stream
with byte ranges parses the corpus at ~75 MB/s where markdown-it-py's block
parse alone runs at ~8.5.  Ranges are UTF-8 byte offsets; one table of the
byte offsets where lines start turns them into line numbers, the currency of
`blocks`.  No pyromark event leaves this module.
"""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING, Any

import pyromark

from chunking.model import BlockKind, RegionKind
from chunking.parse.markdown.blocks import (
    LineBlock,
    LineRegion,
    ParsedMarkdown,
    heading_id,
    utf8_line_starts,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from chunking.parse.markdown.blocks import LineTable

PARSER_OPTIONS = pyromark.Options.ENABLE_TABLES
"""GFM tables; no smart punctuation, footnotes or GFM alerts (docfx `> [!NOTE]`
stays a quote block, as in markdown-it).  Not pulldown's metadata blocks either:
it takes any `---` line followed by text for one, anywhere in a document, and
so swallows a horizontal rule with the sections after it (`_front_matter`)."""

_FRONT_MATTER_OPEN = re.compile(r"(-{3,})[ \t]*(?:\r\n?|\n)")
_FRONT_MATTER_CLOSE = re.compile(r"(?:(-{3,})|\.\.\.)[ \t]*(?:\r\n?|\n|\Z)")
_LINE_BREAK = re.compile(r"\r\n?|\n")

_BLOCK_KINDS: dict[str, BlockKind] = {
    "Heading": BlockKind.HEADING,
    "Paragraph": BlockKind.PARAGRAPH,
    "Item": BlockKind.LIST_ITEM,
    "BlockQuote": BlockKind.QUOTE,
    "CodeBlock": BlockKind.CODE,
    "Table": BlockKind.TABLE,
    "HtmlBlock": BlockKind.HTML,
}
"""Container tags that are blocks; any other top-level container is OTHER."""

_HEADING_TEXT = frozenset({"Text", "Code", "InlineMath", "DisplayMath"})
"""Events inside a heading whose text is the heading's text (images give their
alt text as Text; inline HTML tags are dropped)."""

_LINE_BREAKS = frozenset({"SoftBreak", "HardBreak"})
_HEADING_LINE_END = b" \t\r\n#=-"
"""What may follow a heading's text: spaces, closing `#`s, a setext underline."""
_REGION_TAGS = frozenset({"CodeBlock", "Table"})

# An escape, not the characters: mypyc refuses lone surrogates in string literals.
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")

_ByteBlock = tuple[BlockKind, int, int]
"""A top-level block's kind and byte range."""


def parse_blocks(text: str) -> ParsedMarkdown:
    """Blocks, regions and front matter of `text` as pulldown-cmark sees them."""
    front_matter, body_start = _front_matter(text)
    # Lines before the body, added to every line number of the body's parse.
    skipped = front_matter[0] if front_matter is not None else 0
    text = _encodable(text[body_start:])
    line_starts = utf8_line_starts(text)
    blocks, headings, regions = _read_events(text, line_starts, skipped)
    return ParsedMarkdown(
        _line_blocks(blocks, headings, line_starts, skipped), regions, front_matter
    )


def _read_events(
    text: str, line_starts: LineTable, skipped: int
) -> tuple[list[_ByteBlock], dict[int, tuple[int, str, str | None]], list[LineRegion]]:
    """The top-level blocks of the body `text` as kinds and byte ranges, the depth, text
    and anchor of the heading blocks by index, and the regions on their lines.

    Blocks get their lines after the parse, in one vectorized search (`_line_blocks`):
    two bisections of the line table per block cost 3% of chunking.
    """
    blocks: list[_ByteBlock] = []
    headings: dict[int, tuple[int, str, str | None]] = {}
    regions: list[LineRegion] = []
    depth = 0
    top_list = False  # whether the open depth-0 container is a list (its items are blocks)
    heading: tuple[int, int] | None = None  # index and depth of the heading being read
    heading_parts: list[tuple[str, int, int]] = []  # its text, each part's byte range
    encoded: list[bytes] = []  # the body as UTF-8, once a heading needs its source
    events: Iterable[tuple[Any, Any]] = pyromark.events_with_range(
        text, options=PARSER_OPTIONS, broken_link_callback=_undefined_reference
    )
    for event, where in events:
        try:
            value = event.get("Start")
        except AttributeError:  # the few bare-string events: Rule, SoftBreak, HardBreak
            _bare_event(event, where, depth, heading is not None, heading_parts, blocks)
            continue
        # Most events are inline text: two dict lookups settle them.
        if value is not None:
            if depth > 1:
                # Inside a block: only code blocks and tables (regions) matter.
                if value.__class__ is dict and not _REGION_TAGS.isdisjoint(value):
                    _add_region(value, _lines_of(line_starts, skipped, where), regions)
                depth += 1
                continue
            name = value if value.__class__ is str else next(iter(value))
            if depth == 0 or (depth == 1 and top_list and name == "Item"):
                if depth == 0:
                    top_list = name == "List"
                if name != "List":
                    if name == "Heading":
                        level = int(value["Heading"]["level"][1:])
                        heading, heading_parts = (len(blocks), level), []
                    blocks.append(
                        (_BLOCK_KINDS.get(name, BlockKind.OTHER), where["start"], where["end"])
                    )
            if name in _REGION_TAGS:
                _add_region(value, _lines_of(line_starts, skipped, where), regions)
            depth += 1
        elif "End" in event:
            depth -= 1
            if heading is not None and depth == 0:
                headings[heading[0]] = _heading(heading[1], heading_parts, text, encoded, where)
                heading = None
        elif heading is not None:
            _add_heading_text(event, where, heading_parts)
    return blocks, headings, regions


def _lines_of(line_starts: LineTable, skipped: int, where: Any) -> tuple[int, int]:
    """The first line and the stop line of the byte range `where`."""
    first = bisect.bisect_right(line_starts, where["start"]) - 1
    # The block's last line; an empty range stays on its first.
    last = bisect.bisect_right(line_starts, where["end"] - 1, first) - 1
    return skipped + first, skipped + (last if last > first else first) + 1


def _bare_event(
    event: str,
    where: Any,
    depth: int,
    in_heading: bool,
    heading_parts: list[tuple[str, int, int]],
    blocks: list[_ByteBlock],
) -> None:
    """A line break inside a heading is a space of its text; a rule at the top is a block."""
    if in_heading and event in _LINE_BREAKS:
        heading_parts.append((" ", where["start"], where["end"]))
    elif event == "Rule" and depth == 0:
        blocks.append((BlockKind.RULE, where["start"], where["end"]))


def _add_heading_text(event: Any, where: Any, heading_parts: list[tuple[str, int, int]]) -> None:
    """The text of an inline event inside a heading, if it has any."""
    text_part = event.get("Text")
    if text_part is not None:  # nearly every event inside a heading
        heading_parts.append((text_part, where["start"], where["end"]))
    else:
        for key in _HEADING_TEXT.intersection(event):
            heading_parts.append((event[key], where["start"], where["end"]))


def _heading(
    level: int, parts: list[tuple[str, int, int]], text: str, encoded: list[bytes], where: Any
) -> tuple[int, str, str | None]:
    """A heading's depth, text and anchor from its text parts, once its end is read
    (`encoded`: the body as UTF-8, encoded by the first heading that needs it)."""
    anchor = None
    if parts and parts[-1][0].endswith("}"):
        if not encoded:
            encoded.append(text.encode("utf-8"))
        parts, anchor = _without_attributes(parts, encoded[0], where["end"])
    joined = "".join(part for part, _, _ in parts)
    return level, " ".join(joined.split()), anchor


def _line_blocks(
    blocks: list[_ByteBlock],
    headings: dict[int, tuple[int, str, str | None]],
    line_starts: LineTable,
    skipped: int,
) -> list[LineBlock]:
    """The blocks with their lines: `_lines_of` for all at once."""
    if not blocks:
        return []
    kinds = [kind for kind, _, _ in blocks]
    starts = [start for _, start, _ in blocks]
    ends = [end for _, _, end in blocks]
    if isinstance(line_starts, list):
        # A short text's table (`utf8_line_starts`): few blocks, bisected one by one.
        firsts = [bisect.bisect_right(line_starts, start) - 1 for start in starts]
        # The block's last line; an empty range stays on its first.
        stops = [
            max(bisect.bisect_right(line_starts, end - 1) - 1, first) + skipped + 1
            for end, first in zip(ends, firsts, strict=True)
        ]
        firsts = [first + skipped for first in firsts]
    else:
        firsts, stops = _searched_lines(line_starts, starts, ends, skipped)
    line_blocks = [LineBlock(*block) for block in zip(kinds, firsts, stops, strict=True)]
    for index, (level, text, anchor) in headings.items():
        line_blocks[index] = LineBlock(
            BlockKind.HEADING, firsts[index], stops[index], level, text, anchor
        )
    return line_blocks


def _searched_lines(
    line_starts: memoryview, starts: list[int], ends: list[int], skipped: int
) -> tuple[list[int], list[int]]:
    """First lines and stop lines of the blocks, in one vectorized search of a long text's
    table: two bisections per block cost 3% of chunking."""
    import numpy as np  # noqa: PLC0415  # loaded with the table already

    table = np.asarray(line_starts)
    first = np.searchsorted(table, starts, "right") - 1
    # The block's last line; an empty range stays on its first.
    last = np.searchsorted(table, np.asarray(ends) - 1, "right") - 1
    np.maximum(last, first, out=last)
    firsts: list[int] = (first + skipped).tolist()
    stops: list[int] = (last + (skipped + 1)).tolist()
    return firsts, stops


def _without_attributes(
    parts: list[tuple[str, int, int]], source: bytes, heading_end: int
) -> tuple[list[tuple[str, int, int]], str | None]:
    """A heading's text parts without a trailing attribute block, and the id it sets.

    The block is found in the heading's source, not its parsed text: emphasis
    parsing reads `{/*id*/}` as `{/` + emphasised `id` + `/}`.  It must end the
    heading's text (`[a {#b}](url)` is link text, not an id).
    """
    if source[parts[-1][2] : heading_end].strip(_HEADING_LINE_END):
        return parts, None
    content_start = min(start for _, start, _ in parts)
    content = source[content_start : parts[-1][2]].decode("utf-8", "replace")
    attributes = heading_id(content)
    if attributes is None:
        return parts, None
    cut = content_start + len(content[: attributes[0]].encode("utf-8"))
    kept: list[tuple[str, int, int]] = []
    for part, start, end in parts:
        if start >= cut:
            continue
        encoded = part.encode("utf-8")
        # A text event is its source unless it resolved an escape or entity.
        clipped = end > cut and len(encoded) == end - start
        kept.append(
            (encoded[: cut - start].decode("utf-8", "replace") if clipped else part, start, end)
        )
    return kept, attributes[1]


def _add_region(tag: Any, lines: tuple[int, int], regions: list[LineRegion]) -> None:
    """Record a table or code block opened by `tag` on `lines`."""
    first, stop = lines
    if "Table" in tag:
        regions.append(LineRegion(RegionKind.TABLE, first, stop, 2))
    else:
        fenced = tag["CodeBlock"] != "Indented"
        regions.append(LineRegion(RegionKind.CODE, first, stop, 1 if fenced else 0))


def _undefined_reference(link: Any) -> tuple[str, str] | None:
    """Read `[text][id]` as a link even when `id` is not defined.

    Real pages lose their definitions (includes, templates), and a heading
    titled `[Ref link][ref]` is a heading titled "Ref link".  Shortcut
    references (`[Preview] feature`) stay text: brackets alone are often literal.
    """
    return ("", "") if link["link_type"] == "Reference" else None


def _front_matter(text: str) -> tuple[tuple[int, str] | None, int]:
    """YAML front matter at the very start, as markdown-it's front matter plugin reads it.

    A first line of three or more `-`, closed by a line of at least as many `-`
    or by YAML's `...`; unclosed, it is not front matter.  Returns the line
    after the closing line with the YAML text, and where the body starts.
    """
    opening = _FRONT_MATTER_OPEN.match(text)
    if opening is None:
        return None, 0
    markers = len(opening.group(1))
    line, line_start = 1, opening.end()
    while line_start < len(text):
        closing = _FRONT_MATTER_CLOSE.match(text, line_start)
        if closing is not None and (closing.group(1) is None or len(closing.group(1)) >= markers):
            # CommonMark reads NUL as U+FFFD, and YAML refuses NUL outright.
            yaml_text = text[opening.end() : line_start].replace("\x00", "\ufffd")
            return (line + 1, yaml_text), closing.end()
        line_break = _LINE_BREAK.search(text, line_start)
        if line_break is None:
            break
        line, line_start = line + 1, line_break.end()
    return None, 0


def _encodable(text: str) -> str:
    """`text` with lone surrogates as U+FFFD (Rust strings cannot hold them).

    Both are one code point and three UTF-8 bytes (surrogatepass), so offsets hold.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)
    return text
