"""Measuring text: UTF-16 code units like .NET `String.Length`, or tiktoken tokens."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from chunking.encodings import load_encoding
from chunking.options import Unit

if TYPE_CHECKING:
    import tiktoken


class Sizer(Protocol):
    """Measures text in the unit of `maximumPageLength`."""

    def size(self, text: str) -> int:
        """The size of `text`."""
        ...


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


@dataclass(frozen=True, slots=True)
class TokenSizer:
    """Counts tokens of a tiktoken encoding; special-token text counts as ordinary text."""

    encoding: tiktoken.Encoding

    def size(self, text: str) -> int:
        """Number of tokens in `text`."""
        if not text:
            return 0
        return len(self.encoding.encode_ordinary(text))


def make_sizer(unit: Unit, encoder_model_name: str) -> Sizer:
    """The sizer for a unit; loads the encoding (once per process) for tokens."""
    if unit is Unit.CHARACTERS:
        return CharacterSizer()
    return TokenSizer(load_encoding(encoder_model_name))
