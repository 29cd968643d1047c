"""Where an answer copied as a reader sees the page is in a document's source text.

Someone writing questions copies the answer from what they read: a browser shows an
HTML page without our rendering's markdown markers (`# `, `- `, `1. `, table pipes,
code fences) and with whitespace as laid out, and a rendered markdown page shows no
`**`, backticks or link targets. Both sides are brought to one form: block markers at
line starts, table pipes and separator rows, and fence lines become spaces (so offsets
do not move), then evaluation.quotes drops inline markup and folds whitespace. The
match maps back to a span of the source, from its first to its last matched character.
"""

from __future__ import annotations

import re

from evaluation.quotes import NormalText, normalize, occurrences

BLOCK_MARKERS = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]+|[-*+][ \t]+|\d{1,9}[.)][ \t]+|>[ \t]?)+", re.MULTILINE
)
"""A heading's `#`s, a list item's bullet or number, a block quote's `>`, at a line start."""
FENCE_LINE = re.compile(r"^[ \t]*(?:```|~~~)[^\n]*$", re.MULTILINE)
TABLE_RULE = re.compile(
    r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$", re.MULTILINE
)
"""A table's separator row, `| --- | :---: |`."""
TABLE_PIPE = "|"


def _blank(text: str) -> str:
    """`text` with markers, fences, table rules and pipes as spaces (same length)."""
    characters = list(text)
    for pattern in (BLOCK_MARKERS, FENCE_LINE, TABLE_RULE):
        for match in pattern.finditer(text):
            characters[match.start() : match.end()] = " " * (match.end() - match.start())
    return "".join(" " if c == TABLE_PIPE else c for c in characters)


def reader_form(source: str) -> NormalText:
    """The source as a reader copies it, each character knowing its source offset."""
    return normalize(_blank(source))


def reader_occurrences(source: str, answer: str) -> list[tuple[int, int]]:
    """Source spans where `answer`, copied as a reader sees it, occurs."""
    return occurrences(reader_form(source), _blank(answer))
