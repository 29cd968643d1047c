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
import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chunking.model import BlockKind, RegionKind
from chunking.parse.markdown.blocks import NUMPY_LINES_CHARACTERS
from chunking.parse.markdown.plain_markup import Markup, MarkupScan

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from chunking.model import Outline, Region

_DROPPED = frozenset({"comment", "include", "tag", "bold", "underscores"})
_LINKED = frozenset({"image", "link", "reference"})
"""Markup whose text (alt text, link text) is prose of its own, with markup of its own."""
_KEEP, _DROP, _REPLACE = 0, 1, 2
"""What a piece of the source is in the embedded text: itself, nothing, or other text."""
_MARKUP_START = re.compile(r"[`\\<\[:!*_]")
"""The first character of every markup `MarkupScan` finds and of a docfx `:::` line."""


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
    text = "".join(pieces.texts())
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

    @property
    def unchanged(self) -> bool:
        """Whether the text is the source: nothing left out or replaced."""
        return _DROP not in self.kinds and _REPLACE not in self.kinds

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

    def plain_offsets(
        self, starts: Sequence[int], ends: Sequence[int]
    ) -> tuple[list[int], list[int]]:
        """`plain_start` of each of `starts` and `plain_end` of each of `ends`, in one
        vectorized search: an outline has tens of thousands of offsets to map."""
        if len(self.source) < NUMPY_LINES_CHARACTERS:
            # A short text's few offsets: numpy's fixed cost (and loading it) outweighs them.
            return list(map(self.plain_start, starts)), list(map(self.plain_end, ends))
        import numpy as np  # noqa: PLC0415  # a long text's offsets only

        pieces = np.asarray(self.source_starts)
        plain = np.asarray(self.plain_starts)
        kept = np.asarray(self.kinds) == _KEEP
        stops = np.append(plain[1:], len(self.text))
        at = np.asarray(starts, dtype=np.int64)
        index = np.maximum(np.searchsorted(pieces, at, "right") - 1, 0)
        mapped_starts = np.where(kept[index], plain[index] + at - pieces[index], plain[index])
        at = np.asarray(ends, dtype=np.int64)
        index = np.searchsorted(pieces, at, "left") - 1
        before = index < 0
        index = np.maximum(index, 0)
        within = np.minimum(plain[index] + at - pieces[index], stops[index])
        mapped_ends = np.where(before, 0, np.where(kept[index], within, stops[index]))
        return mapped_starts.tolist(), mapped_ends.tolist()

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
    texts = pieces.texts()
    return PlainText(
        text="".join(texts),
        plain_starts=tuple(itertools.accumulate(map(len, texts[:-1]), initial=0)),
        source_starts=tuple(pieces.source_starts),
        kinds=tuple(pieces.kinds),
        source_end=len(source),
        source=source,
    )


class _Pieces:
    """Builds a plain text from runs of the source, each kept, left out or replaced.

    Only where each run begins is recorded as it goes (a run of one kind goes on
    until another begins); the text is joined once at the end.
    """

    __slots__ = ("at", "kinds", "replacements", "source", "source_starts")

    def __init__(self, source: str) -> None:
        self.source = source
        self.source_starts: list[int] = []
        self.kinds: list[int] = []
        self.replacements: dict[int, str] = {}
        """The text of each replaced piece, by index."""
        self.at = -1
        """Where the last piece ends in the source (-1: no piece yet)."""

    def keep(self, low: int, high: int) -> None:
        if low < high:
            if self.at != low or not self.kinds or self.kinds[-1] != _KEEP:
                self.source_starts.append(low)
                self.kinds.append(_KEEP)
            self.at = high

    def drop(self, low: int, high: int) -> None:
        if low < high:
            if self.at != low or not self.kinds or self.kinds[-1] != _DROP:
                self.source_starts.append(low)
                self.kinds.append(_DROP)
            self.at = high

    def replace(self, low: int, high: int, text: str) -> None:
        self.replacements[len(self.kinds)] = text
        self.source_starts.append(low)
        self.kinds.append(_REPLACE)
        self.at = high

    def texts(self) -> list[str]:
        """The text of each piece."""
        source, starts, kinds = self.source, self.source_starts, self.kinds
        if not starts:
            return []
        stops = [*starts[1:], self.at]
        return [
            source[low:high] if kind == _KEEP else self.replacements.get(index, "")
            for index, (low, high, kind) in enumerate(zip(starts, stops, kinds, strict=True))
        ]

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
        if _MARKUP_START.search(source, start, end) is None:
            # No markup can begin here (most link texts): the scan would find none.
            self.keep(start, end)
            return
        matches = MarkupScan(source, start, end).matches()
        found: Iterable[Markup | _Fence] = matches
        if source.find(":::", start, end) >= 0:
            found = _with_fences(source, start, end, list(matches))
        position = start
        starts, kinds = self.source_starts, self.kinds
        for match in found:
            kind = match.lastgroup
            low, high = match.span()
            if kind == "code":
                continue  # inline code stays as it is: the kept run goes on
            # keep(position, low), then for markup dropped whole drop(low, high), inlined:
            # this loop runs once per link, tag and bold mark of the document.
            if position < low:
                if self.at != position or kinds[-1] != _KEEP:
                    starts.append(position)
                    kinds.append(_KEEP)
                self.at = low
            if kind is None or kind in _DROPPED:  # None: a directive line, markup and all
                if self.at != low or not kinds or kinds[-1] != _DROP:
                    starts.append(low)
                    kinds.append(_DROP)
                self.at = high
            else:
                self._match(match)  # type: ignore[arg-type]  # a fence's kind is None
            position = high
        self.keep(position, end)

    def _match(self, match: Markup) -> None:
        """The plain text of a match that is neither code nor dropped whole."""
        kind = match.lastgroup
        low, high = match.span()
        if kind == "escape":
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


