"""What a markdown parser reports to the outline builder, in lines, whichever parser it is.

Two parsers stand behind `outline.py`: pulldown-cmark through
pyromark (Rust, the default: about ten times faster than markdown-it-py's block
parse) and markdown-it-py (the reference, and the fallback should the Rust
parser ever fail on a document).  Each turns its own events or tokens into these
records; nothing parser-specific gets further.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from chunking.model import BlockKind, RegionKind

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class LineBlock(NamedTuple):
    """A top-level block (or an item of a top-level list) as a range of lines.

    Named tuples, not dataclasses: a parser makes one per block, and a tuple is
    made in a third of the time.
    """

    kind: BlockKind
    first: int
    """Index of the block's first line."""
    stop: int
    """Index of the line after the block's last line."""
    depth: int = 0
    """Heading depth 1..6; 0 for any other block."""
    text: str = ""
    """A heading's plain text: inline markup removed, whitespace collapsed, without
    a trailing attribute block (`{#id}`, `{/*id*/}`)."""
    anchor: str | None = None
    """The id a heading's attribute block sets, if any."""


class LineRegion(NamedTuple):
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


_LF, _CR = ord("\n"), ord("\r")

LineTable = list[int] | memoryview
"""Where lines start: a list for a short text, numpy's buffer (no int per line) for a long one."""


NUMPY_LINES_CHARACTERS = 4_096
"""Texts this long and longer find their lines with numpy, loaded then; shorter ones
in Python, which is faster below it (numpy's fixed cost per call: a 1 KB page in a
third of numpy's time, a 16 KB one in 2.3 times it, on the corpus) and keeps a short
document from loading numpy at all."""


def line_starts(text: str) -> LineTable:
    """Code point offsets where lines start.

    CommonMark lines end at "\n", "\r\n" or a lone "\r"; both parsers number
    lines that way, so their line numbers index this table.
    """
    if len(text) < NUMPY_LINES_CHARACTERS:
        if "\r" in text:
            # As wide as they were: CR LF ends a line at its LF, a lone CR at itself.
            text = text.replace("\r\n", " \n").replace("\r", "\n")
        return _split_line_starts(text.split("\n"))
    import numpy as np  # noqa: PLC0415  # a long text's table only

    if text.isascii():
        return _line_starts(np.frombuffer(text.encode("ascii"), dtype=np.uint8), "\r" in text)
    # One array element per code point (lone surrogates included).
    return _line_starts(
        np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32), "\r" in text
    )


def utf8_line_starts(text: str) -> LineTable:
    """UTF-8 byte offsets where lines start, for parsers that report byte ranges."""
    data = text.encode("utf-8")
    if len(text) < NUMPY_LINES_CHARACTERS:
        if b"\r" in data:
            data = data.replace(b"\r\n", b" \n").replace(b"\r", b"\n")
        return _split_line_starts(data.split(b"\n"))
    import numpy as np  # noqa: PLC0415  # a long text's table only

    return _line_starts(np.frombuffer(data, dtype=np.uint8), b"\r" in data)


def _split_line_starts(lines: list[str] | list[bytes]) -> list[int]:
    """Where each of `lines` (split at their one-unit line breaks) starts, at C speed."""
    return [0, *itertools.accumulate(map(_ONE.__add__, map(len, lines[:-1])))]


_ONE = 1


def _line_starts(units: npt.NDArray[np.unsignedinteger[Any]], has_cr: bool) -> memoryview:
    """Where each line starts in `units` (`has_cr`: whether a CR is among them, found by a
    search at C speed where a comparison of every unit and its `any` cost numpy two passes)."""
    import numpy as np  # noqa: PLC0415  # loaded by the caller already

    # Vectorized: a scan per line in Python cost a tenth of the markdown parse.
    line_feeds = units == _LF
    if has_cr:
        carriage_returns = units == _CR
        # A CR ends a line unless an LF follows (then the LF ends it).
        carriage_returns[:-1] &= ~line_feeds[1:]
        line_feeds |= carriage_returns
    ends = line_feeds.nonzero()[0]  # flatnonzero, without its Python wrappers
    starts = np.empty(len(ends) + 1, dtype=np.int64)
    starts[0] = 0
    np.add(ends, 1, out=starts[1:])
    # A memoryview indexes and bisects like a list, without a Python int per line.
    return starts.data


_HEADING_ATTRIBUTES = re.compile(
    # Pandoc, kramdown, MkDocs attr_list, Hugo: `{#id .class key=value}` (kramdown
    # and attr_list also take `{: ...}`); MDX (react.dev, Docusaurus): `{/*id*/}`.
    r"\{(?:"
    r":?[ \t]*(?P<attributes>(?:[#.][^\s{}#.=\"']+|[\w-]+=(?:\"[^\"]*\"|'[^']*'|[^\s{}\"']+))"
    r"(?:[ \t]+(?:[#.][^\s{}#.=\"']+|[\w-]+=(?:\"[^\"]*\"|'[^']*'|[^\s{}\"']+)))*)[ \t]*"
    r"|/\*[ \t]*(?P<mdx>[^\s{}*/]+)[ \t]*\*/"
    r")\}[ \t]*"
)
_ATTRIBUTE_ID = re.compile(r"(?:^|[ \t])#(?P<id>[^\s{}#.=\"']+)")


def heading_id(content: str) -> tuple[int, str | None] | None:
    """Where a heading's text ends before a trailing attribute block, and the id it sets.

    `content` is the heading's inline source (`Usage {/*usage*/}`).  None when it
    ends without one; the id is None for a block of classes only (`{.unlisted}`).
    An attribute block needs a `#id` or `.class` (a lone `{key=value}` stays text).
    """
    # The block holds no `{`: only the last one can open it, which keeps this linear.
    brace = content.rfind("{")
    if brace < 0 or content[brace - 1 : brace] == "\\":
        return None
    found = _HEADING_ATTRIBUTES.fullmatch(content, brace)
    if found is None:
        return None
    start = len(content[:brace].rstrip(" \t"))
    if found.group("mdx") is not None:
        return start, found.group("mdx")
    attributes = found.group("attributes")
    ids = [match.group("id") for match in _ATTRIBUTE_ID.finditer(attributes)]
    if not ids and not any(part.startswith(".") for part in attributes.split()):
        return None
    # Pandoc and kramdown keep the last id when a block names several.
    return start, ids[-1] if ids else None
