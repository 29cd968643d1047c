"""Where a model's quote is in a document: matched with whitespace and inline markup ignored.

A model copying a passage tends to reflow its line breaks and drop markdown's emphasis
and code markers (`**`, `_`, a backtick) and link targets (`[text](url)` -> `text`);
none of that changes which passage it meant. Both sides are normalized the same way,
and the match maps back to source offsets, so the reference is always a span of the
source, never the model's rewording.
"""

from __future__ import annotations

from dataclasses import dataclass

IGNORED_MARKUP = frozenset("*_`\\")
"""Markdown emphasis, code and escape characters: left out on both sides of a match.
Symmetric, so an identifier such as `max_surge` still matches only itself."""
LINK_BRACKETS = frozenset("[]")
"""A link's text is kept and its brackets left out; `!` before `[` (an image) too."""
LINK_TARGET_CLOSERS = {"(": ")", "[": "]"}
"""What follows a link's `]`, `(url)` or `[label]`, is left out: a model quoting the
link's text drops it."""


@dataclass(frozen=True, slots=True)
class NormalText:
    """A text with whitespace runs made one space and inline markup left out."""

    text: str
    offsets: tuple[int, ...]
    """The source offset of each character of `text` (a space: the run's first)."""

    def span(self, index: int, length: int) -> tuple[int, int]:
        """The source span of `text[index:index + length]` (length > 0)."""
        return self.offsets[index], self.offsets[index + length - 1] + 1


def normalize(source: str, start: int = 0, end: int | None = None) -> NormalText:
    """`source[start:end]` normalized, trimmed, with each character's source offset."""
    stop = len(source) if end is None else end
    characters: list[str] = []
    offsets: list[int] = []
    space: int | None = None
    offset = start
    while offset < stop:
        character = source[offset]
        if character in LINK_BRACKETS or (
            character == "!" and offset + 1 < stop and source[offset + 1] == "["
        ):
            offset = _link_target_end(source, offset, stop) if character == "]" else offset + 1
            continue
        if character in IGNORED_MARKUP:
            offset += 1
            continue
        if character.isspace():
            if space is None and characters:
                space = offset
            offset += 1
            continue
        if space is not None:
            characters.append(" ")
            offsets.append(space)
            space = None
        characters.append(character)
        offsets.append(offset)
        offset += 1
    return NormalText("".join(characters), tuple(offsets))


def _link_target_end(source: str, bracket: int, stop: int) -> int:
    """Past a link's `](target)` or `][label]` at `bracket`, or past the lone `]`."""
    after = bracket + 1
    if after >= stop or source[after] not in LINK_TARGET_CLOSERS:
        return after
    closer = LINK_TARGET_CLOSERS[source[after]]
    depth = 0
    for offset in range(after, stop):
        character = source[offset]
        if character == "\n":
            break  # not a link target: targets stay on one line
        if character == source[after]:
            depth += 1
        elif character == closer:
            depth -= 1
            if depth == 0:
                return offset + 1
    return after


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
