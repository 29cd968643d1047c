"""What gets embedded: markdown markup that carries no meaning taken out of a chunk's text.

A chunk's `content` stays the exact source span; only the embedded `text` changes.
Link targets, image paths, HTML tags and comments, docfx include lines and directive
fences are noise to an embedding model: they spend its window on paths and URLs, and
make chunks of one site look alike. Code blocks and inline code are kept verbatim
(a command or a URL in code is content).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chunking.outline import Region

_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"<!--.*?-->", re.DOTALL), ""),
    # docfx: [!INCLUDE [name](path)] pulls in another file: nothing of it is here.
    (re.compile(r"\[!INCLUDE\s*\[[^\]]*\]\([^)]*\)\]"), ""),
    # docfx alerts: > [!NOTE] -> > Note:
    (re.compile(r"\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]"), r"\1:"),
    # docfx images keep their alt text; other ::: directive lines are fences, not text.
    (re.compile(r':::image\b[^\n]*?alt-text="([^"]*)"[^\n]*?:::'), r"\1"),
    (re.compile(r"^[ \t>]*:::[^\n]*$", re.MULTILINE), ""),
    (re.compile(r"!\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)"), r"\1"),
    (re.compile(r"\[([^\]]+)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)"), r"\1"),
    (re.compile(r"\[([^\]]+)\]\[[^\]]*\]"), r"\1"),
    (re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>\n]*)?/?>"), ""),
    (re.compile(r"\*\*|__"), ""),
)


def plain_markdown(source: str, start: int, end: int, code: tuple[Region, ...]) -> str:
    """`source[start:end]` with markup noise removed outside code blocks and inline code."""
    pieces: list[str] = []
    position = start
    for region in code:
        if region.end <= position or region.start >= end:
            continue
        if region.start > position:
            pieces.append(_plain_prose(source[position : region.start]))
        stop = min(region.end, end)
        pieces.append(source[max(region.start, position) : stop])
        position = stop
    if position < end:
        pieces.append(_plain_prose(source[position:end]))
    return "".join(pieces)


def _plain_prose(text: str) -> str:
    parts: list[str] = []
    last = 0
    for match in _INLINE_CODE.finditer(text):
        parts.append(_apply_rules(text[last : match.start()]))
        parts.append(match.group(0))
        last = match.end()
    parts.append(_apply_rules(text[last:]))
    return "".join(parts)


def _apply_rules(text: str) -> str:
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text
