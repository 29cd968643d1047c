"""Measuring text: UTF-16 code units like .NET `String.Length`, or tiktoken tokens."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from chunking.options import Unit

if TYPE_CHECKING:
    from collections.abc import Sequence

    import tiktoken

    from chunking.measure.token_spans import TokenSpans


class TextSizer(Protocol):
    """Measures text in the unit of `maximumPageLength`."""

    def size(self, text: str) -> int:
        """The size of `text`."""
        ...


class Sizer(TextSizer, Protocol):
    """Measures text, and spans of a source measured many times over (the splitter's need)."""

    def spans(self, source: str, begin: int = 0, end: int | None = None) -> SpanSizer:
        """A measurer of spans of `source`, for a splitter that measures many of them;
        spans inside `source[begin:end]` are the cheap ones."""
        ...


class SpanSizer(Protocol):
    """Measures spans of one source text, the same as `Sizer.size` of the slice."""

    def span(self, start: int, end: int) -> int:
        """The size of `source[start:end]`."""
        ...

    def total(self, position: int) -> int:
        """A running total up to `position`: `estimate(a, b)` is `total(b) - total(a)`."""
        ...

    def totals(self, positions: Sequence[int]) -> list[int]:
        """`total` of each of `positions` (ascending), at once."""
        ...

    def estimate(self, start: int, end: int) -> int:
        """About `span(start, end)`, cheaper; estimates of adjacent spans add up to
        the estimate of their union, so a walk summing them does not drift."""
        ...

    def adds_up(self, left: str, right: str) -> bool:
        """Whether sizes of `left` and `right` add up to the size of `left + right`."""
        ...

    def horizon(self, limit: int) -> int:
        """A position past which every running total exceeds `limit`."""
        ...


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
"""Code points outside the BMP: two UTF-16 code units each."""


class CharacterSpans:
    """UTF-16 lengths of spans of one source: exact, so estimates are exact too."""

    def __init__(self, source: str) -> None:
        # Encoding to UTF-16 is a copy at C speed: only a source it lengthens holds an
        # astral code point, and the search for them cost twice the encoding.
        self._astral = (
            [m.start() for m in _ASTRAL.finditer(source)]
            if utf16_length(source) != len(source)
            else []
        )

    def total(self, position: int) -> int:
        """UTF-16 length of `source[:position]`."""
        if not self._astral:
            return position
        return position + bisect.bisect_left(self._astral, position)

    def totals(self, positions: Sequence[int]) -> list[int]:
        """`total` of each position."""
        return [self.total(position) for position in positions] if self._astral else [*positions]

    def span(self, start: int, end: int) -> int:
        """UTF-16 length of `source[start:end]`."""
        return self.total(end) - self.total(start) if end > start else 0

    def estimate(self, start: int, end: int) -> int:
        """Exactly `span`."""
        return self.span(start, end)

    def adds_up(self, left: str, right: str) -> bool:
        """Always: lengths add up."""
        return True

    def horizon(self, limit: int) -> int:
        """The last position whose UTF-16 total is at most `limit`: a code-point
        position, `limit` less the astral code points before it."""
        if not self._astral:
            return limit
        # Totals ascend with the position and total(p) >= p, so it is in [0, limit].
        return bisect.bisect_right(range(limit + 1), limit, key=self.total) - 1


def utf16_length(text: str) -> int:
    """Length in UTF-16 code units, as .NET `String.Length` counts it."""
    if text.isascii():
        return len(text)
    # surrogatepass: a lone surrogate is one code unit in .NET as well.
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


@dataclass(frozen=True, slots=True)
class CharacterSizer:
    """Counts UTF-16 code units."""

    def size(self, text: str) -> int:
        """UTF-16 length of `text`."""
        return utf16_length(text)

    def spans(self, source: str, begin: int = 0, end: int | None = None) -> CharacterSpans:
        """UTF-16 lengths of spans of `source` (all equally cheap)."""
        return CharacterSpans(source)


@dataclass(frozen=True, slots=True)
class TokenSizer:
    """Counts tokens of a tiktoken encoding; special-token text counts as ordinary text."""

    encoding: tiktoken.Encoding

    def size(self, text: str) -> int:
        """Number of tokens in `text`."""
        if not text:
            return 0
        return len(self.encoding.encode_ordinary(text))

    def spans(self, source: str, begin: int = 0, end: int | None = None) -> TokenSpans:
        """Token counts of spans of `source`, from one encoding of `source[begin:end]`."""
        from chunking.measure.token_spans import TokenSpans  # noqa: PLC0415  # tokens mode only (numpy)

        return TokenSpans(self.encoding, source, begin, end)


def make_sizer(unit: Unit, encoder_model_name: str) -> Sizer:
    """The sizer for a unit; loads the encoding (once per process) for tokens."""
    if unit is Unit.CHARACTERS:
        return CharacterSizer()
    # Imported on use: characters mode never loads tiktoken (or numpy, its token index's).
    from chunking.measure.encodings import load_encoding  # noqa: PLC0415

    return TokenSizer(load_encoding(encoder_model_name))
