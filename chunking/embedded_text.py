"""What gets embedded: markdown markup that carries no meaning taken out of a chunk's text.

A chunk's `content` stays the exact source span; only the embedded `text` changes.
Link targets, image paths, HTML tags and comments, docfx include lines, directive
fences and MDX markup (`Outline.hidden`) are noise to an embedding model: they spend
its window on paths and URLs, and make chunks of one site look alike. Code blocks and
inline code are kept verbatim (a command or a URL in code is content). A backslash
escape of the punctuation that would read as markup (`\\#`, `\\|`, `1\\.`, which the
HTML renderer writes for text that only looks like structure) is the character itself,
as CommonMark reads it.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chunking.outline import BlockKind, RegionKind

if TYPE_CHECKING:
    from collections.abc import Sequence

    from chunking.outline import Outline, Region

_MARKUP = re.compile(
    r"""
    `(?P<code>(`*)(?:(?!`\2).)+?`\2)                    # inline code: kept as it is
    | \\(?P<escape>[#>|`~+\-*_=.)<])                     # an escape: the character
    | <(?P<comment>!--.*?-->)
    | \[(?P<include>!INCLUDE\s*\[[^\]]*\]\([^)]*\)\])      # docfx: pulls in another file
    | \[!(?P<alert>NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]  # docfx alert: > [!NOTE] -> > NOTE:
    | :::image\b[^\n]*?alt-text="(?P<alt>[^"]*)"[^\n]*?:::  # docfx image: its alt text
    | !\[(?P<image>[^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)
    | \[(?P<link>[^\]]+)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)
    | \[(?P<reference>[^\]]+)\]\[[^\]]*\]
    | <(?P<tag>/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>\n]*)?/?>)
    | \*(?P<bold>\*) | _(?P<underscores>_)
    """,
    re.VERBOSE | re.MULTILINE | re.DOTALL,
)
"""Every kind of markup noise in one pattern, so prose is scanned once.

