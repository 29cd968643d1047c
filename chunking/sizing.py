"""Measuring text: UTF-16 code units like .NET `String.Length`, or tiktoken tokens."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from chunking.encodings import load_encoding
from chunking.options import Unit
from chunking.token_spans import TokenSpans

if TYPE_CHECKING:
    import tiktoken


class TextSizer(Protocol):
    """Measures text in the unit of `maximumPageLength`."""

    def size(self, text: str) -> int:
        """The size of `text`."""
        ...


class Sizer(TextSizer, Protocol):
    """Measures text, and spans of a source measured many times over (the splitter's need)."""

    def spans(self, source: str) -> SpanSizer:
        """A measurer of spans of `source`, for a splitter that measures many of them."""
        ...


class SpanSizer(Protocol):
    """Measures spans of one source text, the same as `Sizer.size` of the slice."""

    def span(self, start: int, end: int) -> int:
        """The size of `source[start:end]`."""
        ...

    def estimate(self, start: int, end: int) -> int:
        """About `span(start, end)`, cheaper; estimates of adjacent spans add up to
        the estimate of their union, so a walk summing them does not drift."""
        ...


@dataclass(frozen=True, slots=True)
class CharacterSpans:
    """UTF-16 lengths of spans of one source."""

    source: str
    ascii: bool

    def span(self, start: int, end: int) -> int:
        """UTF-16 length of `source[start:end]`."""
        return end - start if self.ascii else utf16_length(self.source[start:end])

    def estimate(self, start: int, end: int) -> int:
        """Exactly `span`: UTF-16 lengths are cheap and add up."""
        return self.span(start, end)


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

    def spans(self, source: str) -> CharacterSpans:
        """UTF-16 lengths of spans of `source`."""
        return CharacterSpans(source, source.isascii())


@dataclass(frozen=True, slots=True)
class TokenSizer:
    """Counts tokens of a tiktoken encoding; special-token text counts as ordinary text."""

    encoding: tiktoken.Encoding

    def size(self, text: str) -> int:
        """Number of tokens in `text`."""
        if not text:
            return 0
        return len(self.encoding.encode_ordinary(text))

    def spans(self, source: str) -> TokenSpans:
        """Token counts of spans of `source`, from one encoding of all of it."""
        return TokenSpans(self.encoding, source)


def make_sizer(unit: Unit, encoder_model_name: str) -> Sizer:
    """The sizer for a unit; loads the encoding (once per process) for tokens."""
    if unit is Unit.CHARACTERS:
        return CharacterSizer()
    return TokenSizer(load_encoding(encoder_model_name))