@dataclass(frozen=True, slots=True)
class _Fence:
    """A docfx directive line among the markup matches of prose, the markup on it inside."""

    low: int
    high: int
    lastgroup: None = None

    def span(self) -> tuple[int, int]:
        return self.low, self.high


def _with_fences(source: str, start: int, end: int, found: list[Markup]) -> list[Markup | _Fence]:
    """`found` with each docfx `:::` directive line as a `_Fence` in its place.

    A line is a directive as the embedded text shows it: its `:::` not inside other
    markup (a comment, inline code), and not an image (`:::image`, its alt text).
    """
    starts = [match.start() for match in found]
    fences: list[list[int]] = []
    for low, colons, high in _directive_lines(source, start, end):
        # The markup at or around the colons: an image there (the only markup that
        # begins with `:`) or a comment or inline code holding them.
        index = bisect.bisect_right(starts, colons) - 1
        if index >= 0 and found[index].end() > colons:
            continue
        fences.append([low, high])
    if not fences:
        return list(found)
    merged: list[Markup | _Fence] = []
    fence = 0
    for match in found:
        low, high = match.span()
        while fence < len(fences) and fences[fence][1] <= low:
            merged.append(_Fence(fences[fence][0], fences[fence][1]))
            fence += 1
        if fence < len(fences) and fences[fence][0] <= low:
            # On a directive line: gone with it (to its end if it runs past the line).
            fences[fence][1] = max(high, fences[fence][1])
            continue
        merged.append(match)
    merged += [_Fence(low, high) for low, high in fences[fence:]]
    return merged


_DIRECTIVE_INDENT = frozenset(" \t>")
_LINE_BREAK = re.compile("[\r\n]")
"""Where a line ends: the first of CR and LF (`str.find` of each read on to the other's)."""


def _directive_lines(source: str, start: int, end: int) -> Iterator[tuple[int, int, int]]:
    """Each docfx `:::` line in `[start, end)`: where it begins, its `:::` and where it
    ends (before its line break), as `(?<![^\\r\\n])[ \\t>]*:::[^\\r\\n]*` finds them.

    Lines other than images (zone, row, column, moniker) are fences, not text.  Lines
    end at CR too: `^` and `$` see only LF, so in a file of CR line endings a directive
    stayed, or took the rest of the text with it.  Found from each `:::` (a search at C
    speed) back over the indent before it: the regex, its lookbehind first, was tried
    at every position and cost nine times as much.
    """
    at = source.find(":::", start, end)
    while at >= 0:
        low = at
        while low > start and source[low - 1] in _DIRECTIVE_INDENT:
            low -= 1
        line_break = _LINE_BREAK.search(source, at, end)
        high = line_break.start() if line_break is not None else end
        if low == 0 or source[low - 1] in "\r\n":
            yield low, at, high
        # Not a directive: any later `:::` of the line has the same text before it.
        at = source.find(":::", high, end)