Each alternative begins with a literal character outside any group, so the regex
engine scans for the first characters (`_get_charset_prefix` in `re._compiler`)
instead of trying the pattern at every position: a quarter less time than one
lookahead for them at each position did, for the same matches (inline code's
backtick run is its first backtick and the rest, `\\2`)."""
_DIRECTIVE = re.compile(r"(?<![^\r\n])[ \t>]*:::[^\r\n]*(?![^\r\n])")
"""docfx `:::` lines other than images (zone, row, column, moniker) are fences, not text.
Lines end at CR too: `^` and `$` see only LF, so in a file of CR line endings a directive
stayed, or took the rest of the text with it."""
_DROPPED = frozenset({"comment", "include", "tag", "bold", "underscores"})
_LINKED = frozenset({"image", "link", "reference"})
"""Markup whose text (alt text, link text) is prose of its own, with markup of its own."""
_KEEP, _DROP, _REPLACE = 0, 1, 2
"""What a piece of the source is in the embedded text: itself, nothing, or other text."""


def code_regions(outline: Outline) -> tuple[Region, ...]:
    """The code blocks of an outline: what `plain_markdown` keeps verbatim."""
    return tuple(region for region in outline.regions if region.kind is RegionKind.CODE)


def left_out(outline: Outline) -> tuple[tuple[int, int], ...]:
    """The spans `plain_markdown` leaves out whole, sorted and disjoint: MDX markup
    (`Outline.hidden`) and container markers (a docfx tab group's `---`, `::: zone-end`)."""
    markers = [(b.start, b.end) for b in outline.blocks if b.kind is BlockKind.MARKER]
    if not markers:
        return outline.hidden
    merged: list[tuple[int, int]] = []
    for low, high in sorted((*outline.hidden, *markers)):
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
        else:
            merged.append((low, high))
    return tuple(merged)


def plain_markdown(
    source: str,
    start: int,
    end: int,
    code: tuple[Region, ...],
    hidden: Sequence[tuple[int, int]] = (),
) -> str:
    """`source[start:end]` with markup noise removed outside code blocks and inline code.

    `hidden` spans (`left_out`: MDX tags and statements, container markers; never inside
    code) are left out whole.
    """
    pieces = _Pieces(source)
    pieces.add(start, end, code, hidden)
    text = "".join(pieces.parts)
    if not hidden:
        return text
    # A span that ends on markup (`</Note>`) would end on the blank lines before it.
    last = bisect.bisect_left(hidden, end, key=lambda span: span[0]) - 1
    ends_hidden = last >= 0 and hidden[last][1] >= end > hidden[last][0]
    return text.rstrip() if ends_hidden or not text else text


@dataclass(frozen=True, slots=True)
class PlainText:
    """A source's embedded text, and where each of its pieces comes from.

    The pieces tile the source in order: each is a run of the source kept as it is, left
    out (no text), or replaced (`\\#` by `#`, `]` of a docfx alert by `:`).  So a span of
    the plain text maps back to the source span that shows it, and a source offset to
    the plain offset where it lands.
    """

    text: str
    plain_starts: tuple[int, ...]
    """Offset in `text` where each piece begins."""
    source_starts: tuple[int, ...]
    """Offset in the source where each piece begins; the last piece ends at `source_end`."""
    kinds: tuple[int, ...]
    source_end: int
    source: str

    def plain_start(self, offset: int) -> int:
        """Where a span beginning at source `offset` begins in the plain text."""
        index = bisect.bisect_right(self.source_starts, offset) - 1
        if index < 0:
            return 0
        if self.kinds[index] == _KEEP:
            return self.plain_starts[index] + offset - self.source_starts[index]
        return self.plain_starts[index]

    def plain_end(self, offset: int) -> int:
        """Where a span ending at source `offset` ends in the plain text."""
        index = bisect.bisect_left(self.source_starts, offset) - 1
        if index < 0:
            return 0
        if self.kinds[index] == _KEEP:
            return min(
                self.plain_starts[index] + offset - self.source_starts[index],
                self._plain_stop(index),
            )
        return self._plain_stop(index)

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """The source span that shows `text[start:end]`.

        Markup that leaves no text and touches the span goes with it as far as the
        line it is on (the `**` of a bold first word, the `](url)` of a link that ends
        it), not the markup lines around it (a page marker, an MDX tag on its own line).
        """
        index = bisect.bisect_right(self.plain_starts, start) - 1
        # The piece holding the text's first character: the last of those starting there.
        low = self._source_at(index, start, forward=False)
        if start == self.plain_starts[index]:
            while index > 0 and self.kinds[index - 1] == _DROP:
                index -= 1
            low = self._line_bounded(self.source_starts[index], low, backward=True)
        index = bisect.bisect_left(self.plain_starts, end) - 1
        high = self._source_at(max(index, 0), end, forward=True) if end > start else low
        if end > start and end == self._plain_stop(index):
            last = index
            while last + 1 < len(self.kinds) and self.kinds[last + 1] == _DROP:
                last += 1
            high = self._line_bounded(high, self._source_stop(last), backward=False)
        return low, max(high, low)

    def _plain_stop(self, index: int) -> int:
        return (
            self.plain_starts[index + 1] if index + 1 < len(self.plain_starts) else len(self.text)
        )

    def _source_stop(self, index: int) -> int:
        return (
            self.source_starts[index + 1]
            if index + 1 < len(self.source_starts)
            else self.source_end
        )

    def _source_at(self, index: int, offset: int, *, forward: bool) -> int:
        """The source offset of plain `offset` in piece `index` (a replaced piece is whole)."""
        if self.kinds[index] == _KEEP:
            return self.source_starts[index] + offset - self.plain_starts[index]
        return self._source_stop(index) if forward else self.source_starts[index]

    def _line_bounded(self, low: int, high: int, *, backward: bool) -> int:
        """`low` (or `high`, going backward) moved to the markup's line break nearest the text."""
        source = self.source
        if backward:
            cut = max(source.rfind("\n", low, high), source.rfind("\r", low, high))
            return high if cut < 0 and low == high else (cut + 1 if cut >= 0 else low)
        ends = [
            at for at in (source.find("\n", low, high), source.find("\r", low, high)) if at >= 0
        ]
        return min(ends) if ends else high


def plain_text(
    source: str,
    start: int,
    end: int,
    code: tuple[Region, ...],
    hidden: Sequence[tuple[int, int]] = (),
) -> PlainText:
    """`source` with markup noise left out of `[start, end)`, mapped piece by piece."""
    pieces = _Pieces(source)
    pieces.keep(0, start)
    pieces.add(start, end, code, hidden)
    pieces.keep(end, len(source))
    return PlainText(
        text="".join(pieces.parts),
        plain_starts=tuple(pieces.plain_starts),
        source_starts=tuple(pieces.source_starts),
        kinds=tuple(pieces.kinds),
        source_end=len(source),
        source=source,
    )


class _Pieces:
    """Builds a plain text from runs of the source, each kept, left out or replaced."""

    __slots__ = ("at", "kinds", "length", "parts", "plain_starts", "source", "source_starts")

    def __init__(self, source: str) -> None:
        self.source = source
        self.parts: list[str] = []
        self.plain_starts: list[int] = []
        self.source_starts: list[int] = []
        self.kinds: list[int] = []
        self.length = 0
        """Length of the plain text so far."""
        self.at = -1
        """Where the last piece ends in the source (-1: no piece yet)."""

    def _piece(self, low: int, kind: int) -> None:
        if self.kinds and self.kinds[-1] == kind != _REPLACE and self.at == low:
            return  # the run goes on
        self.plain_starts.append(self.length)
        self.source_starts.append(low)
        self.kinds.append(kind)

    def keep(self, low: int, high: int) -> None:
        if low < high:
            self._piece(low, _KEEP)
            self.parts.append(self.source[low:high])
            self.length += high - low
            self.at = high

    def drop(self, low: int, high: int) -> None:
        if low < high:
            self._piece(low, _DROP)
            self.at = high

    def replace(self, low: int, high: int, text: str) -> None:
        self._piece(low, _REPLACE)
        self.parts.append(text)
        self.length += len(text)
        self.at = high

    def add(
        self, start: int, end: int, code: tuple[Region, ...], hidden: Sequence[tuple[int, int]]
    ) -> None:
        """`[start, end)` without the hidden spans, code verbatim, prose plain."""
        position = start
        first = bisect.bisect_right(hidden, start, key=lambda span: span[1])
        for low, high in hidden[first:]:
            if low >= end:
                break
            self._shown(position, max(position, low), code)
            self.drop(max(position, low), min(high, end))
            position = max(position, min(high, end))
        self._shown(position, end, code)

    def _shown(self, start: int, end: int, code: tuple[Region, ...]) -> None:
        position = start
        # Regions are sorted and disjoint, so their ends ascend: skip those before the span.
        first = bisect.bisect_right(code, start, key=lambda region: region.end)
        for region in code[first:]:
            if region.start >= end:
                break
            self.prose(position, region.start)
            stop = min(region.end, end)
            self.keep(max(region.start, position), stop)
            position = max(position, stop)
        self.prose(position, end)

    def prose(self, start: int, end: int) -> None:
        """Prose: markup noise out, then docfx `:::` directive lines out."""
        if start >= end:
            return
        source = self.source
        found: list[_Found] = [
            (match.start(), match.end(), match) for match in _MARKUP.finditer(source, start, end)
        ]
        if source.find(":::", start, end) >= 0:
            found = _with_fences(source, start, end, found)
        position = start
        for low, high, match in found:
            if match is None:  # a directive line, with any markup on it
                self.keep(position, low)
                self.drop(low, high)
            else:
                self._match(position, match)
            position = max(position, high)
        self.keep(position, end)

    def _match(self, position: int, match: re.Match[str]) -> None:
        """The text before `match` from `position`, then the match's own plain text."""
        kind = match.lastgroup
        low, high = match.span()
        if kind == "code":
            self.keep(position, high)  # inline code stays as it is
            return
        self.keep(position, low)
        if kind in _DROPPED:
            self.drop(low, high)
        elif kind == "escape":
            self.drop(low, low + 1)
            self.keep(low + 1, high)
        elif kind == "alert":
            self.drop(low, low + 2)
            self.keep(low + 2, high - 1)
            self.replace(high - 1, high, ":")
        else:
            group = kind if kind in _LINKED or kind == "alt" else "link"
            inner_low, inner_high = match.span(group)
            self.drop(low, inner_low)
            if group == "alt":
                self.keep(inner_low, inner_high)
            else:
                self.prose(inner_low, inner_high)
            self.drop(inner_high, high)


_Found = tuple[int, int, "re.Match[str] | None"]
"""A span of prose that is markup: a match of `_MARKUP`, or a directive line (None)."""


def _with_fences(source: str, start: int, end: int, found: list[_Found]) -> list[_Found]:
    """`found` with each docfx `:::` directive line as a span, the markup on it inside.

    A line is a directive as the embedded text shows it: its `:::` not inside other
    markup (a comment, inline code), and not an image (`:::image`, its alt text).
    """
    starts = [low for low, _, _ in found]
    fences: list[list[int]] = []
    for directive in _DIRECTIVE.finditer(source, start, end):
        colons = source.index(":::", directive.start())
        # The markup at or around the colons: an image there (the only markup that
        # begins with `:`) or a comment or inline code holding them.
        index = bisect.bisect_right(starts, colons) - 1
        if index >= 0 and found[index][1] > colons:
            continue
        fences.append([directive.start(), directive.end()])
    if not fences:
        return found
    merged: list[_Found] = []
    fence = 0
    for low, high, match in found:
        while fence < len(fences) and fences[fence][1] <= low:
            merged.append((fences[fence][0], fences[fence][1], None))
            fence += 1
        if fence < len(fences) and fences[fence][0] <= low:
            # On a directive line: gone with it (to its end if it runs past the line).
            fences[fence][1] = max(high, fences[fence][1])
            continue
        merged.append((low, high, match))
    merged += [(low, high, None) for low, high in fences[fence:]]
    return merged
