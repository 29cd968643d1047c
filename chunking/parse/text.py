"""Plain text as an outline: paragraphs (separated by blank lines) are the blocks."""

from __future__ import annotations

import re

from chunking.model import Block, BlockKind, Outline

_PARAGRAPH = re.compile(r"\S(?:.*?\S)??(?=\s*(?:\r\n?|\n)[ \t]*(?:\r\n?|\n)|\s*\Z)", re.DOTALL)


def parse_text(text: str) -> Outline:
    """Paragraph blocks of a plain text; no headings, no regions."""
    blocks = tuple(
        Block(BlockKind.PARAGRAPH, match.start(), match.end())
        for match in _PARAGRAPH.finditer(text)
    )
    return Outline(source=text, format="text", blocks=blocks)
