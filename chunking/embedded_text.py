"""What gets embedded: markdown markup that carries no meaning taken out of a chunk's text.

A chunk's `content` stays the exact source span; only the embedded `text` changes.
Link targets, image paths, HTML tags and comments, docfx include lines and directive
fences are noise to an embedding model: they spend its window on paths and URLs, and
make chunks of one site look alike. Code blocks and inline code are kept verbatim
(a command or a URL in code is content).
"""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING

from chunking.outline import BlockKind, RegionKind

if TYPE_CHECKING:
    from chunking.outline import Block, Outline, Region

_MARKUP = re.compile(
    r"""
    (?=[`<\[!:*_])                                       # one test per position, then the kinds
    (?:
    (?P<code>(`+)(?:(?!\2).)+?\2)                       # inline code: kept as it is
    | (?P<comment><!--.*?-->)
    | (?P<include>\[!INCLUDE\s*\[[^\]]*\]\([^)]*\)\])      # docfx: pulls in another file
    | \[!(?P<alert>NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]  # docfx alert: > [!NOTE] -> > NOTE:
    | :::image\b[^\n]*?alt-text="(?P<alt>[^"]*)"[^\n]*?:::  # docfx image: its alt text
    | !\[(?P<image>[^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)
    | \[(?P<link>[^\]]+)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)
    | \[(?P<reference>[^\]]+)\]\[[^\]]*\]
    | (?P<tag></?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>\n]*)?/?>)
    | (?P<bold>\*\*|__)
    )
    """,
    re.VERBOSE | re.MULTILINE | re.DOTALL,
)
"""Every kind of markup noise in one pattern, so prose is scanned once."""
_DIRECTIVE = re.compile(r"(?<![^\r\n])[ \t>]*:::[^\r\n]*(?![^\r\n])")
"""docfx `:::` lines other than images (zone, row, column, moniker) are fences, not text.
Lines end at CR too: `^` and `$` see only LF, so in a file of CR line endings a directive
stayed, or took the rest of the text with it."""
_DROPPED = frozenset({"comment", "include", "tag", "bold"})


def code_regions(outline: Outline) -> tuple[Region, ...]:
    """The code blocks of an outline: what `plain_markdown` keeps verbatim."""
    return tuple(region for region in outline.regions if region.kind is RegionKind.CODE)


def marker_blocks(outline: Outline) -> tuple[Block, ...]:
    """The container markers of an outline (a docfx tab group's `---`): `plain_markdown`
    leaves them out."""
    return tuple(block for block in outline.blocks if block.kind is BlockKind.MARKER)


def plain_markdown(
    source: str, start: int, end: int, code: tuple[Region, ...], markers: tuple[Block, ...] = ()
) -> str:
    """`source[start:end]` with markup noise removed outside code blocks and inline code,
    and without `markers`."""
    if not markers:
        return _without_noise(source, start, end, code)
    pieces: list[str] = []
    position = start
    first = bisect.bisect_right(markers, start, key=lambda block: block.end)
    for marker in markers[first:]:
        if marker.start >= end:
            break
        if marker.start > position:
            pieces.append(_without_noise(source, position, marker.start, code))
        position = max(position, min(marker.end, end))
    if position < end:
        pieces.append(_without_noise(source, position, end, code))
    return "".join(pieces)


def _without_noise(source: str, start: int, end: int, code: tuple[Region, ...]) -> str:
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
    if kind == "alert":
        return match.group("alert") + ":"
    if kind == "alt":
        return match.group("alt")
    # A link's text may hold markup of its own (`[**bold**](url)`).
    return _plain_prose(match.group(kind or "link"))
