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
from typing import TYPE_CHECKING

from chunking.outline import BlockKind, RegionKind

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

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
    if hidden:
        shown = list(_shown(start, end, hidden))
        text = "".join(plain_markdown(source, low, high, code) for low, high in shown)
        # A span that ends on markup (`</Note>`) would end on the blank lines before it.
        return text.rstrip() if not shown or shown[-1][1] < end else text
    pieces: list[str] = []
    position = start
    # Regions are sorted and disjoint, so their ends ascend: skip those before the span.
    first = bisect.bisect_right(code, start, key=lambda region: region.end)
    for region in code[first:]:
        if region.start >= end:
            break
        if region.start > position:
            pieces.append(_plain_prose(source[position : region.start]))
        stop = min(region.end, end)
        pieces.append(source[max(region.start, position) : stop])
        position = stop
    if position < end:
        pieces.append(_plain_prose(source[position:end]))
    return "".join(pieces)


def _shown(start: int, end: int, hidden: Sequence[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The parts of [start, end) outside the sorted, disjoint `hidden` spans."""
    position = start
    first = bisect.bisect_right(hidden, start, key=lambda span: span[1])
    for low, high in hidden[first:]:
        if low >= end:
            break
        if low > position:
            yield position, low
        position = max(position, high)
    if position < end:
        yield position, end


def _plain_prose(text: str) -> str:
    if ":::" in text:
        return _DIRECTIVE.sub("", _MARKUP.sub(_replacement, text))
    return _MARKUP.sub(_replacement, text)


def _replacement(match: re.Match[str]) -> str:
    kind = match.lastgroup
    if kind == "code":
        return match.group(0)
    if kind in _DROPPED:
        return ""
    if kind == "escape":
        return match.group("escape")
    if kind == "alert":
        return match.group("alert") + ":"
    if kind == "alt":
        return match.group("alt")
    # A link's text may hold markup of its own (`[**bold**](url)`).
    return _plain_prose(match.group(kind or "link"))
