"""Where a model's quote is in a document: matched with whitespace and inline markup ignored.

A model copying a passage tends to reflow its line breaks and drop markdown's emphasis
and code markers (`**`, `_`, a backtick); neither changes which passage it meant. Both
sides are normalized the same way, and the match maps back to source offsets, so the
reference is always a span of the source, never the model's rewording.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

IGNORED_MARKUP = frozenset("*_`\\")
"""Markdown emphasis, code and escape characters: left out on both sides of a match.
Symmetric, so an identifier such as `max_surge` still matches only itself."""


@dataclass(frozen=True, slots=True)
class NormalText:
    """A text with whitespace runs made one space and `IGNORED_MARKUP` left out."""

    text: str
    offsets: tuple[int, ...]
    """The source offset of each character of `text` (a space: the run's first)."""

    def span(self, index: int, length: int) -> tuple[int, int]:
        """The source span of `text[index:index + length]` (length > 0)."""
        return self.offsets[index], self.offsets[index + length - 1] + 1

    def index_at(self, offset: int) -> int:
        """The first character of `text` at or after source `offset`."""
        return bisect.bisect_left(self.offsets, offset)


def normalize(source: str, start: int = 0, end: int | None = None) -> NormalText:
    """`source[start:end]` normalized, trimmed, with each character's source offset."""
    stop = len(source) if end is None else end
    characters: list[str] = []
    offsets: list[int] = []
    space: int | None = None
    for offset in range(start, stop):
        character = source[offset]
        if character in IGNORED_MARKUP:
            continue
        if character.isspace():
            if space is None and characters:
                space = offset
            continue
        if space is not None:
            characters.append(" ")
            offsets.append(space)
            space = None
        characters.append(character)
        offsets.append(offset)
    return NormalText("".join(characters), tuple(offsets))


def normal_form(text: str) -> str:
    """Just the normalized text, for comparing two strings."""
    return normalize(text).text


def occurrences(document: NormalText, quote: str) -> list[tuple[int, int]]:
    """The source spans of every (possibly overlapping) match of `quote` in `document`."""
    wanted = normal_form(quote)
    if not wanted:
        return []
    spans: list[tuple[int, int]] = []
    index = document.text.find(wanted)
    while index >= 0:
        spans.append(document.span(index, len(wanted)))
        index = document.text.find(wanted, index + 1)
    return spans
